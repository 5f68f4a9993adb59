package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
)

// The attack run's mistyped secret references, replayed on the binary:
// with toolApiToken: evn:SWITCHBOARD_TOOL_TOKEN the string itself became
// the tool token (the real token got 401), and signingKey:
// secretmanager:… was accepted. Now switchboard dev refuses to start with
// the line, the typo and a did-you-mean, and check-config --for dev refuses
// the same config.
func TestMistypedSecretReferenceStopsTheBinaryE2E(t *testing.T) {
	raw, err := os.ReadFile("testdata/e2e.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"evn: for env:", "toolApiToken: env:E2E_TOOL_TOKEN", "toolApiToken: evn:E2E_TOOL_TOKEN", `instance.toolApiToken: "evn:" is not a secret reference Switchboard reads`},
		{"secretmanager: for secretsmanager:", "signingKey: env:E2E_SIGNING_KEY", "signingKey: secretmanager:switchboard/signing", `did you mean "secretsmanager:"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := strings.Replace(string(raw), tc.from, tc.to, 1)
			if config == string(raw) {
				t.Fatalf("testdata/e2e.yaml has no %q any more", tc.from)
			}
			path := filepath.Join(t.TempDir(), "typo.yaml")
			if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(binary, "dev", "--config", path, "--addr", freeAddr(t), "--data", t.TempDir())
			cmd.Env = append(os.Environ(), "AWS_ENDPOINT_URL_DYNAMODB="+dynamotest.Endpoint(t),
				"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1",
				"E2E_TOOL_TOKEN="+toolToken, "E2E_SIGNING_KEY="+signingKey)
			done := make(chan struct{})
			var out []byte
			var runErr error
			go func() { out, runErr = cmd.CombinedOutput(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatal("switchboard dev with a mistyped secret reference still runs after 30 s; want it refused at start")
			}
			if runErr == nil || !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "typo.yaml:") {
				t.Errorf("switchboard dev: %v\n%s\nwant it refused at the line with %q", runErr, out, tc.want)
			}
			check, err := exec.Command(binary, "check-config", "--for", "dev", "--config", path).CombinedOutput()
			if err == nil || !strings.Contains(string(check), tc.want) {
				t.Errorf("check-config --for dev: %v\n%s\nwant it refused with %q", err, check, tc.want)
			}
		})
	}
}
