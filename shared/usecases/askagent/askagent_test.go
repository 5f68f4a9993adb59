package askagent_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// askLine is the scripted model's way to call ask_agent.
func askLine(agent, question string) string {
	return `call ask_agent.ask {"agent":"` + agent + `","question":"` + question + `"}`
}

// A asks B; B's answer is A's tool result in the same run, and both
// directions are rows of A's chain, the answer's row naming B's run as the
// child of A's. B's run is a run like any other: its own receipt in the
// chain, with its cost.
func TestAskReturnsTheAnswerInTheSameRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 30*time.Second, map[string]agentSpec{
		"alice": {model: scripted("Alice", "Alice here.")},
		"bob":   {model: scripted("Bob", "Bob says 42 (token s3cr3t-token)")},
	})
	before := w.dynamo.Stats().ByOp
	res := w.run(t, "alice", askLine("bob", "what is 6×7?"))
	// Alice's receipt and audit entry, bob's lease taken, and one request
	// for the question's row, the answer's row, their search rows, bob's
	// receipt and the lease given back.
	if got := writes(diff(w.dynamo.Stats().ByOp, before)); got != 4 {
		t.Errorf("%d DynamoDB writes for the ask, want 4", got)
	}
	if free, err := w.store.Acquire(t.Context(), sb.AgentLease("bob"), "next-run", time.Now().Add(time.Minute)); err != nil || !free {
		t.Errorf("bob's lease after the answer: free = %v, %v; want it given back", free, err)
	}

	if len(res.Calls) != 1 || res.Calls[0].Envelope.Status != "ok" {
		t.Fatalf("calls %+v, want one ok ask", res.Calls)
	}
	got := res.Calls[0].Envelope.Data
	bobRun, _ := got["runId"].(string)
	if got["agent"] != "bob" || got["answer"] != "Bob says 42 (token s3cr3t-token)" || bobRun == "" {
		t.Errorf("envelope data %v, want bob's answer and run", got)
	}
	if !strings.Contains(res.Answer, "ask_agent.ask → ok: Bob says 42") {
		t.Errorf("alice's answer %q does not carry bob's", res.Answer)
	}

	rows := w.chain(t, res.Run.RootRunID)
	if len(rows) != 2 {
		t.Fatalf("chain rows %+v, want request and response", rows)
	}
	req, resp := rows[0], rows[1]
	if req.From != "alice" || req.To != "bob" || req.Direction != sb.DirectionRequest || req.Status != sb.MessageDelivered ||
		req.Channel != sb.ChannelAsk || req.Content != "what is 6×7?" || req.RunID != res.Run.RunID {
		t.Errorf("request row %+v", req)
	}
	if resp.From != "bob" || resp.To != "alice" || resp.Direction != sb.DirectionResponse || resp.Status != sb.MessageDelivered ||
		resp.RunID != bobRun || resp.ParentRunID != res.Run.RunID || resp.RootRunID != res.Run.RootRunID {
		t.Errorf("response row %+v", resp)
	}
	if strings.Contains(resp.Content, "s3cr3t-token") || !strings.HasPrefix(resp.Content, "Bob says 42") {
		t.Errorf("response row content %q: the core scrubs before recording", resp.Content)
	}

	cost, err := w.store.ChainCost(context.Background(), res.Run.RootRunID)
	if err != nil {
		t.Fatal(err)
	}
	if cost.Runs != 2 {
		t.Fatalf("chain has %d runs, want alice's and bob's: %+v", cost.Runs, cost.Receipts)
	}
	for _, r := range cost.Receipts {
		if r.CostUSD <= 0 {
			t.Errorf("receipt %+v has no cost", r)
		}
		if r.AgentID == "bob" && (r.Run.ParentRunID != res.Run.RunID || r.Run.RunID != bobRun) {
			t.Errorf("bob's receipt %+v, want parent %s", r.Run, res.Run.RunID)
		}
	}
	// Two calls out of the machine: the guard recorded the question, the
	// answering run its answer; no record Task.
	if targets, records := w.count(); targets != 1 || records != 0 || w.tasks() != 2 {
		t.Errorf("ran the target %d times, %d record Tasks, %d Tasks in all; want 1, 0 and 2", targets, records, w.tasks())
	}
}

// modelFunc is an sb.Model made of a function.
type modelFunc func(ctx context.Context, req sb.ModelRequest) (sb.ModelResponse, error)

func (f modelFunc) Complete(ctx context.Context, req sb.ModelRequest) (sb.ModelResponse, error) {
	return f(ctx, req)
}

// The question's request row is written with the answer, in one request:
// while B runs, the pair's conversation holds neither yet; afterwards it
// holds both.
func TestQuestionIsRecordedWithTheAnswer(t *testing.T) {
	t.Parallel()
	var w *world
	var mu sync.Mutex
	var seenRows []sb.AgentMessage
	bob := scripted("Bob", "Bob answers.")
	w = newWorld(t, 30*time.Second, map[string]agentSpec{
		"alice": {model: scripted("Alice", "Alice here.")},
		"bob": {model: modelFunc(func(ctx context.Context, req sb.ModelRequest) (sb.ModelResponse, error) {
			page, err := w.messages.Pair(ctx, "alice", "bob", sb.MessageQuery{})
			if err != nil {
				return sb.ModelResponse{}, err
			}
			mu.Lock()
			seenRows = page.Messages
			mu.Unlock()
			return bob.Complete(ctx, req)
		})},
	})
	res := w.run(t, "alice", askLine("bob", "what is 6×7?"))
	if res.Calls[0].Envelope.Status != "ok" {
		t.Fatalf("ask %+v, want bob's answer", res.Calls[0].Envelope)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seenRows) != 0 {
		t.Fatalf("bob's run began with rows %+v, want none yet", seenRows)
	}
	page, err := w.messages.Pair(t.Context(), "alice", "bob", sb.MessageQuery{OldestFirst: true})
	if err != nil || len(page.Messages) != 2 || page.Messages[0].Content != "what is 6×7?" || page.Messages[1].Content != "Bob answers." {
		t.Fatalf("the pair after the answer: %+v, %v; want the question and the answer", page.Messages, err)
	}
}

// A asks B, and B (answering) tries to ask A back: the guard refuses at
// once — the answering run never starts a second target, and the refusal
// is a denied row — and B still answers A.
func TestAskInACircleIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	const timeout = 30 * time.Second
	w := newWorld(t, timeout, map[string]agentSpec{
		"alice": {model: scripted("Alice", "Alice here.")},
		"bob":   {model: scripted("Bob", "Bob answers.")},
	})
	// Alice's question is a line that makes scripted Bob ask Alice.
	res := w.run(t, "alice", askLine("bob", `call ask_agent.ask {\"agent\":\"alice\",\"question\":\"and you?\"}`))
	if res.Calls[0].Envelope.Status != "ok" {
		t.Fatalf("alice's ask %+v, want bob's answer", res.Calls[0].Envelope)
	}
	answer, _ := res.Calls[0].Envelope.Data["answer"].(string)
	if !strings.Contains(answer, "ask_agent.ask → error: alice was not asked: alice is already in this chain of questions (alice → bob)") {
		t.Errorf("bob's answer %q, want his refused question to alice in it", answer)
	}
	rows := w.chain(t, res.Run.RootRunID)
	var denied []sb.AgentMessage
	for _, r := range rows {
		if r.Status == sb.MessageDenied {
			denied = append(denied, r)
		}
	}
	if len(rows) != 3 || len(denied) != 1 || denied[0].From != "bob" || denied[0].To != "alice" ||
		denied[0].Direction != sb.DirectionRequest || denied[0].Content != "and you?" {
		t.Fatalf("rows %+v, want alice→bob, a denied bob→alice request and bob's answer", rows)
	}
	if targets, _ := w.count(); targets != 1 {
		t.Errorf("the target ran %d times, want once (bob); the refused question must start no run", targets)
	}
	// Refused by the guard, not by waiting out the timeout.
	w.machine.mu.Lock()
	inner := w.machine.took[0] // bob's refused ask ends first
	w.machine.mu.Unlock()
	if inner >= timeout/2 {
		t.Errorf("the refused ask took %v, as long as a timeout", inner)
	}
	t.Logf("A→B→A refused in %v (whole ask %v)", inner, w.machine.took[1])
}

// A run that answers a question is not offered ask_agent, and when it
// calls it anyway (to someone not on the path) it is refused with a row.
func TestAnsweringRunAsksNoOne(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 30*time.Second, map[string]agentSpec{
		"alice": {model: scripted("Alice", "Alice here.")},
		"bob":   {model: scripted("Bob", "Bob answers.")},
		"carol": {model: scripted("Carol", "Carol answers.")},
	})
	res := w.run(t, "alice", askLine("bob", `call ask_agent.ask {\"agent\":\"carol\",\"question\":\"help?\"}`))
	answer, _ := res.Calls[0].Envelope.Data["answer"].(string)
	if !strings.Contains(answer, "carol was not asked: you are answering a question from alice and cannot ask others in turn") {
		t.Errorf("bob's answer %q, want his question to carol refused", answer)
	}
	for _, tools := range w.offered("bob") {
		if strings.Contains(strings.Join(tools, ","), sb.AskAgentTool) {
			t.Errorf("bob, answering, was offered %v", tools)
		}
	}
	if tools := w.offered("alice")[0]; !strings.Contains(strings.Join(tools, ","), sb.AskAgentTool) {
		t.Errorf("alice was offered %v, want ask_agent", tools)
	}
	var denied int
	for _, r := range w.chain(t, res.Run.RootRunID) {
		if r.Status == sb.MessageDenied && r.From == "bob" && r.To == "carol" {
			denied++
		}
	}
	if denied != 1 {
		t.Errorf("%d denied bob→carol rows, want 1", denied)
	}
	if targets, _ := w.count(); targets != 1 {
		t.Errorf("the target ran %d times, want once", targets)
	}
}

// Questions the guard refuses: each answers an error envelope that says
// why, leaves one denied request row, and runs no one.
func TestAskRefusals(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 30*time.Second, map[string]agentSpec{
		"alice": {model: scripted("Alice", "Alice here."), ask: []string{"bob"}},
		"bob":   {model: scripted("Bob", "Bob answers.")},
		"carol": {model: scripted("Carol", "Carol answers.")},
	})
	tests := []struct {
		name, to, wantError string
	}{
		{"yourself", "alice", "alice was not asked: you cannot ask yourself"},
		{"unknown agent", "zed", `zed was not asked: there is no agent "zed"`},
		{"not in the asker's list", "carol", "carol was not asked: you may not ask carol; you may ask bob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := w.run(t, "alice", askLine(tt.to, "anyone there?"))
			env := res.Calls[0].Envelope
			if env.Status != "error" || !strings.HasPrefix(env.Error, tt.wantError) {
				t.Fatalf("envelope %+v, want error %q", env, tt.wantError)
			}
			rows := w.chain(t, res.Run.RootRunID)
			if len(rows) != 1 || rows[0].Status != sb.MessageDenied || rows[0].To != tt.to || rows[0].Direction != sb.DirectionRequest {
				t.Fatalf("rows %+v, want one denied request", rows)
			}
		})
	}
	if targets, _ := w.count(); targets != 0 {
		t.Errorf("the target ran %d times for refused questions", targets)
	}
}

// An agent without an ask_agent block cannot use the tool at all: the
// executor refuses before any machine starts.
func TestAskAgentNotEnabled(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 30*time.Second, map[string]agentSpec{
		"alice": {model: scripted("Alice", "Alice here."), noAsk: true},
		"bob":   {model: scripted("Bob", "Bob answers.")},
	})
	res := w.run(t, "alice", askLine("bob", "hello?"))
	if env := res.Calls[0].Envelope; env.Status != "error" {
		t.Fatalf("envelope %+v, want a refusal", env)
	}
	if n := len(w.machine.took); n != 0 {
		t.Errorf("the machine started %d times", n)
	}
}

// A target that never answers: after the configured timeout the asking
// run gets an error envelope saying so, and the chain has the request and
// a timeout response row.
func TestAskTimesOut(t *testing.T) {
	t.Parallel()
	w := newWorld(t, time.Second, map[string]agentSpec{
		"alice": {model: scripted("Alice", "Alice here.")},
		"slow":  {model: silent{}},
	})
	res := w.run(t, "alice", askLine("slow", "are you there?"))
	env := res.Calls[0].Envelope
	if env.Status != "error" || !strings.HasPrefix(env.Error, "slow gave no answer within 1 seconds") {
		t.Fatalf("envelope %+v, want a timeout", env)
	}
	rows := w.chain(t, res.Run.RootRunID)
	if len(rows) != 2 || rows[1].Status != sb.MessageTimeout || rows[1].From != "slow" || rows[1].Direction != sb.DirectionResponse ||
		rows[1].RunID != res.Run.RunID || !strings.Contains(rows[1].Content, "no answer within 1 seconds") {
		t.Fatalf("rows %+v, want the request and a timeout response", rows)
	}
	if !rows[1].OccurredAt.After(rows[0].OccurredAt) {
		t.Errorf("timeout row at %v, not after the question at %v", rows[1].OccurredAt, rows[0].OccurredAt)
	}
}

// The answering run waits for the agent's lease: while another run of the
// target holds it, the question times out rather than overlapping it.
func TestAskWaitsForTheTargetsLease(t *testing.T) {
	t.Parallel()
	w := newWorld(t, time.Second, map[string]agentSpec{
		"alice": {model: scripted("Alice", "Alice here.")},
		"bob":   {model: scripted("Bob", "Bob answers.")},
	})
	ok, err := w.store.Acquire(context.Background(), "agent#bob", "another-run", time.Now().Add(time.Minute))
	if err != nil || !ok {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	res := w.run(t, "alice", askLine("bob", "busy?"))
	if env := res.Calls[0].Envelope; env.Status != "error" || !strings.Contains(env.Error, "no answer within 1 seconds") {
		t.Fatalf("envelope %+v, want a timeout while bob is busy", env)
	}
	cost, err := w.store.ChainCost(context.Background(), res.Run.RootRunID)
	if err != nil || cost.Runs != 1 {
		t.Errorf("chain runs %d (%v), want alice's only: bob never ran", cost.Runs, err)
	}
}

// An asked agent that has used up its daily budget does not run: the
// asking run hears that it could not answer, and the chain has a failed
// response row.
func TestAskedAgentOverBudget(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 30*time.Second, map[string]agentSpec{
		"alice": {model: scripted("Alice", "Alice here.")},
		"bob":   {model: scripted("Bob", "Bob answers."), budget: 1e-9},
	})
	w.run(t, "bob", "spend a little") // any cost reaches the tiny budget
	res := w.run(t, "alice", askLine("bob", "still there?"))
	if env := res.Calls[0].Envelope; env.Status != "error" || !strings.HasPrefix(env.Error, "bob could not answer") {
		t.Fatalf("envelope %+v, want bob unable to answer", env)
	}
	rows := w.chain(t, res.Run.RootRunID)
	if len(rows) != 2 || rows[1].Status != sb.MessageFailed {
		t.Fatalf("rows %+v, want the request and a failed response", rows)
	}
	if cost, err := w.store.ChainCost(context.Background(), res.Run.RootRunID); err != nil || cost.Runs != 1 {
		t.Errorf("chain runs %d (%v), want alice's only", cost.Runs, err)
	}
}

var _ sb.Model = silent{}

// An answer given when the machine has stopped waiting is not recorded as
// delivered: the machine's own row for the question stands (here, where
// the clock jumps past the timeout during B's run, a failed one).
func TestAnswerAfterTheTimeoutIsNotRecorded(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 30*time.Second, map[string]agentSpec{
		"alice": {model: scripted("Alice", "Alice here.")},
		"bob":   {model: scripted("Bob", "Bob answers late.")},
	})
	var calls atomic.Int32
	w.answerer.Now = func() time.Time {
		if calls.Add(1) == 1 { // the question's deadline is taken first
			return time.Now()
		}
		return time.Now().Add(31 * time.Second)
	}
	res := w.run(t, "alice", askLine("bob", "still there?"))
	if env := res.Calls[0].Envelope; env.Status != "error" {
		t.Fatalf("envelope %+v, want no answer", env)
	}
	rows := w.chain(t, res.Run.RootRunID)
	if len(rows) != 2 || rows[1].Direction != sb.DirectionResponse || rows[1].Status == sb.MessageDelivered {
		t.Fatalf("rows %+v, want the request and a response that is not delivered", rows)
	}
	// Bob ran: his receipt is written although his answer is not.
	if cost, err := w.store.ChainCost(context.Background(), res.Run.RootRunID); err != nil || cost.Runs != 2 {
		t.Errorf("chain runs %d (%v), want alice's and bob's", cost.Runs, err)
	}
}
