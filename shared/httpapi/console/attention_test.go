package console_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/httpapi/console"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/control"
)

// newStallEnv is an env whose console reads tasks and can pause agents,
// as the console function's does.
func newStallEnv(t testing.TB, tweaks ...func(*console.Options)) *env {
	return newEnv(t, func(o *console.Options) {
		store := o.Reader.(reader).Store
		o.Tasks = store.Tasks()
		o.Control = &control.Control{KV: store.KV(), Markers: store, Receipts: store, Audit: store, Now: o.Now,
			Log: slog.New(slog.DiscardHandler)}
		for _, f := range tweaks {
			f(o)
		}
	})
}

// seedStalls records what stands still in a small team: chain root-stall,
// where Alice handed Bob a task five days ago that never came back (T-7,
// open, a comment two days ago), Carol is blocked on T-8, an ask to Carol
// timed out, an ask was refused on the chain budget, and Carol asked Bob
// the same question three times; chain root-budget, whose last run ended
// on its budget; Carol is paused. T-9 is done and must not show.
func seedStalls(e *env) {
	ctx := context.Background()
	now := e.clock.Now()
	root := "root-stall"
	run := func(agent string) sb.RunContext {
		return sb.RunContext{RunID: "run-" + agent + "-s", RootRunID: root, AgentID: agent}
	}
	for i, agent := range []string{"alice", "bob", "carol"} {
		must(e.t, e.store.Put(ctx, sb.Receipt{Run: run(agent), AgentID: agent, Provider: "bedrock", Model: "eu.anthropic.claude-sonnet",
			StartedAt: now.Add(-5*24*time.Hour + time.Duration(i)*20*time.Minute), Duration: time.Duration(90+i*60) * time.Second,
			TokensIn: 5200 + i*900, TokensOut: 410, CostUSD: 0.0218 + float64(i)*0.0131, Steps: 3 + i, Outcome: "answered"}))
	}
	tasks := e.store.Tasks()
	for _, t := range []struct {
		id, creator, assignee, title string
		age                          time.Duration
	}{
		{"T-7", "alice", "bob", "Reconcile the Q3 invoices with the ledger", 5 * 24 * time.Hour},
		{"T-8", "alice", "carol", "Countersign the supplier contract", 26 * time.Hour},
		{"T-9", "bob", "carol", "Book the meeting room", 3 * time.Hour},
	} {
		at := now.Add(-t.age)
		must(e.t, tasks.Create(ctx, sb.Task{ID: t.id, Creator: t.creator, Assignee: t.assignee, Title: t.title, Status: sb.TaskOpen,
			CreatedAt: at, UpdatedAt: at, Run: run(t.creator)}))
		e.msg(t.creator, t.assignee, at, t.title+", please.", func(m *sb.AgentMessage) {
			m.Channel, m.TaskID, m.RunID, m.RootRunID = sb.ChannelTask, t.id, run(t.creator).RunID, root
		})
	}
	_, err := tasks.Comment(ctx, "T-7", sb.TaskComment{By: "bob", Text: "Half done; the ledger export is missing.", At: now.Add(-2 * 24 * time.Hour)})
	must(e.t, err)
	_, err = tasks.Finish(ctx, "T-8", sb.TaskBlocked, "waiting for the signed contract from the supplier", run("carol"), now.Add(-20*time.Hour))
	must(e.t, err)
	e.msg("carol", "alice", now.Add(-20*time.Hour), "Blocked: waiting for the signed contract from the supplier", func(m *sb.AgentMessage) {
		m.Channel, m.Direction, m.TaskID, m.TaskStatus, m.RunID, m.RootRunID = sb.ChannelTaskResult, sb.DirectionResponse, "T-8", sb.TaskBlocked, run("carol").RunID, root
	})
	_, err = tasks.Finish(ctx, "T-9", sb.TaskDone, "Room 4 is booked for Thursday 10:00.", run("carol"), now.Add(-2*time.Hour))
	must(e.t, err)
	e.msg("carol", "bob", now.Add(-2*time.Hour), "Room 4 is booked for Thursday 10:00.", func(m *sb.AgentMessage) {
		m.Channel, m.Direction, m.TaskID, m.TaskStatus, m.RunID, m.RootRunID = sb.ChannelTaskResult, sb.DirectionResponse, "T-9", sb.TaskDone, run("carol").RunID, root
	})
	e.msg("alice", "carol", now.Add(-5*24*time.Hour+10*time.Minute), "Carol, which contract version did legal approve?", func(m *sb.AgentMessage) {
		m.Status, m.Reason, m.RunID, m.RootRunID = sb.MessageTimeout, "carol did not answer within 120 s", run("alice").RunID, root
	})
	e.msg("bob", "alice", now.Add(-5*24*time.Hour+30*time.Minute), "Alice, is the ledger export in the shared folder?", func(m *sb.AgentMessage) {
		m.Status, m.Reason, m.RunID, m.RootRunID = sb.MessageDenied, "chain_budget: this chain of work has used up its budget (chainBudgetUsd)", run("bob").RunID, root
	})
	for i := range 3 {
		e.msg("carol", "bob", now.Add(-5*24*time.Hour+time.Duration(45+i*5)*time.Minute), "Where is the signed contract?", func(m *sb.AgentMessage) {
			m.RunID, m.RootRunID = run("carol").RunID, root
		})
		e.msg("bob", "carol", now.Add(-5*24*time.Hour+time.Duration(46+i*5)*time.Minute), "I do not have it yet.", func(m *sb.AgentMessage) {
			m.Direction, m.RunID, m.RootRunID = sb.DirectionResponse, run("bob").RunID, root
		})
	}
	budget := sb.RunContext{RunID: "run-budget", RootRunID: "root-budget", AgentID: "bob"}
	must(e.t, e.store.Put(ctx, sb.Receipt{Run: sb.RunContext{RunID: "run-budget-0", RootRunID: "root-budget", AgentID: "bob"}, AgentID: "bob",
		StartedAt: now.Add(-4 * time.Hour), CostUSD: 0.96, Steps: 12, Outcome: "answered"}))
	must(e.t, e.store.Put(ctx, sb.Receipt{Run: budget, AgentID: "bob", StartedAt: now.Add(-3 * time.Hour), CostUSD: 0.05, Steps: 1,
		Outcome: control.ReasonChainBudget}))
	for d := range 30 { // a month of spend for the chart
		must(e.t, e.store.Put(ctx, sb.Receipt{Run: sb.RunContext{RunID: "run-day-" + itoa(d), RootRunID: "root-day-" + itoa(d), AgentID: "alice"},
			AgentID: "alice", StartedAt: now.Add(-time.Duration(d) * 24 * time.Hour).Add(-time.Hour), CostUSD: 0.1 + float64(d%7)*0.05, Outcome: "answered"}))
	}
	must(e.t, e.opts.Control.Pause(ctx, "carol", "console:test"))
}

// TestAttentionPageShowsWhereWorkStands: every kind of stall the seed
// plants is listed, linked to its chain, and the page is index reads
// only (the operations it calls are all queries or key reads).
func TestAttentionPageShowsWhereWorkStands(t *testing.T) {
	e := newStallEnv(t)
	seedStalls(e)
	c := e.client()
	e.login(c)
	before := e.store.Stats()
	res, body := e.get(c, "/console/attention")
	if res.StatusCode != 200 {
		t.Fatalf("GET /console/attention: %d\n%s", res.StatusCode, body)
	}
	section := func(id string) string {
		i := strings.Index(body, `<h2 id="`+id+`">`)
		if i < 0 {
			t.Fatalf("no section %s on the page", id)
		}
		rest := body[i+1:]
		if j := strings.Index(rest, "<h2 "); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	tasks := section("tasks")
	if !strings.Contains(tasks, "T-8") || !strings.Contains(tasks, "T-7") || strings.Index(tasks, "T-8") > strings.Index(tasks, "T-7") {
		t.Errorf("tasks: want blocked T-8 first, then open T-7:\n%s", tasks)
	}
	if strings.Contains(tasks, "T-9") {
		t.Errorf("the done task T-9 is listed:\n%s", tasks)
	}
	for _, want := range []string{"waiting for the signed contract", "5 d 0 h ago", "2 d 0 h ago by bob", "26 h 0 min ago", "/console/chain?root=root-stall"} {
		if !strings.Contains(tasks, want) {
			t.Errorf("tasks lack %q:\n%s", want, tasks)
		}
	}
	if p := section("paused"); !strings.Contains(p, "Carol (carol)") || !strings.Contains(p, "action=resume&amp;agent=carol") {
		t.Errorf("paused: want Carol with a resume link:\n%s", p)
	}
	if b := section("budget"); !strings.Contains(b, "root-budget") || !strings.Contains(b, "$1.0100") || strings.Contains(b, "root-stall") {
		t.Errorf("over budget: want root-budget with its spend $1.0100 only:\n%s", b)
	}
	failed := section("failed")
	for _, want := range []string{"timeout", "carol did not answer within 120 s", "denied", "chain_budget: this chain"} {
		if !strings.Contains(failed, want) {
			t.Errorf("failed asks lack %q:\n%s", want, failed)
		}
	}
	if f := section("fizzled"); !strings.Contains(f, "T-7") || strings.Contains(f, "T-8") || strings.Contains(f, "T-9") {
		t.Errorf("fizzled: want T-7 only (T-8 reported a blocker, T-9 a result):\n%s", f)
	}
	if r := section("repeated"); !strings.Contains(r, "Where is the signed contract?") || !strings.Contains(r, "<td>3</td>") {
		t.Errorf("repeated questions: want Carol's question, 3 times:\n%s", r)
	}
	if !strings.Contains(body, `id="bounds"`) || !strings.Contains(body, "Index reads only") {
		t.Errorf("the page does not say what it read")
	}

	// Index reads only: the unfinished-task partitions, each agent's runs,
	// the over-budget chain's cost, the all-pairs index of the messages,
	// the paused switches.
	after := e.store.Stats()
	var ops []string
	for op, st := range after.Ops {
		if st.Calls > before.Ops[op].Calls {
			ops = append(ops, op)
		}
	}
	slices.Sort(ops)
	allowed := map[string]bool{"tasks.unfinished": true, "receipts.agentRunsSince": true, "receipts.chainCost": true,
		"agentMessages.all": true, "kv.get": true}
	for _, op := range ops {
		if !allowed[op] {
			t.Errorf("the page called %s; want only %v", op, slices.Sorted(maps.Keys(allowed)))
		}
	}
	if got := after.Ops["tasks.unfinished"].Calls - before.Ops["tasks.unfinished"].Calls; got != 3 {
		t.Errorf("tasks.unfinished: %d queries, want 3 (one per state)", got)
	}
}

// TestChainShowsStatusTasksAndTimeline: the chain page shows every
// message's status and reason, each task's current status (T-7 is still
// open though Alice's run answered), and draws the chain.
func TestChainShowsStatusTasksAndTimeline(t *testing.T) {
	e := newStallEnv(t)
	seedStalls(e)
	c := e.client()
	e.login(c)
	res, body := e.get(c, "/console/chain?root=root-stall")
	if res.StatusCode != 200 {
		t.Fatalf("chain: %d\n%s", res.StatusCode, body)
	}
	for _, want := range []string{
		"answered; its task T-7 is still <span class=\"badge status-open\">open</span>",
		`<span class="badge warn status">timeout</span>`,
		`<div class="reason">carol did not answer within 120 s</div>`,
		`task T-7 <span class="badge status-open">now open</span>`,
		`task T-9 <span class="badge status-done">now done</span>`,
		`<span class="badge status-blocked">blocked</span> waiting for the signed contract`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("chain page lacks %q", want)
		}
	}
	svg := body[strings.Index(body, "<svg"):strings.Index(body, "</svg>")]
	if n := strings.Count(svg, `<g class="lane `); n != 3 {
		t.Errorf("%d lanes, want 3 (alice, bob, carol)", n)
	}
	if n := strings.Count(svg, `<g class="run `); n != 3 {
		t.Errorf("%d run bars, want 3", n)
	}
	if n := strings.Count(svg, `<line class="arrow `); n != 13 {
		t.Errorf("%d arrows, want one per message (13)", n)
	}
	for _, want := range []string{`class="arrow ch-ask bad"`, `class="arrow ch-task"`, `class="arrow ch-task_result response"`, ">$0.0218</text>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("timeline lacks %q", want)
		}
	}
}

// TestStartPageChartsThirtyDaysOfCost: one bar per agent with its 30-day
// total, and a column per day.
func TestStartPageChartsThirtyDaysOfCost(t *testing.T) {
	e := newStallEnv(t)
	seedStalls(e)
	c := e.client()
	e.login(c)
	_, body := e.get(c, "/console/")
	i := strings.Index(body, `<h2 id="cost30">`)
	if i < 0 {
		t.Fatalf("no 30-day chart on the start page")
	}
	chart := body[i:]
	if n := strings.Count(chart, `<rect class="total"`); n != 3 {
		t.Errorf("%d bars, want one per agent (3)", n)
	}
	if n := strings.Count(chart, `<rect class="day"`); n != 90 {
		t.Errorf("%d day columns, want 30 per agent (90)", n)
	}
	// Alice: 30 days of 0.10 + (d mod 7) * 0.05, and her run in root-stall
	// five days ago; Bob: root-budget's two runs and his root-stall run.
	alice := 0.0218
	for d := range 30 {
		alice += 0.1 + float64(d%7)*0.05
	}
	for _, want := range []string{"Alice: " + usd(alice) + " in 30 days", "Bob: $1.0449 in 30 days", "Carol: $0.0480 in 30 days"} {
		if !strings.Contains(chart, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
}

func usd(v float64) string { return fmt.Sprintf("$%.4f", v) }

// TestStallsAreEscaped: what agents wrote (a task's title and blocker, a
// message's text and reason) stays text on the attention page and in the
// chain's timeline titles.
func TestStallsAreEscaped(t *testing.T) {
	e := newStallEnv(t)
	ctx := context.Background()
	now := e.clock.Now()
	plant := `"><img src=x onerror=alert(1)><svg onload=alert(2)>`
	run := sb.RunContext{RunID: "run-p", RootRunID: "root-p", AgentID: "alice"}
	must(t, e.store.Tasks().Create(ctx, sb.Task{ID: "T-p", Creator: "alice", Assignee: "bob", Title: plant, Status: sb.TaskOpen,
		CreatedAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Hour), Run: run}))
	_, err := e.store.Tasks().Finish(ctx, "T-p", sb.TaskBlocked, plant, run, now)
	must(t, err)
	e.msg("alice", "bob", now.Add(-time.Minute), plant, func(m *sb.AgentMessage) {
		m.Status, m.Reason, m.TaskID, m.RunID, m.RootRunID = sb.MessageFailed, plant, "T-p", run.RunID, run.RootRunID
	})
	must(t, e.store.Put(ctx, sb.Receipt{Run: run, AgentID: "alice", StartedAt: now.Add(-2 * time.Minute), CostUSD: 0.01, Outcome: "answered"}))
	c := e.client()
	e.login(c)
	for _, p := range []string{"/console/attention", "/console/chain?root=root-p"} {
		_, body := e.get(c, p)
		if strings.Contains(body, "<img") || strings.Contains(body, "<svg onload") || !strings.Contains(body, "&lt;img src=x onerror=alert(1)&gt;") {
			t.Errorf("%s: the plant is not escaped text", p)
		}
	}
}
