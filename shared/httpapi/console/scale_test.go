package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/httpapi/console"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/control"
)

// EnvScaleMessages sets how many messages BenchmarkConsoleAtScale loads;
// make test runs every benchmark once, so the default stays small. The
// 100,000-message measurement in docs/performance.md:
//
//	SWITCHBOARD_BENCH_MESSAGES=100000 go test -run '^$' -bench ConsoleAtScale -benchtime 20x -timeout 2h ./shared/httpapi/console/
const EnvScaleMessages = "SWITCHBOARD_BENCH_MESSAGES"

var scaleAgents = []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"}

// loadTeam records n messages of a ten-agent team's last 30 days: half
// of them between alice and bob; chains of four (an ask and its answer, a
// task and its result; one in 100 asks has the word zebrafish); 5 % timed out, 2 % failed, 1 % refused; one
// receipt per chain; a task per task hand-over, every 50th left open and
// every 200th blocked; and a few questions asked again. It returns a
// chain to open.
func loadTeam(b *testing.B, e *env, n int) string {
	ctx := context.Background()
	now := e.clock.Now()
	step := 30 * 24 * time.Hour / time.Duration(n)
	words := strings.Fields("invoice ledger contract quarterly report folder export budget meeting supplier draft review summary numbers " +
		"deadline approval customer delivery schedule agenda")
	work := make(chan func() error)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				if err := f(); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
			}
		}()
	}
	began := time.Now()
	tasks := e.store.Tasks()
	for i := 0; i < n; i += 4 {
		root := fmt.Sprintf("root-%06d", i)
		a, c := "alice", "bob"
		if (i/4)%2 == 1 {
			a, c = scaleAgents[(i/8)%10], scaleAgents[(i/8+3)%10]
		}
		at := now.Add(-time.Duration(n-i) * step)
		text := func(k int) string {
			var s []string
			for j := range 12 {
				s = append(s, words[(i*7+j*k+k)%len(words)])
			}
			return strings.Join(s, " ")
		}
		status := sb.MessageDelivered
		switch r := (i / 4) % 100; {
		case r < 5:
			status = sb.MessageTimeout
		case r < 7:
			status = sb.MessageFailed
		case r == 7:
			status = sb.MessageDenied
		}
		task := fmt.Sprintf("T-%06d", i)
		rows := []sb.AgentMessage{
			{From: a, To: c, Channel: sb.ChannelAsk, Direction: sb.DirectionRequest, Content: text(1), Status: status},
			{From: c, To: a, Channel: sb.ChannelAsk, Direction: sb.DirectionResponse, Content: text(2), Status: sb.MessageDelivered},
			{From: a, To: c, Channel: sb.ChannelTask, Direction: sb.DirectionRequest, Content: text(3), Status: sb.MessageDelivered, TaskID: task},
			{From: c, To: a, Channel: sb.ChannelTaskResult, Direction: sb.DirectionResponse, Content: text(4), Status: sb.MessageDelivered, TaskID: task, TaskStatus: sb.TaskDone},
		}
		if (i/4)%100 == 0 { // a rare word for the search
			rows[0].Content += " zebrafish"
		}
		if (i/4)%1000 == 3 { // the same question again
			rows[0].Content = "Where is the signed contract for the supplier?"
		}
		if status != sb.MessageDelivered {
			rows[0].Reason = string(status) + ": " + c + " did not answer"
		}
		open := (i/4)%50 == 0
		if open { // no result yet
			rows = rows[:3]
		}
		for k, m := range rows {
			m.ID, m.RunID, m.RootRunID, m.OccurredAt = fmt.Sprintf("m%06d", i+k), "run-"+root+"-"+m.From, root, at.Add(time.Duration(k)*time.Second)
			work <- func() error { return e.msgs.Record(ctx, m) }
		}
		rc := sb.Receipt{Run: sb.RunContext{RunID: "run-" + root + "-" + a, RootRunID: root, AgentID: a}, AgentID: a, Model: "m",
			StartedAt: at, Duration: 6 * time.Second, TokensIn: 4000, TokensOut: 300, CostUSD: 0.02, Steps: 3, Outcome: "answered"}
		if (i/4)%500 == 1 {
			rc.Outcome = control.ReasonChainBudget
		}
		work <- func() error { return e.store.Put(ctx, rc) }
		t := sb.Task{ID: task, Creator: a, Assignee: c, Title: "task " + task, Status: sb.TaskOpen, CreatedAt: at, UpdatedAt: at, Run: rc.Run}
		work <- func() error {
			if err := tasks.Create(ctx, t); err != nil {
				return err
			}
			switch {
			case open && (i/4)%200 == 0:
				_, err := tasks.Finish(ctx, t.ID, sb.TaskBlocked, "waiting for the supplier", rc.Run, at.Add(time.Minute))
				return err
			case !open:
				_, err := tasks.Finish(ctx, t.ID, sb.TaskDone, "done", rc.Run, at.Add(time.Minute))
				return err
			}
			return nil
		}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		b.Fatalf("load: %v", firstErr)
	}
	st := e.store.Stats()
	b.Logf("loaded %d messages, %d chains with receipts and tasks in %v: %d calls", n, n/4, time.Since(began).Round(time.Second), st.Total.Calls)
	return fmt.Sprintf("root-%06d", n-8)
}

// BenchmarkConsoleAtScale measures every console page over a team's month
// of messages (SWITCHBOARD_BENCH_MESSAGES, default 2,000; the documented
// figures are for 100,000): server time, DynamoDB calls and read units
// per page over the data tables (the session read apart), HTML bytes.
func BenchmarkConsoleAtScale(b *testing.B) {
	n := 2000
	if v := os.Getenv(EnvScaleMessages); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 100 {
			b.Fatalf("%s=%q: want a number >= 100", EnvScaleMessages, v)
		}
	}
	e := newStallEnv(b, func(o *console.Options) {
		o.Agents = nil
		for _, a := range scaleAgents {
			o.Agents = append(o.Agents, console.Agent{ID: a, Name: strings.ToUpper(a[:1]) + a[1:], DailyBudgetUSD: 5})
		}
	})
	root := loadTeam(b, e, n)
	c := e.client()
	e.login(c)
	u, _ := url.Parse(e.baseURL + "/console/")
	cookies := c.Jar.Cookies(u)
	get := func(b *testing.B, path string) string {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.RemoteAddr = "127.0.0.1:1234"
		for _, ck := range cookies {
			req.AddCookie(ck)
		}
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d\n%s", path, rec.Code, rec.Body.String())
		}
		return rec.Body.String()
	}
	for _, p := range []struct{ name, path, marker string }{
		{"start", "/console/", `<rect class="total"`},
		{"pair", "/console/?a=alice&b=bob", `<li class="msg `},
		{"agent", "/console/?a=carol", `<li class="msg `},
		{"search", "/console/?a=alice&b=bob&q=zebrafish", `<li class="msg `},
		{"chain", "/console/chain?root=" + root, `<line class="arrow `},
		{"attention", "/console/attention", `<tr`},
		{"approvals", "/console/approvals", `<h1>`},
		{"health", "/console/health", `<h1>`},
	} {
		b.Run(p.name, func(b *testing.B) {
			body := get(b, p.path)
			if !strings.Contains(body, p.marker) {
				b.Fatalf("GET %s lacks %q", p.path, p.marker)
			}
			data, own := e.store.Stats(), e.own.Stats()
			b.ResetTimer()
			for b.Loop() {
				get(b, p.path)
			}
			b.StopTimer()
			d, o := e.store.Stats(), e.own.Stats()
			k := float64(b.N)
			b.ReportMetric(float64(d.Total.Calls-data.Total.Calls)/k, "ddb-calls/page")
			b.ReportMetric((d.Total.ReadUnits-data.Total.ReadUnits)/k, "RCU/page")
			b.ReportMetric(float64(o.Total.Calls-own.Total.Calls)/k, "session-calls/page")
			b.ReportMetric(float64(len(body)), "html-bytes")
			var ops []string
			for op, st := range d.Ops {
				if delta := st.Calls - data.Ops[op].Calls; delta > 0 {
					ops = append(ops, fmt.Sprintf("%s %.1f", op, float64(delta)/k))
				}
			}
			b.Logf("%s: calls per page by operation: %v", p.path, ops)
		})
	}
}
