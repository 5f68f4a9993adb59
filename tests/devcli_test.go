package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfn/sfnlocal"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// cleanEnv is the test's environment without the settings a test gives
// the command itself.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_ENDPOINT_URL") && !strings.HasPrefix(kv, "SWITCHBOARD_") && !strings.HasPrefix(kv, "DYNALITE_") {
			env = append(env, kv)
		}
	}
	return append(append(env, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1"), extra...)
}

// startDevAt runs `switchboard dev` with args on addr and waits for its
// ready line; it is stopped (Ctrl-C) at the end of the test. With addr ""
// it picks a free address, and another when that one was taken before the
// dev bound it.
func startDevAt(t *testing.T, addr string, env []string, args ...string) *devServer {
	t.Helper()
	if addr != "" {
		d, _ := startDevAtOnce(t, addr, env, false, args)
		return d
	}
	for attempt := 1; ; attempt++ {
		if d, raced := startDevAtOnce(t, freeAddr(t), env, attempt < 3, args); !raced {
			return d
		}
	}
}

// startDevAtOnce is one start of startDevAt; raced (only when retry) when
// the address was taken before the dev bound it.
func startDevAtOnce(t *testing.T, addr string, env []string, retry bool, args []string) (*devServer, bool) {
	t.Helper()
	raced := false
	cmd := exec.Command(binary, append([]string{"dev", "--addr", addr}, args...)...)
	cmd.Env = env
	d := &devServer{t: t, base: "http://" + addr, cmd: cmd, logs: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = d.logs, d.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-d.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("switchboard dev output:\n%s", d.logs.String())
		}
	})
	if !eventually(60*time.Second, func() bool {
		select {
		case err := <-d.done:
			if retry && addressTaken(d.logs.String()) {
				raced = true
				return true
			}
			t.Fatalf("switchboard dev exited early: %v\n%s", err, d.logs.String())
		default:
		}
		return strings.Contains(d.logs.String(), `"msg":"switchboard dev ready"`)
	}) {
		t.Fatalf("switchboard dev not ready after 60 s\n%s", d.logs.String())
	}
	return d, raced
}

// runCLI runs a CLI verb and returns its exit status and output.
func runCLI(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return 0, string(out)
}

// A `switchboard dev` with moved ports (listener, S3, DynamoDB, tables):
// the CLI verbs started beside it with the same data directory and
// nothing else reach its DynamoDB, S3 and sandbox, and a second dev on
// that directory is told the data file is locked and by whom.
func TestCLIVerbsFollowTheRunningDev(t *testing.T) {
	data := t.TempDir()
	prefix := fmt.Sprintf("moved%d-", time.Now().UnixNano())
	devEnv := cleanEnv("AWS_ENDPOINT_URL_DYNAMODB="+dynamotest.Endpoint(t), "SWITCHBOARD_TABLE_PREFIX="+prefix)
	d := startDevAt(t, "", devEnv, "--config", "../switchboard.example.yaml", "--s3-addr", "127.0.0.1:0", "--data", data)

	verbEnv := cleanEnv() // no endpoint, no prefix: all from the running dev
	code, out := runCLI(t, verbEnv, "run-job", "heartbeat", "--config", "../switchboard.example.yaml", "--data", data)
	if code != 0 || !strings.Contains(out, `"outcome":"ok"`) {
		t.Fatalf("run-job heartbeat beside the dev = %d\n%s", code, out)
	}
	_, _, jobs := d.do("GET", "/dev/jobs", "", nil)
	if b, _ := json.Marshal(jobs["lastRuns"]); !strings.Contains(string(b), `"trigger":"cli"`) {
		t.Errorf("the dev's tables show no run of the CLI's heartbeat: %s", b)
	}

	code, out = runCLI(t, verbEnv, "capabilities", "--config", "../switchboard.example.yaml", "--data", data)
	if code != 0 || !strings.Contains(out, "Nextcloud") {
		t.Errorf("capabilities beside the sandbox dev = %d, want the sandbox Nextcloud's capabilities\n%s", code, out)
	}

	code, out = runCLI(t, devEnv, "dev", "--config", "../switchboard.example.yaml", "--addr", freeAddr(t), "--s3-addr", freeAddr(t), "--data", data)
	want := []string{filepath.Join(data, "s3.bolt") + " is locked by another `switchboard dev`", d.base, "DATA=DIR", "--data DIR"}
	for _, w := range want {
		if code == 0 || !strings.Contains(out, w) {
			t.Errorf("second dev on the same data = %d, output lacks %q:\n%s", code, w, out)
		}
	}
	if strings.Contains(out, "timeout") {
		t.Errorf("second dev reports a timeout instead of the lock:\n%s", out)
	}
}

// askConfig has Hermes asking Atlas (ask_agent), no chat servers.
const askConfig = `instance:
  name: e2e-user-sfn
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}"}
  toolApiToken: e2e-tool-token-5f1c9a
  approvals: {signingKey: e2e-signing-key-93be07}
  askAgent: {timeoutSeconds: 30, maxSteps: 3}
  dev: {scheduler: false}
agents:
  - id: hermes
    name: Hermes
    tools:
      ask_agent: {agents: [atlas]}
  - id: atlas
    name: Atlas
    tools:
      Workspace: {}
`

// With a Step Functions server of the user's (here the repository's
// sfn-local, started apart and pointed at the dev listener's Lambda
// Invoke API), dev creates the catalogue's machines there and gives
// ask_agent its machine: Hermes's question reaches Atlas.
func TestUserStepFunctionsEndpointRunsAskAgent(t *testing.T) {
	addr := freeAddr(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := sfnlocal.Start(t.Context(), sfnlocal.Options{Root: root, LambdaEndpoint: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Stop)
	config := filepath.Join(t.TempDir(), "ask.yaml")
	if err := os.WriteFile(config, []byte(askConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv("AWS_ENDPOINT_URL_DYNAMODB="+dynamotest.Endpoint(t), "AWS_ENDPOINT_URL_SFN="+rt.Endpoint,
		"SWITCHBOARD_TABLE_PREFIX="+fmt.Sprintf("usfn%d-", time.Now().UnixNano()))
	d := startDevAt(t, addr, env, "--config", config, "--s3-addr", "127.0.0.1:0", "--data", t.TempDir())

	status, _, body := d.do("POST", "/dev/agents/hermes/run", "", map[string]string{"message": "ask Atlas\n" +
		`call ask_agent.ask {"agent":"atlas","question":"how many trucks?"}`})
	b, _ := json.Marshal(body)
	if status != http.StatusOK || !strings.Contains(string(b), "Atlas heard: how many trucks?") {
		t.Fatalf("run = %d %s, want Atlas's answer through the user's Step Functions\n%s", status, b, rt.Output())
	}
	_, _, health := d.do("GET", "/healthz", "", nil)
	sf, _ := health["components"].(map[string]any)["stepfunctions"].(map[string]any)
	if sf["endpoint"] != rt.Endpoint || sf["ok"] != true {
		t.Errorf("healthz stepfunctions = %v, want the user's %s answering", sf, rt.Endpoint)
	}

	// When it stops answering, /healthz says so and the log has why.
	rt.Stop()
	_, _, health = d.do("GET", "/healthz", "", nil)
	sf, _ = health["components"].(map[string]any)["stepfunctions"].(map[string]any)
	if sf["ok"] != false {
		t.Errorf("healthz stepfunctions after the server stopped = %v, want not ok", sf)
	}
	// The line reaches the test through the child's stdout, maybe after
	// the answer: wait for it.
	d.untilLog(5*time.Second, "the log line saying why Step Functions failed the health check", func([]string) bool {
		return strings.Contains(d.logs.String(), `"msg":"healthz: stepfunctions does not answer"`) &&
			strings.Contains(d.logs.String(), `"endpoint":"`+rt.Endpoint+`","error":"`)
	})
}

// With the sandbox on, the App loads the sandbox's copy of the config; a
// secret that cannot be resolved is still reported at the user's file and
// line, where it has to be fixed.
func TestSandboxConfigErrorNamesTheUsersFile(t *testing.T) {
	example, err := os.ReadFile("../switchboard.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(example), "\n")
	line := 0
	for i, l := range lines {
		if strings.TrimSpace(l) == "toolApiToken: dev-tool-token" {
			lines[i] = strings.Replace(l, "dev-tool-token", "env:SWITCHBOARD_E2E_UNSET_TOKEN", 1)
			line = i + 1
		}
	}
	if line == 0 {
		t.Fatal("the example has no toolApiToken: dev-tool-token line to break")
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(config, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	env := cleanEnv("AWS_ENDPOINT_URL_DYNAMODB="+dynamotest.Endpoint(t), "SWITCHBOARD_TABLE_PREFIX="+fmt.Sprintf("cfgerr%d-", time.Now().UnixNano()))
	code, out := runCLI(t, env, "dev", "--config", config, "--addr", freeAddr(t), "--s3-addr", "127.0.0.1:0", "--data", filepath.Join(dir, "data"))
	if want := fmt.Sprintf("%s:%d: instance.toolApiToken", config, line); code == 0 || !strings.Contains(out, want) {
		t.Errorf("dev = %d, output lacks %q:\n%s", code, want, out)
	}
	if strings.Contains(out, "sandbox/switchboard.yaml") {
		t.Errorf("the error names the sandbox's generated copy:\n%s", out)
	}
}

// An unknown chain is a 404 naming it (not an empty 200); the tool API's
// 401 says how to send the token in words the answer scrubber leaves as
// they are.
func TestDevListenerSaysWhatIsWrong(t *testing.T) {
	d := startDev(t)
	status, _, body := d.do("GET", "/dev/chains/no-such-root", "", nil)
	if b, _ := json.Marshal(body); status != http.StatusNotFound || !strings.Contains(string(b), "no-such-root") {
		t.Errorf("GET /dev/chains/no-such-root = %d %s, want 404 naming the root", status, b)
	}
	status, _, body = d.do("GET", "/tools", "", nil)
	msg := str(body["error"])
	if status != http.StatusUnauthorized || !strings.Contains(msg, "send the tool API token (instance.toolApiToken) in the Authorization header as a bearer token") {
		t.Errorf("GET /tools without a token = %d %q, want 401 with the hint", status, msg)
	}
	if strings.Contains(msg, "***") {
		t.Errorf("the 401 hint was masked: %q", msg)
	}
}

// The README names every scheduled job of the deploy catalogue where it
// lists them: the run-job verb and the POST /dev/jobs route.
func TestREADMEListsEveryJob(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"| `run-job ", "| `POST /dev/jobs/{job}"} {
		var line string
		for _, l := range strings.Split(string(readme), "\n") {
			if strings.HasPrefix(l, row) {
				line = l
			}
		}
		if line == "" {
			t.Fatalf("README has no row %q", row)
		}
		for _, j := range deploy.Jobs {
			if !strings.Contains(line, "`"+j.Name+"`") {
				t.Errorf("README row %q does not name the job %s", row, j.Name)
			}
		}
	}
}
