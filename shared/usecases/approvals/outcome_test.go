package approvals_test

import (
	"strings"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

// When the message cannot be updated with the outcome (its buttons stay),
// nothing else depends on it: the decision is final in the store, the
// agent is woken, and a press on a stale button answers what happened.
func TestOutcomeNotShownLeavesStateFinal(t *testing.T) {
	approvers := []string{"123456789"}
	rateLimited := sb.E("telegram.editMessageText", sb.ERATELIMITED, "Telegram editMessageText: rate limited (429)")
	eachBackend(t, func(t *testing.T, e *env) {
		e.notify.decidedErr = rateLimited

		a, req := e.stage(t)
		id, decision, token := linkParts(t, req.ApproveURL)
		o, err := e.svc.DecideByLink(t.Context(), id, decision, token)
		if err != nil || o.Kind != approvals.KindApproved || !o.AgentInformed {
			t.Fatalf("approve by link while the edit fails: %+v, %v; want approved and handed to the worker", o, err)
		}
		e.work(t)
		press, err := e.svc.DecideByCallback(t.Context(), approvals.CallbackData(approvals.Approve, a.ID), "123456789", approvers)
		if err != nil || press.Kind != approvals.KindAlreadyDecided || !strings.Contains(press.Message, "already executed") {
			t.Errorf("stale Approve button: %+v, %v; want already executed", press, err)
		}

		b, _ := e.stage(t)
		e.clock.Add(approvals.DefaultTTL + time.Minute)
		if n, err := e.svc.ExpireDue(t.Context()); err != nil || n != 1 {
			t.Fatalf("ExpireDue while the edit fails = %d, %v; want 1", n, err)
		}
		if got, _ := e.store.Get(t.Context(), b.ID); got.Status != approvals.StatusExpired {
			t.Errorf("after ExpireDue: %s, want expired", got.Status)
		}
		press, err = e.svc.DecideByCallback(t.Context(), approvals.CallbackData(approvals.Approve, b.ID), "123456789", approvers)
		if err != nil || press.Kind == approvals.KindApproved || press.Kind == approvals.KindDenied {
			t.Errorf("stale button of an expired request: %+v, %v; want a refusal", press, err)
		}
		if e.exec.n.Load() != 1 || len(e.waker.Jobs()) != 2 {
			t.Errorf("%d executions and %d follow-up jobs, want 1 and 2", e.exec.n.Load(), len(e.waker.Jobs()))
		}
	})
}
