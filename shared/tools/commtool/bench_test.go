package commtool_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// EnvBenchAnalysis sets how many messages BenchmarkAnalysis loads; make
// test runs every benchmark once, so the default stays small. The
// measurement in docs/performance.md:
//
//	SWITCHBOARD_BENCH_ANALYSIS=20000 go test -run '^$' -bench Analysis -benchtime 20x -timeout 1h ./shared/tools/commtool/
const EnvBenchAnalysis = "SWITCHBOARD_BENCH_ANALYSIS"

// teamCorpus is a month of a ten-agent team, deterministically: chains
// started by a random agent every few minutes, evenly over the 30 days
// before now; half asks (question and answer), a third tasks (hand-over,
// sometimes a comment, a result unless it fizzles), the rest asks that are
// passed on once more (depth 2). About 5 % of answers time out, 2 % fail,
// 1 % of hand-overs are refused. Questions come from 200 phrasings, so
// pairs repeat some. Every run has a receipt.
func teamCorpus(n int) ([]sb.AgentMessage, []sb.Receipt) {
	r := rand.New(rand.NewPCG(3, 4))
	agents := []string{"lead", "research", "writer", "qa", "finance", "legal", "ops", "sales", "support", "data"}
	words := strings.Fields("report figures source deadline invoice table chapter draft review customer contract budget " +
		"forecast quarter revenue churn ticket release outage summary survey chart appendix supplier meeting agenda " +
		"risk audit policy pricing margin headcount hiring roadmap launch metric dashboard export import backlog")
	text := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	questions := make([]string, 200)
	for i := range questions {
		questions[i] = "Could you check the " + text(6) + "?"
	}
	status := func() sb.MessageStatus {
		switch x := r.IntN(100); {
		case x < 5:
			return sb.MessageTimeout
		case x < 7:
			return sb.MessageFailed
		}
		return sb.MessageDelivered
	}
	var msgs []sb.AgentMessage
	var receipts []sb.Receipt
	start := now.Add(-30 * 24 * time.Hour)
	chainsWanted := n * 2 / 5 // about 2.5 messages per chain
	step := 30 * 24 * time.Hour / time.Duration(chainsWanted)
	other := func(not string) string {
		for {
			if a := agents[r.IntN(len(agents))]; a != not {
				return a
			}
		}
	}
	for c := 0; len(msgs) < n; c++ {
		at := start.Add(time.Duration(c) * step)
		root := fmt.Sprintf("run-%06d-0", c)
		from := agents[r.IntN(len(agents))]
		to := other(from)
		runs := []sb.RunContext{{RunID: root, RootRunID: root, AgentID: from}}
		add := func(m sb.AgentMessage) {
			m.ID = fmt.Sprintf("m%07d", len(msgs))
			m.RootRunID = root
			at = at.Add(time.Duration(5+r.IntN(60)) * time.Second)
			m.OccurredAt = at
			msgs = append(msgs, m)
		}
		child := func(agent, parent string) string {
			id := fmt.Sprintf("run-%06d-%d", c, len(runs))
			runs = append(runs, sb.RunContext{RunID: id, ParentRunID: parent, RootRunID: root, AgentID: agent})
			return id
		}
		switch k := r.IntN(6); {
		case k < 3: // ask
			q := questions[r.IntN(len(questions))]
			add(sb.AgentMessage{From: from, To: to, Channel: sb.ChannelAsk, Direction: sb.DirectionRequest, Content: q, RunID: root, Status: sb.MessageDelivered})
			run := child(to, root)
			add(sb.AgentMessage{From: to, To: from, Channel: sb.ChannelAsk, Direction: sb.DirectionResponse, Content: text(10 + r.IntN(40)),
				RunID: run, ParentRunID: root, Status: status()})
		case k < 5: // task
			task := fmt.Sprintf("task-%06d", c)
			st := sb.MessageDelivered
			if r.IntN(100) == 0 {
				st = sb.MessageDenied
			}
			add(sb.AgentMessage{From: from, To: to, Channel: sb.ChannelTask, Direction: sb.DirectionRequest, Content: text(20 + r.IntN(60)),
				RunID: root, TaskID: task, Status: st})
			if st != sb.MessageDelivered {
				break
			}
			run := child(to, root)
			if r.IntN(3) == 0 {
				add(sb.AgentMessage{From: to, To: from, Channel: sb.ChannelTaskComment, Direction: sb.DirectionResponse, Content: text(15),
					RunID: run, ParentRunID: root, TaskID: task, Status: sb.MessageDelivered})
			}
			if r.IntN(10) > 0 { // one in ten fizzles
				add(sb.AgentMessage{From: to, To: from, Channel: sb.ChannelTaskResult, Direction: sb.DirectionResponse, Content: text(30 + r.IntN(100)),
					RunID: run, ParentRunID: root, TaskID: task, Status: status()})
			}
		default: // ask passed on: depth 2
			third := other(to)
			add(sb.AgentMessage{From: from, To: to, Channel: sb.ChannelAsk, Direction: sb.DirectionRequest, Content: questions[r.IntN(len(questions))], RunID: root, Status: sb.MessageDelivered})
			mid := child(to, root)
			add(sb.AgentMessage{From: to, To: third, Channel: sb.ChannelAsk, Direction: sb.DirectionRequest, Content: questions[r.IntN(len(questions))],
				RunID: mid, ParentRunID: root, Status: sb.MessageDelivered})
			leaf := child(third, mid)
			add(sb.AgentMessage{From: third, To: to, Channel: sb.ChannelAsk, Direction: sb.DirectionResponse, Content: text(20),
				RunID: leaf, ParentRunID: mid, Status: status()})
			add(sb.AgentMessage{From: to, To: from, Channel: sb.ChannelAsk, Direction: sb.DirectionResponse, Content: text(20),
				RunID: mid, ParentRunID: root, Status: status()})
		}
		for _, run := range runs {
			in, out := 2000+r.IntN(8000), 200+r.IntN(800)
			receipts = append(receipts, sb.Receipt{Run: run, AgentID: run.AgentID, Provider: "openai", Model: "m",
				StartedAt: start.Add(time.Duration(c) * step), Duration: time.Second, TokensIn: in, TokensOut: out,
				CostUSD: float64(in)*3e-6 + float64(out)*15e-6, Steps: 2, Outcome: "answered"})
		}
	}
	return msgs, receipts
}

// BenchmarkAnalysis loads a team's month and measures each action through
// the tool: store calls, read capacity as dynalite reports it, and time.
func BenchmarkAnalysis(b *testing.B) {
	n := 1000
	if v := os.Getenv(EnvBenchAnalysis); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 100 {
			b.Fatalf("%s=%q: want a number >= 100", EnvBenchAnalysis, v)
		}
	}
	h := newHarness(b)
	msgs, receipts := teamCorpus(n)
	work := make(chan func() error)
	var wg sync.WaitGroup
	var once sync.Once
	var loadErr error
	for range 8 {
		wg.Go(func() {
			for f := range work {
				if err := f(); err != nil {
					once.Do(func() { loadErr = err })
				}
			}
		})
	}
	ctx := b.Context()
	for _, m := range msgs {
		work <- func() error { return h.msgs.Record(ctx, m) }
	}
	for _, r := range receipts {
		work <- func() error { return h.store.Put(ctx, r) }
	}
	close(work)
	wg.Wait()
	if loadErr != nil {
		b.Fatalf("load: %v", loadErr)
	}
	// The chain view's chain: a depth-2 one, with three audited tool
	// calls per run.
	chain := ""
	for _, m := range msgs {
		if m.ParentRunID != "" && m.ParentRunID != m.RootRunID {
			chain = m.RootRunID
		}
	}
	for i, r := range receipts {
		if r.Run.RootRunID != chain {
			continue
		}
		for j := range 3 {
			err := h.store.Append(ctx, sb.AuditEntry{ID: fmt.Sprintf("a%d-%d", i, j), At: r.StartedAt.Add(time.Duration(j) * time.Second),
				Run: r.Run, AgentID: r.AgentID, Tool: "Workspace", Action: "read", Decision: sb.DecisionAuto, Outcome: sb.OutcomeOK})
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Logf("loaded %d messages, %d receipts; measured chain %s", len(msgs), len(receipts), chain)

	for _, tc := range []struct {
		name, action string
		args         map[string]any
	}{
		{"list_pairs/all30d", "list_pairs", map[string]any{}},
		{"list_pairs/agent30d", "list_pairs", map[string]any{"agent": "qa"}},
		{"stats/all30d", "stats", map[string]any{}},
		{"stats/pair30d", "stats", map[string]any{"a": "lead", "b": "qa"}},
		{"read_conversation/20", "read_conversation", map[string]any{"a": "lead", "b": "qa"}},
		{"read_conversation/raw50", "read_conversation", map[string]any{"a": "lead", "b": "qa", "raw": true, "limit": 50}},
		{"chain", "chain", map[string]any{"rootRunId": chain}},
		{"search/10", "search", map[string]any{"query": "invoice deadline"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			before := h.store.Stats().Total
			k := 0
			var last map[string]any
			for b.Loop() {
				last = h.invoke(tc.action, tc.args)
				if last["status"] != "ok" {
					b.Fatalf("%s: %v", tc.action, last)
				}
				k++
			}
			after := h.store.Stats().Total
			b.ReportMetric(float64(after.Calls-before.Calls)/float64(k), "calls/op")
			b.ReportMetric((after.ReadUnits-before.ReadUnits)/float64(k), "RCU/op")
			b.ReportMetric((after.WriteUnits-before.WriteUnits)/float64(k), "WCU/op")
			if cov, ok := last["coverage"].(map[string]any); ok {
				b.ReportMetric(cov["messages"].(float64), "msgs-analysed")
			}
		})
	}
}
