package tests

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
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

// TestCtrlCEndsMakeDevCleanly: Ctrl-C in the terminal of the real `make
// dev` (its recipe, its binary, under a pseudo-terminal) stops `switchboard
// dev`, which exits 0 after its shutdown; make sees neither the interrupt
// (it would die of it, status 130) nor a failed command (`go run` ends with
// status 1 after Ctrl-C: "make: *** Error 1", status 2), so the whole `make
// dev` ends with status 0 and dynalite is stopped.
func TestCtrlCEndsMakeDevCleanly(t *testing.T) {
	for _, tool := range []string{"script", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed; it provides the terminal and the parent this test needs", tool)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		userDDB bool
	}{
		{"dynalite started", false},
		{"user endpoint", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			port := freePort(t)
			makeDev := fmt.Sprintf("make -s -C %s dev ADDR=%s S3_ADDR=%s DYNALITE_PORT=%s DATA=%s",
				root, freeAddr(t), freeAddr(t), port, t.TempDir())
			cmd := exec.Command("script", "-qec", makeDev+"; echo make-exit=$?", "/dev/null")
			var env []string
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "AWS_ENDPOINT_URL") && !strings.HasPrefix(kv, "DYNALITE_") &&
					!strings.HasPrefix(kv, "MAKE") && !strings.HasPrefix(kv, "SWITCHBOARD_") {
					env = append(env, kv)
				}
			}
			cmd.Env = append(env, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1",
				"SWITCHBOARD_TABLE_PREFIX="+fmt.Sprintf("ctrlc%d-", time.Now().UnixNano()))
			if c.userDDB {
				cmd.Env = append(cmd.Env, "AWS_ENDPOINT_URL_DYNAMODB="+dynamotest.Endpoint(t))
			}
			out := runUntilCtrlC(t, cmd, "switchboard dev ready")
			if !strings.Contains(out, "switchboard dev stopped") || !strings.Contains(out, "make-exit=0") {
				t.Fatalf("after Ctrl-C: want switchboard dev stopped and make to exit 0; terminal showed:\n%s", out)
			}
			if strings.Contains(out, "make: ***") {
				t.Errorf("make reported an error after Ctrl-C:\n%s", out)
			}
			if conn, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
				conn.Close()
				t.Errorf("dynalite still listens on %s after make ended", port)
			}
		})
	}
}

// runUntilCtrlC runs cmd (a `script` holding a terminal), types Ctrl-C at
// that terminal once the output shows ready, and returns all it printed.
func runUntilCtrlC(t *testing.T, cmd *exec.Cmd, ready string) string {
	t.Helper()
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
	timer := time.AfterFunc(4*time.Minute, func() { _ = cmd.Process.Kill() }) // a first build may take a while
	defer timer.Stop()
	defer func() { _ = cmd.Process.Kill() }()
	var out strings.Builder
	buf := make([]byte, 4096)
	sent := false
	for !strings.Contains(out.String(), "make-exit=") {
		n, err := stdout.Read(buf)
		out.Write(buf[:n])
		if !sent && strings.Contains(out.String(), ready) {
			_, _ = stdin.Write([]byte{3}) // Ctrl-C at the terminal
			sent = true
		}
		if err != nil {
			break
		}
	}
	_ = stdin.Close()
	_ = cmd.Wait()
	if !sent {
		t.Fatalf("never saw %q; terminal showed:\n%s", ready, out.String())
	}
	return out.String()
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

// TestMakeHelpShowsValues: `make help` prints the settings' values, never
// make's own syntax such as a literal $(ADDR).
func TestMakeHelpShowsValues(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command("make", "-s", "-C", "..", "help")
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make help: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "$(") {
		t.Errorf("make help prints make syntax:\n%s", out)
	}
	if !strings.Contains(string(out), "ADDR=127.0.0.1:8080") {
		t.Errorf("make help does not show the default ADDR:\n%s", out)
	}
}

// TestOneDefaultConfigRule: the Makefile and the CLI pick the same config:
// CONFIG or --config, else $SWITCHBOARD_CONFIG, else switchboard.yaml in
// the working directory when it exists, else the example; and
// switchboard.yaml, where the guides put one's own config, is git-ignored.
func TestOneDefaultConfigRule(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	makefile, err := filepath.Abs("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("../switchboard.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		userFile bool
		env      string
		want     string
	}{
		{"only the example", false, "", "switchboard.example.yaml"},
		{"switchboard.yaml here", true, "", "switchboard.yaml"},
		{"SWITCHBOARD_CONFIG", true, "other.yaml", "other.yaml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			files := []string{"switchboard.example.yaml", "other.yaml"}
			if c.userFile {
				files = append(files, "switchboard.yaml")
			}
			for _, f := range files {
				if err := os.WriteFile(filepath.Join(dir, f), example, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := cleanEnv()
			if c.env != "" {
				env = append(env, "SWITCHBOARD_CONFIG="+c.env)
			}
			mk := exec.Command("make", "-s", "-f", makefile, "help")
			mk.Dir, mk.Env = dir, env
			out, err := mk.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "CONFIG="+c.want+" ") {
				t.Errorf("make picks another config than %s (%v):\n%s", c.want, err, out)
			}
			cli := exec.Command(binary, "check-config", "--for", "dev")
			cli.Dir, cli.Env = dir, env
			out, err = cli.CombinedOutput()
			if err != nil || !strings.HasPrefix(string(out), c.want+": ok") {
				t.Errorf("the CLI picks another config than %s (%v):\n%s", c.want, err, out)
			}
		})
	}
	if out, err := exec.Command("git", "-C", "..", "check-ignore", "-q", "switchboard.yaml").CombinedOutput(); err != nil {
		t.Errorf("switchboard.yaml is not git-ignored (%v) %s", err, out)
	}
}
