package approvals_test

import (
	"strings"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

// A failed approval's follow-up tells a call that never started (no
// StartedAt: closed before the worker took it) from one that ran and
// failed, whose answer it shows.
func TestFollowUpTellsNotRunFromFailed(t *testing.T) {
	decided := time.Date(2026, 3, 15, 9, 0, 0, 0, time.UTC)
	base := approvals.Approval{ID: "ap-1", Tool: "Workspace", Action: "delete", Args: []byte(`{"path":"q1.md"}`),
		Status: approvals.StatusFailed, DecidedBy: approvals.DecidedByLink, DecidedAt: decided}
	notRun := base
	notRun.Result = sb.Fail("Workspace.delete was approved but did not run: the worker did not start it")
	ran := base
	ran.StartedAt = decided.Add(time.Second)
	ran.Result = sb.Fail("cannot delete q1.md: the store is down")
	tests := []struct {
		name    string
		a       approvals.Approval
		want    []string
		wantNot []string
	}{
		{"never started", notRun, []string{"it did not run and will not run now", "ask again"}, []string{"result:", "the action failed"}},
		{"ran and failed", ran, []string{"the action failed", "result: ", "the store is down"}, []string{"did not run"}},
	}
	for _, tt := range tests {
		got := approvals.FollowUpText(tt.a)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: follow-up %q does not say %q", tt.name, got, w)
			}
		}
		for _, w := range tt.wantNot {
			if strings.Contains(got, w) {
				t.Errorf("%s: follow-up %q says %q", tt.name, got, w)
			}
		}
	}
}
