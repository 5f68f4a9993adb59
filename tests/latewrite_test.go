package tests

import (
	"net/http"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// The attack run's stranded message, replayed with the default claim
// window (about 10 minutes; TestHungDynamoDBThroughProxyWebhookAnswers503
// shortens it to seconds): DynamoDB hangs, the webhook answers 503, the
// claim write lands when DynamoDB comes back, and Rocket.Chat's retry
// meets an in-progress claim with nothing queued. The message must be
// answered within seconds of DynamoDB returning — a claim no run began on
// is taken over after sb.DefaultOrphanAfter — not after the claim window.
func TestLateClaimWriteIsAnsweredWithinSecondsE2E(t *testing.T) {
	proxy := dynamotest.NewFaultProxy(t, dynamotest.Endpoint(t))
	w := startOutageWorld(t, proxy.URL, 2, 3600)
	proxy.ApplyAbandoned(true)
	proxy.Hang(true)
	m, _ := w.rc.Post("richard", w.room, "@agent-hermes question while the database hangs", rcfake.PostOptions{})
	r := w.webhook(t, m)
	budget := httpapi.BudgetFor("POST /hooks/rocketchat").Limit
	if r.status != http.StatusServiceUnavailable || r.elapsed > budget+slack {
		t.Fatalf("webhook while hung = %d after %v, want 503 within %v: %s", r.status, r.elapsed, budget, r.body)
	}
	proxy.Hang(false)
	back := time.Now()
	retried := w.deliverWithRetries(t, m)
	if !tickUntil(t, w.dev, 30*time.Second, func() bool { return w.replies("question while the database hangs") >= 1 }) {
		t.Fatalf("the message was not answered within 30 s of DynamoDB returning (retry answers %v); stranded until the claim window ends", retried)
	}
	answered := time.Since(back)
	w.dev.settled()
	if got := w.replies("question while the database hangs"); got != 1 {
		t.Errorf("answered %d times, want once", got)
	}
	if limit := sb.DefaultOrphanAfter + 10*time.Second; answered > limit {
		t.Errorf("answered %v after DynamoDB returned, want within %v", answered.Round(100*time.Millisecond), limit)
	}
	t.Logf("late claim write: webhook %d after %v; the retry answered %v; the message was answered %v after DynamoDB returned",
		r.status, r.elapsed.Round(time.Millisecond), retried, answered.Round(100*time.Millisecond))
}
