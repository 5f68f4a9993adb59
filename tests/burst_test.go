package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
)

// TestBurstOfMentionsForOneAgentIsServedInTurn mentions one agent 16 times
// at once through switchboard dev's webhook, with a model that thinks
// 250 ms per answer: the runs take turns (never two model calls of the
// agent at once), no run fails "busy" or waits on the agent's lease, every
// mention is answered once, and each wake is counted once against the
// room's hour (a limit of exactly 16 lets all of them through). The same
// 16 one after another are the reference; both times are logged for
// docs/performance.md.
func TestBurstOfMentionsForOneAgentIsServedInTurn(t *testing.T) {
	const n = 16
	w := newCrashWorld(t, 0)
	w.model.think = 250 * time.Millisecond
	proxy := dynamotest.NewFaultProxy(t, dynamotest.Endpoint(t))
	raw, err := os.ReadFile(w.config)
	if err != nil {
		t.Fatal(err)
	}
	// Four local workers, as several Lambdas would take a burst at once.
	config := strings.Replace(string(raw), "workers: 2", "workers: 4", 1)
	config = strings.Replace(config, "username: agent-hermes", fmt.Sprintf("username: agent-hermes\n        maxWakesPerRoomPerHour: %d", 2*n), 1)
	if err := os.WriteFile(w.config, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDevConfig(t, w.config, append(w.env, "SWITCHBOARD_RUN_TIMEOUT=60s", "SWITCHBOARD_AGENT_WAIT=30s",
		"AWS_ENDPOINT_URL_DYNAMODB="+proxy.URL)...)
	deliver := func(text string) {
		m, err := w.rc.Post("richard", w.room, "@agent-hermes "+text, rcfake.PostOptions{})
		if err != nil {
			t.Error(err)
			return
		}
		if status, _, body := d.do("POST", "/hooks/rocketchat", "", json.RawMessage(w.rc.OutgoingWebhookPayload(m))); status != 200 {
			t.Errorf("webhook for %q: %d %v", text, status, body)
		}
	}

	// The reference: one after another, each answered before the next.
	start := time.Now()
	for i := range n {
		deliver(fmt.Sprintf("one after another %02d", i))
		d.idle()
	}
	sequential := time.Since(start)
	if got := len(w.replies()); got != n {
		t.Fatalf("%d answers one after another, want %d", got, n)
	}

	// The burst: all at once.
	before := proxy.Stats()
	start = time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); deliver(fmt.Sprintf("all at once %02d", i)) }()
	}
	wg.Wait()
	d.idle()
	burst := time.Since(start)
	after := proxy.Stats()

	if got := len(w.replies()); got != 2*n {
		t.Errorf("%d answers in all, want %d (every mention answered once)", got, 2*n)
	}
	w.model.mu.Lock()
	maxInFlight := w.model.maxInFlight
	w.model.mu.Unlock()
	if maxInFlight != 1 {
		t.Errorf("%d model calls of the agent at once, want 1 (its runs take turns)", maxInFlight)
	}
	logs := d.logs.String()
	for _, bad := range []string{"wake waited for the agent's lease", "is busy with another run", "wake job failed", "wake throttle reached"} {
		if c := strings.Count(logs, bad); c > 0 {
			t.Errorf("the log says %q %d times: a run waited idle, failed or was counted twice", bad, c)
		}
	}
	t.Logf("%d mentions, model 250 ms: one after another %v, all at once %v (%.2f×); the burst's DynamoDB requests %d (%.1f per wake) %v",
		n, sequential.Round(time.Millisecond), burst.Round(time.Millisecond), burst.Seconds()/sequential.Seconds(),
		after.Requests-before.Requests, float64(after.Requests-before.Requests)/n, diffOps(after.ByOp, before.ByOp))
}

func diffOps(after, before map[string]int) map[string]int {
	out := map[string]int{}
	for op, c := range after {
		if d := c - before[op]; d > 0 {
			out[op] = d
		}
	}
	return out
}
