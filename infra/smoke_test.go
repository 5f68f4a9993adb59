package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// fakeAWS is an `aws` CLI stand-in for localstack/smoke.sh: describe-stacks
// knows one stack (FAKE_STACK) whose JobsFunctionName output is FAKE_FN,
// and lambda invoke answers only for that name, with FAKE_INVOKE_META as
// its answer and {"outcome":"ok"} in the output file.
const fakeAWS = `#!/usr/bin/env bash
case "$1 $2" in
"cloudformation describe-stacks")
  shift 2
  stack= query=
  while [ $# -gt 0 ]; do
    case "$1" in --stack-name) stack=$2; shift;; --query) query=$2; shift;; esac; shift
  done
  [ "$stack" = "$FAKE_STACK" ] || { echo "Stack with id $stack does not exist" >&2; exit 254; }
  case "$query" in *"OutputKey=='` + "JobsFunctionName" + `'"*) echo "$FAKE_FN";; *) echo None;; esac ;;
"lambda invoke")
  shift 2
  fn= out=
  while [ $# -gt 0 ]; do
    case "$1" in --function-name) fn=$2; shift;; --payload) shift;; *) out=$1;; esac; shift
  done
  [ "$fn" = "$FAKE_FN" ] || { echo "Function not found: $fn" >&2; exit 254; }
  echo '{"outcome":"ok"}' > "$out"
  echo "$FAKE_INVOKE_META" ;;
*) echo "fake aws: unexpected $*" >&2; exit 2 ;;
esac
`

// runSmoke runs localstack/smoke.sh --deployed with the fake aws and a curl
// that always succeeds, so it needs neither LocalStack nor a network.
func runSmoke(t *testing.T, env ...string) (string, error) {
	t.Helper()
	bin := t.TempDir()
	for name, body := range map[string]string{"aws": fakeAWS, "curl": "#!/bin/sh\nexit 0\n"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", filepath.Join(RepoRoot, "localstack", "smoke.sh"), "--deployed")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FAKE_FN=Switchboard-JobsFunction1A2B3C4D-AbCdEfGh1234")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestSmokeDeployedFindsTheJobsFunction: smoke.sh --deployed takes the jobs
// function's name from the stack output (the deployed name has a random
// suffix no filter on "jobs" would match reliably) and fails when the
// function returned an error, which aws lambda invoke does not.
func TestSmokeDeployedFindsTheJobsFunction(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	if deploy.FunctionNameOutputID("jobs") != "JobsFunctionName" {
		t.Fatalf("the jobs function's name output is %s; localstack/smoke.sh and docs/guides/deploy.md read JobsFunctionName", deploy.FunctionNameOutputID("jobs"))
	}
	tests := []struct {
		name    string
		env     []string
		wantErr bool
		want    string
	}{
		{name: "default stack", env: []string{"FAKE_STACK=Switchboard", `FAKE_INVOKE_META={"StatusCode": 200}`},
			want: "smoke: ok"},
		{name: "stack named in SWITCHBOARD_STACK_NAME", env: []string{"SWITCHBOARD_STACK_NAME=SwitchboardStaging", "FAKE_STACK=SwitchboardStaging", `FAKE_INVOKE_META={"StatusCode": 200}`},
			want: "smoke: ok"},
		{name: "function error", env: []string{"FAKE_STACK=Switchboard", `FAKE_INVOKE_META={"StatusCode": 200, "FunctionError": "Unhandled"}`},
			wantErr: true, want: "smoke: the jobs function returned an error"},
		{name: "no stack", env: []string{"FAKE_STACK=Other"},
			wantErr: true, want: "smoke: no stack Switchboard with the output JobsFunctionName on LocalStack; deploy first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runSmoke(t, tt.env...)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v; output:\n%s", err, tt.wantErr, out)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("output does not say %q:\n%s", tt.want, out)
			}
		})
	}
}
