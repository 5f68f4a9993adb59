package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
)

// TestMentionsOverTheHourlyLimitCostNoJob sends a burst of mentions to a
// room that has used up its hourly wakes, through switchboard dev's
// webhook with DynamoDB behind a counting proxy: each costs at most two
// DynamoDB requests (the room's count, the once-only log marker), no job
// and no Rocket.Chat call; the agent stays silent there and says so in
// the log once.
func TestMentionsOverTheHourlyLimitCostNoJob(t *testing.T) {
	proxy := dynamotest.NewFaultProxy(t, dynamotest.Endpoint(t))
	const limit = 3
	w := startOutageWorld(t, proxy.URL, 2, limit)
	for i := range limit {
		m, err := w.rc.Post("richard", w.room, fmt.Sprintf("@agent-hermes allowed question %d", i), rcfake.PostOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r := w.webhook(t, m); r.status != 200 {
			t.Fatalf("webhook %d: %d %s", i, r.status, r.body)
		}
		if !eventually(20*time.Second, func() bool { return w.replies(fmt.Sprintf("allowed question %d", i)) == 1 }) {
			t.Fatalf("allowed question %d was not answered", i)
		}
	}
	w.dev.idle()

	const n = 1000
	before, rcBefore := proxy.Stats(), len(w.rc.Requests())
	start := time.Now()
	for i := range n {
		m, err := w.rc.Post("richard", w.room, fmt.Sprintf("@agent-hermes question over the limit %04d", i), rcfake.PostOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r := w.webhook(t, m); r.status != 200 {
			t.Fatalf("webhook over the limit %d: %d %s", i, r.status, r.body)
		}
	}
	elapsed := time.Since(start)
	w.dev.idle() // a queued job would have run by now
	after, rcAfter := proxy.Stats(), len(w.rc.Requests())
	calls := after.Requests - before.Requests
	byOp := map[string]int{}
	for op, c := range after.ByOp {
		if d := c - before.ByOp[op]; d > 0 {
			byOp[op] = d
		}
	}
	t.Logf("%d mentions over the limit: %d DynamoDB requests (%.2f per mention) %v, %d Rocket.Chat requests, %v in all",
		n, calls, float64(calls)/n, byOp, rcAfter-rcBefore, elapsed.Round(time.Millisecond))
	if calls > 2*n {
		t.Errorf("%d DynamoDB requests for %d mentions over the limit, want at most %d", calls, n, 2*n)
	}
	if got := rcAfter - rcBefore; got != 0 {
		t.Errorf("%d Rocket.Chat requests for mentions over the limit, want none (no job fetched or answered them)", got)
	}
	// The poll, finding the room unread, turns it away too: it looks at the
	// messages and claims, and wakes no one.
	w.dev.settled()
	polled := proxy.Stats()
	t.Logf("the poll after the burst: %d DynamoDB requests, %d Rocket.Chat requests", polled.Requests-after.Requests, len(w.rc.Requests())-rcAfter)
	if got := w.replies("question over the limit"); got != 0 {
		t.Errorf("%d answers to mentions over the limit, want none", got)
	}
	logged := 0
	for _, l := range w.dev.logLines() {
		if strings.Contains(l, "wake throttle reached") {
			logged++
		}
	}
	if logged != 1 {
		t.Errorf("the throttle was logged %d times, want once", logged)
	}
}
