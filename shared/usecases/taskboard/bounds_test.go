package taskboard_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/taskboard"
)

// denied is the rows of a|b that record a refusal, oldest first.
func (w *world) denied(t *testing.T, a, b string) []sb.AgentMessage {
	t.Helper()
	var out []sb.AgentMessage
	for _, r := range w.rows(t, a, b) {
		if r.Status == sb.MessageDenied {
			out = append(out, r)
		}
	}
	return out
}

// wantRefused checks a refusal envelope: the code, the reason, the bound
// and words of what it says.
func wantRefused(t *testing.T, env sb.Envelope, code, reason string, says ...string) {
	t.Helper()
	if env.Status != "error" || env.Data["code"] != code || env.Data["refused"] != reason {
		t.Fatalf("envelope = %+v, want %s refused for %s", env, code, reason)
	}
	for _, s := range says {
		if !strings.Contains(env.Error, s) {
			t.Errorf("refusal %q does not say %q", env.Error, s)
		}
	}
}

// wantRows checks that every row is a denied task hand-over whose reason
// starts with reason.
func wantRows(t *testing.T, rows []sb.AgentMessage, n int, reason string) {
	t.Helper()
	if len(rows) != n {
		t.Fatalf("%d denied rows, want %d", len(rows), n)
	}
	for _, r := range rows {
		if r.Channel != sb.ChannelTask || r.Direction != sb.DirectionRequest || r.TaskID != "" ||
			!strings.HasPrefix(r.Reason, reason+": ") || r.RunID == "" {
			t.Fatalf("row = %+v, want a denied task request with reason %s", r, reason)
		}
	}
}

// The attack's storm: one run calls task_create 500 times at once. The
// first DefaultPerRun create a task and wake the assignee; every other call
// is refused with the bound and what to do, and leaves a denied row.
func TestTaskCreateIsBoundedPerRun(t *testing.T) {
	w := newWorld(t)
	adaRun := run("ada", "ada-1", "", "ada-1")
	const calls = 500
	envs := make([]sb.Envelope, calls)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			envs[i] = w.call(t, adaRun, taskboard.ActionCreate, map[string]any{
				"assignee": "bob", "title": fmt.Sprint("storm ", i), "description": "do it"})
		}()
	}
	wg.Wait()
	ok, refused := 0, 0
	for _, env := range envs {
		if env.Status == "ok" {
			ok++
			continue
		}
		wantRefused(t, env, sb.ERATELIMITED, taskboard.ReasonRunLimit, "this run has created 5 tasks", "do not create more in this run")
		if env.Data["limit"] != taskboard.DefaultPerRun {
			t.Fatalf("refusal %+v, want limit %d", env.Data, taskboard.DefaultPerRun)
		}
		refused++
	}
	if ok != taskboard.DefaultPerRun || refused != calls-taskboard.DefaultPerRun {
		t.Fatalf("%d created, %d refused; want %d and %d", ok, refused, taskboard.DefaultPerRun, calls-taskboard.DefaultPerRun)
	}
	if n := len(w.jobs.all()); n != taskboard.DefaultPerRun {
		t.Errorf("%d wakes of bob, want %d (one per task created)", n, taskboard.DefaultPerRun)
	}
	stored, err := w.tasks.List(t.Context(), sb.TaskQuery{Party: "ada", Role: sb.TaskCreatedBy, Limit: 100})
	if err != nil || len(stored) != taskboard.DefaultPerRun {
		t.Errorf("ada created %d tasks (%v), want %d", len(stored), err, taskboard.DefaultPerRun)
	}
	rows := w.denied(t, "ada", "bob")
	wantRows(t, rows, calls-taskboard.DefaultPerRun, taskboard.ReasonRunLimit)
	if r := rows[0]; r.From != "ada" || r.To != "bob" || r.RunID != "ada-1" || !strings.HasPrefix(r.Content, "storm ") {
		t.Errorf("row = %+v, want ada's refused hand-over to bob in run ada-1 with its title", r)
	}
	// The bound is per run: ada's next run may create again.
	mustOK(t, "next run", w.call(t, run("ada", "ada-2", "", "ada-2"), taskboard.ActionCreate,
		map[string]any{"assignee": "bob", "title": "later", "description": "x"}))
}

// An agent creates at most DefaultPerHour tasks per clock hour, whatever
// its runs; the refusal says when it may again, and the next hour it may.
func TestTaskCreateIsBoundedPerAgentAndHour(t *testing.T) {
	w := newWorld(t)
	w.clock.add(17 * time.Minute)
	created := 0
	for r := 0; created < taskboard.DefaultPerHour; r++ {
		rc := run("ada", fmt.Sprint("ada-", r), "", fmt.Sprint("ada-", r))
		for range taskboard.DefaultPerRun {
			mustOK(t, "create", w.call(t, rc, taskboard.ActionCreate, map[string]any{"assignee": "cyd", "title": "t", "description": "x"}))
			created++
		}
	}
	env := w.call(t, run("ada", "ada-late", "", "ada-late"), taskboard.ActionCreate, map[string]any{"assignee": "bob", "title": "t", "description": "x"})
	wantRefused(t, env, sb.ERATELIMITED, taskboard.ReasonHourLimit, "30 tasks this hour", "09:00 UTC")
	if env.Data["retryAfterSeconds"] != 43*60 {
		t.Errorf("retryAfterSeconds = %v, want the rest of the hour (2580)", env.Data["retryAfterSeconds"])
	}
	wantRows(t, w.denied(t, "ada", "bob"), 1, taskboard.ReasonHourLimit)
	// Another agent is not held up by ada's hour.
	mustOK(t, "bob creates", w.call(t, run("bob", "bob-1", "", "bob-1"), taskboard.ActionCreate, map[string]any{"assignee": "cyd", "title": "t", "description": "x"}))
	// The refused call did not count against its run: the next hour, that
	// run's whole allowance is there.
	w.clock.add(43 * time.Minute)
	for i := range taskboard.DefaultPerRun {
		mustOK(t, fmt.Sprint("next hour ", i), w.call(t, run("ada", "ada-late", "", "ada-late"), taskboard.ActionCreate,
			map[string]any{"assignee": "bob", "title": "t", "description": "x"}))
	}
	if n := len(w.jobs.all()); n != taskboard.DefaultPerHour+1+taskboard.DefaultPerRun {
		t.Errorf("%d wakes, want one per created task", n)
	}
}

// next is the run a dispatched wake starts, as the engine stamps it.
func next(j sb.WakeJob) sb.RunContext { return sb.NewRun(j.AgentID, j.Parent, t0) }

// The attack's ping-pong: ada and bob hand a task back and forth, each
// from the run the other's task woke. The chain goes DefaultHops deep; the
// next hand-over is refused with a denied row, and no further wake happens.
func TestTaskPingPongStopsAtTheHopLimit(t *testing.T) {
	w := newWorld(t)
	cur := run("ada", "ada-0", "", "ada-0") // a person's message woke ada
	other := map[string]string{"ada": "bob", "bob": "ada"}
	var env sb.Envelope
	hops := 0
	for range 25 {
		env = w.call(t, cur, taskboard.ActionCreate, map[string]any{"assignee": other[cur.AgentID], "title": fmt.Sprint("ping ", hops+1), "description": "hand it on"})
		if env.Status != "ok" {
			break
		}
		hops++
		got, err := w.tasks.Get(t.Context(), env.Data["taskId"].(string))
		if err != nil || got.Hops != hops || got.Run.RootRunID != "ada-0" {
			t.Fatalf("task %d = %+v, %v; want hops %d in chain ada-0", hops, got, err, hops)
		}
		js := w.jobs.all()
		cur = next(js[len(js)-1])
		if cur.TaskHops != hops || cur.RootRunID != "ada-0" {
			t.Fatalf("woken run %+v, want task depth %d in chain ada-0", cur, hops)
		}
	}
	if hops != taskboard.DefaultHops {
		t.Fatalf("the chain went %d hand-overs deep, want %d", hops, taskboard.DefaultHops)
	}
	wantRefused(t, env, sb.EFORBIDDEN, taskboard.ReasonHopLimit, "handed on 3 times", "do the work yourself")
	if n := len(w.jobs.all()); n != taskboard.DefaultHops {
		t.Errorf("%d wakes, want %d", n, taskboard.DefaultHops)
	}
	// The refused hand-over went from bob (the third task's assignee) to ada.
	rows := w.denied(t, "ada", "bob")
	wantRows(t, rows, 1, taskboard.ReasonHopLimit)
	if rows[0].From != cur.AgentID || rows[0].RunID != cur.RunID || rows[0].RootRunID != "ada-0" {
		t.Errorf("row = %+v, want the deepest run's refusal in chain ada-0", rows[0])
	}
	// The deepest task can still be finished: its creator hears the result
	// at the same depth, and cannot hand anything on from there either.
	mustOK(t, "complete", w.call(t, cur, taskboard.ActionComplete, map[string]any{"taskId": lastTaskID(t, w, cur.AgentID), "result": "pong"}))
	js := w.jobs.all()
	back := next(js[len(js)-1])
	if back.TaskHops != taskboard.DefaultHops {
		t.Errorf("creator's follow-up %+v, want task depth %d", back, taskboard.DefaultHops)
	}
	wantRefused(t, w.call(t, back, taskboard.ActionCreate, map[string]any{"assignee": cur.AgentID, "title": "again", "description": "x"}),
		sb.EFORBIDDEN, taskboard.ReasonHopLimit)
}

// lastTaskID is the newest task assigned to agent.
func lastTaskID(t *testing.T, w *world, agent string) string {
	t.Helper()
	ts, err := w.tasks.List(t.Context(), sb.TaskQuery{Party: agent, Role: sb.TaskAssignedTo, Limit: 1})
	if err != nil || len(ts) == 0 {
		t.Fatalf("no task assigned to %s: %v", agent, err)
	}
	return ts[0].ID
}

// A run that answers another agent's question (ask_agent) hands no work
// on: its task_create is refused, with a denied row.
func TestTaskCreateRefusedInAnAnsweringRun(t *testing.T) {
	w := newWorld(t)
	answering := sb.RunContext{RunID: "bob-ans", ParentRunID: "ada-1", RootRunID: "ada-1", AgentID: "bob", CallPath: "ada"}
	env := w.call(t, answering, taskboard.ActionCreate, map[string]any{"assignee": "cyd", "title": "pass it on", "description": "x"})
	wantRefused(t, env, sb.EFORBIDDEN, taskboard.ReasonAnswering, "answers a question from Ada (ada)", "Ada (ada) can create the task")
	if n := len(w.jobs.all()); n != 0 {
		t.Errorf("%d wakes, want none", n)
	}
	if ts, _ := w.tasks.List(t.Context(), sb.TaskQuery{Party: "cyd", Role: sb.TaskAssignedTo}); len(ts) != 0 {
		t.Errorf("cyd has tasks %+v, want none", ts)
	}
	rows := w.denied(t, "bob", "cyd")
	wantRows(t, rows, 1, taskboard.ReasonAnswering)
	if rows[0].RunID != "bob-ans" || rows[0].From != "bob" {
		t.Errorf("row = %+v", rows[0])
	}
}

// A task's runs are charged to the agent that handed the work out: the
// wake carries its payer, along the chain. A creator with no budget left
// creates no task that would wake another agent, and nothing is woken.
func TestTaskCreatorWithoutBudgetWakesNobody(t *testing.T) {
	w := newWorld(t)
	id := w.create(t, run("ada", "ada-1", "", "ada-1"))
	js := w.jobs.all()
	if p := js[0].Parent; p.PaidBy != "ada" || p.TaskHops != 1 {
		t.Fatalf("bob's wake parent = %+v, want paid by ada at depth 1", p)
	}
	bobRun := next(js[0])
	// Bob hands part of ada's work on to cyd: still ada's money.
	mustOK(t, "bob to cyd", w.call(t, bobRun, taskboard.ActionCreate, map[string]any{"assignee": "cyd", "title": "part", "description": "x"}))
	js = w.jobs.all()
	if p := js[1].Parent; p.PaidBy != "ada" || p.TaskHops != 2 {
		t.Fatalf("cyd's wake parent = %+v, want paid by ada at depth 2", p)
	}

	w.budgets.spend("ada")
	env := w.call(t, run("ada", "ada-2", "", "ada-2"), taskboard.ActionCreate, map[string]any{"assignee": "bob", "title": "more", "description": "x"})
	wantRefused(t, env, sb.EFORBIDDEN, taskboard.ReasonBudget, "your daily budget is used up", "00:00 UTC")
	env = w.call(t, bobRun, taskboard.ActionCreate, map[string]any{"assignee": "cyd", "title": "more", "description": "x"})
	wantRefused(t, env, sb.EFORBIDDEN, taskboard.ReasonBudget, "paid for by Ada (ada)")
	if n := len(w.jobs.all()); n != 2 {
		t.Errorf("%d wakes, want only the two from before ada's budget ran out", n)
	}
	wantRows(t, w.denied(t, "ada", "bob"), 1, taskboard.ReasonBudget)
	wantRows(t, w.denied(t, "bob", "cyd"), 1, taskboard.ReasonBudget)
	// Finishing is not creating: bob completes ada's task, ada is woken.
	mustOK(t, "complete", w.call(t, bobRun, taskboard.ActionComplete, map[string]any{"taskId": id, "result": "done"}))
	if p := w.jobs.all()[2].Parent; p.PaidBy != "" || p.TaskHops != 1 {
		t.Errorf("ada's follow-up parent = %+v, want ada paying for itself at depth 1", p)
	}
}

// AdmitWake is the gate before a task's wake runs (the agent-worker asks
// it): a wake whose payer has no budget left, or deeper than the hop limit
// (kept from before, or forged), is refused with a row; the others run.
func TestTaskWakeAdmission(t *testing.T) {
	w := newWorld(t)
	w.create(t, run("ada", "ada-1", "", "ada-1"))
	j := w.jobs.all()[0]
	if err := w.svc.AdmitWake(t.Context(), j); err != nil {
		t.Fatalf("admit = %v, want admitted", err)
	}
	w.budgets.spend("ada")
	w.clock.add(time.Second)
	err := w.svc.AdmitWake(t.Context(), j)
	if taskboard.RefusedFor(err) != taskboard.ReasonBudget {
		t.Fatalf("admit with ada's budget used up = %v, want refused for %s", err, taskboard.ReasonBudget)
	}
	deep := j
	parent := *j.Parent
	parent.TaskHops, parent.PaidBy = taskboard.DefaultHops+1, ""
	deep.Parent = &parent
	w.clock.add(time.Second)
	if err := w.svc.AdmitWake(t.Context(), deep); taskboard.RefusedFor(err) != taskboard.ReasonHopLimit {
		t.Fatalf("admit past the hop limit = %v, want refused for %s", err, taskboard.ReasonHopLimit)
	}
	rows := w.denied(t, "ada", "bob")
	if len(rows) != 2 || !strings.HasPrefix(rows[0].Reason, taskboard.ReasonBudget+": ") ||
		!strings.HasPrefix(rows[1].Reason, taskboard.ReasonHopLimit+": ") || rows[0].RunID != "ada-1" {
		t.Errorf("rows = %+v, want the two refused wakes with their reasons", rows)
	}
	// Wakes that are not a task's, and a task's the assignee pays for (the
	// human's), are not the taskboard's to refuse.
	if err := w.svc.AdmitWake(t.Context(), sb.WakeJob{AgentID: "bob", Source: "rocketchat-webhook"}); err != nil {
		t.Errorf("a chat wake: %v", err)
	}
	human := j
	hp := sb.RunContext{RunID: "op-1", RootRunID: "op-1", AgentID: "bob", TaskHops: 1}
	human.Parent = &hp
	if err := w.svc.AdmitWake(t.Context(), human); err != nil {
		t.Errorf("the human's task: %v", err)
	}
}

// Admits says the same as AdmitWake, a refusal as false without an error.
func TestAdmitsIsAdmitWakeAsABool(t *testing.T) {
	w := newWorld(t)
	deep := sb.WakeJob{AgentID: "bob", Source: taskboard.JobSource, Parent: &sb.RunContext{RunID: "ada-1", RootRunID: "ada-1", AgentID: "ada", TaskHops: taskboard.DefaultHops + 1}}
	if ok, err := w.svc.Admits(t.Context(), deep); ok || err != nil {
		t.Errorf("Admits(too deep) = %v, %v; want false, nil", ok, err)
	}
	if ok, err := w.svc.Admits(t.Context(), sb.WakeJob{AgentID: "bob", Source: "rocketchat-webhook"}); !ok || err != nil {
		t.Errorf("Admits(not a task) = %v, %v; want true, nil", ok, err)
	}
}
