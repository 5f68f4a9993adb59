package tests

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// countingDispatcher stands in for the agent worker: it only counts.
type countingDispatcher struct{ n int }

func (c *countingDispatcher) Dispatch(context.Context, sb.WakeJob) error { c.n++; return nil }

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// BenchmarkWebhookAck measures the Rocket.Chat webhook receiver from request
// to answer on the real DynamoDB API (dynalite): token check, filters, one
// conditional claim per concerned agent, dispatch (counted, not run). It
// reports p50/p99 and the DynamoDB writes per inbound message.
func BenchmarkWebhookAck(b *testing.B) {
	c := dynamotest.Client(b)
	store := dynamo.New(c, dynamotest.FreshTables(b, c))
	d := &countingDispatcher{}
	recv := wake.NewReceiver([]string{"tok"}, []wake.WebhookAgent{
		{ID: "hermes", UserID: "u-hermes", Username: "agent-hermes", AgentUsernames: []string{"agent-hermes", "agent-atlas"}, MentionOnly: true},
		{ID: "atlas", UserID: "u-atlas", Username: "agent-atlas", AgentUsernames: []string{"agent-hermes", "agent-atlas"}, MentionOnly: true},
	}, &sb.WakeClaims{KV: store.KV()}, d, quietLog())
	srv := httptest.NewServer(httpapi.RocketChatWebhook(recv))
	defer srv.Close()
	lat := make([]time.Duration, 0, b.N)
	before := store.Stats().Total
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		body := []byte(`{"token":"tok","bot":false,"channel_id":"GENERAL","channel_name":"general","message_id":"m` +
			time.Now().Format("150405.000000000") + `","timestamp":"2026-12-02T10:15:00.000Z","user_id":"u-richard","user_name":"richard","text":"@agent-hermes ping"}`)
		start := time.Now()
		resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(start))
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	after := store.Stats().Total
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(after.Calls-before.Calls)/float64(b.N), "ddb-calls/msg")
	b.ReportMetric((after.WriteUnits-before.WriteUnits)/float64(b.N), "WCU/msg")
	if d.n != b.N {
		b.Fatalf("dispatched %d jobs for %d messages, want one each (only hermes is mentioned)", d.n, b.N)
	}
}

// BenchmarkPollTick measures one rocketchat-poll tick for one agent: quiet
// (nothing new) and busy (k rooms with one mention each). It reports
// Rocket.Chat calls, DynamoDB calls and capacity, and wakes per tick. Model
// calls per tick are always 0: the poll only queues jobs.
func BenchmarkPollTick(b *testing.B) {
	for _, k := range []int{0, 1, 5} {
		name := "quiet"
		if k > 0 {
			name = "busy-" + string(rune('0'+k)) + "-rooms"
		}
		b.Run(name, func(b *testing.B) {
			rc := rcfake.New()
			defer rc.Close()
			clk := clocktest.New(time.Now())
			rc.SetClock(clk.Now)
			rc.SetRateLimit(0, 0)
			rc.AddUser("richard")
			id, tok := rc.AddUser("agent-hermes", "bot", "user")
			rooms := make([]string, 5)
			for i := range rooms {
				rooms[i] = rc.AddChannel("room-"+string(rune('a'+i)), "richard", "agent-hermes")
			}
			client, err := rocketchat.New(rc.URL, id, tok, nil)
			if err != nil {
				b.Fatal(err)
			}
			c := dynamotest.Client(b)
			store := dynamo.New(c, dynamotest.FreshTables(b, c))
			d := &countingDispatcher{}
			p := &wake.Poller{KV: store.KV(), Counters: store, Claims: store, Wakes: &sb.WakeClaims{KV: store.KV(), Now: clk.Now}, Dispatch: d, Log: quietLog(), Loc: time.UTC, Now: clk.Now}
			agent := wake.PollAgent{ID: "hermes", Chat: client, MaxMessages: 20, Lookback: 5 * time.Minute, MaxWakesPerHour: 1 << 30,
				Rules: wake.Rules{Username: "agent-hermes", UserID: id, MentionOnly: true}}
			ctx := context.Background()
			if _, err := p.Tick(ctx, []wake.PollAgent{agent}); err != nil { // settle: first fetch of every room
				b.Fatal(err)
			}
			var rcCalls, ddbCalls int64
			var wcu, rcu float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				clk.Add(2 * time.Millisecond) // after the last tick's marker
				for r := 0; r < k; r++ {
					if _, err := rc.Post("richard", rooms[r], "@agent-hermes number "+time.Now().String(), rcfake.PostOptions{}); err != nil {
						b.Fatal(err)
					}
				}
				clk.Add(2 * time.Millisecond) // history's oldest is exclusive at ms resolution: the tick comes after the posts
				beforeRC, beforeDB := total(client.Calls()), store.Stats().Total
				b.StartTimer()
				if _, err := p.Tick(ctx, []wake.PollAgent{agent}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				after := store.Stats().Total
				rcCalls += int64(total(client.Calls()) - beforeRC)
				ddbCalls += after.Calls - beforeDB.Calls
				wcu += after.WriteUnits - beforeDB.WriteUnits
				rcu += after.ReadUnits - beforeDB.ReadUnits
				b.StartTimer()
			}
			n := float64(b.N)
			b.ReportMetric(float64(rcCalls)/n, "rc-calls/tick")
			b.ReportMetric(float64(ddbCalls)/n, "ddb-calls/tick")
			b.ReportMetric(wcu/n, "WCU/tick")
			b.ReportMetric(rcu/n, "RCU/tick")
			b.ReportMetric(float64(d.n)/n, "wakes/tick")
			b.ReportMetric(0, "model-calls/tick")
		})
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
