package rctool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob/s3fake"
	"github.com/switchboard-dev/switchboard/shared/platform/logtest"
	"github.com/switchboard-dev/switchboard/shared/platform/recordtest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/rctool"
)

const (
	agentID  = "hermes"
	agentRC  = "agent-hermes"
	bucket   = "switchboard-test"
	personal = "agents/hermes/personal/"
)

// env is one test's world: a fake Rocket.Chat with users and rooms, an
// in-process S3 server with the workspace bucket, and the tool.
type env struct {
	t     *testing.T
	rc    *rcfake.Server
	blobs *s3blob.Store
	tool  *rctool.Tool
	logs  *logtest.Buffer

	agent recordtest.Value[rctool.Agent]

	// Room ids.
	finanz, vorstand, geheim, general, dmRichard string
	richardToken                                 string
}

// newEnv builds the world. Users: agent-hermes (the agent), richard, anna.
// Rooms: #finanz-team (hermes, richard, anna), private #vorstand (hermes,
// richard), private #geheim (anna only), public #general (nobody), and the DM
// hermes–richard. The rate limiter is off unless a test turns it on.
func newEnv(t *testing.T) *env {
	t.Helper()
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0)
	uid, token := rc.AddUser(agentRC, "bot", "user")
	_, richardToken := rc.AddUser("richard")
	rc.AddUser("anna")
	e := &env{t: t, rc: rc, logs: &logtest.Buffer{}, richardToken: richardToken}
	e.finanz = rc.AddChannel("finanz-team", agentRC, "richard", "anna")
	e.vorstand = rc.AddGroup("vorstand", agentRC, "richard")
	e.geheim = rc.AddGroup("geheim", "anna")
	e.general = rc.AddChannel("general")
	e.dmRichard = rc.AddDM(agentRC, "richard")

	client, err := rocketchat.New(rc.URL, uid, token, rc.Client())
	if err != nil {
		t.Fatalf("rocketchat.New: %v", err)
	}
	e.agent.Set(rctool.Agent{Client: client, Username: agentRC, DefaultRoom: "finanz-team"})
	e.blobs = s3fake.StoreFor(t, bucket)
	e.tool = rctool.New(func(id string) (rctool.Agent, bool) {
		if id != agentID {
			return rctool.Agent{}, false
		}
		return e.agent.Get(), true
	}, e.blobs)
	e.tool.SetLogger(slog.New(slog.NewJSONHandler(e.logs, nil)))
	return e
}

// configure changes the agent's configuration.
func (e *env) configure(f func(a *rctool.Agent)) { e.agent.Update(f) }

func (e *env) call(action, args string) sb.ToolCall {
	return sb.ToolCall{AgentID: agentID, Tool: rctool.ToolName, Action: action, Args: json.RawMessage(args),
		Run: sb.RunContext{RunID: "run-1", RootRunID: "run-1"}, Origin: sb.OriginAgent}
}

// invoke runs an action and round-trips the envelope through JSON, as the
// model and POST /tools/invoke see it.
func (e *env) invoke(action, args string) sb.Envelope {
	e.t.Helper()
	env := e.tool.Invoke(context.Background(), e.call(action, args))
	raw, err := json.Marshal(env)
	if err != nil {
		e.t.Fatalf("marshal envelope: %v", err)
	}
	var back sb.Envelope
	if err := json.Unmarshal(raw, &back); err != nil {
		e.t.Fatalf("unmarshal envelope: %v", err)
	}
	return back
}

// ok invokes and requires status ok.
func (e *env) ok(action, args string) sb.Envelope {
	e.t.Helper()
	env := e.invoke(action, args)
	if env.Status != "ok" {
		e.t.Fatalf("%s %s: status %q, error %q", action, args, env.Status, env.Error)
	}
	return env
}

// fails invokes and requires an error envelope whose message contains every
// one of wants.
func (e *env) fails(action, args string, wants ...string) sb.Envelope {
	e.t.Helper()
	env := e.invoke(action, args)
	if env.Status != "error" {
		e.t.Fatalf("%s %s: status %q (data %v), want error", action, args, env.Status, env.Data)
	}
	for _, w := range wants {
		if !strings.Contains(env.Error, w) {
			e.t.Errorf("%s %s: error %q does not contain %q", action, args, env.Error, w)
		}
	}
	return env
}

func (e *env) put(key string, content []byte) {
	e.t.Helper()
	if err := e.blobs.Put(context.Background(), key, bytes.NewReader(content), int64(len(content)), ""); err != nil {
		e.t.Fatalf("put %s: %v", key, err)
	}
}

func (e *env) get(key string) []byte {
	e.t.Helper()
	rc, _, err := e.blobs.Get(context.Background(), key)
	if err != nil {
		e.t.Fatalf("get %s: %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		e.t.Fatalf("read %s: %v", key, err)
	}
	return b
}

// keys lists every object in the bucket.
func (e *env) keys() []string {
	e.t.Helper()
	infos, err := e.blobs.List(context.Background(), "", 0)
	if err != nil {
		e.t.Fatalf("list: %v", err)
	}
	var out []string
	for _, i := range infos {
		out = append(out, i.Key)
	}
	return out
}

func str(env sb.Envelope, key string) string {
	s, _ := env.Data[key].(string)
	return s
}

func num(env sb.Envelope, key string) int64 {
	f, _ := env.Data[key].(float64)
	return int64(f)
}

func jsonArgs(v map[string]any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
