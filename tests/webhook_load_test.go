package tests

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
)

// TestMeasureWebhookAck measures the Rocket.Chat webhook of `switchboard
// dev` under load: 1,000 deliveries from 20 concurrent senders, with and
// without a mention of the agent, with the default worker pool (4) and
// wake limit (12 per room and hour). It reports ack latency p50/p99, the
// statuses, and what became of the 503s when they are retried the way
// Rocket.Chat retries (100 ms, 1 s, 10 s). A measurement, not a check: it
// runs only with SWITCHBOARD_MEASURE=1.
//
//	SWITCHBOARD_MEASURE=1 go test ./tests -run TestMeasureWebhookAck -v
func TestMeasureWebhookAck(t *testing.T) {
	if os.Getenv("SWITCHBOARD_MEASURE") == "" {
		t.Skip("a measurement; set SWITCHBOARD_MEASURE=1 to run it")
	}
	for _, mention := range []bool{false, true} {
		name := "without-mention"
		if mention {
			name = "with-mention"
		}
		t.Run(name, func(t *testing.T) { measureWebhookAck(t, mention) })
	}
}

func measureWebhookAck(t *testing.T, mention bool) {
	const total, senders = 1000, 20
	w := startOutageWorld(t, dynamotest.Endpoint(t), 0, 12)
	msgs := make([]rcfake.Message, total)
	for i := range msgs {
		text := fmt.Sprintf("lunch plans %04d", i)
		if mention {
			text = "@agent-hermes question " + fmt.Sprintf("%04d", i)
		}
		m, err := w.rc.Post("richard", w.room, text, rcfake.PostOptions{})
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = m
	}
	lat := make([]time.Duration, total)
	status := make([]int, total)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				r := w.webhook(t, msgs[i])
				lat[i], status[i] = r.elapsed, r.status
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	counts := map[int]int{}
	var failed []int
	for i, s := range status {
		counts[s]++
		if s != http.StatusOK {
			failed = append(failed, i)
		}
	}
	logs := w.dev.logs.String()
	t.Logf("%d deliveries, %d senders, %v wall (%.0f/s): p50 %v, p99 %v, max %v; statuses %v; refused because the local run queue was full: %d, because the budget was spent: %d",
		total, senders, wall.Round(time.Millisecond), float64(total)/wall.Seconds(),
		sorted[total/2].Round(100*time.Microsecond), sorted[total*99/100].Round(100*time.Microsecond),
		sorted[total-1].Round(time.Millisecond), counts,
		strings.Count(logs, "local run queue is full"), strings.Count(logs, "route budget spent"))

	// Retry what was refused, as Rocket.Chat does (retries on).
	delays := []time.Duration{100 * time.Millisecond, time.Second, 10 * time.Second}
	for round, d := range delays {
		if len(failed) == 0 {
			break
		}
		time.Sleep(d) // sleep-ok: Rocket.Chat's retry schedule (shortened), part of the load figures
		var still []int
		for _, i := range failed {
			if r := w.webhook(t, msgs[i]); r.status != http.StatusOK {
				still = append(still, i)
			}
		}
		t.Logf("retry %d after %v: %d of %d accepted", round+1, d, len(failed)-len(still), len(failed))
		failed = still
	}
	if len(failed) > 0 {
		t.Logf("%d deliveries still refused after Rocket.Chat's first three retries (its fourth comes after 100 s; the poll catches DMs and mentions within a minute)", len(failed))
	}
}
