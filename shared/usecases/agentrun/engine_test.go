package agentrun_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

// stepModel answers from a list, one entry per step, and keeps a copy of
// every request it saw. Past the list it repeats the last entry.
type stepModel struct {
	steps []step
	reqs  []sb.ModelRequest
}

type step struct {
	resp sb.ModelResponse
	err  error
}

func (m *stepModel) Complete(_ context.Context, req sb.ModelRequest) (sb.ModelResponse, error) {
	req.Messages = slices.Clone(req.Messages) // the engine keeps appending to its slice
	m.reqs = append(m.reqs, req)
	s := m.steps[min(len(m.reqs), len(m.steps))-1]
	return s.resp, s.err
}

// recInvoker records tool calls and answers with reply (ok by default).
type recInvoker struct {
	mu    sync.Mutex
	calls []sb.ToolCall
	specs []string // agent ids Specs was asked for
	reply func(sb.ToolCall) sb.Envelope
}

func (r *recInvoker) Invoke(_ context.Context, call sb.ToolCall) sb.Envelope {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call)
	if r.reply != nil {
		return r.reply(call)
	}
	return sb.OK(map[string]any{"n": len(r.calls)})
}

func (r *recInvoker) Specs(agentID string) []sb.ToolSpec {
	r.specs = append(r.specs, agentID)
	return []sb.ToolSpec{{Name: "Echo", Description: "answers", Actions: []sb.ActionSpec{{Name: "say"}}}}
}

// failingReceipts refuses every receipt.
type failingReceipts struct{ *memstore.Store }

func (failingReceipts) Put(context.Context, sb.Receipt) error {
	return sb.E("receipts.put", sb.EUNAVAILABLE, "the receipts table is throttled")
}

// cancelSensitiveReceipts refuses writes under a cancelled context, as an
// SDK call would.
type cancelSensitiveReceipts struct{ *memstore.Store }

func (c cancelSensitiveReceipts) Put(ctx context.Context, r sb.Receipt) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.Store.Put(ctx, r)
}

type stepClock = clocktest.Stepping

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))

func call(id, tool, action, args string) sb.ModelToolCall {
	return sb.ModelToolCall{ID: id, Tool: tool, Action: action, Args: json.RawMessage(args)}
}

func answer(text string, in, out int) step {
	return step{resp: sb.ModelResponse{Text: text, TokensIn: in, TokensOut: out}}
}

func calls(in, out int, c ...sb.ModelToolCall) step {
	return step{resp: sb.ModelResponse{ToolCalls: c, TokensIn: in, TokensOut: out}}
}

func newEngine(inv agentrun.Invoker, receipts sb.ReceiptStore) (*agentrun.Engine, *stepClock) {
	clock := clocktest.NewStepping(t0, 250*time.Millisecond)
	return &agentrun.Engine{Tools: inv, Receipts: receipts, Now: clock.Now}, clock
}

func agent(m sb.Model) sb.Agent {
	return sb.Agent{ID: "ada", SystemPrompt: "You are Ada.", MaxSteps: 5, Provider: "test", ModelName: "step-1",
		Model: m, Pricing: sb.Pricing{InputPer1M: 3, OutputPer1M: 15}}
}

// storedReceipt returns the one receipt of root from the store.
func storedReceipt(t *testing.T, store *memstore.Store, root string) sb.Receipt {
	t.Helper()
	cost, err := store.ChainCost(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if len(cost.Receipts) != 1 {
		t.Fatalf("receipts for root %s: got %d, want 1", root, len(cost.Receipts))
	}
	return cost.Receipts[0]
}

func TestRunStampsRunContext(t *testing.T) {
	tests := []struct {
		name       string
		parent     *sb.RunContext
		wantParent string
		wantRoot   string // "" means the run's own id
	}{
		{name: "human started", parent: nil},
		{name: "parent with empty id counts as none", parent: &sb.RunContext{}},
		{name: "child of a root", parent: &sb.RunContext{RunID: "p1", RootRunID: "p1", AgentID: "bob"}, wantParent: "p1", wantRoot: "p1"},
		{name: "grandchild keeps the chain's root", parent: &sb.RunContext{RunID: "p2", ParentRunID: "p1", RootRunID: "p0", AgentID: "bob"}, wantParent: "p2", wantRoot: "p0"},
		{name: "parent without root becomes the root", parent: &sb.RunContext{RunID: "p3", AgentID: "bob"}, wantParent: "p3", wantRoot: "p3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memstore.New()
			inv := &recInvoker{}
			e, _ := newEngine(inv, store)
			// The model tries to forge a run id through its arguments; the
			// engine's stamp is what the tool call carries.
			m := &stepModel{steps: []step{
				calls(10, 2, call("c1", "Echo", "say", `{"runId":"forged","rootRunId":"forged"}`)),
				answer("done", 20, 3),
			}}
			res, err := e.Run(context.Background(), agent(m), "hello", tt.parent)
			if err != nil {
				t.Fatal(err)
			}
			run := res.Run
			wantRoot := tt.wantRoot
			if wantRoot == "" {
				wantRoot = run.RunID
			}
			want := sb.RunContext{RunID: run.RunID, ParentRunID: tt.wantParent, RootRunID: wantRoot, AgentID: "ada"}
			if run != want {
				t.Errorf("run = %+v, want %+v", run, want)
			}
			if len(run.RunID) != 26 || (tt.parent != nil && run.RunID == tt.parent.RunID) {
				t.Errorf("run id = %q, want a fresh 26-character id", run.RunID)
			}
			if len(inv.calls) != 1 {
				t.Fatalf("tool calls = %d, want 1", len(inv.calls))
			}
			c := inv.calls[0]
			if c.Run != run || c.AgentID != "ada" || c.Origin != sb.OriginAgent || c.Approved {
				t.Errorf("tool call run=%+v agent=%q origin=%q approved=%v, want run %+v, agent ada, origin agent, not approved",
					c.Run, c.AgentID, c.Origin, c.Approved, run)
			}
			if res.Receipt.Run != run {
				t.Errorf("receipt run = %+v, want %+v", res.Receipt.Run, run)
			}
			if got := storedReceipt(t, store, wantRoot); got.Run != run {
				t.Errorf("stored receipt run = %+v, want %+v", got.Run, run)
			}
		})
	}
}

func TestRunOutcomes(t *testing.T) {
	modelDown := sb.E("model.complete", sb.EUNAVAILABLE, "the model is down")
	tests := []struct {
		name        string
		maxSteps    int
		steps       []step
		wantOutcome string
		wantSteps   int
		wantAnswer  string // substring
		wantErr     error  // errors.Is target
		wantTools   []string
		wantIn      int
		wantOut     int
	}{
		{
			name: "answers at once", steps: []step{answer("Hi there.", 100, 20)},
			wantOutcome: "answered", wantSteps: 1, wantAnswer: "Hi there.", wantIn: 100, wantOut: 20,
		},
		{
			name: "tools then answer", steps: []step{
				calls(100, 10, call("a", "Echo", "say", `{"text":"1"}`), call("b", "Echo", "say", `{"text":"2"}`)),
				calls(200, 10, call("c", "Echo", "say", `{"text":"3"}`)),
				answer("All done.", 300, 30),
			},
			wantOutcome: "answered", wantSteps: 3, wantAnswer: "All done.",
			wantTools: []string{`Echo.say {"text":"1"}`, `Echo.say {"text":"2"}`, `Echo.say {"text":"3"}`},
			wantIn:    600, wantOut: 50,
		},
		{
			name: "model error on the first step", steps: []step{{err: modelDown}},
			wantOutcome: "error", wantSteps: 1, wantErr: modelDown,
		},
		{
			name: "model error later keeps earlier tokens", steps: []step{
				calls(100, 10, call("a", "Echo", "say", `{"text":"1"}`)),
				{err: modelDown},
			},
			wantOutcome: "error", wantSteps: 2, wantErr: modelDown,
			wantTools: []string{`Echo.say {"text":"1"}`}, wantIn: 100, wantOut: 10,
		},
		{
			name: "step budget", maxSteps: 3, steps: []step{
				calls(10, 1, call("a", "Echo", "say", `{"text":"1"}`)),
				calls(10, 1, call("b", "Echo", "say", `{"text":"2"}`)),
				calls(10, 1, call("c", "Echo", "say", `{"text":"3"}`)),
				answer("never reached", 10, 1),
			},
			wantOutcome: "step_budget", wantSteps: 3, wantAnswer: "I stopped after 3 steps without finishing",
			wantTools: []string{`Echo.say {"text":"1"}`, `Echo.say {"text":"2"}`, `Echo.say {"text":"3"}`},
			wantIn:    30, wantOut: 3,
		},
		{
			name: "zero budget defaults to eight steps", maxSteps: 0, steps: distinctCalls(20),
			wantOutcome: "step_budget", wantSteps: 8, wantAnswer: "after 8 steps",
			wantTools: distinctCallNames(8), wantIn: 8, wantOut: 8,
		},
		{
			name: "loop guard across steps", steps: []step{
				calls(10, 1, call("a", "Echo", "say", `{"text":"again"}`)),
			},
			wantOutcome: "loop_guard", wantSteps: 3, wantAnswer: "kept repeating Echo.say",
			wantTools: []string{`Echo.say {"text":"again"}`, `Echo.say {"text":"again"}`},
			wantIn:    30, wantOut: 3,
		},
		{
			name: "loop guard within one step", steps: []step{
				calls(10, 1, call("a", "Echo", "say", `{}`), call("b", "Echo", "say", `{}`), call("c", "Echo", "say", `{}`), call("d", "Echo", "say", `{"x":1}`)),
			},
			wantOutcome: "loop_guard", wantSteps: 1, wantAnswer: "kept repeating Echo.say",
			wantTools: []string{`Echo.say {}`, `Echo.say {}`}, wantIn: 10, wantOut: 1,
		},
		{
			name: "same action with other args is no loop", steps: []step{
				calls(1, 1, call("a", "Echo", "say", `{"text":"1"}`), call("b", "Echo", "say", `{"text":"1"}`)),
				calls(1, 1, call("c", "Echo", "say", `{"text":"2"}`), call("d", "Echo", "say", `{"text":"2"}`)),
				calls(1, 1, call("e", "Echo", "other", `{"text":"1"}`)),
				answer("ok", 1, 1),
			},
			wantOutcome: "answered", wantSteps: 4, wantAnswer: "ok",
			wantTools: []string{`Echo.say {"text":"1"}`, `Echo.say {"text":"1"}`, `Echo.say {"text":"2"}`, `Echo.say {"text":"2"}`, `Echo.other {"text":"1"}`},
			wantIn:    4, wantOut: 4,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memstore.New()
			inv := &recInvoker{}
			e, clock := newEngine(inv, store)
			m := &stepModel{steps: tt.steps}
			ag := agent(m)
			ag.MaxSteps = tt.maxSteps // 0 = the default of 8, more than most rows need

			res, err := e.Run(context.Background(), ag, "wake up", nil)

			if tt.wantErr == nil && err != nil {
				t.Fatalf("Run: %v", err)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("Run error = %v, want one wrapping %v", err, tt.wantErr)
				}
				if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("agentrun ada step %d", tt.wantSteps)) {
					t.Errorf("Run error = %q, want it to say which agent and step", err)
				}
			}
			if res.Outcome != tt.wantOutcome || res.Steps != tt.wantSteps {
				t.Errorf("outcome, steps = %q, %d; want %q, %d", res.Outcome, res.Steps, tt.wantOutcome, tt.wantSteps)
			}
			if !strings.Contains(res.Answer, tt.wantAnswer) {
				t.Errorf("answer = %q, want it to contain %q", res.Answer, tt.wantAnswer)
			}
			if len(m.reqs) != tt.wantSteps {
				t.Errorf("model called %d times, want %d", len(m.reqs), tt.wantSteps)
			}
			var gotTools []string
			for _, c := range inv.calls {
				gotTools = append(gotTools, c.Tool+"."+c.Action+" "+string(c.Args))
			}
			if !slices.Equal(gotTools, tt.wantTools) {
				t.Errorf("tool calls = %q, want %q", gotTools, tt.wantTools)
			}

			// The receipt, returned and stored, even on error.
			want := sb.Receipt{
				Run: res.Run, AgentID: "ada", Provider: "test", Model: "step-1", StartedAt: t0.UTC(),
				Duration: clock.Step(), TokensIn: tt.wantIn, TokensOut: tt.wantOut,
				CostUSD: float64(tt.wantIn)*3/1e6 + float64(tt.wantOut)*15/1e6,
				Steps:   tt.wantSteps, Outcome: tt.wantOutcome,
			}
			if tt.wantOutcome == "error" {
				want.Reason = "model_unavailable" // modelDown is EUNAVAILABLE
			}
			for _, got := range []sb.Receipt{res.Receipt, storedReceipt(t, store, res.Run.RootRunID)} {
				if math.Abs(got.CostUSD-want.CostUSD) > 1e-12 {
					t.Errorf("cost = %v, want %v", got.CostUSD, want.CostUSD)
				}
				got.CostUSD = want.CostUSD
				if got != want {
					t.Errorf("receipt = %+v\nwant      %+v", got, want)
				}
			}
		})
	}
}

func distinctCalls(n int) []step {
	var s []step
	for i := range n {
		s = append(s, calls(1, 1, call(fmt.Sprint(i), "Echo", "say", fmt.Sprintf(`{"text":"%d"}`, i))))
	}
	return s
}

func distinctCallNames(n int) []string {
	var s []string
	for i := range n {
		s = append(s, fmt.Sprintf(`Echo.say {"text":"%d"}`, i))
	}
	return s
}

func TestRunFeedsToolResultsBack(t *testing.T) {
	inv := &recInvoker{reply: func(c sb.ToolCall) sb.Envelope {
		if string(c.Args) == `{"text":"bad"}` {
			return sb.Envelope{Status: "error", Error: "no such room; list rooms first", HTTPStatus: 404}
		}
		return sb.OK(map[string]any{"said": string(c.Args)})
	}}
	e, _ := newEngine(inv, memstore.New())
	m := &stepModel{steps: []step{
		{resp: sb.ModelResponse{Text: "Let me try.", ToolCalls: []sb.ModelToolCall{
			call("c1", "Echo", "say", `{"text":"good"}`), call("c2", "Echo", "say", `{"text":"bad"}`)}}},
		answer("One worked.", 0, 0),
	}}
	if _, err := e.Run(context.Background(), agent(m), "wake text", nil); err != nil {
		t.Fatal(err)
	}
	if len(m.reqs) != 2 {
		t.Fatalf("model saw %d requests, want 2", len(m.reqs))
	}
	first, second := m.reqs[0], m.reqs[1]
	if first.System != "You are Ada." {
		t.Errorf("system = %q", first.System)
	}
	if len(first.Tools) != 1 || first.Tools[0].Name != "Echo" || !slices.Equal(inv.specs, []string{"ada"}) {
		t.Errorf("tools = %+v (Specs asked for %v), want the agent's specs, asked once for ada", first.Tools, inv.specs)
	}
	wantFirst := []sb.ModelMessage{{Role: "user", Content: "wake text"}}
	if !equalMessages(first.Messages, wantFirst) {
		t.Errorf("first request messages = %+v, want %+v", first.Messages, wantFirst)
	}
	wantSecond := []sb.ModelMessage{
		{Role: "user", Content: "wake text"},
		{Role: "assistant", Content: "Let me try.", ToolCalls: []sb.ModelToolCall{
			call("c1", "Echo", "say", `{"text":"good"}`), call("c2", "Echo", "say", `{"text":"bad"}`)}},
		{Role: "tool", ToolCallID: "c1", Content: `{"said":"{\"text\":\"good\"}","status":"ok"}`},
		{Role: "tool", ToolCallID: "c2", Content: `{"error":"no such room; list rooms first","http_status":404,"status":"error"}`},
	}
	if !equalMessages(second.Messages, wantSecond) {
		t.Errorf("second request messages =\n%+v\nwant\n%+v", second.Messages, wantSecond)
	}
}

func equalMessages(a, b []sb.ModelMessage) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func TestRunReceiptFailure(t *testing.T) {
	modelDown := errors.New("connection reset")
	tests := []struct {
		name        string
		steps       []step
		wantErrText string
		wantOutcome string
	}{
		{"answered run reports the receipt failure", []step{answer("hi", 1, 1)}, "agentrun ada: receipt:", "answered"},
		{"model error wins over the receipt failure", []step{{err: modelDown}}, "connection reset", "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newEngine(&recInvoker{}, failingReceipts{memstore.New()})
			res, err := e.Run(context.Background(), agent(&stepModel{steps: tt.steps}), "hi", nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErrText) {
				t.Errorf("Run error = %v, want one containing %q", err, tt.wantErrText)
			}
			if tt.wantOutcome == "answered" && sb.ErrorCode(err) != sb.EUNAVAILABLE {
				t.Errorf("error code = %q, want the store's %q", sb.ErrorCode(err), sb.EUNAVAILABLE)
			}
			if res.Outcome != tt.wantOutcome || res.Receipt.Outcome != tt.wantOutcome {
				t.Errorf("outcome = %q / receipt %q, want %q", res.Outcome, res.Receipt.Outcome, tt.wantOutcome)
			}
		})
	}
}

func TestRunWritesReceiptAfterCancellation(t *testing.T) {
	store := memstore.New()
	e, _ := newEngine(&recInvoker{}, cancelSensitiveReceipts{store})
	ctx, cancel := context.WithCancel(context.Background())
	m := &stepModel{steps: []step{{err: context.Canceled}}}
	cancel()
	res, err := e.Run(ctx, agent(m), "hi", nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run error = %v, want context.Canceled", err)
	}
	if got := storedReceipt(t, store, res.Run.RootRunID); got.Outcome != "error" {
		t.Errorf("receipt outcome = %q, want error", got.Outcome)
	}
}

func TestChainCostSumsParentAndChild(t *testing.T) {
	store := memstore.New()
	e, _ := newEngine(&recInvoker{}, store)
	parent, err := e.Run(context.Background(), agent(&stepModel{steps: []step{answer("p", 1000, 100)}}), "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	child, err := e.Run(context.Background(), agent(&stepModel{steps: []step{answer("c", 2000, 200)}}), "follow-up", &parent.Run)
	if err != nil {
		t.Fatal(err)
	}
	cost, err := store.ChainCost(context.Background(), parent.Run.RootRunID)
	if err != nil {
		t.Fatal(err)
	}
	if cost.Runs != 2 || cost.TokensIn != 3000 || cost.TokensOut != 300 {
		t.Errorf("chain = %d runs, %d in, %d out; want 2, 3000, 300", cost.Runs, cost.TokensIn, cost.TokensOut)
	}
	if want := parent.Receipt.CostUSD + child.Receipt.CostUSD; math.Abs(cost.CostUSD-want) > 1e-12 || want == 0 {
		t.Errorf("chain cost = %v, want %v", cost.CostUSD, want)
	}
}

func TestEngineWithoutClockUsesWallTime(t *testing.T) {
	e := &agentrun.Engine{Tools: &recInvoker{}, Receipts: memstore.New()}
	before := time.Now().UTC()
	res, err := e.Run(context.Background(), agent(&stepModel{steps: []step{answer("hi", 1, 1)}}), "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Receipt; r.StartedAt.Before(before) || r.StartedAt.After(time.Now()) || r.Duration < 0 {
		t.Errorf("receipt started %v, took %v; want wall time since %v", r.StartedAt, r.Duration, before)
	}
}

func TestPricingCost(t *testing.T) {
	tests := []struct {
		name    string
		p       sb.Pricing
		in, out int
		want    float64
	}{
		{"free", sb.Pricing{}, 1000, 1000, 0},
		{"one million each", sb.Pricing{InputPer1M: 3, OutputPer1M: 15}, 1_000_000, 1_000_000, 18},
		{"small numbers", sb.Pricing{InputPer1M: 0.25, OutputPer1M: 1.25}, 4000, 800, 0.002},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Cost(tt.in, tt.out); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Cost(%d, %d) = %v, want %v", tt.in, tt.out, got, tt.want)
			}
		})
	}
}

// Every tool call of a run woken from a chat carries where the run
// answers (a staged approval keeps it); a run nobody woke carries none.
func TestStartStampsReplyTo(t *testing.T) {
	to := &sb.ReplyTo{RoomID: "rFinanz", RoomName: "finanz-team", RoomType: "p", ThreadID: "th1"}
	inv := &recInvoker{}
	e, _ := newEngine(inv, memstore.New())
	m := &stepModel{steps: []step{
		calls(10, 5, call("c1", "Workspace", "write", `{"path":"a.md"}`), call("c2", "RocketChat", "send_file", `{"path":"a.md"}`)),
		answer("done", 10, 5),
	}}
	if _, err := e.Start(context.Background(), agent(m), agentrun.Start{Wake: "hi", ReplyTo: to}); err != nil {
		t.Fatal(err)
	}
	if len(inv.calls) != 2 {
		t.Fatalf("%d tool calls, want 2", len(inv.calls))
	}
	for _, c := range inv.calls {
		if c.ReplyTo == nil || *c.ReplyTo != *to {
			t.Errorf("%s.%s ReplyTo = %+v, want %+v", c.Tool, c.Action, c.ReplyTo, to)
		}
	}

	inv = &recInvoker{}
	e, _ = newEngine(inv, memstore.New())
	m = &stepModel{steps: []step{calls(10, 5, call("c1", "Workspace", "write", `{"path":"a.md"}`)), answer("done", 10, 5)}}
	if _, err := e.Run(context.Background(), agent(m), "hi", nil); err != nil {
		t.Fatal(err)
	}
	if len(inv.calls) != 1 || inv.calls[0].ReplyTo != nil {
		t.Errorf("a run nobody woke: calls %+v, want one without ReplyTo", inv.calls)
	}
}
