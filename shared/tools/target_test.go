package tools_test

import (
	"context"
	"strings"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
)

// targetTool is the echo tool with a target that may change while a human
// decides: now is what Fingerprint answers when the approved call comes back.
type targetTool struct {
	*echoTool
	now func() (string, error)
}

var _ tools.Fingerprinter = targetTool{}

func (t targetTool) Fingerprint(context.Context, sb.ToolCall) (string, error) { return t.now() }

// An approved call runs only on the target it was asked for: one that is
// gone or now means another is refused with why, and nothing runs.
func TestApprovedCallChecksItsTarget(t *testing.T) {
	const asked = "room #vorstand (id r1)"
	tests := []struct {
		name    string
		now     func() (string, error)
		wantRun bool
		wantErr string
	}{
		{"the same target runs", func() (string, error) { return asked, nil }, true, ""},
		{"a target that is gone is refused", func() (string, error) {
			return "", sb.E("rctool.fingerprint", sb.ENOTFOUND, "no room vorstand")
		}, false, "it no longer exists (when it was asked it was " + asked + ")"},
		{"a target that changed is refused", func() (string, error) { return "room #vorstand (id r2)", nil },
			false, "now it is room #vorstand (id r2)"},
		{"a target that cannot be checked now runs", func() (string, error) {
			return "", sb.E("rctool.fingerprint", sb.EUNAVAILABLE, "rocket.chat is down")
		}, true, ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			echo := &echoTool{}
			f := newFixture(t, func(o *tools.Options) { o.Tools = []sb.Tool{targetTool{echo, tc.now}} })
			root := "root-target-" + string(rune('a'+i))
			call := sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "erase", Run: runCtx(root),
				Approved: true, ApprovalID: "ap-1", ApprovedBy: "telegram:42", Target: asked}
			env := f.x.Invoke(context.Background(), call)
			if ran := echo.runs.Load() == 1; ran != tc.wantRun {
				t.Fatalf("ran = %v, want %v (envelope %+v)", ran, tc.wantRun, env)
			}
			e := f.only(t, root)
			if tc.wantRun {
				if env.Status != "ok" || e.Outcome != sb.OutcomeOK {
					t.Errorf("envelope %+v, audit %+v; want ok", env, e)
				}
				return
			}
			if env.Status != "error" || !strings.Contains(env.Error, tc.wantErr) || e.Outcome != sb.OutcomeRejected {
				t.Errorf("envelope %+v, audit outcome %q; want a refusal saying %q", env, e.Outcome, tc.wantErr)
			}
		})
	}
}
