package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
)

// A caller that passes an sb.ToolAudit gets the call's audit entry back:
// the staging decision, the outcome and the approval, the same entry the
// audit store keeps.
func TestInvokeLeavesItsAuditEntryForTheCaller(t *testing.T) {
	for _, tc := range []struct {
		name         string
		action       string
		wantDecision sb.Decision
		wantOutcome  string
	}{
		{"auto", "ping", sb.DecisionAuto, sb.OutcomeOK},
		{"denied", "forbidden", sb.DecisionDeny, sb.OutcomeDenied},
		{"staged", "erase", sb.DecisionApprove, sb.OutcomePending},
		{"unknown action", "shout", "", sb.OutcomeRejected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			sink := &sb.ToolAudit{}
			root := "sink-" + tc.action
			f.x.Invoke(sb.WithToolAudit(context.Background(), sink), sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: tc.action, Run: runCtx(root)})
			got, stored := sink.Entry, f.only(t, root)
			if got.Decision != tc.wantDecision || got.Outcome != tc.wantOutcome {
				t.Errorf("entry decision %q outcome %q, want %q %q", got.Decision, got.Outcome, tc.wantDecision, tc.wantOutcome)
			}
			if got.ID != stored.ID || got.Decision != stored.Decision || got.Outcome != stored.Outcome || got.Duration != stored.Duration {
				t.Errorf("entry %+v, want the stored one %+v", got, stored)
			}
		})
	}
}

// nestingTool calls the executor again from inside its own call, as a
// tool that acts through other tools would.
type nestingTool struct {
	x        *tools.Executor
	sawSink  bool
	innerRan bool
}

func (n *nestingTool) Spec() sb.ToolSpec {
	return sb.ToolSpec{Name: "Nest", Actions: []sb.ActionSpec{{Name: "outer", Parameters: map[string]any{"type": "object"}},
		{Name: "inner", Parameters: map[string]any{"type": "object"}}}}
}

func (n *nestingTool) Invoke(ctx context.Context, call sb.ToolCall) sb.Envelope {
	if call.Action == "inner" {
		n.innerRan = true
		return sb.OK(nil)
	}
	n.sawSink = sb.ToolAuditFrom(ctx) != nil
	return n.x.Invoke(ctx, sb.ToolCall{AgentID: call.AgentID, Tool: "Nest", Action: "inner", Args: json.RawMessage(`{}`), Run: call.Run})
}

// A call the tool makes in turn does not see, nor overwrite, its caller's
// sink: the caller reads the entry of the call it made.
func TestNestedCallDoesNotOverwriteTheCallersAuditEntry(t *testing.T) {
	policy, err := staging.New(map[string]string{"Nest.outer": "auto", "Nest.inner": "auto"})
	if err != nil {
		t.Fatal(err)
	}
	nest := &nestingTool{}
	x, err := tools.New(tools.Options{Tools: []sb.Tool{nest}, Policy: policy, Audit: memstore.New(), Scrub: scrub.New(nil),
		Permits: func(string, string) bool { return true }, Log: discard()})
	if err != nil {
		t.Fatal(err)
	}
	nest.x = x
	sink := &sb.ToolAudit{}
	x.Invoke(sb.WithToolAudit(context.Background(), sink), sb.ToolCall{AgentID: "alice", Tool: "Nest", Action: "outer", Args: json.RawMessage(`{}`), Run: runCtx("nest")})
	if !nest.innerRan || nest.sawSink {
		t.Errorf("inner ran %v, tool saw the sink %v; want the inner call run and the sink hidden from the tool", nest.innerRan, nest.sawSink)
	}
	if sink.Entry.Action != "outer" {
		t.Errorf("sink holds the entry of %s.%s, want Nest.outer", sink.Entry.Tool, sink.Entry.Action)
	}
}

// The typed path leaves its entry too.
func TestRunLeavesItsAuditEntryForTheCaller(t *testing.T) {
	f := newFixture(t)
	sink := &sb.ToolAudit{}
	err := f.x.Run(sb.WithToolAudit(context.Background(), sink), sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "forbidden", Run: runCtx("sink-run")},
		func(context.Context) error { return nil })
	if sb.ErrorCode(err) != sb.EFORBIDDEN || sink.Entry.Decision != sb.DecisionDeny || sink.Entry.Outcome != sb.OutcomeDenied {
		t.Errorf("Run = %v, entry %q/%q; want EFORBIDDEN and the deny entry", err, sink.Entry.Decision, sink.Entry.Outcome)
	}
}
