package tests

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// TestCtrlCEndsMakeDevCleanly: Ctrl-C in the terminal of `make dev` stops the
// command the wrapper runs, which exits 0 after its shutdown; make must not
// see the interrupt itself (it would die of it, exit status 130), so the
// whole `make dev` ends with status 0 and dynalite is stopped.
func TestCtrlCEndsMakeDevCleanly(t *testing.T) {
	for _, tool := range []string{"script", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed; it provides the terminal and the parent this test needs", tool)
		}
	}
	script, err := filepath.Abs("../scripts/dynalite.sh")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, env string }{
		{"dynalite started", ""},
		{"user endpoint", "AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			// The command stands in for `switchboard dev`: it says it is
			// ready, and on SIGINT it exits 0.
			recipe := script + ` sh -c 'trap "echo stopped; exit 0" INT; echo ready; while :; do sleep 0.1; done'`
			mk := "dev:\n\t" + recipe + "\n"
			if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("script", "-qec", "make -s dev; echo make-exit=$?", "/dev/null")
			cmd.Dir = dir
			var env []string
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "AWS_ENDPOINT_URL") && !strings.HasPrefix(kv, "DYNALITE_") && !strings.HasPrefix(kv, "MAKE") {
					env = append(env, kv)
				}
			}
			port := freePort(t)
			cmd.Env = append(env, "DYNALITE_PORT="+port)
			if c.env != "" {
				cmd.Env = append(cmd.Env, c.env)
			}
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = cmd.Stdout
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill() }()
			var out strings.Builder
			buf := make([]byte, 4096)
			sent := false
			for !strings.Contains(out.String(), "make-exit=") {
				n, err := stdout.Read(buf)
				out.Write(buf[:n])
				if !sent && strings.Contains(out.String(), "ready") {
					_, _ = stdin.Write([]byte{3}) // Ctrl-C at the terminal
					sent = true
				}
				if err != nil {
					break
				}
			}
			_ = stdin.Close()
			_ = cmd.Wait()
			if !strings.Contains(out.String(), "stopped") || !strings.Contains(out.String(), "make-exit=0") {
				t.Fatalf("after Ctrl-C: want the command stopped and make to exit 0; terminal showed:\n%s", out.String())
			}
			if conn, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
				conn.Close()
				t.Errorf("dynalite still listens on %s after make ended", port)
			}
		})
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}
