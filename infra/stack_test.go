package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"go.yaml.in/yaml/v3"

	"github.com/switchboard-dev/switchboard/shared/deploy"
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

func count(n int) *float64 { return jsii.Number(float64(n)) }

func TestTables(t *testing.T) {
	tpl, js := synth(t)
	tpl.ResourceCountIs(jsii.String("AWS::DynamoDB::Table"), count(len(deploy.Tables)))
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
				gsis = append(gsis, map[string]any{
					"IndexName":  ix.Name,
					"KeySchema":  keySchema(ix.PK, ix.SK),
					"Projection": map[string]any{"ProjectionType": "ALL"},
				})
			}
			if !reflect.DeepEqual(normalize(p["GlobalSecondaryIndexes"]), normalize(gsis)) {
				t.Errorf("%s.GlobalSecondaryIndexes = %v, want %v", id, p["GlobalSecondaryIndexes"], gsis)
			}
		})
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
	tpl.ResourceCountIs(jsii.String("AWS::S3::Bucket"), count(1))
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
	tpl.ResourceCountIs(jsii.String("AWS::Lambda::Function"), count(len(deploy.Functions)))
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
	tpl.ResourceCountIs(jsii.String("AWS::Lambda::Url"), count(n))
}

func TestSchedules(t *testing.T) {
	tpl, js := synth(t)
	tpl.ResourceCountIs(jsii.String("AWS::Events::Rule"), count(len(deploy.Jobs)))
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

// TestGrants checks least privilege: only grant-generated actions (no "*",
// "dynamodb:*", "s3:*", no "*" resource for them), and each function's
// policy names exactly the tables it lists and the bucket only if it uses it.
func TestGrants(t *testing.T) {
	_, js := synth(t)
	policies := resources(js, "AWS::IAM::Policy")
	for id, pol := range policies {
		for _, st := range props(pol)["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			s := st.(map[string]any)
			for _, a := range asList(s["Action"]) {
				action := a.(string)
				if action == "*" || action == "dynamodb:*" || action == "s3:*" {
					t.Errorf("policy %s grants %s", id, action)
				}
				if (strings.HasPrefix(action, "dynamodb:") || strings.HasPrefix(action, "s3:")) && slices.Contains(asList(s["Resource"]), any("*")) {
					t.Errorf("policy %s grants %s on every resource", id, action)
				}
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
			if listed := slices.Contains(f.Tables, tb.ID); granted != listed {
				t.Errorf("function %s: access to table %s is %v, catalogue says %v", f.Name, tb.ID, granted, listed)
			}
			if granted && !strings.Contains(doc, "/index/*") {
				t.Errorf("function %s: grant on %s does not cover its indexes", f.Name, tb.ID)
			}
		}
		if granted := strings.Contains(doc, `"`+bucketID+`"`); granted != f.Bucket {
			t.Errorf("function %s: bucket access %v, catalogue says %v", f.Name, granted, f.Bucket)
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
	tpl.ResourceCountIs(jsii.String("AWS::CloudWatch::Alarm"), count(len(deploy.Functions)))
	for _, f := range deploy.Functions {
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

// TestSAMTemplateMatchesStack keeps template.yaml (INF2) in step with the
// CDK app: same tables, bucket settings, function settings, env var names,
// table grants, URLs, schedules and alarms.
func TestSAMTemplateMatchesStack(t *testing.T) {
	_, js := synth(t)
	raw, err := os.ReadFile("../template.yaml")
	if err != nil {
		t.Fatalf("read ../template.yaml: %v", err)
	}
	var sam struct {
		Resources map[string]struct {
			Type       string         `yaml:"Type"`
			Properties map[string]any `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(raw, &sam); err != nil {
		t.Fatalf("parse template.yaml: %v", err)
	}
	samRes := func(typ, id string) map[string]any {
		t.Helper()
		r, ok := sam.Resources[id]
		if !ok || r.Type != typ {
			t.Fatalf("template.yaml: no %s %s (run `go run ./cmd/gensam` in the repo root)", typ, id)
		}
		return r.Properties
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
		for _, k := range []string{"BillingMode", "KeySchema", "GlobalSecondaryIndexes", "TimeToLiveSpecification", "PointInTimeRecoverySpecification"} {
			same(id+"."+k, s[k], c[k])
		}
		same(id+".AttributeDefinitions", sortedByName(s["AttributeDefinitions"]), sortedByName(c["AttributeDefinitions"]))
	}

	s := samRes("AWS::S3::Bucket", deploy.BucketLogicalID)
	_, r := byConstruct(t, js, "AWS::S3::Bucket", deploy.BucketLogicalID)
	for _, k := range []string{"BucketEncryption", "VersioningConfiguration", "PublicAccessBlockConfiguration"} {
		same("bucket."+k, s[k], props(r)[k])
	}

	for _, f := range deploy.Functions {
		id := deploy.LogicalID(f.Name, "Function")
		s := samRes("AWS::Serverless::Function", id)
		_, r := byConstruct(t, js, "AWS::Lambda::Function", id)
		c := props(r)
		for _, k := range []string{"Runtime", "Handler", "Architectures", "MemorySize", "Timeout"} {
			same(id+"."+k, s[k], c[k])
		}
		same(id+" env var names",
			keys(s["Environment"].(map[string]any)["Variables"]),
			keys(c["Environment"].(map[string]any)["Variables"]))

		var samTables []string
		for _, p := range asList(s["Policies"]) {
			if crud, ok := p.(map[string]any)["DynamoDBCrudPolicy"]; ok {
				samTables = append(samTables, crud.(map[string]any)["TableName"].(string))
			}
		}
		var wantTables []string
		for _, tid := range f.Tables {
			wantTables = append(wantTables, deploy.LogicalID(tid, "Table"))
		}
		same(id+" table grants (catalogue, which TestGrants holds CDK to)", samTables, wantTables)

		urls := resources(js, "AWS::Lambda::Url")
		var cdkURL map[string]any
		for _, u := range urls {
			if reflect.DeepEqual(props(u)["TargetFunctionArn"], map[string]any{"Fn::GetAtt": []any{idOf(t, js, "AWS::Lambda::Function", id), "Arn"}}) {
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

		a := samRes("AWS::CloudWatch::Alarm", deploy.LogicalID(f.Name, "Errors"))
		_, ca := byConstruct(t, js, "AWS::CloudWatch::Alarm", deploy.LogicalID(f.Name, "Errors"))
		for _, k := range []string{"Namespace", "MetricName", "Statistic", "Period", "EvaluationPeriods", "Threshold", "ComparisonOperator", "TreatMissingData"} {
			same(f.Name+" alarm "+k, a[k], props(ca)[k])
		}
	}
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
