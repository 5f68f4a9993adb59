package main

// BUG (shared/app/notify.go:111-122, overBudget): the once-per-day claim
// ("budget#<agent>#<day>") is taken BEFORE the notice is delivered, and a
// failed Router.Deliver is only logged. When no channel can reach the human
// at that moment, the claim is spent and the human is never told that the
// agent stopped (the router must tell the human). Fix: on a Deliver
// error, give the claim back (a.Store.Unclaim(ctx, key), which exists for
// this purpose in shared/adapters/dynamo/state.go:147) so the next wake retries.
//
// Copy into cmd/switchboard/ next to budget_test.go to run:
//   go test -run TestBudgetNoticeRetriedAfterFailedDelivery ./cmd/switchboard

import "testing"

func TestBudgetNoticeRetriedAfterFailedDelivery(t *testing.T) {
	w := newBudgetWorld(t)
	w.wake(t, "hermes") // one run, now over budget

	w.tg.SetDown(true)
	w.wake(t, "hermes") // over budget; the notice cannot be delivered
	w.tg.SetDown(false)
	if got := w.texts(); len(got) != 0 {
		t.Fatalf("Telegram got %q while down", got)
	}

	w.wake(t, "hermes") // still over budget; Telegram is back
	w.wake(t, "hermes")
	got := w.texts()
	if len(got) != 1 || !budgetNotice.MatchString(got[0]) {
		t.Errorf("Telegram got %q, want the budget notice exactly once after the failed delivery", got)
	}
}
