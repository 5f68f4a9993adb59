package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

// TestApprovalOutcomesHaveAStatus: every outcome an approval link can
// have is in the one status table, with the status the page promises.
func TestApprovalOutcomesHaveAStatus(t *testing.T) {
	for kind, want := range map[approvals.OutcomeKind]int{
		approvals.KindReady: 200, approvals.KindApproved: 200, approvals.KindFailed: 200, approvals.KindDenied: 200,
		approvals.KindAlreadyDecided: 409, approvals.KindInvalidToken: 403, approvals.KindNotApprover: 403,
		approvals.KindExpired: 410, approvals.KindUnknown: 404, approvals.KindMalformed: 400,
	} {
		if got := httpapi.ApprovalStatus(string(kind)); got != want {
			t.Errorf("ApprovalStatus(%q) = %d, want %d", kind, got, want)
		}
	}
	if got := httpapi.ApprovalStatus("no-such-kind"); got != http.StatusInternalServerError {
		t.Errorf("ApprovalStatus of an unknown kind = %d, want 500", got)
	}
}
