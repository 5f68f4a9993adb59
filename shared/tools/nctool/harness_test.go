package nctool_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/switchboard-dev/switchboard/shared/adapters/collabora"
	"github.com/switchboard-dev/switchboard/shared/adapters/collabora/cofake"
	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob/s3fake"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	"github.com/switchboard-dev/switchboard/shared/platform/logtest"
	"github.com/switchboard-dev/switchboard/shared/platform/recordtest"
	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs/toolargstest"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
)

const (
	agentID = "hermes"
	root    = "/Switchboard/Hermes"
	bucket  = "switchboard-test"
)

// start is the fixed "now" of the tests: tool and fake share it, so expiry
// dates and the share rate limit agree.
var start = time.Date(2026, 5, 1, 21, 30, 0, 0, time.UTC)

type clock = clocktest.Clock

// env is one test's world: a fake Nextcloud, a fake Collabora, an
// in-process S3 with the workspace bucket, and the tool for agent hermes.
type env struct {
	t     *testing.T
	nc    *ncfake.Server
	co    *cofake.Server
	blobs *s3blob.Store
	tool  *nctool.Tool
	clock *clock
	logs  *logtest.Buffer

	agent recordtest.Value[nctool.Agent]
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clk := clocktest.New(start)
	nc := ncfake.Start(t, ncfake.Options{User: "switchboard", Now: clk.Now})
	nc.AddUser("richard", "anna")
	nc.AddGroup("finance")
	client, err := nextcloud.New(nc.URL, nc.User(), nc.Password(), nil)
	if err != nil {
		t.Fatalf("nextcloud.New: %v", err)
	}
	co := cofake.New(cofake.Options{})
	t.Cleanup(co.Close)
	coc, err := collabora.New(co.URL, nil)
	if err != nil {
		t.Fatalf("collabora.New: %v", err)
	}
	e := &env{t: t, nc: nc, co: co, clock: clk, logs: &logtest.Buffer{}, blobs: s3fake.StoreFor(t, bucket)}
	e.agent.Set(nctool.Agent{Client: client, Collabora: coc, RootPath: root, AgentName: "Hermes", BaseURL: "https://cloud.example.org"})
	e.tool = nctool.New(func(id string) (nctool.Agent, bool) {
		if id != agentID {
			return nctool.Agent{}, false
		}
		return e.agent.Get(), true
	}, e.blobs, clk.Now)
	e.tool.SetLogger(slog.New(slog.NewJSONHandler(e.logs, nil)))
	return e
}

// configure changes the agent's configuration.
func (e *env) configure(f func(a *nctool.Agent)) { e.agent.Update(f) }

// invoke runs an action whose args must pass the action's JSON schema (as
// the executor checks before Invoke) and round-trips the envelope through
// JSON, as the model and POST /tools/invoke see it.
func (e *env) invoke(action, args string) sb.Envelope {
	e.t.Helper()
	if err := validate(e.tool.Spec(), action, args); err != nil {
		e.t.Fatalf("%s %s: the schema refuses args the test means to be valid: %v", action, args, err)
	}
	return e.invokeRaw(action, args)
}

// invokeRaw runs an action without the schema check (for args the
// executor would refuse, to prove Invoke refuses them too).
func (e *env) invokeRaw(action, args string) sb.Envelope {
	e.t.Helper()
	call := sb.ToolCall{AgentID: agentID, Tool: nctool.ToolName, Action: action, Args: json.RawMessage(args),
		Run: sb.RunContext{RunID: "run-1", RootRunID: "run-1"}, Origin: sb.OriginAgent}
	env := e.tool.Invoke(context.Background(), call)
	raw, err := json.Marshal(env)
	if err != nil {
		e.t.Fatalf("marshal envelope: %v", err)
	}
	var back sb.Envelope
	if err := json.Unmarshal(raw, &back); err != nil {
		e.t.Fatalf("unmarshal envelope %s: %v", raw, err)
	}
	return back
}

// ok fails the test unless env is a plain success.
func (e *env) ok(env sb.Envelope) sb.Envelope {
	e.t.Helper()
	if env.Status != "ok" || env.NeedsConfirmation {
		e.t.Fatalf("want status ok, got %+v", env)
	}
	if env.Data["message"] == nil && env.Data["listing"] == nil {
		e.t.Errorf("success without a message or listing: %+v", env)
	}
	return env
}

// failed fails the test unless env is an error with code and a message
// containing every want.
func (e *env) failed(env sb.Envelope, code string, want ...string) sb.Envelope {
	e.t.Helper()
	if env.Status != "error" {
		e.t.Fatalf("want status error (%s), got %+v", code, env)
	}
	if got := env.Data["code"]; got != code {
		e.t.Errorf("code = %v, want %s (error %q)", got, code, env.Error)
	}
	for _, w := range want {
		if !strings.Contains(env.Error, w) {
			e.t.Errorf("error %q does not contain %q", env.Error, w)
		}
	}
	return env
}

// write puts a workspace file.
func (e *env) write(ref, content string) {
	e.t.Helper()
	key, err := workspace.Resolve(agentID, ref)
	if err != nil {
		e.t.Fatalf("Resolve(%s): %v", ref, err)
	}
	if err := e.blobs.Put(context.Background(), key, strings.NewReader(content), int64(len(content)), "text/plain"); err != nil {
		e.t.Fatalf("Put(%s): %v", key, err)
	}
}

// read returns a workspace file, "" and false when it does not exist.
func (e *env) read(ref string) (string, bool) {
	e.t.Helper()
	key, err := workspace.Resolve(agentID, ref)
	if err != nil {
		e.t.Fatalf("Resolve(%s): %v", ref, err)
	}
	r, _, err := e.blobs.Get(context.Background(), key)
	if err != nil {
		if sb.ErrorCode(err) == sb.ENOTFOUND {
			return "", false
		}
		e.t.Fatalf("Get(%s): %v", key, err)
	}
	defer r.Close()
	b, _ := io.ReadAll(r)
	return string(b), true
}

// seed writes a file into the account (path relative to the account root).
func (e *env) seed(p, content string) {
	e.t.Helper()
	if err := e.nc.WriteFile(p, []byte(content)); err != nil {
		e.t.Fatalf("WriteFile(%s): %v", p, err)
	}
}

// file reads a file of the account; ok is false when it does not exist.
func (e *env) file(p string) (string, bool) {
	b, err := e.nc.File(p)
	return string(b), err == nil
}

// calls counts the requests the fake Nextcloud saw since the last reset.
func (e *env) calls() int { return len(e.nc.Requests()) }

// routes lists the routes of the requests since the last reset.
func (e *env) routes() []string {
	var out []string
	for _, r := range e.nc.Requests() {
		out = append(out, r.Route)
	}
	return out
}

// listing parses the framed listing of env into its lines.
func listing(t *testing.T, env sb.Envelope) []string {
	t.Helper()
	s, _ := env.Data["listing"].(string)
	if s == "" {
		return nil
	}
	_, text, ok := untrusted.Parse(s)
	if !ok {
		t.Fatalf("listing is not one untrusted frame: %q", s)
	}
	return strings.Split(text, "\n")
}

// validate checks args against the action's schema from Spec.
func validate(spec sb.ToolSpec, action, args string) error {
	a, ok := spec.Action(action)
	if !ok {
		return nil // unknown actions are the executor's business
	}
	s, err := toolargstest.CompileSchema(action, a.Parameters)
	if err != nil {
		return err
	}
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// intercept puts a server in front of the fake: h answers the requests it
// takes (returning true) and the fake the rest. It returns a client for it;
// pass it to configure to make the tool go through it.
func (e *env) intercept(h func(w http.ResponseWriter, r *http.Request) bool) *nextcloud.Client {
	e.t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h(w, r) {
			e.nc.ServeHTTP(w, r)
		}
	}))
	e.t.Cleanup(srv.Close)
	c, err := nextcloud.New(srv.URL, e.nc.User(), e.nc.Password(), nil)
	if err != nil {
		e.t.Fatalf("nextcloud.New: %v", err)
	}
	return c
}
