package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestSAMTemplateIsCommitted(t *testing.T) {
	got, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatalf("read template.yaml: %v (run `go run ./cmd/gensam` in the repo root)", err)
	}
	if want := SAMTemplate(); !bytes.Equal(got, want) {
		t.Fatalf("template.yaml is not what shared/deploy renders; run `go run ./cmd/gensam` in the repo root and commit the result")
	}
}

func TestSAMTemplateIsDeterministic(t *testing.T) {
	if !bytes.Equal(SAMTemplate(), SAMTemplate()) {
		t.Fatal("two renders differ")
	}
}

// samResources splits the Resources section into logical id → block text.
// It relies on the writer's fixed two-space indentation, which is all the
// structure this loose check needs.
func samResources(t *testing.T, tpl string) map[string]string {
	t.Helper()
	_, body, ok := strings.Cut(tpl, "\nResources:\n")
	if !ok {
		t.Fatal("no Resources section")
	}
	body, _, _ = strings.Cut(body, "\nOutputs:\n")
	header := regexp.MustCompile(`(?m)^  ([A-Za-z0-9]+):$`)
	locs := header.FindAllStringSubmatchIndex(body, -1)
	out := map[string]string{}
	for i, loc := range locs {
		end := len(body)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		id := body[loc[2]:loc[3]]
		if _, dup := out[id]; dup {
			t.Errorf("logical id %s appears twice", id)
		}
		out[id] = body[loc[1]:end]
	}
	return out
}

func mustContain(t *testing.T, what, block string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(block, l) {
			t.Errorf("%s: missing %q", what, l)
		}
	}
}

func TestSAMTemplateCoversCatalogue(t *testing.T) {
	tpl := string(SAMTemplate())
	res := samResources(t, tpl)
	mustContain(t, "template", tpl, "Transform: AWS::Serverless-2016-10-31")

	for _, tb := range Tables {
		id := LogicalID(tb.ID, "Table")
		block, ok := res[id]
		if !ok {
			t.Errorf("table %s: no resource %s", tb.ID, id)
			continue
		}
		mustContain(t, id, block,
			"Type: AWS::DynamoDB::Table",
			"DeletionPolicy: Retain",
			"BillingMode: PAY_PER_REQUEST",
			"PointInTimeRecoveryEnabled: true",
			`- AttributeName: "`+tb.PK.Name+`"`+"\n          KeyType: HASH",
		)
		if tb.SK.Name != "" {
			mustContain(t, id, block, `- AttributeName: "`+tb.SK.Name+`"`+"\n          KeyType: RANGE")
		}
		for _, ix := range tb.Indexes {
			mustContain(t, id, block, `IndexName: "`+ix.Name+`"`, "ProjectionType: ALL")
		}
		if tb.TTLAttr != "" {
			mustContain(t, id, block, "TimeToLiveSpecification:\n        AttributeName: \""+tb.TTLAttr+"\"\n        Enabled: true")
		} else if strings.Contains(block, "TimeToLiveSpecification") {
			t.Errorf("%s: TTL set but the catalogue has none", id)
		}
	}

	mustContain(t, BucketLogicalID, res[BucketLogicalID],
		"Type: AWS::S3::Bucket", "SSEAlgorithm: AES256", "Status: Enabled",
		"BlockPublicAcls: true", "BlockPublicPolicy: true", "IgnorePublicAcls: true", "RestrictPublicBuckets: true")
	mustContain(t, BucketLogicalID+"Policy", res[BucketLogicalID+"Policy"], "aws:SecureTransport: \"false\"")

	for _, f := range Functions {
		id := LogicalID(f.Name, "Function")
		block, ok := res[id]
		if !ok {
			t.Errorf("function %s: no resource %s", f.Name, id)
			continue
		}
		mustContain(t, id, block,
			"Type: AWS::Serverless::Function",
			"CodeUri: build/functions/"+f.Name+"/\n",
			"Handler: bootstrap",
			"Runtime: provided.al2023",
			"- arm64",
			EnvBucket+": !Ref "+BucketLogicalID,
			EnvConfig+`: "config.yaml"`,
		)
		for _, tb := range Tables {
			mustContain(t, id, block, tb.EnvVar+": !Ref "+LogicalID(tb.ID, "Table"))
			grant := "TableName: !Ref " + LogicalID(tb.ID, "Table")
			if listed := contains(f.Tables, tb.ID); listed != strings.Contains(block, grant) {
				t.Errorf("%s: DynamoDBCrudPolicy on %s is %v, catalogue says %v", id, tb.ID, !listed, listed)
			}
		}
		if f.Bucket != strings.Contains(block, "S3CrudPolicy") {
			t.Errorf("%s: S3CrudPolicy present = %v, catalogue Bucket = %v", id, !f.Bucket, f.Bucket)
		}
		if f.URLAuth != "" {
			mustContain(t, id, block, "FunctionUrlConfig:\n        AuthType: "+f.URLAuth+"\n        InvokeMode: RESPONSE_STREAM")
			mustContain(t, "Outputs", tpl, "  "+URLOutputID(f.Name)+":\n")
		} else if strings.Contains(block, "FunctionUrlConfig") {
			t.Errorf("%s: has a function URL but the catalogue has none", id)
		}
		mustContain(t, LogicalID(f.Name, "Errors"), res[LogicalID(f.Name, "Errors")],
			"MetricName: Errors", "Value: !Ref "+id, "Threshold: 1", "Period: 300")
	}

	for _, j := range Jobs {
		block := res[LogicalID(j.Function, "Function")]
		mustContain(t, "job "+j.Name, block,
			"        "+LogicalID(j.Name, "Job")+":\n          Type: Schedule\n",
			`Schedule: "`+j.Schedule+`"`,
			"Input: '"+JobInput(j.Name)+"'",
			"MaximumRetryAttempts: 2",
		)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestJobInput(t *testing.T) {
	var got map[string]string
	if err := json.Unmarshal([]byte(JobInput("rocketchat-poll")), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["job"] != "rocketchat-poll" {
		t.Fatalf("got %v, want {job: rocketchat-poll}", got)
	}
}

func TestLogicalID(t *testing.T) {
	tests := []struct{ name, kind, want string }{
		{"audit", "Table", "AuditTable"},
		{"rocketchat-poll", "Job", "RocketchatPollJob"},
		{"nextcloud_cleanup2", "Job", "NextcloudCleanup2Job"},
		{"agentComm", "Function", "AgentCommFunction"},
	}
	for _, tt := range tests {
		if got := LogicalID(tt.name, tt.kind); got != tt.want {
			t.Errorf("LogicalID(%q, %q) = %q, want %q", tt.name, tt.kind, got, tt.want)
		}
	}
}

func TestLogicalIDsAreUnique(t *testing.T) {
	seen := map[string]string{BucketLogicalID: "bucket"}
	add := func(id, what string) {
		if prev, dup := seen[id]; dup {
			t.Errorf("logical id %s used by %s and %s", id, prev, what)
		}
		seen[id] = what
	}
	for _, tb := range Tables {
		add(LogicalID(tb.ID, "Table"), "table "+tb.ID)
	}
	for _, f := range Functions {
		add(LogicalID(f.Name, "Function"), "function "+f.Name)
		add(LogicalID(f.Name, "Errors"), "alarm "+f.Name)
	}
	for _, j := range Jobs {
		add(LogicalID(j.Name, "Job"), "job "+j.Name)
		if _, ok := FunctionByName(j.Function); !ok {
			t.Errorf("job %s names unknown function %s", j.Name, j.Function)
		}
	}
	for _, f := range Functions {
		for _, id := range f.Tables {
			if _, ok := TableByID(id); !ok {
				t.Errorf("function %s names unknown table %s", f.Name, id)
			}
		}
		if f.URLAuth != "" && f.URLAuth != "AWS_IAM" && f.URLAuth != "NONE" {
			t.Errorf("function %s: URLAuth %q, want AWS_IAM or NONE", f.Name, f.URLAuth)
		}
	}
}
