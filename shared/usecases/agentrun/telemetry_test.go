package agentrun_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/adapters/modelretry"
	"github.com/switchboard-dev/switchboard/shared/adapters/modelretry/retrytest"
	"github.com/switchboard-dev/switchboard/shared/platform/telemetry/telemetrytest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// one returns the single span named name.
func one(t *testing.T, spans *telemetrytest.Spans, name string) sb.Span {
	t.Helper()
	got := spans.Named(name)
	if len(got) != 1 {
		t.Fatalf("%d spans named %q, want 1 (all: %d)", len(got), name, len(spans.All()))
	}
	return got[0]
}

// A run is one invoke_agent span in its chain's trace, with a chat span
// per model call and an execute_tool span per tool call under it, with
// the conventions' attributes; content stays off by default.
func TestRunRecordsInvokeAgentChatAndExecuteTool(t *testing.T) {
	spans := &telemetrytest.Spans{}
	m := &stepModel{steps: []step{calls(100, 10, call("c1", "Echo", "say", `{"text":"hi"}`)), answer("done", 200, 20)}}
	e, _ := newEngine(&recInvoker{}, memstore.New())
	e.Telemetry = spans
	res, err := e.Run(context.Background(), agent(m), "hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	trace := sb.ChainTrace(res.Run.RootRunID)
	run := one(t, spans, "invoke_agent ada")
	if run.Trace != trace || run.ID != sb.RunSpan(res.Run.RunID) || !run.Parent.IsZero() {
		t.Errorf("invoke_agent ids = %s/%s parent %s, want the chain's trace, the run's span, no parent", run.Trace, run.ID, run.Parent)
	}
	for key, want := range map[string]any{
		sb.AttrOperation: "invoke_agent", sb.AttrAgentName: "ada", sb.AttrConversationID: res.Run.RootRunID,
		sb.AttrInputTokens: int64(300), sb.AttrOutputTokens: int64(30), sb.AttrCost: res.Receipt.CostUSD,
		sb.AttrOutcome: "answered", sb.AttrSteps: int64(2), sb.AttrRequestModel: nil,
	} {
		if got := telemetrytest.Attr(run, key); got != want {
			t.Errorf("invoke_agent %s = %v, want %v", key, got, want)
		}
	}
	if !run.End.After(run.Start) {
		t.Errorf("invoke_agent %v..%v, want an end after the start", run.Start, run.End)
	}
	chats := spans.Named("chat step-1")
	if len(chats) != 2 {
		t.Fatalf("%d chat spans, want 2", len(chats))
	}
	for i, c := range chats {
		if c.Parent != run.ID || c.Trace != trace || c.Kind != sb.SpanClient || c.ID != sb.ChatSpan(res.Run.RunID, i+1) {
			t.Errorf("chat %d: parent %s kind %s, want under the run, client", i+1, c.Parent, c.Kind)
		}
	}
	if got := telemetrytest.Attr(chats[1], sb.AttrInputTokens); got != int64(200) {
		t.Errorf("second chat input tokens = %v, want 200", got)
	}
	tool := one(t, spans, "execute_tool Echo.say")
	if tool.Parent != run.ID || tool.ID != sb.ToolSpan(res.Run.RunID, 0) ||
		telemetrytest.Attr(tool, sb.AttrToolName) != "Echo.say" || telemetrytest.Attr(tool, sb.AttrToolStatus) != "ok" ||
		telemetrytest.Attr(tool, sb.AttrToolCallID) != "c1" {
		t.Errorf("execute_tool = %+v", tool)
	}
	for _, s := range spans.All() {
		for _, a := range s.Attrs {
			if sb.IsContentKey(a.Key) {
				t.Errorf("span %s carries content %s without captureContent", s.Name, a.Key)
			}
		}
	}
}

// A staged call's span names its approval; a run started in a tool call
// (an ask_agent target in this process) hangs under the asking tool span;
// a child run in another process under its parent run's span.
func TestRunSpanParents(t *testing.T) {
	spans := &telemetrytest.Spans{}
	inv := &recInvoker{reply: func(sb.ToolCall) sb.Envelope {
		return sb.Envelope{Status: "pending_approval", Data: map[string]any{"approval_id": "ap-1"}}
	}}
	m := &stepModel{steps: []step{calls(1, 1, call("c1", "Nextcloud", "delete", `{}`)), answer("asked", 1, 1)}}
	e, _ := newEngine(inv, memstore.New())
	e.Telemetry = spans
	asker, err := e.Run(context.Background(), agent(m), "hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	tool := one(t, spans, "execute_tool Nextcloud.delete")
	if telemetrytest.Attr(tool, sb.AttrApprovalID) != "ap-1" || telemetrytest.Attr(tool, sb.AttrToolStatus) != "pending_approval" {
		t.Errorf("staged call's span = %+v, want its approval id and status", tool.Attrs)
	}

	trace := sb.ChainTrace(asker.Run.RootRunID)
	ctx := sb.WithSpanParent(context.Background(), sb.SpanParent{Trace: trace, Span: tool.ID})
	target, err := e.Run(ctx, agent(&stepModel{steps: []step{answer("an answer", 1, 1)}}), "a question", &asker.Run)
	if err != nil {
		t.Fatal(err)
	}
	got := spans.Named("invoke_agent ada")[1]
	if got.Trace != trace || got.Parent != tool.ID || got.ID != sb.RunSpan(target.Run.RunID) {
		t.Errorf("target run: trace %s parent %s, want the asker's trace under the tool span %s", got.Trace, got.Parent, tool.ID)
	}

	_, err = e.Run(context.Background(), agent(&stepModel{steps: []step{answer("follow-up", 1, 1)}}), "later", &asker.Run)
	if err != nil {
		t.Fatal(err)
	}
	follow := spans.Named("invoke_agent ada")[2]
	if follow.Trace != trace || follow.Parent != sb.RunSpan(asker.Run.RunID) {
		t.Errorf("child run: trace %s parent %s, want under the parent run's span", follow.Trace, follow.Parent)
	}
}

// Retries are events of their model call; content comes only when asked
// for.
func TestRunRecordsRetriesAndContentWhenCaptured(t *testing.T) {
	spans := &telemetrytest.Spans{Content: true}
	clock := retrytest.New()
	inner := &stepModel{steps: []step{answer("done", 5, 1)}}
	m := &flakyModel{inner: inner, failures: 2, policy: clock.Policy(modelretry.Default())}
	e, _ := newEngine(&recInvoker{}, memstore.New())
	e.Telemetry = spans
	if _, err := e.Run(context.Background(), agent(m), "hello there", nil); err != nil {
		t.Fatal(err)
	}
	chat := one(t, spans, "chat step-1")
	if len(chat.Events) != 2 || chat.Events[0].Name != "retry" || telemetrytest.Attr(chat, sb.AttrRetries) != int64(2) {
		t.Errorf("chat events = %+v, want two retries", chat.Events)
	}
	in, _ := telemetrytest.Attr(chat, sb.AttrInputMessages).(string)
	out, _ := telemetrytest.Attr(chat, sb.AttrOutputMessages).(string)
	if in == "" || out == "" || !strings.Contains(in, "hello there") || !strings.Contains(out, "done") {
		t.Errorf("content = %q / %q, want the messages in and the answer out", in, out)
	}
	if got := telemetrytest.Attr(one(t, spans, "invoke_agent ada"), sb.AttrSystemInstructions); got != "You are Ada." {
		t.Errorf("system instructions = %v", got)
	}
}

// A failing model marks both its chat and the run failed.
func TestRunRecordsAModelFailure(t *testing.T) {
	spans := &telemetrytest.Spans{}
	m := &stepModel{steps: []step{{err: sb.E("test", sb.EUNAUTHORIZED, "bad key")}}}
	e, _ := newEngine(&recInvoker{}, memstore.New())
	e.Telemetry = spans
	_, _ = e.Run(context.Background(), agent(m), "hello", nil)
	if got := one(t, spans, "chat step-1").Error; got != "model_unauthorized" {
		t.Errorf("chat error = %q", got)
	}
	if got := one(t, spans, "invoke_agent ada"); got.Error != "model_unauthorized" || telemetrytest.Attr(got, sb.AttrOutcome) != "error" {
		t.Errorf("run span = %+v", got)
	}
}

// auditingInvoker answers like the executor: it leaves its audit entry in
// the sb.ToolAudit the call's context carries.
type auditingInvoker struct {
	recInvoker
	entry sb.AuditEntry
	env   sb.Envelope
}

func (a *auditingInvoker) Invoke(ctx context.Context, call sb.ToolCall) sb.Envelope {
	a.recInvoker.Invoke(ctx, call)
	if sink := sb.ToolAuditFrom(ctx); sink != nil {
		sink.Entry = a.entry
	}
	return a.env
}

// An execute_tool span says what the staging policy decided, as the
// executor's audit entry records it: the decision, the outcome, the
// approval and who (or which allowance) let it run.
func TestToolSpanCarriesTheStagingDecision(t *testing.T) {
	for _, tc := range []struct {
		name  string
		entry sb.AuditEntry
		env   sb.Envelope
		want  map[string]any
	}{
		{"ran at once", sb.AuditEntry{Decision: sb.DecisionAuto, Outcome: sb.OutcomeOK}, sb.OK(nil),
			map[string]any{sb.AttrToolStaging: "auto", sb.AttrOutcome: "ok", sb.AttrApprovalID: nil, sb.AttrDecidedBy: nil}},
		{"staged", sb.AuditEntry{Decision: sb.DecisionApprove, Outcome: sb.OutcomePending, ApprovalID: "ap-7"},
			sb.Envelope{Status: sb.OutcomePending, Data: map[string]any{"approval_id": "ap-7"}},
			map[string]any{sb.AttrToolStaging: "approve", sb.AttrOutcome: "pending_approval", sb.AttrApprovalID: "ap-7", sb.AttrToolStatus: "pending_approval"}},
		{"denied", sb.AuditEntry{Decision: sb.DecisionDeny, Outcome: sb.OutcomeDenied}, sb.Fail("not allowed here"),
			map[string]any{sb.AttrToolStaging: "deny", sb.AttrOutcome: "denied", sb.AttrToolStatus: "error"}},
		{"allowance", sb.AuditEntry{Decision: sb.DecisionAllowed, Outcome: sb.OutcomeOK, ApprovalID: "ap-3", DecidedBy: "allowance al-1 granted by link"}, sb.OK(nil),
			map[string]any{sb.AttrToolStaging: "allowed", sb.AttrApprovalID: "ap-3", sb.AttrDecidedBy: "allowance al-1 granted by link"}},
		{"rejected before the policy", sb.AuditEntry{Outcome: sb.OutcomeRejected}, sb.Fail("unknown tool"),
			map[string]any{sb.AttrToolStaging: nil, sb.AttrOutcome: "rejected"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spans := &telemetrytest.Spans{}
			inv := &auditingInvoker{entry: tc.entry, env: tc.env}
			m := &stepModel{steps: []step{calls(1, 1, call("c1", "Nextcloud", "delete", `{}`)), answer("done", 1, 1)}}
			e, _ := newEngine(inv, memstore.New())
			e.Telemetry = spans
			if _, err := e.Run(context.Background(), agent(m), "hello", nil); err != nil {
				t.Fatal(err)
			}
			tool := one(t, spans, "execute_tool Nextcloud.delete")
			for key, want := range tc.want {
				if got := telemetrytest.Attr(tool, key); got != want {
					t.Errorf("%s = %v, want %v", key, got, want)
				}
			}
		})
	}
}

// Without telemetry the engine asks the executor for no audit copy.
func TestToolCallCarriesNoAuditSinkWithoutTelemetry(t *testing.T) {
	var sinks int
	inv := &recInvoker{}
	inv.reply = func(sb.ToolCall) sb.Envelope { return sb.OK(nil) }
	probe := &sinkProbe{recInvoker: inv, seen: &sinks}
	m := &stepModel{steps: []step{calls(1, 1, call("c1", "Echo", "say", `{}`)), answer("done", 1, 1)}}
	e, _ := newEngine(probe, memstore.New())
	if _, err := e.Run(context.Background(), agent(m), "hello", nil); err != nil {
		t.Fatal(err)
	}
	if sinks != 0 {
		t.Errorf("%d calls carried an audit sink with telemetry off, want 0", sinks)
	}
}

type sinkProbe struct {
	*recInvoker
	seen *int
}

func (p *sinkProbe) Invoke(ctx context.Context, call sb.ToolCall) sb.Envelope {
	if sb.ToolAuditFrom(ctx) != nil {
		*p.seen++
	}
	return p.recInvoker.Invoke(ctx, call)
}
