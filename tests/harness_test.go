// Package tests holds the cross-function flows: they build the real
// `switchboard` binary, start `switchboard dev` against dynalite and an S3
// server on loopback, and drive it over HTTP like a user would.
package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob/s3fake"
	"github.com/switchboard-dev/switchboard/shared/platform/waittest"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "switchboard-e2e")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "switchboard")
	build := exec.Command("go", "build", "-o", binary, "../cmd/switchboard")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building switchboard: %v\n%s", err, out)
		os.Exit(1)
	}
	code := 0
	func() {
		defer os.RemoveAll(dir)
		defer dynamotest.Stop()
		code = m.Run()
	}()
	os.Exit(code)
}

const (
	toolToken  = "e2e-tool-token-5f1c9a"
	signingKey = "e2e-signing-key-93be07"
)

// devServer is one running `switchboard dev`.
type devServer struct {
	t    testing.TB
	base string
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan error
}

// syncBuffer collects the server's output; the exec copier writes while
// tests read, or wait for a line (written notifies every write).
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written waittest.Signal
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	defer s.written.Notify()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startDev runs `switchboard dev` with fresh tables (a unique prefix) and its
// own S3 server, and waits until /healthz answers.
func startDev(t testing.TB, extraEnv ...string) *devServer {
	t.Helper()
	return startDevConfig(t, "testdata/e2e.yaml", extraEnv...)
}

// startDevConfig is startDev with another config file.
func startDevConfig(t testing.TB, config string, extraEnv ...string) *devServer {
	t.Helper()
	endpoint := dynamotest.Endpoint(t)
	s3, stopS3, err := s3fake.StartFake("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopS3)
	for attempt := 1; ; attempt++ {
		if d, raced := startDevOnce(t, config, endpoint, s3, extraEnv); !raced {
			return d
		} else if attempt == 3 {
			t.Fatalf("switchboard dev found its address taken three times\n%s", d.logs.String())
		}
	}
}

// addressTaken reports whether switchboard dev ended because its listener's
// address was taken: another process bound the port freeAddr had just
// found free. The caller tries another one.
func addressTaken(logs string) bool { return strings.Contains(logs, "address already in use") }

// startDevOnce is one start of startDevConfig; raced when the address was
// taken before the dev bound it.
func startDevOnce(t testing.TB, config, endpoint, s3 string, extraEnv []string) (d *devServer, raced bool) {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(binary, "dev", "--config", config, "--addr", addr, "--data", t.TempDir())
	cmd.Env = append(os.Environ(),
		"AWS_ENDPOINT_URL_DYNAMODB="+endpoint,
		"AWS_ENDPOINT_URL_S3="+s3,
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_REGION=us-east-1",
		"SWITCHBOARD_TABLE_PREFIX="+fmt.Sprintf("e2e%d-", time.Now().UnixNano()),
		"SWITCHBOARD_BUCKET=e2e-bucket",
		"E2E_TOOL_TOKEN="+toolToken,
		"E2E_SIGNING_KEY="+signingKey,
	)
	cmd.Env = append(cmd.Env, extraEnv...)
	d = &devServer{t: t, base: "http://" + addr, cmd: cmd, logs: &syncBuffer{}, done: make(chan error, 1)}
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
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(d.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return d, false
			}
		}
		select {
		case err := <-d.done:
			if addressTaken(d.logs.String()) {
				return d, true
			}
			t.Fatalf("switchboard dev exited early: %v\n%s", err, d.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("switchboard dev not healthy after 30 s\n%s", d.logs.String())
		}
		time.Sleep(50 * time.Millisecond) // sleep-ok: a child process becoming ready sends no event; /healthz is polled
	}
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// do sends a request and decodes the JSON answer into a map.
func (d *devServer) do(method, path, token string, body any) (int, http.Header, map[string]any) {
	d.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			d.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, d.base+path, r)
	if err != nil {
		d.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		d.t.Fatalf("%s %s: answer is not a JSON object (%v): %q", method, path, err, raw)
	}
	return resp.StatusCode, resp.Header, m
}

// idle waits until no wake dispatched so far is queued, running or waiting
// for a retry in the server (GET /dev/idle): every answer those wakes give
// has been posted.
func (d *devServer) idle() {
	d.t.Helper()
	if status, _, m := d.do("GET", "/dev/idle", "", nil); status != http.StatusOK {
		d.t.Fatalf("GET /dev/idle = %d %v: wakes still running", status, m)
	}
}

// idleWithin is idle for wakes that may take longer than one GET
// /dev/idle waits (its budget, 60 s): it asks again until within passes.
func (d *devServer) idleWithin(within time.Duration) {
	d.t.Helper()
	deadline := time.Now().Add(within)
	for {
		status, _, m := d.do("GET", "/dev/idle", "", nil)
		if status == http.StatusOK {
			return
		}
		if status != http.StatusGatewayTimeout || time.Now().After(deadline) {
			d.t.Fatalf("GET /dev/idle = %d %v: wakes still running after %v", status, m, within)
		}
	}
}

// soft lets a test wait with a fake's Until and report a miss itself,
// with what it saw: the wait's own failure is only logged.
type soft struct{ t testing.TB }

func (s soft) Helper()                        { s.t.Helper() }
func (s soft) Fatalf(format string, a ...any) { s.t.Logf(format, a...) }

// untilLog waits until cond holds for the server's log lines so far,
// checking again at every write of the server, and fails after timeout.
func (d *devServer) untilLog(timeout time.Duration, what string, cond func(lines []string) bool) {
	d.t.Helper()
	d.logs.written.Until(d.t, timeout, what, func() bool { return cond(d.logLines()) })
}

// settled is idle, then one Rocket.Chat poll and idle again: what the
// webhook path left behind (a dropped wake, a claim not finished) has had
// its chance to be answered, or answered twice, before a test counts.
func (d *devServer) settled() {
	d.t.Helper()
	d.idle()
	if status, _, m := d.do("POST", "/dev/jobs/rocketchat-poll", "", nil); status != http.StatusOK {
		d.t.Fatalf("POST /dev/jobs/rocketchat-poll = %d %v", status, m)
	}
	d.idle()
}

// invoke calls POST /tools/invoke as the operator.
func (d *devServer) invoke(agent, tool, action string, args any) (int, map[string]any) {
	d.t.Helper()
	status, _, m := d.do("POST", "/tools/invoke", toolToken, map[string]any{
		"agent": agent, "tool": tool, "action": action, "args": args})
	return status, m
}

// logLines returns the JSON log lines the server wrote so far.
func (d *devServer) logLines() []string {
	return strings.Split(strings.TrimSpace(d.logs.String()), "\n")
}

func str(v any) string { s, _ := v.(string); return s }

func mustContain(t testing.TB, what, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Errorf("%s = %q, want it to contain %q", what, got, want)
	}
}
