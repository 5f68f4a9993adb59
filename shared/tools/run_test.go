package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// The typed path runs the caller's function instead of the tool's Invoke,
// behind the same gate, and leaves the same one audit entry.
func TestRunTypedCall(t *testing.T) {
	tests := []struct {
		name        string
		call        sb.ToolCall
		do          func(context.Context) error
		wantRan     bool
		wantCode    string // of the error Run answers; "" for nil
		wantPending bool
		wantOutcome string
		wantErrText string // in the audit entry
	}{
		{name: "auto call runs and is audited", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(`{"text":"hi"}`)},
			wantRan: true, wantOutcome: sb.OutcomeOK},
		{name: "the service's error comes back typed and is audited scrubbed", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "ping"},
			do:      func(context.Context) error { return sb.E("echo.ping", sb.ERATELIMITED, "slow down, "+secret) },
			wantRan: true, wantCode: sb.ERATELIMITED, wantOutcome: sb.OutcomeError, wantErrText: "slow down, ***"},
		{name: "a panic is an internal error", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "ping"},
			do:      func(context.Context) error { panic("nil map") },
			wantRan: true, wantCode: sb.EINTERNAL, wantOutcome: sb.OutcomeError, wantErrText: "Echo.ping failed unexpectedly"},
		{name: "arguments the schema refuses", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(`{}`)},
			wantCode: sb.EINVALID, wantOutcome: sb.OutcomeRejected, wantErrText: "args of Echo.say are wrong"},
		{name: "an agent without the tool", call: sb.ToolCall{AgentID: "bob", Tool: "Echo", Action: "ping"},
			wantCode: sb.EFORBIDDEN, wantOutcome: sb.OutcomeRejected, wantErrText: `agent "bob" is not configured for Echo`},
		{name: "denied by the policy", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "forbidden"},
			wantCode: sb.EFORBIDDEN, wantOutcome: sb.OutcomeDenied, wantErrText: "not allowed here by the staging policy"},
		{name: "denied by a condition", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(`{"text":"hi","room":"other"}`)},
			wantCode: sb.EFORBIDDEN, wantOutcome: sb.OutcomeDenied},
		{name: "held for approval", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "erase"},
			wantPending: true, wantOutcome: sb.OutcomePending},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			root := "root-run-" + string(rune('a'+i))
			tc.call.Run = runCtx(root)
			ran := false
			do := tc.do
			if do == nil {
				do = func(context.Context) error { return nil }
			}
			err := f.x.Run(context.Background(), tc.call, func(ctx context.Context) error { ran = true; return do(ctx) })
			if ran != tc.wantRan {
				t.Errorf("ran = %v, want %v", ran, tc.wantRan)
			}
			if f.echo.runs.Load() != 0 {
				t.Errorf("the tool's Invoke ran %d times on the typed path", f.echo.runs.Load())
			}
			var pending *sb.PendingApproval
			switch {
			case tc.wantPending:
				if !errors.As(err, &pending) {
					t.Errorf("err = %v, want *PendingApproval", err)
				}
			case tc.wantCode == "" && err != nil:
				t.Errorf("err = %v, want nil", err)
			case tc.wantCode != "" && sb.ErrorCode(err) != tc.wantCode:
				t.Errorf("code = %q (%v), want %q", sb.ErrorCode(err), err, tc.wantCode)
			}
			e := f.only(t, root)
			if e.Outcome != tc.wantOutcome || e.Tool != tc.call.Tool || e.AgentID != tc.call.AgentID || e.Run.RunID != root+"-run" {
				t.Errorf("audit entry %+v, want outcome %s for %s.%s of %s in %s-run", e, tc.wantOutcome, tc.call.Tool, tc.call.Action, tc.call.AgentID, root)
			}
			if !strings.Contains(e.Error, tc.wantErrText) || strings.Contains(e.Error, secret) {
				t.Errorf("audit error %q, want it to contain %q and no secret", e.Error, tc.wantErrText)
			}
			if e.Duration <= 0 {
				t.Errorf("audit duration %v, want > 0", e.Duration)
			}
		})
	}
}

// An approved typed call runs, and the audit names whose yes let it.
func TestRunApprovedTypedCall(t *testing.T) {
	f := newFixture(t)
	call := sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "erase", Run: runCtx("root-run-approved"),
		Approved: true, ApprovalID: "ap-1", ApprovedBy: "telegram:42"}
	if err := f.x.Run(context.Background(), call, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	e := f.only(t, "root-run-approved")
	if e.Outcome != sb.OutcomeOK || e.Decision != sb.DecisionApproved || e.ApprovalID != "ap-1" || e.DecidedBy != "telegram:42" {
		t.Errorf("audit entry %+v, want ok, approved by telegram:42 with ap-1", e)
	}
}
