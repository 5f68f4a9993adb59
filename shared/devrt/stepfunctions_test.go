package devrt

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sfnapi "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

func localAWS(t *testing.T) {
	home := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_SFN": "", "AWS_ENDPOINT_URL": "",
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
		"AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE": filepath.Join(home, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(home, "credentials"),
	} {
		t.Setenv(k, v)
	}
}

// A catalogue machine is created on the dev runtime's sfn-local with its
// placeholder filled by a function ARN, and its Task runs that function's
// handler in this process through the loopback Lambda endpoint.
func TestStepFunctionsRunACatalogueMachineOnTheHandlers(t *testing.T) {
	localAWS(t)
	ctx := context.Background()
	s := startStepFunctions(ctx, repoRoot())
	t.Cleanup(s.Close)
	if s.Err != nil {
		t.Fatal(s.Err)
	}
	if got := os.Getenv("AWS_ENDPOINT_URL_SFN"); got != s.Endpoint {
		t.Fatalf("AWS_ENDPOINT_URL_SFN = %q, want the runtime's %q", got, s.Endpoint)
	}
	asl := filepath.Join(t.TempDir(), "echo.asl.json")
	def := `{"StartAt":"Run","States":{"Run":{"Type":"Task","Resource":"${JobsFunctionArn}","End":true}}}`
	if err := os.WriteFile(asl, []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	handler := func(fn string) (any, error) {
		return func(_ context.Context, in map[string]any) (map[string]any, error) {
			return map[string]any{"function": fn, "input": in}, nil
		}, nil
	}
	machines := []deploy.StateMachine{{Name: "echo", Definition: asl, Type: "EXPRESS",
		Substitutions: []deploy.Substitution{{Key: "JobsFunctionArn", Function: "jobs"}}}}
	if err := s.bind(ctx, handler, machines); err != nil {
		t.Fatalf("bind: %v\n%s", err, s.rt.Output())
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping = %v, want nil", err)
	}
	c, err := s.client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.StartSyncExecution(ctx, &sfnapi.StartSyncExecutionInput{
		StateMachineArn: aws.String(s.ARNs["echo"]), Input: aws.String(`{"job":"digest"}`)})
	if err != nil {
		t.Fatalf("StartSyncExecution: %v\n%s", err, s.rt.Output())
	}
	var got struct {
		Function string
		Input    map[string]string
	}
	if err := json.Unmarshal([]byte(aws.ToString(out.Output)), &got); err != nil || got.Function != "jobs" || got.Input["job"] != "digest" {
		t.Errorf("execution %s output %s (%v), want the jobs handler's echo", out.Status, aws.ToString(out.Output), err)
	}
}

// Without the script or the npm packages nothing starts, the reason is
// kept for /healthz and the log, and binding is a no-op: dev still runs.
func TestStepFunctionsMissingRuntimeIsNotFatal(t *testing.T) {
	localAWS(t)
	s := startStepFunctions(context.Background(), t.TempDir())
	t.Cleanup(s.Close)
	if s.Err == nil || s.Endpoint != "" {
		t.Fatalf("Err = %v, Endpoint = %q; want an error and no endpoint", s.Err, s.Endpoint)
	}
	if os.Getenv("AWS_ENDPOINT_URL_SFN") != "" {
		t.Errorf("AWS_ENDPOINT_URL_SFN = %q, want unset", os.Getenv("AWS_ENDPOINT_URL_SFN"))
	}
	if err := s.Ping(context.Background()); err == nil {
		t.Error("Ping = nil, want the start error")
	}
	if err := s.bind(context.Background(), nil, deploy.StateMachines); err != nil {
		t.Errorf("bind = %v, want nil", err)
	}
}
