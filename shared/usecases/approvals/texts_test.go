package approvals_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

func TestDescribe(t *testing.T) {
	ap := approvals.Approval{AgentID: "hermes", Tool: "Nextcloud", Action: "share",
		Args:      json.RawMessage(`{"path":"/q3.xlsx","note":"for s3cret-board","password":"hunter2hunter2","tags":{"token":["a1b2c3d4",90817263]}}`),
		Reason:    "the board asked (s3cret-board)",
		ExpiresAt: time.Date(2026, 3, 4, 17, 30, 0, 0, time.FixedZone("CET", 3600))}
	got := approvals.Describe(ap, "Hermes", scrub.New([]string{"s3cret-board"}))
	// The arguments as ShowArgs shows them: canonical, every secret masked
	// (the key's value at any depth, numbers too, and configured secrets
	// anywhere), indented; the reason scrubbed.
	want := "Hermes wants to run Nextcloud.share\nwith {\n  \"note\": \"for ***\",\n  \"password\": \"***\",\n  \"path\": \"/q3.xlsx\",\n" +
		"  \"tags\": {\n    \"token\": [\n      \"***\",\n      \"***\"\n    ]\n  }\n}\nWhy: the board asked (***)\nExpires: 2026-03-04 16:30 UTC"
	if got != want {
		t.Errorf("Describe =\n%s\nwant\n%s", got, want)
	}
	if args := approvals.ShowArgs(scrub.New([]string{"s3cret-board"}), ap.Args); !strings.Contains(got, "with "+args+"\n") {
		t.Errorf("Describe shows the arguments otherwise than ShowArgs:\n%s\nShowArgs:\n%s", got, args)
	}
	ap.Args = json.RawMessage(`"` + strings.Repeat("ä", 700) + `"`)
	long := approvals.Describe(ap, "Hermes", nil)
	if !strings.Contains(long, strings.Repeat("ä", 599)+"…\nWhy:") || strings.Contains(long, strings.Repeat("ä", 600)) {
		t.Errorf("long arguments are not cut at 600 characters: %q", long)
	}
}

func TestOutcomeLine(t *testing.T) {
	tests := []struct {
		ap   approvals.Approval
		want string
	}{
		{approvals.Approval{Status: approvals.StatusExecuted, DecidedBy: "telegram:7"}, "approved by telegram:7 and done"},
		{approvals.Approval{Status: approvals.StatusFailed, DecidedBy: "link", Result: sb.Envelope{Error: "locked (423)"}}, "approved by link, but the action failed: locked (423)"},
		{approvals.Approval{Status: approvals.StatusDenied}, "denied by nobody"},
		{approvals.Approval{Status: approvals.StatusExpired, DecidedBy: "expiry"}, "expired without a decision"},
		{approvals.Approval{Status: approvals.StatusPending}, "pending"},
	}
	for _, tt := range tests {
		if got := approvals.OutcomeLine(tt.ap); got != tt.want {
			t.Errorf("OutcomeLine(%s) = %q, want %q", tt.ap.Status, got, tt.want)
		}
	}
}
