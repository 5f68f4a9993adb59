package agentrun_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

// stopAfter is a chain gate that answers reason from the given check on
// (a stop marker written while the run works), and records what it was
// asked.
type stopAfter struct {
	from    int
	reason  string
	checks  int
	running []float64
}

func (g *stopAfter) Check(_ context.Context, _ sb.RunContext, running float64) (string, error) {
	g.checks++
	g.running = append(g.running, running)
	if g.checks >= g.from {
		return g.reason, nil
	}
	return "", nil
}

func TestChainGateEndsTheRunBeforeItsNextModelCall(t *testing.T) {
	for _, reason := range []string{agentrun.OutcomeChainStopped, agentrun.OutcomeChainBudget} {
		t.Run(reason, func(t *testing.T) {
			call := sb.ModelToolCall{ID: "c", Tool: "Echo", Action: "say", Args: json.RawMessage(`{}`)}
			m := &stepModel{steps: []step{
				{resp: sb.ModelResponse{ToolCalls: []sb.ModelToolCall{call}, TokensIn: 1000, TokensOut: 100}},
				{resp: sb.ModelResponse{ToolCalls: []sb.ModelToolCall{{ID: "d", Tool: "Echo", Action: "say", Args: json.RawMessage(`{"n":2}`)}}, TokensIn: 1000}},
				{resp: sb.ModelResponse{Text: "done"}},
			}}
			store := memstore.New()
			e, _ := newEngine(&recInvoker{}, store)
			gate := &stopAfter{from: 3, reason: reason}
			e.Chain = gate
			res, err := e.Start(context.Background(), agent(m), agentrun.Start{Wake: "go"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != reason || res.Receipt.Reason != reason || res.Steps != 2 || len(m.reqs) != 2 {
				t.Errorf("outcome %q reason %q steps %d model calls %d; want %q after 2 model calls",
					res.Outcome, res.Receipt.Reason, res.Steps, len(m.reqs), reason)
			}
			if res.Answer == "" {
				t.Error("the stopped run says nothing about why it stopped")
			}
			// Before each call the gate hears the run's own cost so far.
			if len(gate.running) != 3 || gate.running[0] != 0 || gate.running[2] <= gate.running[1] || gate.running[1] == 0 {
				t.Errorf("running costs told the gate = %v, want 0 then growing", gate.running)
			}
			if got := storedReceipt(t, store, res.Run.RootRunID); got.Reason != reason {
				t.Errorf("stored receipt reason %q, want %q", got.Reason, reason)
			}
		})
	}
}

func TestRunJobDropsAHopOfAStoppedChain(t *testing.T) {
	g := &stopAfter{from: 1, reason: agentrun.OutcomeChainStopped}
	r := newRunner(gate{}, admit{})
	r.Chain = g
	res, err := r.RunJob(context.Background(), sb.WakeJob{AgentID: "hermes", Text: "follow-up",
		Parent: &sb.RunContext{RunID: "p1", RootRunID: "root1", AgentID: "bob"}})
	if err != nil || res.Outcome != agentrun.OutcomeChainStopped || res.Answer != "" || g.checks != 1 {
		t.Errorf("RunJob = %+v, %v; want chain_stopped without a run", res, err)
	}
}
