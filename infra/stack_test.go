package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"go.yaml.in/yaml/v3"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// One synth for the whole package: starting jsii and synthesizing costs
// seconds, every assertion after that is cheap.
var synthOnce struct {
	sync.Once
	tpl    assertions.Template
	json   map[string]any
	outdir string
	err    any
}

func synth(t *testing.T) (assertions.Template, map[string]any) {
	t.Helper()
	synthOnce.Do(func() {
		defer func() { synthOnce.err = recover() }()
		root, err := os.MkdirTemp("", "switchboard-infra-test-")
		if err != nil {
			panic(err)
		}
		assets := filepath.Join(root, "functions")
		for _, f := range deploy.Functions {
			dir := filepath.Join(assets, f.Name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				panic(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "bootstrap"), []byte("#!/bin/sh\necho "+f.Name+"\n"), 0o755); err != nil {
				panic(err)
			}
		}
		config := filepath.Join(root, "switchboard.yaml")
		if err := os.WriteFile(config, []byte("instance: {name: test}\nagents: []\n"), 0o644); err != nil {
			panic(err)
		}
		synthOnce.outdir = filepath.Join(root, "cdk.out")
		app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(synthOnce.outdir)})
		stack := NewSwitchboardStack(app, "Test", &SwitchboardStackProps{AssetDir: assets, ConfigFile: config})
		synthOnce.tpl = assertions.Template_FromStack(stack, nil)
		synthOnce.json = *synthOnce.tpl.ToJSON()
	})
	if synthOnce.err != nil {
		t.Fatalf("synth: %v", synthOnce.err)
	}
	return synthOnce.tpl, synthOnce.json
}

func TestMain(m *testing.M) {
	enableJSIIPackageCache()
	code := m.Run()
	if synthOnce.outdir != "" {
		os.RemoveAll(filepath.Dir(synthOnce.outdir))
	}
	jsii.Close()
	os.Exit(code)
}

// check runs a jsii assertion and turns its panic into a test error, so one
// failing matcher does not hide the others.
func check(t *testing.T, what string, assert func()) {
	t.Helper()
	defer func() {
		t.Helper()
		if r := recover(); r != nil {
			t.Errorf("%s: %v", what, r)
		}
	}()
	assert()
}

// resources returns logical id → resource of one type.
func resources(tpl map[string]any, typ string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range tpl["Resources"].(map[string]any) {
		res := r.(map[string]any)
		if res["Type"] == typ {
			out[id] = res
		}
	}
	return out
}

// byConstruct finds the one resource of a type whose logical id is the
// construct id plus CDK's 8-character hash suffix.
func byConstruct(t *testing.T, tpl map[string]any, typ, constructID string) (string, map[string]any) {
	t.Helper()
	for id, r := range resources(tpl, typ) {
		if strings.HasPrefix(id, constructID) && len(id) == len(constructID)+8 {
			return id, r
		}
	}
	t.Fatalf("no %s for construct %s", typ, constructID)
	return "", nil
}

func props(r map[string]any) map[string]any { return r["Properties"].(map[string]any) }

// countIs checks how many resources of a type the stack has, as a test
// error rather than a panic that would end the whole test binary.
func countIs(t *testing.T, tpl assertions.Template, typ string, n int) {
	t.Helper()
	check(t, fmt.Sprintf("%d %s", n, typ), func() { tpl.ResourceCountIs(jsii.String(typ), jsii.Number(float64(n))) })
}

func TestTables(t *testing.T) {
	tpl, js := synth(t)
	countIs(t, tpl, "AWS::DynamoDB::Table", len(deploy.Tables))
	for _, tb := range deploy.Tables {
		t.Run(tb.ID, func(t *testing.T) {
			id, res := byConstruct(t, js, "AWS::DynamoDB::Table", deploy.LogicalID(tb.ID, "Table"))
			if res["DeletionPolicy"] != "Retain" || res["UpdateReplacePolicy"] != "Retain" {
				t.Errorf("%s: DeletionPolicy %v / UpdateReplacePolicy %v, want Retain", id, res["DeletionPolicy"], res["UpdateReplacePolicy"])
			}
			p := props(res)
			want := map[string]any{
				"BillingMode":                      "PAY_PER_REQUEST",
				"KeySchema":                        keySchema(tb.PK, tb.SK),
				"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
			}
			if tb.TTLAttr != "" {
				want["TimeToLiveSpecification"] = map[string]any{"AttributeName": tb.TTLAttr, "Enabled": true}
			}
			if tb.Stream != "" {
				want["StreamSpecification"] = map[string]any{"StreamViewType": tb.Stream}
			} else if p["StreamSpecification"] != nil {
				t.Errorf("%s has a stream, catalogue has none", id)
			}
			for k, v := range want {
				if !reflect.DeepEqual(normalize(p[k]), normalize(v)) {
					t.Errorf("%s.%s = %v, want %v", id, k, p[k], v)
				}
			}
			if tb.TTLAttr == "" && p["TimeToLiveSpecification"] != nil {
				t.Errorf("%s has TTL, catalogue has none", id)
			}
			var gsis []any
			for _, ix := range tb.Indexes {
				proj := map[string]any{"ProjectionType": "ALL"}
				if attrs := ix.NonKeyAttributes(tb); attrs != nil {
					nk := make([]any, len(attrs))
					for i, a := range attrs {
						nk[i] = a
					}
					proj = map[string]any{"ProjectionType": "INCLUDE", "NonKeyAttributes": nk}
				}
				gsis = append(gsis, map[string]any{
					"IndexName":  ix.Name,
					"KeySchema":  keySchema(ix.PK, ix.SK),
					"Projection": proj,
				})
			}
			if !reflect.DeepEqual(normalize(p["GlobalSecondaryIndexes"]), normalize(gsis)) {
				t.Errorf("%s.GlobalSecondaryIndexes = %v, want %v", id, p["GlobalSecondaryIndexes"], gsis)
			}
		})
	}
}

// TestAgentMessagesTable pins the agent message table's design with
// literal names (TestTables only follows the catalogue): the pair partition,
// the four index reads (sender, recipient, run chain, calendar month) and TTL on expiresAt.
func TestAgentMessagesTable(t *testing.T) {
	_, js := synth(t)
	_, res := byConstruct(t, js, "AWS::DynamoDB::Table", deploy.LogicalID("agentmessages", "Table"))
	p := props(res)
	if got := normalize(p["TimeToLiveSpecification"]); !reflect.DeepEqual(got, normalize(map[string]any{"AttributeName": "expiresAt", "Enabled": true})) {
		t.Errorf("TTL = %v, want expiresAt", got)
	}
	idx := map[string]any{}
	for _, g := range p["GlobalSecondaryIndexes"].([]any) {
		g := g.(map[string]any)
		idx[g["IndexName"].(string)] = normalize(g["KeySchema"])
		// An index entry is billed by its projected size: the indexes
		// carry short content, never the long body.
		proj, _ := g["Projection"].(map[string]any)
		attrs := fmt.Sprint(proj["NonKeyAttributes"])
		if proj["ProjectionType"] != "INCLUDE" || !strings.Contains(attrs, "content ") || strings.Contains(attrs, "body") {
			t.Errorf("index %s projects %v, want INCLUDE with content and without body", g["IndexName"], proj)
		}
	}
	for name, hash := range map[string]string{"byFrom": "fromAgent", "byTo": "toAgent", "byRoot": "rootRunId", "byMonth": "month"} {
		want := normalize(keySchema(deploy.KeyAttr{Name: hash, Type: "S"}, deploy.KeyAttr{Name: "sk", Type: "S"}))
		if !reflect.DeepEqual(idx[name], want) {
			t.Errorf("index %s = %v, want %v", name, idx[name], want)
		}
	}
}

func keySchema(pk, sk deploy.KeyAttr) []any {
	ks := []any{map[string]any{"AttributeName": pk.Name, "KeyType": "HASH"}}
	if sk.Name != "" {
		ks = append(ks, map[string]any{"AttributeName": sk.Name, "KeyType": "RANGE"})
	}
	return ks
}

// normalize makes YAML ints, JSON floats and nil slices compare equal.
func normalize(v any) any {
	if v == nil {
		return nil
	}
	if s, ok := v.([]any); ok && len(s) == 0 {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

func TestBucket(t *testing.T) {
	tpl, js := synth(t)
	countIs(t, tpl, "AWS::S3::Bucket", 1)
	check(t, "bucket properties", func() {
		tpl.HasResource(jsii.String("AWS::S3::Bucket"), map[string]any{
			"DeletionPolicy":      "Retain",
			"UpdateReplacePolicy": "Retain",
			"Properties": map[string]any{
				"BucketEncryption": map[string]any{"ServerSideEncryptionConfiguration": []any{
					map[string]any{"ServerSideEncryptionByDefault": map[string]any{"SSEAlgorithm": "AES256"}},
				}},
				"VersioningConfiguration": map[string]any{"Status": "Enabled"},
				"PublicAccessBlockConfiguration": map[string]any{
					"BlockPublicAcls": true, "BlockPublicPolicy": true,
					"IgnorePublicAcls": true, "RestrictPublicBuckets": true,
				},
			},
		})
	})
	check(t, "enforceSSL bucket policy", func() {
		tpl.HasResourceProperties(jsii.String("AWS::S3::BucketPolicy"), map[string]any{
			"PolicyDocument": map[string]any{"Statement": assertions.Match_ArrayWith(&[]any{
				assertions.Match_ObjectLike(&map[string]any{
					"Effect":    "Deny",
					"Condition": map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}},
				}),
			})},
		})
	})
	byConstruct(t, js, "AWS::S3::Bucket", deploy.BucketLogicalID)
}

func TestFunctions(t *testing.T) {
	tpl, js := synth(t)
	countIs(t, tpl, "AWS::Lambda::Function", len(deploy.Functions))
	bucket := idOf(t, js, "AWS::S3::Bucket", deploy.BucketLogicalID)
	for _, f := range deploy.Functions {
		t.Run(f.Name, func(t *testing.T) {
			id, res := byConstruct(t, js, "AWS::Lambda::Function", deploy.LogicalID(f.Name, "Function"))
			p := props(res)
			for k, want := range map[string]any{
				"Runtime": "provided.al2023", "Handler": "bootstrap", "Architectures": []any{"arm64"},
				"MemorySize": f.MemoryMB, "Timeout": f.TimeoutSeconds,
			} {
				if !reflect.DeepEqual(normalize(p[k]), normalize(want)) {
					t.Errorf("%s.%s = %v, want %v", id, k, p[k], want)
				}
			}
			vars := p["Environment"].(map[string]any)["Variables"].(map[string]any)
			want := map[string]any{
				deploy.EnvConfig: "config.yaml",
				deploy.EnvBucket: map[string]any{"Ref": bucket},
			}
			for _, tb := range deploy.Tables {
				tid := idOf(t, js, "AWS::DynamoDB::Table", deploy.LogicalID(tb.ID, "Table"))
				want[tb.EnvVar] = map[string]any{"Ref": tid}
			}
			// Only invokers carry their targets' names; who hands out wakes
			// gets the wake queue's URL instead.
			if deploy.SendsWakes(f) {
				want[deploy.EnvWakeQueueURL] = map[string]any{"Ref": idOf(t, js, "AWS::SQS::Queue", deploy.WakeQueue.LogicalID())}
			}
			for _, target := range f.Invokes {
				if target == deploy.WakeQueue.Consumer {
					continue
				}
				want[deploy.FunctionEnvVar(target)] = map[string]any{"Ref": idOf(t, js, "AWS::Lambda::Function", deploy.LogicalID(target, "Function"))}
			}
			// Starters carry the ARNs of their state machines.
			for _, m := range deploy.StateMachines {
				if slices.Contains(m.StartedBy, f.Name) {
					want[deploy.StateMachineEnvVar(m.Name)] = map[string]any{"Fn::Sub": deploy.StateMachineARNSub(m.Name)}
				}
			}
			if !reflect.DeepEqual(vars, want) {
				t.Errorf("%s env = %v, want %v", id, vars, want)
			}
		})
	}
}

func TestFunctionURLs(t *testing.T) {
	tpl, js := synth(t)
	n := 0
	for _, f := range deploy.Functions {
		if f.URLAuth == "" {
			continue
		}
		n++
		fnID, _ := byConstruct(t, js, "AWS::Lambda::Function", deploy.LogicalID(f.Name, "Function"))
		check(t, f.Name+" URL", func() {
			tpl.HasResourceProperties(jsii.String("AWS::Lambda::Url"), map[string]any{
				"AuthType":          f.URLAuth,
				"InvokeMode":        "RESPONSE_STREAM",
				"TargetFunctionArn": map[string]any{"Fn::GetAtt": []any{fnID, "Arn"}},
			})
		})
		check(t, f.Name+" URL output", func() {
			tpl.HasOutput(jsii.String(deploy.URLOutputID(f.Name)), map[string]any{
				"Value": map[string]any{"Fn::GetAtt": assertions.Match_ArrayWith(&[]any{"FunctionUrl"})},
			})
		})
	}
	countIs(t, tpl, "AWS::Lambda::Url", n)
}

// TestOutputs: the stack gives exactly the catalogue's outputs, among them
// every function's deployed name (what the deploy guide's check and
// localstack/smoke.sh --deployed read, since CloudFormation adds a random
// suffix to the name), and the template.yaml outputs are the same.
func TestOutputs(t *testing.T) {
	tpl, js := synth(t)
	got := keys(js["Outputs"])
	want := slices.Sorted(slices.Values(deploy.OutputIDs()))
	if !slices.Equal(got, want) {
		t.Errorf("stack outputs = %v, want %v", got, want)
	}
	for _, f := range deploy.Functions {
		fnID, _ := byConstruct(t, js, "AWS::Lambda::Function", deploy.LogicalID(f.Name, "Function"))
		check(t, f.Name+" name output", func() {
			tpl.HasOutput(jsii.String(deploy.FunctionNameOutputID(f.Name)), map[string]any{
				"Description": deploy.FunctionNameDescription(f.Name),
				"Value":       map[string]any{"Ref": fnID},
			})
		})
	}
	check(t, "the jobs function's name output", func() {
		tpl.HasOutput(jsii.String("JobsFunctionName"), map[string]any{
			"Value": map[string]any{"Ref": idOf(t, js, "AWS::Lambda::Function", "JobsFunction")},
		})
	})
}

// TestDeployGuideListsEveryOutput: the outputs table of the deploy guide
// names each output the stack has, so a reader finds what each one is for.
func TestDeployGuideListsEveryOutput(t *testing.T) {
	_, js := synth(t)
	raw, err := os.ReadFile("../docs/guides/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "| output | use |")
	if !ok {
		t.Fatal("docs/guides/deploy.md: no outputs table (| output | use |)")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	for _, id := range keys(js["Outputs"]) {
		if !strings.Contains(table, "`"+id+"`") {
			t.Errorf("docs/guides/deploy.md: the outputs table does not name `%s`", id)
		}
	}
}

func TestSchedules(t *testing.T) {
	tpl, js := synth(t)
	countIs(t, tpl, "AWS::Events::Rule", len(deploy.Jobs))
	for _, j := range deploy.Jobs {
		fnID, _ := byConstruct(t, js, "AWS::Lambda::Function", deploy.LogicalID(j.Function, "Function"))
		_, rule := byConstruct(t, js, "AWS::Events::Rule", deploy.LogicalID(j.Name, "Job"))
		p := props(rule)
		if p["ScheduleExpression"] != j.Schedule || p["State"] != "ENABLED" {
			t.Errorf("job %s: schedule %v state %v, want %s ENABLED", j.Name, p["ScheduleExpression"], p["State"], j.Schedule)
		}
		targets := p["Targets"].([]any)
		if len(targets) != 1 {
			t.Fatalf("job %s: %d targets, want 1", j.Name, len(targets))
		}
		target := targets[0].(map[string]any)
		var input map[string]any
		if err := json.Unmarshal([]byte(target["Input"].(string)), &input); err != nil || !reflect.DeepEqual(input, map[string]any{"job": j.Name}) {
			t.Errorf("job %s: input %v, want {\"job\":%q}", j.Name, target["Input"], j.Name)
		}
		if !reflect.DeepEqual(target["Arn"], map[string]any{"Fn::GetAtt": []any{fnID, "Arn"}}) {
			t.Errorf("job %s: target %v, want function %s", j.Name, target["Arn"], fnID)
		}
		if !reflect.DeepEqual(normalize(target["RetryPolicy"]), normalize(map[string]any{"MaximumRetryAttempts": 2})) {
			t.Errorf("job %s: retry policy %v, want 2 attempts", j.Name, target["RetryPolicy"])
		}
		check(t, j.Name+" invoke permission", func() {
			tpl.HasResourceProperties(jsii.String("AWS::Lambda::Permission"), map[string]any{
				"Action":       "lambda:InvokeFunction",
				"Principal":    "events.amazonaws.com",
				"FunctionName": map[string]any{"Fn::GetAtt": []any{fnID, "Arn"}},
			})
		})
	}
}

// TestGrants checks least privilege: no "*" or "<service>:*" action, no
// "*" resource for any action (tables, bucket, invoke targets, secrets and
// models all name their resources), and each function's policy names
// exactly the tables it lists and the bucket only if it uses it.
func TestGrants(t *testing.T) {
	_, js := synth(t)
	policies := resources(js, "AWS::IAM::Policy")
	for id, pol := range policies {
		for _, st := range props(pol)["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			s := st.(map[string]any)
			for _, a := range asList(s["Action"]) {
				action := a.(string)
				if action == "*" || strings.HasSuffix(action, ":*") {
					t.Errorf("policy %s grants %s", id, action)
				}
			}
			// Step Functions log delivery has no resource ARN; AWS wants "*".
			// dynamodb:ListStreams has no resource ARN either (the stream
			// consumer's grant).
			if slices.Contains(asList(s["Resource"]), any("*")) && !onlyLogDelivery(s["Action"]) &&
				!reflect.DeepEqual(asList(s["Action"]), []any{"dynamodb:ListStreams"}) {
				t.Errorf("policy %s grants %v on every resource", id, s["Action"])
			}
		}
	}
	bucketID := idOf(t, js, "AWS::S3::Bucket", deploy.BucketLogicalID)
	for _, f := range deploy.Functions {
		_, fn := byConstruct(t, js, "AWS::Lambda::Function", deploy.LogicalID(f.Name, "Function"))
		role := props(fn)["Role"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
		var docs []string
		for _, pol := range policies {
			p := props(pol)
			if slices.ContainsFunc(asList(p["Roles"]), func(r any) bool {
				return reflect.DeepEqual(r, map[string]any{"Ref": role})
			}) {
				b, _ := json.Marshal(p["PolicyDocument"])
				docs = append(docs, string(b))
			}
		}
		doc := strings.Join(docs, "\n")
		for _, tb := range deploy.Tables {
			tid := idOf(t, js, "AWS::DynamoDB::Table", deploy.LogicalID(tb.ID, "Table"))
			granted := strings.Contains(doc, `"`+tid+`"`)
			readOnly := slices.Contains(f.ReadTables, tb.ID)
			// The stream consumer reads its table's stream (TestSpanStream).
			stream := f.Name == deploy.SpanStream.Consumer && tb.ID == deploy.SpanStream.Table
			if listed := slices.Contains(f.Tables, tb.ID) || readOnly || stream; granted != listed {
				t.Errorf("function %s: access to table %s is %v, catalogue says %v", f.Name, tb.ID, granted, listed)
			}
			if readOnly {
				for _, st := range roleStatements(t, js, f.Name) {
					res, _ := json.Marshal(st["Resource"])
					if !strings.Contains(string(res), `"`+tid+`"`) {
						continue
					}
					for _, a := range asList(st["Action"]) {
						if s, _ := a.(string); strings.HasPrefix(s, "dynamodb:") && !readAction(s) {
							t.Errorf("function %s: %s on read-only table %s", f.Name, s, tb.ID)
						}
					}
				}
			}
			indexes := `{"Fn::GetAtt":["` + tid + `","Arn"]},"/index/*"]`
			if granted && len(tb.Indexes) > 0 && !strings.Contains(doc, indexes) {
				t.Errorf("function %s: grant on %s does not cover its indexes", f.Name, tb.ID)
			}
		}
		if granted := strings.Contains(doc, `"`+bucketID+`"`); granted != f.Bucket {
			t.Errorf("function %s: bucket access %v, catalogue says %v", f.Name, granted, f.Bucket)
		}
	}
}

// readAction reports whether a DynamoDB action only reads.
func readAction(a string) bool {
	for _, p := range []string{"dynamodb:Get", "dynamodb:BatchGet", "dynamodb:Query", "dynamodb:Scan", "dynamodb:Describe", "dynamodb:ConditionCheck"} {
		if strings.HasPrefix(a, p) {
			return true
		}
	}
	return false
}

// tableActions returns which of actions the function's role has on the
// table with logical id tid (a read-only grant has none of the writes).
func tableActions(t *testing.T, js map[string]any, fnName, tid string, actions ...string) []string {
	t.Helper()
	var out []string
	for _, st := range roleStatements(t, js, fnName) {
		res, _ := json.Marshal(st["Resource"])
		if !strings.Contains(string(res), `"`+tid+`"`) {
			continue
		}
		for _, a := range asList(st["Action"]) {
			if slices.Contains(actions, a.(string)) && !slices.Contains(out, a.(string)) {
				out = append(out, a.(string))
			}
		}
	}
	return out
}

// roleStatements returns every statement of every policy attached to a
// catalogue function's role.
func roleStatements(t *testing.T, js map[string]any, fnName string) []map[string]any {
	t.Helper()
	_, fn := byConstruct(t, js, "AWS::Lambda::Function", deploy.LogicalID(fnName, "Function"))
	role := props(fn)["Role"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
	var out []map[string]any
	for _, pol := range resources(js, "AWS::IAM::Policy") {
		p := props(pol)
		if !slices.ContainsFunc(asList(p["Roles"]), func(r any) bool { return reflect.DeepEqual(r, map[string]any{"Ref": role}) }) {
			continue
		}
		for _, st := range p["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			out = append(out, st.(map[string]any))
		}
	}
	return out
}

// withActionPrefix keeps the statements that grant some action starting
// with prefix (e.g. "bedrock:"), checking that they do not mix services.
func withActionPrefix(t *testing.T, sts []map[string]any, prefix string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, s := range sts {
		actions := asList(s["Action"])
		n := 0
		for _, a := range actions {
			if strings.HasPrefix(a.(string), prefix) {
				n++
			}
		}
		if n > 0 && n != len(actions) {
			t.Errorf("statement %v mixes %s actions with others", s, prefix)
		}
		if n > 0 {
			out = append(out, s)
		}
	}
	return out
}

// grantPairs flattens statements into sorted "action resource" pairs, so
// that statement boundaries (which CDK may merge) do not matter.
func grantPairs(t *testing.T, sts []map[string]any) []string {
	t.Helper()
	var out []string
	for _, s := range sts {
		if s["Effect"] != "Allow" || s["Condition"] != nil {
			t.Errorf("statement %v: want an unconditional Allow", s)
		}
		for _, a := range asList(s["Action"]) {
			for _, r := range asList(s["Resource"]) {
				b, _ := json.Marshal(r)
				out = append(out, a.(string)+" "+string(b))
			}
		}
	}
	sort.Strings(out)
	return out
}

// subs is the grant pairs of actions × Fn::Sub resources.
func subs(actions []string, resources ...string) []string {
	var out []string
	for _, a := range actions {
		for _, r := range resources {
			b, _ := json.Marshal(map[string]any{"Fn::Sub": r})
			out = append(out, a+" "+string(b))
		}
	}
	sort.Strings(out)
	return out
}

// invokeTargets lists the functions (CDK logical ids) a set of
// lambda:InvokeFunction statements names, failing on any other resource.
func invokeTargets(t *testing.T, js map[string]any, sts []map[string]any) []string {
	t.Helper()
	fnIDs := resources(js, "AWS::Lambda::Function")
	seen := map[string]bool{}
	for _, s := range sts {
		if !reflect.DeepEqual(asList(s["Action"]), []any{"lambda:InvokeFunction"}) {
			t.Errorf("invoke statement grants %v, want only lambda:InvokeFunction", s["Action"])
		}
		for _, r := range asList(s["Resource"]) {
			id := ""
			switch v := r.(type) {
			case map[string]any:
				if ga, ok := v["Fn::GetAtt"].([]any); ok && ga[1] == "Arn" {
					id = ga[0].(string) // the function
				} else if j, ok := v["Fn::Join"].([]any); ok {
					parts := j[1].([]any)
					if len(parts) == 2 && parts[1] == ":*" { // its versions and aliases
						if ga, ok := parts[0].(map[string]any)["Fn::GetAtt"].([]any); ok && ga[1] == "Arn" {
							id = ga[0].(string)
						}
					}
				}
			}
			if _, ok := fnIDs[id]; !ok {
				t.Errorf("invoke statement names %v, want a catalogue function's ARN", r)
				continue
			}
			seen[id] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

func TestInvokeGrants(t *testing.T) {
	_, js := synth(t)
	for _, f := range deploy.Functions {
		var want []string
		for _, target := range f.Invokes {
			if target != deploy.WakeQueue.Consumer { // through the wake queue (TestWakeQueue)
				want = append(want, idOf(t, js, "AWS::Lambda::Function", deploy.LogicalID(target, "Function")))
			}
		}
		sort.Strings(want)
		got := invokeTargets(t, js, withActionPrefix(t, roleStatements(t, js, f.Name), "lambda:"))
		if !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Errorf("function %s may invoke %v, catalogue says %v", f.Name, got, want)
		}
	}
}

func TestAsyncInvokeConfig(t *testing.T) {
	tpl, js := synth(t)
	invoked := deploy.InvokedFunctions()
	n := 0
	for _, f := range deploy.Functions {
		fnID := idOf(t, js, "AWS::Lambda::Function", deploy.LogicalID(f.Name, "Function"))
		var got []map[string]any
		for _, c := range resources(js, "AWS::Lambda::EventInvokeConfig") {
			if reflect.DeepEqual(props(c)["FunctionName"], map[string]any{"Ref": fnID}) {
				got = append(got, props(c))
			}
		}
		if !deploy.ConfiguresAsyncInvoke(f, invoked) {
			if len(got) != 0 {
				t.Errorf("function %s: async invoke config %v, catalogue has none", f.Name, got)
			}
			continue
		}
		n++
		want := map[string]any{
			"FunctionName":             map[string]any{"Ref": fnID},
			"Qualifier":                "$LATEST",
			"MaximumRetryAttempts":     f.AsyncRetries,
			"MaximumEventAgeInSeconds": 6 * 60 * 60,
		}
		if len(got) != 1 || !reflect.DeepEqual(normalize(got[0]), normalize(want)) {
			t.Errorf("function %s: async invoke config %v, want %v", f.Name, got, want)
		}
	}
	countIs(t, tpl, "AWS::Lambda::EventInvokeConfig", n)
}

func TestModelAccess(t *testing.T) {
	_, js := synth(t)
	for _, f := range deploy.Functions {
		got := grantPairs(t, withActionPrefix(t, roleStatements(t, js, f.Name), "bedrock:"))
		var want []string
		if f.RunsAgents {
			want = subs([]string{"bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"},
				"arn:${AWS::Partition}:bedrock:*::foundation-model/*",
				"arn:${AWS::Partition}:bedrock:${AWS::Region}:${AWS::AccountId}:inference-profile/*")
		}
		if !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Errorf("function %s (RunsAgents %v): bedrock grants %v, want %v", f.Name, f.RunsAgents, got, want)
		}
	}
}

func TestSecretsAccess(t *testing.T) {
	_, js := synth(t)
	want := subs([]string{"secretsmanager:GetSecretValue"},
		"arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:"+deploy.SecretNamePrefix+"*")
	if !strings.HasSuffix(want[0], `:secret:switchboard/*"}`) {
		t.Fatalf("secrets grant %s is not scoped to switchboard/", want[0])
	}
	for _, f := range deploy.Functions {
		got := grantPairs(t, withActionPrefix(t, roleStatements(t, js, f.Name), "secretsmanager:"))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("function %s: secrets grants %v, want %v", f.Name, got, want)
		}
	}
}

// TestWhatTheRestOfSwitchboardReliesOn pins, in plain values, the deploy facts
// that handlers, the README and black-box tests depend on, so a catalogue
// edit that changes one shows up here and not only in production.
func TestWhatTheRestOfSwitchboardReliesOn(t *testing.T) {
	tpl, js := synth(t)
	fnID := func(name string) string {
		return idOf(t, js, "AWS::Lambda::Function", deploy.LogicalID(name, "Function"))
	}
	for name, auth := range map[string]string{"rocketchat-webhook": "NONE", "tools": "AWS_IAM"} {
		check(t, name+" URL auth "+auth, func() {
			tpl.HasResourceProperties(jsii.String("AWS::Lambda::Url"), map[string]any{
				"AuthType":          auth,
				"TargetFunctionArn": map[string]any{"Fn::GetAtt": []any{fnID(name), "Arn"}},
			})
		})
	}
	// A public URL needs both statements since October 2025, or every call is a 403.
	check(t, "rocketchat-webhook public InvokeFunctionUrl", func() {
		tpl.HasResourceProperties(jsii.String("AWS::Lambda::Permission"), map[string]any{
			"Action": "lambda:InvokeFunctionUrl", "Principal": "*", "FunctionUrlAuthType": "NONE",
			"FunctionName": map[string]any{"Fn::GetAtt": []any{fnID("rocketchat-webhook"), "Arn"}},
		})
	})
	check(t, "rocketchat-webhook public InvokeFunction via its URL only", func() {
		tpl.HasResourceProperties(jsii.String("AWS::Lambda::Permission"), map[string]any{
			"Action": "lambda:InvokeFunction", "Principal": "*", "InvokedViaFunctionUrl": true,
			"FunctionName": map[string]any{"Fn::GetAtt": []any{fnID("rocketchat-webhook"), "Arn"}},
		})
	})
	for _, perm := range resources(js, "AWS::Lambda::Permission") {
		p := props(perm)
		if p["Principal"] == "*" && p["FunctionUrlAuthType"] != "NONE" && p["InvokedViaFunctionUrl"] != true {
			t.Errorf("permission %v lets anyone invoke outside a function URL", p)
		}
	}

	_, rule := byConstruct(t, js, "AWS::Events::Rule", deploy.LogicalID("rocketchat-poll", "Job"))
	if got := props(rule)["ScheduleExpression"]; got != "rate(1 minute)" {
		t.Errorf("rocketchat-poll schedule %v, want rate(1 minute)", got)
	}
	if got := props(rule)["Targets"].([]any)[0].(map[string]any)["Arn"]; !reflect.DeepEqual(got, map[string]any{"Fn::GetAtt": []any{fnID("jobs"), "Arn"}}) {
		t.Errorf("rocketchat-poll target %v, want the jobs function", got)
	}

	// Its wakes come from the wake queue, which retries on its own; an
	// asynchronous invoke (nothing sends one) would run once.
	check(t, "agent-worker async retries", func() {
		tpl.HasResourceProperties(jsii.String("AWS::Lambda::EventInvokeConfig"), map[string]any{
			"FunctionName":         map[string]any{"Ref": fnID("agent-worker")},
			"MaximumRetryAttempts": 0,
		})
	})
	for _, sender := range []string{"jobs", "rocketchat-webhook"} {
		_, fn := byConstruct(t, js, "AWS::Lambda::Function", deploy.LogicalID(sender, "Function"))
		got := props(fn)["Environment"].(map[string]any)["Variables"].(map[string]any)["SWITCHBOARD_WAKE_QUEUE_URL"]
		if want := map[string]any{"Ref": idOf(t, js, "AWS::SQS::Queue", deploy.WakeQueue.LogicalID())}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: SWITCHBOARD_WAKE_QUEUE_URL = %v, want %v", sender, got, want)
		}
	}
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

func TestAlarms(t *testing.T) {
	tpl, js := synth(t)
	// An alarm per function no caller sees fail (agent-worker, jobs) and per
	// state machine started asynchronously: $0.10 a month each.
	var alarmed []string
	for _, f := range deploy.Functions {
		if deploy.HasErrorAlarm(f) {
			alarmed = append(alarmed, f.Name)
		}
	}
	if want := []string{"jobs", "agent-worker"}; !reflect.DeepEqual(alarmed, want) {
		t.Errorf("functions with an errors alarm %v, want %v", alarmed, want)
	}
	machines := 0
	for _, m := range deploy.StateMachines {
		if deploy.HasFailedAlarm(m) {
			machines++
		}
	}
	if machines != 1 {
		t.Errorf("%d machines with an alarm on failed executions, want 1 (the document pipeline; ask-agent's caller gets its failures)", machines)
	}
	countIs(t, tpl, "AWS::CloudWatch::Alarm", len(alarmed)+machines)
	for _, f := range deploy.Functions {
		if !deploy.HasErrorAlarm(f) {
			continue
		}
		fnID, _ := byConstruct(t, js, "AWS::Lambda::Function", deploy.LogicalID(f.Name, "Function"))
		check(t, f.Name+" errors alarm", func() {
			tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
				"Namespace":          "AWS/Lambda",
				"MetricName":         "Errors",
				"Statistic":          "Sum",
				"Period":             300,
				"EvaluationPeriods":  1,
				"Threshold":          1,
				"ComparisonOperator": "GreaterThanOrEqualToThreshold",
				"Dimensions":         []any{map[string]any{"Name": "FunctionName", "Value": map[string]any{"Ref": fnID}}},
			})
		})
	}
}

func TestConfigIsPackagedWithEachFunction(t *testing.T) {
	synth(t)
	for _, f := range deploy.Functions {
		dir := filepath.Join(synthOnce.outdir, "switchboard-staging", f.Name)
		st, err := os.Stat(filepath.Join(dir, "bootstrap"))
		if err != nil || st.Mode().Perm()&0o111 == 0 {
			t.Errorf("%s: staged bootstrap missing or not executable (%v)", f.Name, err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, deploy.ConfigFileName)); err != nil || !strings.Contains(string(b), "instance:") {
			t.Errorf("%s: staged %s: %v", f.Name, deploy.ConfigFileName, err)
		}
	}
}

func TestUnknownInvokeTargetPanics(t *testing.T) {
	saved := deploy.Functions
	deploy.Functions = []deploy.Function{{Name: "a", MemoryMB: 128, TimeoutSeconds: 3, Invokes: []string{"nope"}}}
	t.Cleanup(func() { deploy.Functions = saved })
	assets := t.TempDir()
	if err := os.MkdirAll(filepath.Join(assets, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(assets, "a", "bootstrap"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	defer func() {
		msg := fmt.Sprint(recover())
		if want := `function a invokes unknown function "nope"`; !strings.Contains(msg, want) {
			t.Errorf("panic %q, want one containing %q", msg, want)
		}
	}()
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
	NewSwitchboardStack(app, "Bad", &SwitchboardStackProps{AssetDir: assets})
}

// TestSecrets pins, in plain values, the secrets the config and the docs
// refer to: their names (under the prefix the functions may read), how
// their values come about, that deleting the stack keeps them, and the
// outputs that name them. Each secret costs $0.40 a month, so there are two:
// the instance's JSON secret and the console password.
func TestSecrets(t *testing.T) {
	tpl, js := synth(t)
	countIs(t, tpl, "AWS::SecretsManager::Secret", 2)
	want := map[string]map[string]any{
		"switchboard/instance": {
			"GenerateSecretString": map[string]any{"PasswordLength": 64, "ExcludePunctuation": true,
				"GenerateStringKey":    "approvalSigningKey",
				"SecretStringTemplate": `{"telegramBotToken":"REPLACE_ME with the token from @BotFather"}`},
		},
		"switchboard/console-password": {
			"GenerateSecretString": map[string]any{"PasswordLength": 32, "ExcludePunctuation": true},
		},
	}
	names := map[string]any{"switchboard/instance": 0, "switchboard/console-password": 0}
	seen := map[string]bool{}
	for _, sec := range deploy.Secrets {
		id, res := byConstruct(t, js, "AWS::SecretsManager::Secret", sec.LogicalID())
		if res["DeletionPolicy"] != "Retain" || res["UpdateReplacePolicy"] != "Retain" {
			t.Errorf("%s: DeletionPolicy %v / UpdateReplacePolicy %v, want Retain", id, res["DeletionPolicy"], res["UpdateReplacePolicy"])
		}
		p := props(res)
		name, _ := p["Name"].(string)
		w, ok := want[name]
		if !ok {
			t.Errorf("%s: name %v, want one of %v", id, p["Name"], keys(names))
			continue
		}
		seen[name] = true
		if !strings.HasPrefix(name, deploy.SecretNamePrefix) {
			t.Errorf("%s: name %s is outside %s*, which the functions may read", id, name, deploy.SecretNamePrefix)
		}
		wantKeys := []string{"Description", "Name"}
		for k, v := range w {
			wantKeys = append(wantKeys, k)
			if !reflect.DeepEqual(normalize(p[k]), normalize(v)) {
				t.Errorf("%s.%s = %v, want %v", id, k, p[k], v)
			}
		}
		sort.Strings(wantKeys)
		if got := keys(p); !reflect.DeepEqual(got, wantKeys) {
			t.Errorf("%s has properties %v, want %v", id, got, wantKeys)
		}
		desc, _ := p["Description"].(string)
		if ref := "secretsmanager:" + name; !strings.Contains(desc, ref) {
			t.Errorf("%s: description %q does not give the config reference %s", id, desc, ref)
		}
		check(t, id+" ARN output", func() {
			tpl.HasOutput(jsii.String(sec.ARNOutputID()), map[string]any{"Value": map[string]any{"Ref": id}})
		})
		check(t, id+" name output", func() {
			tpl.HasOutput(jsii.String(sec.NameOutputID()), map[string]any{"Value": name})
		})
	}
	if len(seen) != len(want) {
		t.Errorf("secrets %v, want %v", seen, keys(names))
	}
	_, inst := byConstruct(t, js, "AWS::SecretsManager::Secret", deploy.LogicalID(deploy.InstanceSecret, "Secret"))
	desc := props(inst)["Description"].(string)
	for _, ref := range []string{"instance.approvals.signingKey: secretsmanager:switchboard/instance#approvalSigningKey",
		"instance.telegram.botToken: secretsmanager:switchboard/instance#telegramBotToken", "provision-agent"} {
		if !strings.Contains(desc, ref) {
			t.Errorf("instance secret description %q does not say %q", desc, ref)
		}
	}
}

// miniApp synthesizes a stack of one catalogue function (cheap) with props,
// returning its template; it panics like NewSwitchboardStack.
func miniApp(t *testing.T, props SwitchboardStackProps, machines ...deploy.StateMachine) map[string]any {
	t.Helper()
	savedFns, savedJobs, savedMachines := deploy.Functions, deploy.Jobs, deploy.StateMachines
	deploy.Functions = []deploy.Function{{Name: "a", MemoryMB: 128, TimeoutSeconds: 3}}
	deploy.Jobs = nil
	deploy.StateMachines = machines
	t.Cleanup(func() { deploy.Functions, deploy.Jobs, deploy.StateMachines = savedFns, savedJobs, savedMachines })
	props.AssetDir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(props.AssetDir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(props.AssetDir, "a", "bootstrap"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
	stack := NewSwitchboardStack(app, "Mini", &props)
	return *assertions.Template_FromStack(stack, nil).ToJSON()
}

func TestSecretPrefix(t *testing.T) {
	js := miniApp(t, SwitchboardStackProps{SecretPrefix: "switchboard/staging/"})
	for _, sec := range deploy.Secrets {
		id, res := byConstruct(t, js, "AWS::SecretsManager::Secret", sec.LogicalID())
		want := "switchboard/staging/" + sec.Name
		if got := props(res)["Name"]; got != want {
			t.Errorf("%s: name %v, want %s", id, got, want)
		}
		if desc, _ := props(res)["Description"].(string); !strings.Contains(desc, "secretsmanager:"+want) {
			t.Errorf("%s: description %q does not give the config reference secretsmanager:%s", id, desc, want)
		}
		out := js["Outputs"].(map[string]any)[sec.NameOutputID()]
		if got := out.(map[string]any)["Value"]; got != want {
			t.Errorf("output %s = %v, want %s", sec.NameOutputID(), got, want)
		}
	}

	for _, bad := range []string{"other/", "Switchboard/", "switchboard", "switchboard/a b/", "switchboard/ä/"} {
		t.Run(bad, func(t *testing.T) {
			defer func() {
				msg := fmt.Sprint(recover())
				if want := fmt.Sprintf("secret prefix %q", bad); !strings.Contains(msg, want) {
					t.Errorf("panic %q, want one containing %q", msg, want)
				}
			}()
			miniApp(t, SwitchboardStackProps{SecretPrefix: bad})
		})
	}
}

func TestCheckAssetsNamesWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	err := CheckAssets(dir)
	if err == nil {
		t.Fatal("CheckAssets on an empty folder: no error")
	}
	for _, f := range deploy.Functions {
		if want := filepath.Join(dir, f.Name, "bootstrap"); !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if !strings.Contains(err.Error(), "make build") {
		t.Errorf("error %q does not say to run make build", err)
	}
}

// TestSAMTemplateMatchesStack keeps template.yaml in step with the
// CDK app. go test does not recheck files outside this module, so a cached
// pass can hide an edited template.yaml: run with -count=1 (make test does).
// It compares: same tables, bucket settings, secrets (names, generation or
// placeholder, retention, outputs), function settings and name outputs, env vars and what
// they refer to, table grants, invoke grants, secrets and model statements,
// async invoke config, URLs, schedules and alarms.
func TestSAMTemplateMatchesStack(t *testing.T) {
	_, js := synth(t)
	raw, err := os.ReadFile("../template.yaml")
	if err != nil {
		t.Fatalf("read ../template.yaml: %v", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("parse template.yaml: %v", err)
	}
	samDoc, _ := cfnValue(t, &doc).(map[string]any)
	samResources, _ := samDoc["Resources"].(map[string]any)
	samRes := func(typ, id string) map[string]any {
		t.Helper()
		r, _ := samResources[id].(map[string]any)
		if r == nil || r["Type"] != typ {
			t.Fatalf("template.yaml: no %s %s (run `go run ./cmd/gensam` in the repo root)", typ, id)
		}
		p, _ := r["Properties"].(map[string]any)
		return p
	}
	same := func(what string, sam, cdk any) {
		t.Helper()
		if !reflect.DeepEqual(normalize(sam), normalize(cdk)) {
			t.Errorf("%s: template.yaml has %v, CDK has %v", what, sam, cdk)
		}
	}

	for _, tb := range deploy.Tables {
		id := deploy.LogicalID(tb.ID, "Table")
		s := samRes("AWS::DynamoDB::Table", id)
		_, r := byConstruct(t, js, "AWS::DynamoDB::Table", id)
		c := props(r)
		for _, k := range []string{"BillingMode", "KeySchema", "GlobalSecondaryIndexes", "TimeToLiveSpecification", "PointInTimeRecoverySpecification", "StreamSpecification"} {
			same(id+"."+k, s[k], c[k])
		}
		same(id+".AttributeDefinitions", sortedByName(s["AttributeDefinitions"]), sortedByName(c["AttributeDefinitions"]))
	}

	s := samRes("AWS::S3::Bucket", deploy.BucketLogicalID)
	_, r := byConstruct(t, js, "AWS::S3::Bucket", deploy.BucketLogicalID)
	for _, k := range []string{"BucketEncryption", "VersioningConfiguration", "PublicAccessBlockConfiguration"} {
		same("bucket."+k, s[k], props(r)[k])
	}

	compareSecrets(t, js, samDoc, same)

	samOutputs, _ := samDoc["Outputs"].(map[string]any)
	cdkOutputs, _ := js["Outputs"].(map[string]any)
	same("output ids", keys(samOutputs), keys(cdkOutputs))
	for _, f := range deploy.Functions {
		out := deploy.FunctionNameOutputID(f.Name)
		same("output "+out, samOutputs[out], withoutHashes(cdkOutputs[out]))
	}

	for _, f := range deploy.Functions {
		id := deploy.LogicalID(f.Name, "Function")
		s := samRes("AWS::Serverless::Function", id)
		cdkID, r := byConstruct(t, js, "AWS::Lambda::Function", id)
		c := props(r)
		for _, k := range []string{"Runtime", "Handler", "Architectures", "MemorySize", "Timeout"} {
			same(id+"."+k, s[k], c[k])
		}
		same(id+" env vars", s["Environment"].(map[string]any)["Variables"],
			withoutHashes(c["Environment"].(map[string]any)["Variables"]))

		var samTables, samReadTables, samInvokes []any
		var samStatements []map[string]any
		for _, p := range asList(s["Policies"]) {
			for kind, v := range p.(map[string]any) {
				switch kind {
				case "DynamoDBCrudPolicy":
					samTables = append(samTables, v.(map[string]any)["TableName"])
				case "DynamoDBReadPolicy":
					samReadTables = append(samReadTables, v.(map[string]any)["TableName"])
				case "LambdaInvokePolicy":
					samInvokes = append(samInvokes, v.(map[string]any)["FunctionName"])
				case "SQSSendMessagePolicy":
					// TestWakeQueue holds CDK to deploy.SendsWakes; here the template does too.
					want := map[string]any{"Fn::GetAtt": []any{deploy.WakeQueue.LogicalID(), "QueueName"}}
					if !deploy.SendsWakes(f) || !reflect.DeepEqual(normalize(v.(map[string]any)["QueueName"]), normalize(want)) {
						t.Errorf("template.yaml: %s may send to %v; catalogue: sends wakes %v", id, v, deploy.SendsWakes(f))
					}
				case "Statement":
					for _, st := range v.([]any) {
						samStatements = append(samStatements, st.(map[string]any))
					}
				case "S3CrudPolicy":
					// TestSAMTemplateCoversCatalogue in shared/platform/deploy checks it against Bucket.
				default:
					t.Errorf("template.yaml: %s has policy %s, which this test does not compare with CDK", id, kind)
				}
			}
		}
		var wantTables []any
		for _, tid := range f.Tables {
			wantTables = append(wantTables, map[string]any{"Ref": deploy.LogicalID(tid, "Table")})
		}
		same(id+" table grants (catalogue, which TestGrants holds CDK to)", samTables, wantTables)
		var wantReadTables []any
		for _, tid := range f.ReadTables {
			wantReadTables = append(wantReadTables, map[string]any{"Ref": deploy.LogicalID(tid, "Table")})
		}
		same(id+" read-only table grants", samReadTables, wantReadTables)

		cdkStatements := roleStatements(t, js, f.Name)
		var cdkInvokes []any
		for _, target := range invokeTargets(t, js, withActionPrefix(t, cdkStatements, "lambda:")) {
			cdkInvokes = append(cdkInvokes, withoutHashes(map[string]any{"Ref": target}))
		}
		same(id+" invoke grants", sortedJSON(samInvokes), sortedJSON(cdkInvokes))
		same(id+" secrets, model and state machine grants", grantPairs(t, samStatements), slices.Concat(
			grantPairs(t, withActionPrefix(t, cdkStatements, "bedrock:")),
			grantPairs(t, withActionPrefix(t, cdkStatements, "secretsmanager:")),
			grantPairs(t, withActionPrefix(t, cdkStatements, "states:"))))

		var cdkAsync map[string]any
		for _, cfg := range resources(js, "AWS::Lambda::EventInvokeConfig") {
			if p := props(cfg); reflect.DeepEqual(p["FunctionName"], map[string]any{"Ref": cdkID}) {
				cdkAsync = map[string]any{"MaximumRetryAttempts": p["MaximumRetryAttempts"], "MaximumEventAgeInSeconds": p["MaximumEventAgeInSeconds"]}
			}
		}
		same(id+" async invoke config", s["EventInvokeConfig"], cdkAsync)

		urls := resources(js, "AWS::Lambda::Url")
		var cdkURL map[string]any
		for _, u := range urls {
			if reflect.DeepEqual(props(u)["TargetFunctionArn"], map[string]any{"Fn::GetAtt": []any{cdkID, "Arn"}}) {
				cdkURL = map[string]any{"AuthType": props(u)["AuthType"], "InvokeMode": props(u)["InvokeMode"]}
			}
		}
		samURL, _ := s["FunctionUrlConfig"].(map[string]any)
		same(id+" function URL", samURL, cdkURL)

		events, _ := s["Events"].(map[string]any)
		for _, j := range deploy.Jobs {
			if j.Function != f.Name {
				continue
			}
			ev, ok := events[deploy.LogicalID(j.Name, "Job")].(map[string]any)
			if !ok {
				t.Errorf("template.yaml: %s has no event for job %s", id, j.Name)
				continue
			}
			ep := ev["Properties"].(map[string]any)
			_, rule := byConstruct(t, js, "AWS::Events::Rule", deploy.LogicalID(j.Name, "Job"))
			target := props(rule)["Targets"].([]any)[0].(map[string]any)
			same(j.Name+" schedule", ep["Schedule"], props(rule)["ScheduleExpression"])
			same(j.Name+" input", ep["Input"], target["Input"])
			same(j.Name+" retries", ep["RetryPolicy"], target["RetryPolicy"])
		}
		wantEvents := len(jobsOf(f.Name))
		if f.Name == deploy.WakeQueue.Consumer {
			wantEvents++
			ev, _ := events[deploy.WakeQueue.LogicalID()].(map[string]any)
			ep, _ := ev["Properties"].(map[string]any)
			same(id+" wake queue event", []any{ev["Type"], ep["Queue"], ep["BatchSize"], ep["FunctionResponseTypes"]},
				[]any{"SQS", map[string]any{"Fn::GetAtt": []any{deploy.WakeQueue.LogicalID(), "Arn"}}, 1, []any{"ReportBatchItemFailures"}})
		}
		if f.Name == deploy.SpanStream.Consumer {
			wantEvents++
			sp := deploy.SpanStream
			ev, _ := events[sp.LogicalID()].(map[string]any)
			ep, _ := ev["Properties"].(map[string]any)
			m := spanStreamMapping(t, js)
			same(id+" span stream event", []any{ev["Type"], ep["StartingPosition"], ep["BatchSize"], ep["MaximumRetryAttempts"],
				ep["MaximumRecordAgeInSeconds"], ep["FunctionResponseTypes"], ep["FilterCriteria"]},
				[]any{"DynamoDB", m["StartingPosition"], m["BatchSize"], m["MaximumRetryAttempts"],
					m["MaximumRecordAgeInSeconds"], m["FunctionResponseTypes"], m["FilterCriteria"]})
			same(id+" span stream", ep["Stream"], map[string]any{"Fn::GetAtt": []any{deploy.LogicalID(sp.Table, "Table"), "StreamArn"}})
		}
		if len(events) != wantEvents {
			t.Errorf("template.yaml: %s has %d events, want %d (its jobs, the wake queue, the span stream)", id, len(events), wantEvents)
		}

		if deploy.HasErrorAlarm(f) {
			a := samRes("AWS::CloudWatch::Alarm", deploy.LogicalID(f.Name, "Errors"))
			_, ca := byConstruct(t, js, "AWS::CloudWatch::Alarm", deploy.LogicalID(f.Name, "Errors"))
			for _, k := range []string{"Namespace", "MetricName", "Statistic", "Period", "EvaluationPeriods", "Threshold", "ComparisonOperator", "TreatMissingData"} {
				same(f.Name+" alarm "+k, a[k], props(ca)[k])
			}
		}
	}
}

// compareSecrets holds template.yaml's secrets and their outputs to the CDK
// stack's. SAM names them from the SecretPrefix parameter; with its default
// they must be exactly what CDK synthesizes with its default prefix.
func compareSecrets(t *testing.T, js, samDoc map[string]any, same func(string, any, any)) {
	t.Helper()
	params, _ := samDoc["Parameters"].(map[string]any)
	param, _ := params[deploy.SecretPrefixParameter].(map[string]any)
	if param == nil {
		t.Fatalf("template.yaml: no parameter %s (run `go run ./cmd/gensam` in the repo root)", deploy.SecretPrefixParameter)
	}
	same("parameter "+deploy.SecretPrefixParameter+" default", param["Default"], deploy.SecretNamePrefix)
	same("parameter "+deploy.SecretPrefixParameter+" pattern", param["AllowedPattern"], deploy.SecretPrefixPattern)
	same("parameter "+deploy.SecretPrefixParameter+" max length", param["MaxLength"], deploy.SecretPrefixMaxLength)
	// withDefault resolves !Sub "${SecretPrefix}…" to the plain string CDK has.
	var withDefault func(v any) any
	withDefault = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			if sub, ok := v["Fn::Sub"].(string); ok && len(v) == 1 {
				r := strings.ReplaceAll(sub, "${"+deploy.SecretPrefixParameter+"}", deploy.SecretNamePrefix)
				if strings.Contains(r, "${") {
					return v // refers to something else: leave it to fail the comparison
				}
				return r
			}
			out := map[string]any{}
			for k, x := range v {
				out[k] = withDefault(x)
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, x := range v {
				out[i] = withDefault(x)
			}
			return out
		}
		return v
	}

	samResources, _ := samDoc["Resources"].(map[string]any)
	samOutputs, _ := samDoc["Outputs"].(map[string]any)
	cdkOutputs, _ := js["Outputs"].(map[string]any)
	n := 0
	for _, r := range samResources {
		if r.(map[string]any)["Type"] == "AWS::SecretsManager::Secret" {
			n++
		}
	}
	if n != len(deploy.Secrets) {
		t.Errorf("template.yaml has %d secrets, catalogue %d", n, len(deploy.Secrets))
	}
	for _, sec := range deploy.Secrets {
		id := sec.LogicalID()
		sr, _ := samResources[id].(map[string]any)
		if sr == nil || sr["Type"] != "AWS::SecretsManager::Secret" {
			t.Errorf("template.yaml: no AWS::SecretsManager::Secret %s (run `go run ./cmd/gensam` in the repo root)", id)
			continue
		}
		_, cr := byConstruct(t, js, "AWS::SecretsManager::Secret", id)
		for _, k := range []string{"DeletionPolicy", "UpdateReplacePolicy"} {
			same(id+"."+k, sr[k], cr[k])
		}
		same(id+" properties", withDefault(sr["Properties"]), props(cr))
		for _, out := range []string{sec.ARNOutputID(), sec.NameOutputID()} {
			same("output "+out, withDefault(samOutputs[out]), withoutHashes(cdkOutputs[out]))
		}
	}
}

func jobsOf(fn string) []deploy.Job {
	var out []deploy.Job
	for _, j := range deploy.Jobs {
		if j.Function == fn {
			out = append(out, j)
		}
	}
	return out
}

// cfnValue decodes YAML into plain values, turning the short intrinsic
// tags template.yaml uses into their JSON form (!Ref X → {"Ref": X}) so that
// SAM values compare with CDK's.
func cfnValue(t *testing.T, n *yaml.Node) any {
	t.Helper()
	switch n.Kind {
	case yaml.DocumentNode:
		return cfnValue(t, n.Content[0])
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = cfnValue(t, n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		l := []any{}
		for _, c := range n.Content {
			l = append(l, cfnValue(t, c))
		}
		return l
	}
	switch n.Tag {
	case "!Ref":
		return map[string]any{"Ref": n.Value}
	case "!Sub":
		return map[string]any{"Fn::Sub": n.Value}
	case "!GetAtt":
		res, attr, _ := strings.Cut(n.Value, ".")
		return map[string]any{"Fn::GetAtt": []any{res, attr}}
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		t.Fatalf("template.yaml line %d: tag %s is not handled by this test", n.Line, n.Tag)
	}
	var v any
	if err := n.Decode(&v); err != nil {
		t.Fatalf("template.yaml line %d: %v", n.Line, err)
	}
	return v
}

// cdkHash is the 8-character suffix CDK appends to a construct's logical id.
var cdkHash = regexp.MustCompile(`^([A-Za-z0-9]+)[0-9A-F]{8}$`)

// withoutHashes rewrites Ref and Fn::GetAtt targets from CDK's logical ids
// (AuditTableB07F8EEB) to template.yaml's (AuditTable).
func withoutHashes(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			switch k {
			case "Ref":
				if id, ok := x.(string); ok {
					x = cdkHash.ReplaceAllString(id, "$1")
				}
			case "Fn::GetAtt":
				if ga, ok := x.([]any); ok && len(ga) == 2 {
					x = []any{cdkHash.ReplaceAllString(ga[0].(string), "$1"), ga[1]}
				}
			default:
				x = withoutHashes(x)
			}
			out[k] = x
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = withoutHashes(x)
		}
		return out
	}
	return v
}

func sortedJSON(vs []any) []string {
	var out []string
	for _, v := range vs {
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	sort.Strings(out)
	return out
}

func idOf(t *testing.T, js map[string]any, typ, constructID string) string {
	t.Helper()
	id, _ := byConstruct(t, js, typ, constructID)
	return id
}

func keys(m any) []string {
	var out []string
	for k := range m.(map[string]any) {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedByName(v any) []string {
	var out []string
	for _, a := range asList(v) {
		m := a.(map[string]any)
		out = append(out, fmt.Sprint(m["AttributeName"], ":", m["AttributeType"]))
	}
	sort.Strings(out)
	return out
}

// TestConsoleWritesOnlyItsOwnTable: the web console is on the internet
// behind its own login, so its role may read what it shows and write
// nothing but its sessions and login counters.
func TestConsoleWritesOnlyItsOwnTable(t *testing.T) {
	_, js := synth(t)
	f, ok := deploy.FunctionByName("console")
	// It writes its own sessions, and for the operator's pause, resume,
	// stop and allowance revokes the state table and the audit trail; it
	// hands a resumed agent's held wakes to the agent-worker.
	if !ok || f.URLAuth != "NONE" || f.Bucket || !slices.Equal(f.Invokes, []string{"agent-worker"}) || f.RunsAgents {
		t.Fatalf("console in the catalogue: %+v; want a NONE function URL, no bucket, invoking only the agent-worker, no models", f)
	}
	writable := []string{"console", "audit", "state"}
	writes := []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
	for _, tb := range deploy.Tables {
		tid := idOf(t, js, "AWS::DynamoDB::Table", deploy.LogicalID(tb.ID, "Table"))
		got := tableActions(t, js, "console", tid, writes...)
		if slices.Contains(writable, tb.ID) && len(got) == 0 {
			t.Errorf("console cannot write table %s", tb.ID)
		}
		if !slices.Contains(writable, tb.ID) && len(got) > 0 {
			t.Errorf("console may %v on table %s", got, tb.ID)
		}
		reads := tableActions(t, js, "console", tid, "dynamodb:Query", "dynamodb:GetItem")
		if shown := tb.ID == "console" || slices.Contains(f.ReadTables, tb.ID) || slices.Contains(f.Tables, tb.ID); shown && len(reads) != 2 {
			t.Errorf("console reads table %s with %v, want Query and GetItem", tb.ID, reads)
		} else if !shown && len(reads) > 0 {
			t.Errorf("console may %v on table %s, which it does not show", reads, tb.ID)
		}
	}
	for _, st := range roleStatements(t, js, "console") {
		for _, a := range asList(st["Action"]) {
			if strings.HasPrefix(a.(string), "s3:") || strings.HasPrefix(a.(string), "bedrock:") ||
				(strings.HasPrefix(a.(string), "lambda:") && a.(string) != "lambda:InvokeFunction") {
				t.Errorf("console role has %s", a)
			}
		}
	}
}

// TestLogRetention: every function logs into a group of its own that keeps
// its events 30 days unless the config says otherwise (CloudWatch keeps a
// group without a retention forever, billed every month).
func TestLogRetention(t *testing.T) {
	tpl, js := synth(t)
	countIs(t, tpl, "AWS::Logs::LogGroup", len(deploy.Functions)+len(deploy.StateMachines))
	for _, f := range deploy.Functions {
		lid, group := byConstruct(t, js, "AWS::Logs::LogGroup", deploy.LogGroupLogicalID(f.Name))
		if got := props(group)["RetentionInDays"]; normalize(got) != normalize(30) {
			t.Errorf("%s: RetentionInDays %v, want 30", lid, got)
		}
		if _, named := props(group)["LogGroupName"]; named {
			t.Errorf("%s has a fixed name; it would collide with the group Lambda created before", lid)
		}
		id, fn := byConstruct(t, js, "AWS::Lambda::Function", deploy.LogicalID(f.Name, "Function"))
		lc, _ := props(fn)["LoggingConfig"].(map[string]any)
		if want := map[string]any{"Ref": lid}; !reflect.DeepEqual(lc["LogGroup"], want) {
			t.Errorf("%s: LoggingConfig %v, want LogGroup %v", id, lc, want)
		}
	}

	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		file    string
		want    int
		wantErr string
	}{
		{name: "no config file", file: "", want: 30},
		{name: "config without the key", file: write("none.yaml", "instance:\n  name: acme\n"), want: 30},
		{name: "config with the key", file: write("week.yaml", "instance:\n  name: acme\n  logRetentionDays: 7\n"), want: 7},
		{name: "a retention CloudWatch does not offer", file: write("bad.yaml", "instance:\n  logRetentionDays: 31\n"),
			wantErr: "instance.logRetentionDays: 31 days is not a retention CloudWatch Logs offers; use one of 1, 3,"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LogRetentionFromConfig(tt.file)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("= %d, %v; want %d", got, err, tt.want)
			}
		})
	}

	mini := miniApp(t, SwitchboardStackProps{LogRetentionDays: 7})
	if _, g := byConstruct(t, mini, "AWS::Logs::LogGroup", deploy.LogGroupLogicalID("a")); normalize(props(g)["RetentionInDays"]) != normalize(7) {
		t.Errorf("RetentionInDays %v, want 7", props(g)["RetentionInDays"])
	}
}

// TestMemorySizes pins the sizes chosen by measurement (see docs/cost.md):
// the agent-worker and the jobs function were 512 and 256 MB for a working
// set of at most 52 MB.
func TestMemorySizes(t *testing.T) {
	_, js := synth(t)
	want := map[string]float64{
		"agent-worker": 256, "jobs": 128,
		"tools": 256, "mcp": 256, "rocketchat-webhook": 256, "approvals": 256, "telegram-webhook": 256, "console": 256,
		"telemetry-export": 128,
	}
	for _, f := range deploy.Functions {
		id, res := byConstruct(t, js, "AWS::Lambda::Function", deploy.LogicalID(f.Name, "Function"))
		w, ok := want[f.Name]
		if !ok {
			t.Errorf("%s: no size chosen for it here; measure it and add it", f.Name)
			continue
		}
		if got := normalize(props(res)["MemorySize"]); got != normalize(w) {
			t.Errorf("%s: MemorySize %v, want %v", id, got, w)
		}
	}
}

// TestWakeQueue: the agent-worker gets its wakes from one FIFO queue (an
// agent per message group), one at a time, reporting the failed ones; a
// wake that failed every receive lands in the dead-letter queue; the
// queue hides a received wake longer than the agent-worker may run; only
// the functions that hand out wakes may send to it.
func TestWakeQueue(t *testing.T) {
	tpl, js := synth(t)
	q := deploy.WakeQueue
	qid := idOf(t, js, "AWS::SQS::Queue", q.LogicalID())
	dlq := idOf(t, js, "AWS::SQS::Queue", q.DeadLetterLogicalID())
	_, queue := byConstruct(t, js, "AWS::SQS::Queue", q.LogicalID())
	p := props(queue)
	if p["FifoQueue"] != true || normalize(p["VisibilityTimeout"]) != normalize(q.VisibilitySeconds()) ||
		!reflect.DeepEqual(normalize(p["RedrivePolicy"]), normalize(map[string]any{
			"deadLetterTargetArn": map[string]any{"Fn::GetAtt": []any{dlq, "Arn"}}, "maxReceiveCount": q.MaxReceives})) {
		t.Errorf("wake queue %v: want FIFO, visibility %d s, redrive to %s after %d receives", p, q.VisibilitySeconds(), dlq, q.MaxReceives)
	}
	if f, _ := deploy.FunctionByName(q.Consumer); q.VisibilitySeconds() <= f.TimeoutSeconds {
		t.Errorf("visibility %d s, not longer than the agent-worker's %d s", q.VisibilitySeconds(), f.TimeoutSeconds)
	}
	check(t, "the agent-worker reads the wake queue one wake at a time", func() {
		tpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"FunctionName":          map[string]any{"Ref": idOf(t, js, "AWS::Lambda::Function", deploy.LogicalID(q.Consumer, "Function"))},
			"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{qid, "Arn"}},
			"BatchSize":             1,
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
		})
	})
	for _, f := range deploy.Functions {
		var sends bool
		for _, st := range roleStatements(t, js, f.Name) {
			for _, a := range asList(st["Action"]) {
				if a == "sqs:SendMessage" && reflect.DeepEqual(normalize(st["Resource"]), normalize(map[string]any{"Fn::GetAtt": []any{qid, "Arn"}})) {
					sends = true
				}
			}
		}
		if sends != deploy.SendsWakes(f) {
			t.Errorf("function %s may send to the wake queue: %v, catalogue says %v", f.Name, sends, deploy.SendsWakes(f))
		}
	}
}

// spanStreamMapping is the properties of the CDK stack's event source
// mapping from the span table's stream.
func spanStreamMapping(t *testing.T, js map[string]any) map[string]any {
	t.Helper()
	tid := idOf(t, js, "AWS::DynamoDB::Table", deploy.LogicalID(deploy.SpanStream.Table, "Table"))
	for _, m := range resources(js, "AWS::Lambda::EventSourceMapping") {
		if reflect.DeepEqual(props(m)["EventSourceArn"], map[string]any{"Fn::GetAtt": []any{tid, "StreamArn"}}) {
			return props(m)
		}
	}
	t.Fatalf("no event source mapping from the %s table's stream", deploy.SpanStream.Table)
	return nil
}

// TestSpanStream: the span table's stream feeds telemetry-export, new
// items only, with batch item failures and bounded retries; only that
// function may read the stream, and only the functions that record spans
// write the table.
func TestSpanStream(t *testing.T) {
	_, js := synth(t)
	s := deploy.SpanStream
	m := spanStreamMapping(t, js)
	want := map[string]any{
		"FunctionName":              map[string]any{"Ref": idOf(t, js, "AWS::Lambda::Function", deploy.LogicalID(s.Consumer, "Function"))},
		"StartingPosition":          "LATEST",
		"BatchSize":                 s.BatchSize,
		"MaximumRetryAttempts":      s.MaxRetries,
		"MaximumRecordAgeInSeconds": s.MaxRecordAgeSeconds,
		"FunctionResponseTypes":     []any{"ReportBatchItemFailures"},
		"FilterCriteria":            map[string]any{"Filters": []any{map[string]any{"Pattern": deploy.StreamInsertsOnly}}},
	}
	for k, v := range want {
		if !reflect.DeepEqual(normalize(m[k]), normalize(v)) {
			t.Errorf("span stream mapping %s = %v, want %v", k, m[k], v)
		}
	}
	for _, f := range deploy.Functions {
		reads := false
		for _, st := range roleStatements(t, js, f.Name) {
			for _, a := range asList(st["Action"]) {
				if a == "dynamodb:DescribeStream" {
					reads = true
				}
			}
		}
		if reads != (f.Name == s.Consumer) {
			t.Errorf("function %s may read a table stream: %v, want only %s", f.Name, reads, s.Consumer)
		}
	}
}
