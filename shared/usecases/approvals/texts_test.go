package approvals_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

func TestDescribe(t *testing.T) {
	ap := approvals.Approval{AgentID: "hermes", Tool: "Nextcloud", Action: "share",
		Args: json.RawMessage(`{"path":"/q3.xlsx","password":"s3cret"}`), Reason: "the board asked",
		ExpiresAt: time.Date(2026, 3, 4, 17, 30, 0, 0, time.FixedZone("CET", 3600))}
	got := approvals.Describe(ap, "Hermes", func(s string) string { return strings.ReplaceAll(s, "s3cret", "[redacted]") })
	want := "Hermes wants to run Nextcloud.share\nwith {\"path\":\"/q3.xlsx\",\"password\":\"[redacted]\"}\nWhy: the board asked\nExpires: 2026-03-04 16:30 UTC"
	if got != want {
		t.Errorf("Describe =\n%s\nwant\n%s", got, want)
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
