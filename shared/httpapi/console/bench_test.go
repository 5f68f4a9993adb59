package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// BenchmarkConsolePages measures the server side of the two heavy pages on
// dynalite: the pair view (the newest 200 of 1,000 messages of a pair) and
// a chain of 20 runs (20 receipts, 60 tool calls, 40 messages). It reports
// DynamoDB requests and read units per page (data tables and the console's
// session read apart) and the page's bytes. The handler runs without the
// network: route table, budgets, scrubbing and the console, as in Lambda.
//
//	go test -run '^$' -bench ConsolePages -benchtime 50x ./shared/httpapi/console/
func BenchmarkConsolePages(b *testing.B) {
	e := newEnv(b, nil)
	ctx := context.Background()
	for i := range 1000 {
		from, to := "alice", "bob"
		if i%2 == 1 {
			from, to = to, from
		}
		e.msg(from, to, start.Add(-time.Duration(1000-i)*time.Minute),
			"Could you pull the Q3 numbers from the shared folder and summarise the open invoices? #"+itoa(i), nil)
	}
	root := "root-bench"
	for i := range 20 {
		agent := []string{"alice", "bob", "carol"}[i%3]
		run := sb.RunContext{RunID: "run-" + itoa(i), RootRunID: root, AgentID: agent}
		at := start.Add(time.Duration(i) * time.Minute)
		must(b, e.store.Put(ctx, sb.Receipt{Run: run, AgentID: agent, Model: "m", StartedAt: at, Duration: 5 * time.Second,
			TokensIn: 4000, TokensOut: 300, CostUSD: 0.02, Steps: 3, Outcome: "answered"}))
		for j := range 3 {
			must(b, e.store.Append(ctx, sb.AuditEntry{ID: "c" + itoa(i) + "-" + itoa(j), At: at.Add(time.Duration(j) * time.Second), AgentID: agent, Run: run,
				Tool: "Nextcloud", Action: "read", Args: `{"path":"/reports/q3.xlsx"}`, Decision: sb.DecisionAuto, Outcome: "ok"}))
		}
		for j := range 2 {
			e.msg(agent, "dave", at.Add(time.Duration(j)*time.Second), "step "+itoa(j)+" of run "+itoa(i), func(m *sb.AgentMessage) { m.RunID, m.RootRunID = run.RunID, root })
		}
	}
	c := e.client()
	e.login(c)
	u, _ := url.Parse(e.baseURL + "/console/")
	cookies := c.Jar.Cookies(u)
	h := e.srv.Config.Handler

	get := func(b *testing.B, path string) string {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.RemoteAddr = "127.0.0.1:1234"
		for _, ck := range cookies {
			req.AddCookie(ck)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d", path, rec.Code)
		}
		return rec.Body.String()
	}
	// The store's share of the pair view: the one Query alone.
	b.Run("pair200-query-only", func(b *testing.B) {
		for b.Loop() {
			page, err := e.msgs.Pair(ctx, "alice", "bob", sb.MessageQuery{Limit: 200})
			if err != nil || len(page.Messages) != 200 {
				b.Fatalf("Pair: %d messages, %v", len(page.Messages), err)
			}
		}
	})
	for _, p := range []struct {
		name, path, marker string
		want               int
	}{
		{"pair200", "/console/?a=alice&b=bob", `<li class="msg `, 200},
		{"chain20runs", "/console/chain?root=" + root, `<section class="run">`, 20},
	} {
		b.Run(p.name, func(b *testing.B) {
			body := get(b, p.path)
			if n := strings.Count(body, p.marker); n != p.want {
				b.Fatalf("%d items on the page, want %d", n, p.want)
			}
			data, own := e.store.Stats(), e.own.Stats()
			b.ResetTimer()
			for b.Loop() {
				get(b, p.path)
			}
			b.StopTimer()
			d, o := e.store.Stats(), e.own.Stats()
			n := float64(b.N)
			b.ReportMetric(float64(d.Total.Calls-data.Total.Calls)/n, "ddb-calls/page")
			b.ReportMetric((d.Total.ReadUnits-data.Total.ReadUnits)/n, "RCU/page")
			b.ReportMetric(float64(o.Total.Calls-own.Total.Calls)/n, "session-calls/page")
			b.ReportMetric(float64(len(body)), "html-bytes")
		})
	}
}
