package agentrun_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/runtoken"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

// tokenInvoker keeps the run token each tool call's context carried.
type tokenInvoker struct {
	recInvoker
	mu     sync.Mutex
	tokens []string
}

func (ti *tokenInvoker) Invoke(ctx context.Context, call sb.ToolCall) sb.Envelope {
	ti.mu.Lock()
	ti.tokens = append(ti.tokens, sb.RunToken(ctx))
	ti.mu.Unlock()
	return ti.recInvoker.Invoke(ctx, call)
}

// The engine is the one issuer of run tokens: each run gets one that
// names exactly the run it stamped (ids, agent, call path) and ends with
// the run's deadline; its tool calls carry it.
func TestRunIssuesItsToken(t *testing.T) {
	keys, err := runtoken.New("engine-test-signing-key-01")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	keys.Now = func() time.Time { return now }
	inv := &tokenInvoker{}
	m := &stepModel{steps: []step{calls(1, 1, call("1", "Echo", "say", `{}`)), answer("done", 1, 1)}}
	e := &agentrun.Engine{Tools: inv, Receipts: memstore.New(), Tokens: keys}
	deadline := time.Now().Add(2 * time.Minute)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	parent := &sb.RunContext{RunID: "run-a", RootRunID: "root", AgentID: "alice"}
	res, err := e.Start(ctx, sb.Agent{ID: "bob", Model: m}, agentrun.Start{Wake: "hi", Parent: parent, CallPath: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.tokens) != 1 || inv.tokens[0] == "" || inv.tokens[0] != res.RunToken {
		t.Fatalf("tool calls carried tokens %q, result %q; want the run's one token", inv.tokens, res.RunToken)
	}
	now = deadline.Add(-time.Millisecond)
	got, err := keys.Verify(res.RunToken)
	if err != nil || got != res.Run || got.AgentID != "bob" || got.CallPath != "alice" || got.ParentRunID != "run-a" {
		t.Fatalf("token names %+v (%v), want the run %+v", got, err, res.Run)
	}
	now = deadline
	if _, err := keys.Verify(res.RunToken); sb.ErrorCode(err) != sb.EFORBIDDEN {
		t.Errorf("at the run's deadline the token is %v, want expired", err)
	}
}

// Without a deadline the token still ends (runtoken.MaxTTL); without
// keys the engine issues none and runs as before.
func TestRunTokenWithoutDeadlineOrKeys(t *testing.T) {
	keys, err := runtoken.New("engine-test-signing-key-01")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	now := start
	keys.Now = func() time.Time { return now }
	m := &stepModel{steps: []step{answer("done", 1, 1)}}
	res, err := (&agentrun.Engine{Tools: &recInvoker{}, Receipts: memstore.New(), Tokens: keys}).
		Start(context.Background(), sb.Agent{ID: "bob", Model: m}, agentrun.Start{Wake: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	now = start.Add(runtoken.MaxTTL + time.Second)
	if _, err := keys.Verify(res.RunToken); sb.ErrorCode(err) != sb.EFORBIDDEN {
		t.Errorf("a token of a run without deadline is %v after MaxTTL, want expired", err)
	}
	res, err = (&agentrun.Engine{Tools: &recInvoker{}, Receipts: memstore.New()}).
		Start(context.Background(), sb.Agent{ID: "bob", Model: m}, agentrun.Start{Wake: "hi"})
	if err != nil || res.RunToken != "" {
		t.Errorf("without keys: token %q, %v; want none", res.RunToken, err)
	}
}
