package tests

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
)

// rcRetryDelays is how this test's Rocket.Chat retries a delivery that was
// answered with a status other than 200–202 (and not 500/410 with a body):
// Rocket.Chat's default is 100 ms, 1 s, 10 s, 100 s; shortened here.
var rcRetryDelays = []time.Duration{100 * time.Millisecond, time.Second, 2 * time.Second, 3 * time.Second}

// shortClaimEnv makes a wake's claim window seconds long (wait 1 s + run
// 3 s + 2 × 0.75 s slack), so that the poll takes over a claim nothing runs
// while the test watches.
var shortClaimEnv = []string{"SWITCHBOARD_RUN_TIMEOUT=3s", "SWITCHBOARD_AGENT_WAIT=1s",
	"SWITCHBOARD_WAKE_RETRY_DELAYS=300ms,600ms"}

// deliverWithRetries delivers m like Rocket.Chat with retries on: it
// returns the status of every try.
func (w *outageWorld) deliverWithRetries(t testing.TB, m rcfake.Message) []int {
	var statuses []int
	for try := 0; ; try++ {
		r := w.webhook(t, m)
		statuses = append(statuses, r.status)
		retryable := r.status < 200 || r.status > 202
		if r.status == http.StatusInternalServerError || r.status == http.StatusGone {
			retryable = false // with a body, Rocket.Chat gives up
		}
		if !retryable || try == len(rcRetryDelays) {
			return statuses
		}
		time.Sleep(rcRetryDelays[try]) // sleep-ok: Rocket.Chat's retry schedule against the dev child's real-time claim windows
	}
}

// TestThrottledDynamoDBNothingLostNothingDoubled puts a fault proxy in
// front of dynalite that answers ProvisionedThroughputExceededException.
//
// First every DynamoDB request of the dev runtime (webhook claims, the
// worker's leases, counters, receipts, audit) is throttled twice before it
// goes through: the SDK retries it, the webhook still acks, and every
// message is answered exactly once.
//
// Then every write is throttled beyond the SDK's attempts: the webhook
// answers 503 within its budget, Rocket.Chat retries once the throttling
// is over, and the message is answered exactly once (a throttled write is
// not applied, so no claim was left behind). A wake of the first part that
// is still marking its claim done when the storm begins tries that write
// again instead of failing (its retry would answer a second time); a wake
// that fails in the worker comes again from the pool (retries shortened
// here), so a delivery answered 200 is answered, once.
func TestThrottledDynamoDBNothingLostNothingDoubled(t *testing.T) {
	proxy := dynamotest.NewFaultProxy(t, dynamotest.Endpoint(t))
	w := startOutageWorld(t, proxy.URL, 2, 3600, wakeTimingEnv...)

	proxy.SetThrottle(dynamotest.Throttle{PerRequest: dynamo.MaxAttempts - 2})
	const n = 10
	var wg sync.WaitGroup
	statuses := make([][]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := w.rc.Post("richard", w.room, fmt.Sprintf("@agent-hermes throttled question %02d", i), rcfake.PostOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			statuses[i] = w.deliverWithRetries(t, m)
		}()
	}
	wg.Wait()
	for i := range n {
		text := fmt.Sprintf("throttled question %02d", i)
		if !eventually(30*time.Second, func() bool { return w.replies(text) >= 1 }) {
			t.Errorf("%s: no reply (webhook answers %v); lost", text, statuses[i])
		}
	}
	w.dev.settled() // a second answer would have been posted by now
	for i := range n {
		if got := w.replies(fmt.Sprintf("throttled question %02d", i)); got > 1 {
			t.Errorf("question %02d answered %d times, want once", i, got)
		}
	}
	st := proxy.Stats()
	t.Logf("throttled twice per request: %d DynamoDB requests, %d throttled and retried by the SDK; webhook answers %v", st.Requests, st.Throttled, statuses)
	if st.Throttled == 0 {
		t.Error("the proxy throttled nothing; the test proves nothing")
	}

	// Throttling that outlasts the SDK's attempts, on writes only.
	proxy.SetThrottle(dynamotest.Throttle{Ops: []string{"PutItem", "UpdateItem"}, Fraction: 1})
	m, _ := w.rc.Post("richard", w.room, "@agent-hermes question during a throttling storm", rcfake.PostOptions{})
	first := w.webhook(t, m)
	budget := httpapi.BudgetFor("POST /hooks/rocketchat").Limit
	if first.status != http.StatusServiceUnavailable || first.elapsed > budget+slack {
		t.Errorf("webhook during the storm = %d after %v, want 503 within %v", first.status, first.elapsed, budget)
	}
	proxy.SetThrottle(dynamotest.Throttle{})
	retried := w.deliverWithRetries(t, m)
	if !eventually(20*time.Second, func() bool { return w.replies("during a throttling storm") >= 1 }) {
		t.Errorf("the message throttled away was never answered (retry answers %v); lost", retried)
	}
	w.dev.settled() // a second answer would have been posted by now
	if got := w.replies("during a throttling storm"); got > 1 {
		t.Errorf("answered %d times, want once", got)
	}
	t.Logf("storm: first answer %d after %v, retry answers %v", first.status, first.elapsed.Round(time.Millisecond), retried)
}

// TestHungDynamoDBThroughProxyWebhookAnswers503 is the hung-database case
// through the proxy (requests held, connections open): the webhook answers
// 503 within its budget, and after the hang a new message is answered.
//
// The message sent during the hang is answered too, exactly once. Its
// claim write reaches DynamoDB when the hang ends although the webhook gave
// up on it and answered 503 (as a write applied after a client-side timeout
// does): the claim is in progress with nothing queued, Rocket.Chat's retry
// finds another delivery's live claim and answers 200, and the poll takes
// the claim over once its window (seconds here, about 10 minutes by
// default) has passed.
func TestHungDynamoDBThroughProxyWebhookAnswers503(t *testing.T) {
	proxy := dynamotest.NewFaultProxy(t, dynamotest.Endpoint(t))
	w := startOutageWorld(t, proxy.URL, 2, 3600, shortClaimEnv...)
	proxy.ApplyAbandoned(true)
	proxy.Hang(true)
	m, _ := w.rc.Post("richard", w.room, "@agent-hermes question while the database hangs", rcfake.PostOptions{})
	r := w.webhook(t, m)
	budget := httpapi.BudgetFor("POST /hooks/rocketchat").Limit
	if r.status != http.StatusServiceUnavailable || r.elapsed > budget+slack {
		t.Errorf("webhook while hung = %d after %v, want 503 within %v: %s", r.status, r.elapsed, budget, r.body)
	}
	proxy.Hang(false)
	after, _ := w.rc.Post("richard", w.room, "@agent-hermes question after the hang", rcfake.PostOptions{})
	if got := w.deliverWithRetries(t, after); got[len(got)-1] != http.StatusOK {
		t.Errorf("webhook after the hang: %v", got)
	}
	if !eventually(20*time.Second, func() bool { return w.replies("question after the hang") == 1 }) {
		t.Error("no reply after the hang")
	}
	retried := w.deliverWithRetries(t, m)
	if retried[len(retried)-1] != http.StatusOK {
		t.Errorf("retry of the delivery answered %v, want 200 (the message is some run's work)", retried)
	}
	start := time.Now()
	if !tickUntil(t, w.dev, 30*time.Second, func() bool { return w.replies("question while the database hangs") >= 1 }) {
		t.Errorf("the message sent while the database hung was never answered (retry answers %v, then the poll)", retried)
	}
	answeredAfter := time.Since(start)
	w.dev.settled() // a second answer would have been posted by now
	for _, text := range []string{"question while the database hangs", "question after the hang"} {
		if got := w.replies(text); got != 1 {
			t.Errorf("%q answered %d times, want once", text, got)
		}
	}
	t.Logf("hung: webhook %d after %v; the retry answered %v and the message was answered %v later", r.status,
		r.elapsed.Round(time.Millisecond), retried, answeredAfter.Round(100*time.Millisecond))
}
