package tests

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestDynaliteScriptHonoursUserEndpoints: an endpoint the user set for
// DynamoDB (or for every service, e.g. LocalStack) wins; the wrapper then
// starts no dynalite and does not overwrite the variable.
func TestDynaliteScriptHonoursUserEndpoints(t *testing.T) {
	cases := []struct {
		name, key, value, want string
	}{
		{"every service", "AWS_ENDPOINT_URL", "http://127.0.0.1:4566", "ddb=|all=http://127.0.0.1:4566"},
		{"dynamodb only", "AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:9999", "ddb=http://127.0.0.1:9999|all="},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command("../scripts/dynalite.sh", "sh", "-c", `printf 'ddb=%s|all=%s' "$AWS_ENDPOINT_URL_DYNAMODB" "$AWS_ENDPOINT_URL"`)
			var env []string
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "AWS_ENDPOINT_URL") && !strings.HasPrefix(kv, "DYNALITE_PORT=") {
					env = append(env, kv)
				}
			}
			// A port nobody listens on: were dynalite started, the
			// endpoint would point there instead.
			cmd.Env = append(env, c.key+"="+c.value, "DYNALITE_PORT=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("dynalite.sh: %v\n%s", err, stderr.String())
			}
			if got := string(out); got != c.want {
				t.Errorf("environment seen by the command = %q, want %q", got, c.want)
			}
			if !strings.Contains(stderr.String(), "not started") || !strings.Contains(stderr.String(), c.value) {
				t.Errorf("stderr = %q, want a note that dynalite was not started and where DynamoDB is", stderr.String())
			}
		})
	}
}
