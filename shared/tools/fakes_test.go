package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
)

// secret is a configured secret value: the scrubber knows it, so it must never
// reach an audit entry, a log line or an envelope.
const secret = "hunter2-Very-Secret-Value"

// echoTool is a small fake with one action per behaviour under test.
type echoTool struct {
	runs atomic.Int32 // how often Invoke ran
}

var (
	_ sb.Tool             = (*echoTool)(nil)
	_ staging.Conditioner = (*echoTool)(nil)
)

func (e *echoTool) Spec() sb.ToolSpec {
	object := func(props map[string]any, required ...string) map[string]any {
		if required == nil {
			required = []string{}
		}
		return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	}
	text := map[string]any{"type": "string", "minLength": 1}
	return sb.ToolSpec{
		Name:        "Echo",
		Description: "answers what it is told",
		Actions: []sb.ActionSpec{
			{Name: "say", Description: "echo text", Parameters: object(map[string]any{
				"text": text, "room": map[string]any{"type": "string"}, "blob": map[string]any{"type": "string"},
				"password": map[string]any{"type": "string"},
			}, "text")},
			{Name: "ping", Description: "no arguments", Parameters: object(map[string]any{})},
			{Name: "fail", Description: "answers an error envelope", Parameters: object(map[string]any{})},
			{Name: "boom", Description: "panics", Parameters: object(map[string]any{})},
			{Name: "erase", Description: "destructive; no staging rule, so it fails closed to approve", Parameters: object(map[string]any{})},
			{Name: "forbidden", Description: "denied by a rule", Parameters: object(map[string]any{})},
		},
	}
}

// Condition marks calls to another room, like the RocketChat tool does.
func (e *echoTool) Condition(call sb.ToolCall) string {
	var a struct {
		Room string `json:"room"`
	}
	_ = json.Unmarshal(call.Args, &a)
	if a.Room == "other" {
		return "other_room"
	}
	return ""
}

func (e *echoTool) Invoke(_ context.Context, call sb.ToolCall) sb.Envelope {
	e.runs.Add(1)
	switch call.Action {
	case "fail":
		return sb.Envelope{Status: "error", Error: "upstream refused token " + secret + "; try later", HTTPStatus: 503, Endpoint: "https://upstream.example/api"}
	case "boom":
		panic("nil map write near " + secret)
	}
	var a map[string]any
	_ = json.Unmarshal(call.Args, &a)
	return sb.OK(map[string]any{"echo": a["text"]})
}

// otherTool exists so that lists of tools have more than one entry.
type otherTool struct{}

func (otherTool) Spec() sb.ToolSpec {
	return sb.ToolSpec{Name: "Abacus", Description: "counts", Actions: []sb.ActionSpec{
		{Name: "add", Parameters: map[string]any{"type": "object"}},
	}}
}

func (otherTool) Invoke(context.Context, sb.ToolCall) sb.Envelope { return sb.OK(nil) }

type stepClock = clocktest.Stepping

// failingAudit refuses every write, like a throttled table.
type failingAudit struct{ calls atomic.Int32 }

func (f *failingAudit) Append(context.Context, sb.AuditEntry) error {
	f.calls.Add(1)
	return sb.E("audit.append", sb.EUNAVAILABLE, "the audit table is throttled")
}

func (f *failingAudit) ByRoot(context.Context, string) ([]sb.AuditEntry, error) { return nil, nil }

// cancelSensitiveAudit is memstore, but refuses writes under a cancelled
// context, as a real SDK call would.
type cancelSensitiveAudit struct{ *memstore.Store }

func (c cancelSensitiveAudit) Append(ctx context.Context, e sb.AuditEntry) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.Store.Append(ctx, e)
}

// fixture is one Executor over fakes.
type fixture struct {
	x     *tools.Executor
	echo  *echoTool
	store *memstore.Store
	clock *stepClock
	logs  *bytes.Buffer
}

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600))

type fixtureOption func(*tools.Options)

func newFixture(t testing.TB, opts ...fixtureOption) *fixture {
	t.Helper()
	policy, err := staging.New(map[string]string{
		"Echo.say":            "auto",
		"Echo.say:other_room": "deny",
		"Echo.ping":           "auto",
		"Echo.fail":           "auto",
		"Echo.boom":           "auto",
		"Echo.forbidden":      "deny",
		"Abacus.add":          "auto",
	})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{echo: &echoTool{}, store: memstore.New(), clock: clocktest.NewStepping(t0, 7*time.Millisecond), logs: &bytes.Buffer{}}
	o := tools.Options{
		Tools:   []sb.Tool{f.echo, otherTool{}},
		Policy:  policy,
		Audit:   f.store,
		Scrub:   scrub.New([]string{secret}),
		Permits: func(agentID, tool string) bool { return agentID == "alice" || (agentID == "bob" && tool == "Abacus") },
		Log:     slog.New(slog.NewJSONHandler(f.logs, nil)),
		Now:     f.clock.Now,
	}
	for _, opt := range opts {
		opt(&o)
	}
	f.x, err = tools.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// only returns the one audit entry of root, failing the test when there are
// more or none.
func (f *fixture) only(t *testing.T, root string) sb.AuditEntry {
	t.Helper()
	entries, err := f.store.ByRoot(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("audit entries for root %s: got %d, want exactly 1: %+v", root, len(entries), entries)
	}
	return entries[0]
}

// runCtx is a fixed run context; the root makes each test's entries findable.
func runCtx(root string) sb.RunContext {
	return sb.RunContext{RunID: root + "-run", ParentRunID: root + "-parent", RootRunID: root, AgentID: "alice"}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
