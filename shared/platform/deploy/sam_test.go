package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestSAMTemplateIsCommitted(t *testing.T) {
	got, err := os.ReadFile("../../../template.yaml")
	if err != nil {
		t.Fatalf("read template.yaml: %v (run `go run ./cmd/gensam` in the repo root)", err)
	}
	if want := SAMTemplate(); !bytes.Equal(got, want) {
		t.Fatalf("template.yaml is not what shared/platform/deploy renders; run `go run ./cmd/gensam` in the repo root and commit the result")
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
			if attrs := ix.NonKeyAttributes(tb); attrs != nil {
				mustContain(t, id, block, `IndexName: "`+ix.Name+`"`, "ProjectionType: INCLUDE",
					"NonKeyAttributes:\n              - \""+strings.Join(attrs, "\"\n              - \"")+"\"\n")
			} else {
				mustContain(t, id, block, `IndexName: "`+ix.Name+`"`, "ProjectionType: ALL")
			}
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

	mustContain(t, "Parameters", tpl, "Parameters:\n  "+SecretPrefixParameter+":\n    Type: String\n    Default: \""+SecretNamePrefix+"\"\n")
	for _, sec := range Secrets {
		id := sec.LogicalID()
		block, ok := res[id]
		if !ok {
			t.Errorf("secret %s: no resource %s", sec.Name, id)
			continue
		}
		mustContain(t, id, block,
			"Type: AWS::SecretsManager::Secret\n    DeletionPolicy: Retain\n    UpdateReplacePolicy: Retain\n",
			`Name: !Sub "${SecretPrefix}`+sec.Name+`"`+"\n",
			"secretsmanager:${SecretPrefix}"+sec.Name,
		)
		switch v := sec.Value(); {
		case v.GenerateKey != "":
			mustContain(t, id, block, fmt.Sprintf("GenerateSecretString:\n        PasswordLength: %d\n        ExcludePunctuation: true\n"+
				"        GenerateStringKey: %s\n        SecretStringTemplate: %s\n", v.Length, v.GenerateKey, singleQuote(v.Template)))
		case v.Length > 0:
			mustContain(t, id, block, fmt.Sprintf("GenerateSecretString:\n        PasswordLength: %d\n        ExcludePunctuation: true\n", v.Length))
		case len(sec.Keys) > 0:
			mustContain(t, id, block, "SecretString: "+singleQuote(v.String)+"\n")
		default:
			mustContain(t, id, block, "SecretString: "+quote(v.String)+"\n")
		}
		mustContain(t, "Outputs", tpl,
			"  "+sec.ARNOutputID()+":\n", "Value: !Ref "+id+"\n",
			"  "+sec.NameOutputID()+":\n", `Value: !Sub "${SecretPrefix}`+sec.Name+`"`+"\n")
	}

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
			for policy, list := range map[string][]string{"DynamoDBCrudPolicy": f.Tables, "DynamoDBReadPolicy": f.ReadTables} {
				grant := "- " + policy + ":\n            TableName: !Ref " + LogicalID(tb.ID, "Table") + "\n"
				if listed := contains(list, tb.ID); listed != strings.Contains(block, grant) {
					t.Errorf("%s: %s on %s is %v, catalogue says %v", id, policy, tb.ID, !listed, listed)
				}
			}
			if contains(f.Tables, tb.ID) && contains(f.ReadTables, tb.ID) {
				t.Errorf("function %s lists table %s in both Tables and ReadTables", f.Name, tb.ID)
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
		checkSAMInvokesAndPolicies(t, f, block)
		if HasErrorAlarm(f) {
			mustContain(t, LogicalID(f.Name, "Errors"), res[LogicalID(f.Name, "Errors")],
				"MetricName: Errors", "Value: !Ref "+id, "Threshold: 1", "Period: 300")
		} else if _, ok := res[LogicalID(f.Name, "Errors")]; ok {
			t.Errorf("%s: an errors alarm, but its caller sees its errors (HasErrorAlarm)", id)
		}
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

// TestSAMOutputsAreTheCatalogues: the Outputs section holds exactly
// OutputIDs, each once, none the id of a resource (CloudFormation wants
// logical ids unique across the template), and every function's name is
// there as the Ref of its function.
func TestSAMOutputsAreTheCatalogues(t *testing.T) {
	tpl := string(SAMTemplate())
	_, outputs, ok := strings.Cut(tpl, "\nOutputs:\n")
	if !ok {
		t.Fatal("no Outputs section")
	}
	got := regexp.MustCompile(`(?m)^  ([A-Za-z0-9]+):$`).FindAllStringSubmatch(outputs, -1)
	var ids []string
	for _, m := range got {
		ids = append(ids, m[1])
	}
	if want := OutputIDs(); !slices.Equal(ids, want) {
		t.Errorf("outputs = %v, want %v", ids, want)
	}
	res := samResources(t, tpl)
	seen := map[string]bool{}
	for _, id := range OutputIDs() {
		if seen[id] {
			t.Errorf("output %s listed twice", id)
		}
		seen[id] = true
		if _, clash := res[id]; clash {
			t.Errorf("output %s has the id of a resource", id)
		}
	}
	for _, f := range Functions {
		mustContain(t, "Outputs", outputs,
			"  "+FunctionNameOutputID(f.Name)+":\n    Description: "+quote(FunctionNameDescription(f.Name))+"\n    Value: !Ref "+LogicalID(f.Name, "Function")+"\n")
	}
	if got, want := FunctionNameOutputID("jobs"), "JobsFunctionName"; got != want {
		t.Errorf("FunctionNameOutputID(jobs) = %s, want %s (the deploy guide and localstack/smoke.sh use it)", got, want)
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
	for _, sec := range Secrets {
		add(sec.LogicalID(), "secret "+sec.Name)
	}
	for _, f := range Functions {
		add(LogicalID(f.Name, "Function"), "function "+f.Name)
		add(LogicalID(f.Name, "Errors"), "alarm "+f.Name)
		add(LogGroupLogicalID(f.Name), "log group "+f.Name)
	}
	for _, j := range Jobs {
		add(LogicalID(j.Name, "Job"), "job "+j.Name)
		if _, ok := FunctionByName(j.Function); !ok {
			t.Errorf("job %s names unknown function %s", j.Name, j.Function)
		}
	}
	for _, f := range Functions {
		for _, id := range append(slices.Clone(f.Tables), f.ReadTables...) {
			if _, ok := TableByID(id); !ok {
				t.Errorf("function %s names unknown table %s", f.Name, id)
			}
		}
		for _, id := range f.ReadTables {
			if contains(f.Tables, id) {
				t.Errorf("function %s lists table %s in Tables and ReadTables; keep it in one (Tables grants reads too)", f.Name, id)
			}
		}
		if f.URLAuth != "" && f.URLAuth != "AWS_IAM" && f.URLAuth != "NONE" {
			t.Errorf("function %s: URLAuth %q, want AWS_IAM or NONE", f.Name, f.URLAuth)
		}
	}
}

// checkSAMInvokesAndPolicies: invoke grants and function-name env vars for
// exactly the listed targets, the async config where the catalogue asks for
// it, the secrets statement everywhere and the model statement only for
// functions that run agents.
func checkSAMInvokesAndPolicies(t *testing.T, f Function, block string) {
	t.Helper()
	id := LogicalID(f.Name, "Function")
	invokes := 0
	for _, g := range Functions {
		target := LogicalID(g.Name, "Function")
		// The agent-worker's wakes go through the wake queue.
		listed := contains(f.Invokes, g.Name) && g.Name != WakeQueue.Consumer
		if listed {
			invokes++
		}
		if got := strings.Contains(block, "- LambdaInvokePolicy:\n            FunctionName: !Ref "+target+"\n"); got != listed {
			t.Errorf("%s: LambdaInvokePolicy on %s is %v, catalogue says %v", id, g.Name, got, listed)
		}
		if got := strings.Contains(block, FunctionEnvVar(g.Name)+": !Ref "+target+"\n"); got != listed {
			t.Errorf("%s: env %s is %v, catalogue says %v", id, FunctionEnvVar(g.Name), got, listed)
		}
	}
	if n := strings.Count(block, "LambdaInvokePolicy"); n != invokes {
		t.Errorf("%s: %d LambdaInvokePolicy, catalogue lists %d targets", id, n, invokes)
	}
	sends := strings.Contains(block, "- SQSSendMessagePolicy:\n            QueueName: !GetAtt "+WakeQueue.LogicalID()+".QueueName\n") &&
		strings.Contains(block, EnvWakeQueueURL+": !Ref "+WakeQueue.LogicalID()+"\n")
	if sends != SendsWakes(f) {
		t.Errorf("%s: sends to the wake queue (policy and URL) = %v, catalogue says %v", id, sends, SendsWakes(f))
	}

	async := ConfiguresAsyncInvoke(f, InvokedFunctions())
	if want := fmt.Sprintf("EventInvokeConfig:\n        MaximumEventAgeInSeconds: 21600\n        MaximumRetryAttempts: %d\n", f.AsyncRetries); strings.Contains(block, want) != async {
		t.Errorf("%s: EventInvokeConfig with %d retries present = %v, want %v", id, f.AsyncRetries, !async, async)
	}

	mustContain(t, id, block, "- secretsmanager:GetSecretValue\n              Resource:\n                - !Sub \"arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:switchboard/*\"\n")
	bedrock := "- bedrock:InvokeModel\n                - bedrock:InvokeModelWithResponseStream\n              Resource:\n" +
		"                - !Sub \"arn:${AWS::Partition}:bedrock:*::foundation-model/*\"\n" +
		"                - !Sub \"arn:${AWS::Partition}:bedrock:${AWS::Region}:${AWS::AccountId}:inference-profile/*\"\n"
	if got := strings.Contains(block, bedrock); got != f.RunsAgents {
		t.Errorf("%s: bedrock statement present = %v, catalogue RunsAgents = %v", id, got, f.RunsAgents)
	}
	if f.RunsAgents != strings.Contains(block, "bedrock:") {
		t.Errorf("%s: mentions bedrock = %v, catalogue RunsAgents = %v", id, !f.RunsAgents, f.RunsAgents)
	}
	if strings.Contains(block, `Resource: "*"`) || strings.Contains(block, `- "*"`) {
		t.Errorf("%s: a policy grants on every resource", id)
	}
}

// TestInvokeGraph: every invoke target exists, and the graph has no cycle —
// an invoker's env var Refs its target, so a cycle is a circular
// dependency CloudFormation refuses.
func TestInvokeGraph(t *testing.T) {
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	var visit func(name string, path []string)
	visit = func(name string, path []string) {
		switch state[name] {
		case visiting:
			t.Errorf("invoke cycle: %s", strings.Join(append(path, name), " → "))
			return
		case done:
			return
		}
		state[name] = visiting
		f, _ := FunctionByName(name)
		for _, target := range f.Invokes {
			if _, ok := FunctionByName(target); !ok {
				t.Errorf("function %s invokes unknown function %s", name, target)
				continue
			}
			visit(target, append(path, name))
		}
		state[name] = done
	}
	for _, f := range Functions {
		visit(f.Name, nil)
		if f.AsyncRetries < 0 || f.AsyncRetries > 2 {
			t.Errorf("function %s: AsyncRetries %d, want 0–2", f.Name, f.AsyncRetries)
		}
	}
}

func TestFunctionEnvVarsAreDistinct(t *testing.T) {
	seen := map[string]string{EnvConfig: "config", EnvBucket: "bucket", EnvTablePrefix: "table prefix"}
	for _, tb := range Tables {
		seen[tb.EnvVar] = "table " + tb.ID
	}
	for _, f := range Functions {
		v := FunctionEnvVar(f.Name)
		if prev, dup := seen[v]; dup {
			t.Errorf("env var %s used by %s and function %s", v, prev, f.Name)
		}
		seen[v] = "function " + f.Name
	}
}

func TestInvalidInvokesPanic(t *testing.T) {
	tests := []struct {
		name string
		fns  []Function
		want string
	}{
		{"unknown target", []Function{{Name: "a", Invokes: []string{"nope"}}}, `function a invokes unknown function "nope"`},
		{"self", []Function{{Name: "a", Invokes: []string{"a"}}}, "function a invokes itself"},
		{"retries", []Function{{Name: "a", AsyncRetries: 3}}, "function a: AsyncRetries 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := Functions
			Functions = tt.fns
			t.Cleanup(func() { Functions = saved })
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, tt.want) {
					t.Errorf("panic %v, want one containing %q", r, tt.want)
				}
			}()
			SAMTemplate()
		})
	}
}

// TestSecretsCatalogue: each secret (or each key of a JSON secret) either
// is generated or starts from a placeholder, and its name stays inside what
// the functions may read.
func TestSecretsCatalogue(t *testing.T) {
	// Secrets Manager reads a name ending in -XXXXXX as a partial ARN.
	suffixLike := regexp.MustCompile(`-[A-Za-z0-9]{6}$`)
	names := regexp.MustCompile(`^[A-Za-z0-9/_+=.@-]+$`)
	jsonKey := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)
	outputs := map[string]bool{}
	type value struct {
		what, configKey, placeholder string
		length                       int
	}
	for _, sec := range Secrets {
		var values []value
		if len(sec.Keys) == 0 {
			values = []value{{sec.Name, sec.ConfigKey, sec.Placeholder, sec.GenerateLength}}
		}
		generated := 0
		for _, k := range sec.Keys {
			if !jsonKey.MatchString(k.Key) {
				t.Errorf("secret %s: key %q is not a plain word (it follows # in references)", sec.Name, k.Key)
			}
			if k.GenerateLength > 0 {
				generated++
			}
			values = append(values, value{sec.Name + "#" + k.Key, k.ConfigKey, k.Placeholder, k.GenerateLength})
		}
		if generated > 1 {
			t.Errorf("secret %s: %d generated keys, CloudFormation generates one", sec.Name, generated)
		}
		for _, v := range values {
			if (v.length > 0) == (v.placeholder != "") {
				t.Errorf("secret %s: want either GenerateLength or Placeholder", v.what)
			}
			if v.length != 0 && v.length < 32 {
				t.Errorf("secret %s: %d generated characters, want at least 32", v.what, v.length)
			}
			if v.placeholder != "" && !strings.Contains(v.placeholder, "REPLACE_ME") {
				t.Errorf("secret %s: placeholder %q does not say to replace it", v.what, v.placeholder)
			}
			ref := "secretsmanager:switchboard/x"
			if i := strings.Index(v.what, "#"); i >= 0 {
				ref += v.what[i:]
			}
			if desc := sec.Description("switchboard/x"); !strings.Contains(desc, v.configKey+": "+ref) {
				t.Errorf("secret %s: description %q does not give the config reference %s: %s", v.what, desc, v.configKey, ref)
			}
		}
		if !names.MatchString(sec.Name) || suffixLike.MatchString(sec.Name) {
			t.Errorf("secret %s: not a good Secrets Manager name", sec.Name)
		}
		if err := CheckSecretPrefix(SecretNamePrefix); err != nil || len(SecretNamePrefix+sec.Name) > 512-SecretPrefixMaxLength {
			t.Errorf("secret %s: default name invalid or too long (%v)", sec.Name, err)
		}
		if len(sec.Description(SecretNamePrefix+sec.Name)) > 2048 {
			t.Errorf("secret %s: description longer than Secrets Manager's 2,048 characters", sec.Name)
		}
		for _, o := range []string{sec.ARNOutputID(), sec.NameOutputID()} {
			if outputs[o] {
				t.Errorf("output %s used twice", o)
			}
			outputs[o] = true
		}
	}
}

// The instance secret starts as one JSON object: the signing key generated
// into the placeholders' template.
func TestInstanceSecretValue(t *testing.T) {
	sec := Secrets[0]
	if sec.Name != InstanceSecret {
		t.Fatalf("first secret %s, want %s", sec.Name, InstanceSecret)
	}
	got, want := sec.Value(), SecretValue{Length: 64, GenerateKey: "approvalSigningKey",
		Template: `{"telegramBotToken":"REPLACE_ME with the token from @BotFather"}`}
	if got != want {
		t.Errorf("Value() = %+v\nwant      %+v", got, want)
	}
}

func TestCheckSecretPrefix(t *testing.T) {
	for _, ok := range []string{"switchboard/", "switchboard/staging/", "switchboard/a_b+c=d.e@f-g/", "switchboard/x-"} {
		if err := CheckSecretPrefix(ok); err != nil {
			t.Errorf("CheckSecretPrefix(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "switchboard", "Switchboard/", "other/", "xswitchboard/", "switchboard/a b/", "switchboard/ä/", "switchboard/\n",
		"switchboard/" + strings.Repeat("a", SecretPrefixMaxLength)} {
		err := CheckSecretPrefix(bad)
		if err == nil || !strings.Contains(err.Error(), "switchboard/staging/") {
			t.Errorf("CheckSecretPrefix(%q) = %v, want an error with an example", bad, err)
		}
	}
}
