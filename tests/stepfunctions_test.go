package tests

import (
	"net/http"
	"strings"
	"testing"
)

// switchboard dev starts the local Step Functions runtime on loopback,
// reports it in /healthz and in its ready line — also without any AWS
// credentials in the environment, as `make dev` runs.
func TestDevHealthzReportsStepFunctions(t *testing.T) {
	d := startDev(t, "AWS_ENDPOINT_URL_SFN=", "AWS_ENDPOINT_URL=", "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=",
		"AWS_PROFILE=", "AWS_CONFIG_FILE=/nonexistent", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent")
	status, _, m := d.do("GET", "/healthz", "", nil)
	if status != http.StatusOK || m["status"] != "ok" {
		t.Fatalf("healthz = %d %v, want 200 ok", status, m)
	}
	comps, _ := m["components"].(map[string]any)
	c, _ := comps["stepfunctions"].(map[string]any)
	if c["ok"] != true || !strings.HasPrefix(str(c["endpoint"]), "http://127.0.0.1:") ||
		str(c["server"]) != "aws-local-stepfunctions 3.0.0" {
		t.Errorf("component stepfunctions = %v, want ok on loopback with aws-local-stepfunctions 3.0.0", c)
	}
	logs := d.logs.String()
	if i := strings.Index(logs, "switchboard dev ready"); i < 0 ||
		!strings.Contains(logs[i:], `"stepfunctions":"`+str(c["endpoint"])+`"`) ||
		!strings.Contains(logs[i:], `"stepfunctionsServer":"aws-local-stepfunctions 3.0.0"`) {
		t.Errorf("ready line lacks the Step Functions endpoint %v:\n%s", c["endpoint"], logs)
	}
}

// The user's endpoint wins: dev starts no runtime of its own, reports the
// user's, and an unreachable one does not degrade /healthz (this config
// has no feature that runs on a state machine).
func TestDevStepFunctionsUsesTheUsersEndpoint(t *testing.T) {
	user := "http://" + freeAddr(t) // nothing listens there
	d := startDev(t, "AWS_ENDPOINT_URL_SFN="+user)
	status, _, m := d.do("GET", "/healthz", "", nil)
	if status != http.StatusOK || m["status"] != "ok" {
		t.Fatalf("healthz = %d %v, want 200 ok", status, m)
	}
	comps, _ := m["components"].(map[string]any)
	c, _ := comps["stepfunctions"].(map[string]any)
	if str(c["endpoint"]) != user || c["ok"] != false || str(c["server"]) != "" {
		t.Errorf("component stepfunctions = %v, want the user's endpoint %s, not ok, no local server", c, user)
	}
}
