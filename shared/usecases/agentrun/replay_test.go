package agentrun_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

// Every tool call of a run carries the wake's replay key and its place in
// the run, counted over all steps: an attempt after a crash makes the same
// calls at the same places, and the executor recognises them.
func TestRunCallsCarryTheWakesReplayKeyAndTheirIndex(t *testing.T) {
	tests := []struct {
		name   string
		replay string
	}{
		{name: "a wake's run", replay: "rc#ada#m1"},
		{name: "a run no claim guards", replay: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := &stepModel{steps: []step{
				calls(1, 1, call("a", "Echo", "say", `{"text":"one"}`), call("b", "Echo", "say", `{"text":"two"}`)),
				calls(1, 1, call("c", "Echo", "say", `{"text":"three"}`)),
				answer("done", 1, 1),
			}}
			inv := &recInvoker{}
			eng, _ := newEngine(inv, memstore.New())
			if _, err := eng.Start(context.Background(), agent(model), agentrun.Start{Wake: "hi", Replay: tt.replay}); err != nil {
				t.Fatal(err)
			}
			if len(inv.calls) != 3 {
				t.Fatalf("got %d calls, want 3", len(inv.calls))
			}
			for i, c := range inv.calls {
				if c.Replay != tt.replay || c.CallIndex != i {
					t.Errorf("call %d: replay %q index %d, want %q %d", i, c.Replay, c.CallIndex, tt.replay, i)
				}
			}
		})
	}
}
