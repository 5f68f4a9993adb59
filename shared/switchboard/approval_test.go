package switchboard_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestApprovalLifecycle(t *testing.T) {
	steps := map[[2]sb.ApprovalStatus]bool{
		{sb.ApprovalPending, sb.ApprovalApproved}:   true,
		{sb.ApprovalPending, sb.ApprovalDenied}:     true,
		{sb.ApprovalPending, sb.ApprovalExpired}:    true,
		{sb.ApprovalApproved, sb.ApprovalExecuting}: true,
		{sb.ApprovalApproved, sb.ApprovalFailed}:    true, // never started
		{sb.ApprovalExecuting, sb.ApprovalExecuted}: true,
		{sb.ApprovalExecuting, sb.ApprovalFailed}:   true,
	}
	all := []sb.ApprovalStatus{sb.ApprovalPending, sb.ApprovalApproved, sb.ApprovalExecuting, sb.ApprovalDenied,
		sb.ApprovalExpired, sb.ApprovalExecuted, sb.ApprovalFailed}
	for _, from := range all {
		if !from.Valid() {
			t.Errorf("%s.Valid() = false", from)
		}
		for _, to := range all {
			if got := from.CanBecome(to); got != steps[[2]sb.ApprovalStatus{from, to}] {
				t.Errorf("%s.CanBecome(%s) = %v", from, to, got)
			}
		}
		if want := from == sb.ApprovalPending || from == sb.ApprovalApproved || from == sb.ApprovalExecuting; from.Open() != want {
			t.Errorf("%s.Open() = %v", from, !want)
		}
	}
	if sb.ApprovalStatus("done").Valid() {
		t.Error(`ApprovalStatus("done").Valid() = true`)
	}
}

func TestValidApprovalID(t *testing.T) {
	for _, id := range []string{"a", "AZaz09-_", strings.Repeat("x", sb.MaxApprovalIDLen)} {
		if !sb.ValidApprovalID(id) {
			t.Errorf("ValidApprovalID(%q) = false", id)
		}
	}
	for _, id := range []string{"", "a/b", "a b", "a|b", "ä", "abcdefghijklmnopqrstuvw", "a:b", "a.b"} {
		if sb.ValidApprovalID(id) {
			t.Errorf("ValidApprovalID(%q) = true", id)
		}
	}
}

func TestCheckNewApproval(t *testing.T) {
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	valid := sb.Approval{
		ID: "abc", AgentID: "hermes", Tool: "Nextcloud", Action: "delete",
		Args: json.RawMessage(`{}`), ArgsHash: strings.Repeat("0a", 32),
		CreatedAt: now, ExpiresAt: now.Add(time.Hour), Status: sb.ApprovalPending,
	}
	if err := sb.CheckNewApproval(valid); err != nil {
		t.Fatalf("valid approval: %v", err)
	}
	tests := []struct {
		name   string
		change func(*sb.Approval)
	}{
		{"bad id", func(a *sb.Approval) { a.ID = "a/b" }},
		{"no agent", func(a *sb.Approval) { a.AgentID = "" }},
		{"not pending", func(a *sb.Approval) { a.Status = sb.ApprovalApproved }},
		{"upper-case hash", func(a *sb.Approval) { a.ArgsHash = strings.Repeat("0A", 32) }},
		{"short hash", func(a *sb.Approval) { a.ArgsHash = "0a" }},
		{"bad args", func(a *sb.Approval) { a.Args = json.RawMessage(`{`) }},
		{"no expiry", func(a *sb.Approval) { a.ExpiresAt = time.Time{} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := valid
			tt.change(&a)
			if err := sb.CheckNewApproval(a); sb.ErrorCode(err) != sb.EINVALID {
				t.Errorf("CheckNewApproval = %v, want EINVALID", err)
			}
		})
	}
}

func TestApplyApprovalPatchKeepsIdentity(t *testing.T) {
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	cur := sb.Approval{ID: "abc", Args: json.RawMessage(`{"a":1}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour), Status: sb.ApprovalPending}
	next := sb.ApplyApprovalPatch(cur, sb.ApprovalApproved, func(a *sb.Approval) {
		a.ID, a.CreatedAt, a.ExpiresAt, a.Status = "other", time.Time{}, time.Time{}, sb.ApprovalDenied
		a.Args[1] = 'X'
		a.DecidedBy = "link"
	})
	if next.ID != "abc" || !next.CreatedAt.Equal(now) || !next.ExpiresAt.Equal(now.Add(time.Hour)) || next.Status != sb.ApprovalApproved {
		t.Errorf("patch changed identity or status: %+v", next)
	}
	if next.DecidedBy != "link" {
		t.Errorf("DecidedBy = %q, want the patch's value", next.DecidedBy)
	}
	if string(cur.Args) != `{"a":1}` {
		t.Errorf("patch wrote through to the current approval's args: %s", cur.Args)
	}
	if err := sb.CheckApprovalTransition("abc", sb.ApprovalDenied, sb.ApprovalApproved); sb.ErrorCode(err) != sb.EINVALID {
		t.Errorf("denied → approved: %v, want EINVALID", err)
	}
	if err := sb.CheckApprovalTransition("a/b", sb.ApprovalPending, sb.ApprovalApproved); sb.ErrorCode(err) != sb.ENOTFOUND {
		t.Errorf("bad id: %v, want ENOTFOUND", err)
	}
}
