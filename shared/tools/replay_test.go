package tools_test

import (
	"context"
	"encoding/json"
	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
)

// withReplays records the outcomes of Echo.say and Echo.fail in a KV of
// their own, on the fixture's day (a recorded outcome lasts a week).
func withReplays() fixtureOption {
	return func(o *tools.Options) {
		kv := memstore.New()
		kv.Now = func() time.Time { return t0 }
		o.ReplayActions = []string{"Echo.say", "Echo.fail"}
		o.Replays = kv.KV()
	}
}

// A recovered wake makes its calls again: the second of the same call (same
// wake, same place in the run, same arguments) answers the first one's
// outcome without running; anything else runs.
func TestInvokeReplaysARecoveredWakesCalls(t *testing.T) {
	say := func(replay string, index int, args string) sb.ToolCall {
		return sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(args),
			Run: runCtx("replay"), Origin: sb.OriginAgent, Replay: replay, CallIndex: index}
	}
	tests := []struct {
		name         string
		first, again sb.ToolCall
		wantRuns     int32 // how often the tool ran for both calls
		wantReplayed bool
	}{
		{name: "same wake, index and args answer the record",
			first: say("rc#hermes#m1", 0, `{"text":"hi"}`), again: say("rc#hermes#m1", 0, `{"text":"hi"}`),
			wantRuns: 1, wantReplayed: true},
		{name: "key order and spacing do not matter",
			first: say("rc#hermes#m1", 1, `{"text":"hi","room":"r"}`), again: say("rc#hermes#m1", 1, `{ "room": "r", "text": "hi" }`),
			wantRuns: 1, wantReplayed: true},
		{name: "other args at the same index run",
			first: say("rc#hermes#m1", 0, `{"text":"hi"}`), again: say("rc#hermes#m1", 0, `{"text":"hello"}`),
			wantRuns: 2},
		{name: "another index runs",
			first: say("rc#hermes#m1", 0, `{"text":"hi"}`), again: say("rc#hermes#m1", 1, `{"text":"hi"}`),
			wantRuns: 2},
		{name: "another wake runs",
			first: say("rc#hermes#m1", 0, `{"text":"hi"}`), again: say("rc#hermes#m2", 0, `{"text":"hi"}`),
			wantRuns: 2},
		{name: "no replay key always runs",
			first: say("", 0, `{"text":"hi"}`), again: say("", 0, `{"text":"hi"}`),
			wantRuns: 2},
		{name: "an error is not recorded: the retry runs",
			first:    sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "fail", Args: json.RawMessage(`{}`), Replay: "rc#hermes#m1"},
			again:    sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "fail", Args: json.RawMessage(`{}`), Replay: "rc#hermes#m1"},
			wantRuns: 2},
		{name: "an action not listed (a read) always runs",
			first:    sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "ping", Args: json.RawMessage(`{}`), Replay: "rc#hermes#m1"},
			again:    sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "ping", Args: json.RawMessage(`{}`), Replay: "rc#hermes#m1"},
			wantRuns: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, withReplays())
			ctx := context.Background()
			first := f.x.Invoke(ctx, tt.first)
			again := f.x.Invoke(ctx, tt.again)
			if got := f.echo.runs.Load(); got != tt.wantRuns {
				t.Fatalf("tool ran %d times, want %d", got, tt.wantRuns)
			}
			replayed, _ := again.Data["replayed"].(bool)
			if replayed != tt.wantReplayed {
				t.Fatalf("second answer %+v: replayed = %v, want %v", again, replayed, tt.wantReplayed)
			}
			if !tt.wantReplayed {
				return
			}
			if again.Status != first.Status || again.Data["echo"] != first.Data["echo"] {
				t.Errorf("replayed answer %+v, want the first one %+v", again, first)
			}
			entries, err := f.store.ByRoot(ctx, "replay")
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 2 || entries[0].Outcome != sb.OutcomeOK || entries[1].Outcome != sb.OutcomeReplayed {
				t.Errorf("audit %+v, want the call ok, then its repeat replayed", entries)
			}
		})
	}
}
