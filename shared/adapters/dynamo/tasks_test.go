package dynamo_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/storetest"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestTaskStore(t *testing.T) {
	storetest.RunTaskStore(t, func(t *testing.T) switchboard.TaskStore { return newStore(t).Tasks() })
}

// TestTasksUnfinished: the byOpen index holds every unfinished task, in
// three partitions (open, reported by the watchdog, blocked), each listed
// oldest first; a done task leaves it, and the watchdog still reads only
// the open tasks it has not reported.
func TestTasksUnfinished(t *testing.T) {
	ctx := t.Context()
	x := newStore(t).Tasks()
	base := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i, id := range []string{"old-open", "reported", "blocked", "done", "new-open", "blocked-then-done"} {
		at := base.Add(time.Duration(i) * time.Hour)
		if err := x.Create(ctx, switchboard.Task{ID: id, Creator: "ada", Assignee: "bob", Title: id, Status: switchboard.TaskOpen,
			CreatedAt: at, UpdatedAt: at, Run: switchboard.RunContext{RunID: "run-" + id, RootRunID: "root-" + id}}); err != nil {
			t.Fatal(err)
		}
	}
	later := base.Add(24 * time.Hour)
	if ok, err := x.ClaimWatchdog(ctx, "reported", later); !ok || err != nil {
		t.Fatalf("ClaimWatchdog = %v, %v", ok, err)
	}
	for _, f := range []struct {
		id string
		to switchboard.TaskStatus
	}{{"blocked", switchboard.TaskBlocked}, {"done", switchboard.TaskDone}, {"blocked-then-done", switchboard.TaskBlocked}, {"blocked-then-done", switchboard.TaskDone}} {
		if _, err := x.Finish(ctx, f.id, f.to, "because", switchboard.RunContext{RunID: "run-b"}, later); err != nil {
			t.Fatalf("Finish %s %s: %v", f.id, f.to, err)
		}
	}
	got, err := x.Unfinished(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ids, want := taskIDs(got), "old-open,new-open,reported,blocked"; ids != want {
		t.Errorf("Unfinished = %s, want %s", ids, want)
	}
	if got[3].Status != switchboard.TaskBlocked || got[3].Blocker != "because" || !got[3].UpdatedAt.Equal(later) {
		t.Errorf("blocked task = %+v, want blocked because, updated at %v", got[3], later)
	}
	if got, err := x.Unfinished(ctx, 1); err != nil || taskIDs(got) != "old-open,reported,blocked" {
		t.Errorf("Unfinished(1) = %s, %v; want the oldest of each part", taskIDs(got), err)
	}
	open, err := x.OpenSince(ctx, later, 0)
	if err != nil || taskIDs(open) != "old-open,new-open" {
		t.Errorf("OpenSince = %s, %v; want the open tasks the watchdog has not reported", taskIDs(open), err)
	}
}

func taskIDs(ts []switchboard.Task) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.ID)
	}
	return strings.Join(s, ",")
}

// TestAgentRunsSince: the runs charged to an agent from a time on, oldest
// first, with their cost, outcome and chain; other agents' runs and older
// ones are not read.
func TestAgentRunsSince(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	base := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i, r := range []switchboard.Receipt{
		{AgentID: "ada", CostUSD: 0.5, Outcome: "answered"},
		{AgentID: "ada", CostUSD: 0.25, Outcome: "chain_budget", Reason: "chain over its budget"},
		{AgentID: "bob", CostUSD: 1, Outcome: "answered"},
		{AgentID: "bob", CostUSD: 2, Outcome: "answered", Run: switchboard.RunContext{PaidBy: "ada"}},
	} {
		r.StartedAt = base.Add(time.Duration(i) * time.Hour)
		r.Run.RunID, r.Run.RootRunID, r.Run.AgentID = "run-"+strconv.Itoa(i), "root-"+strconv.Itoa(i%2), r.AgentID
		if err := s.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.AgentRunsSince(ctx, "ada", base.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("AgentRunsSince = %+v, want ada's second run and the run she pays for", got)
	}
	if r := got[0]; r.Run.RunID != "run-1" || r.Run.RootRunID != "root-1" || r.CostUSD != 0.25 || r.Outcome != "chain_budget" ||
		r.Reason != "chain over its budget" || !r.StartedAt.Equal(base.Add(time.Hour)) || r.AgentID != "ada" {
		t.Errorf("first run = %+v", r)
	}
	if r := got[1]; r.Run.RunID != "run-3" || r.AgentID != "bob" || r.CostUSD != 2 {
		t.Errorf("second run = %+v, want bob's run that ada pays for", r)
	}
}

// TestTaskListOfUnfinishedReadsNoHistory: a party's open or blocked tasks
// come from the index of unfinished tasks, so listing them reads none of
// the party's done tasks however many there are; the done ones come from
// the party's own index.
func TestTaskListOfUnfinishedReadsNoHistory(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	x := s.Tasks()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	long := strings.Repeat("history ", 120) // ~1 KB a task
	create := func(id, creator, assignee string) {
		t.Helper()
		at = at.Add(time.Minute)
		if err := x.Create(ctx, switchboard.Task{ID: id, Creator: creator, Assignee: assignee, Title: id, Description: long,
			Status: switchboard.TaskOpen, CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	finish := func(id string, to switchboard.TaskStatus) {
		t.Helper()
		if _, err := x.Finish(ctx, id, to, "ok", switchboard.RunContext{RunID: "r"}, at); err != nil {
			t.Fatal(err)
		}
	}
	create("open-old", "ada", "bob")
	create("blocked", "ada", "bob")
	finish("blocked", switchboard.TaskBlocked)
	for i := range 200 {
		id := "done-" + strconv.Itoa(i)
		create(id, "ada", "bob")
		finish(id, switchboard.TaskDone)
	}
	create("reported", "ada", "bob")
	if ok, err := x.ClaimWatchdog(ctx, "reported", at); err != nil || !ok {
		t.Fatalf("claim: %v, %v", ok, err)
	}
	create("open-new", "ada", "bob")
	create("carol's", "ada", "carol")
	for _, tc := range []struct {
		q      switchboard.TaskQuery
		want   string
		maxRCU float64
	}{
		{switchboard.TaskQuery{Party: "bob", Role: switchboard.TaskAssignedTo, Status: switchboard.TaskOpen}, "open-new,reported,open-old", 2},
		{switchboard.TaskQuery{Party: "bob", Role: switchboard.TaskAssignedTo, Status: switchboard.TaskOpen, Limit: 2}, "open-new,reported", 2},
		{switchboard.TaskQuery{Party: "ada", Role: switchboard.TaskCreatedBy, Status: switchboard.TaskOpen}, "carol's,open-new,reported,open-old", 2},
		{switchboard.TaskQuery{Party: "bob", Role: switchboard.TaskAssignedTo, Status: switchboard.TaskBlocked}, "blocked", 1},
		{switchboard.TaskQuery{Party: "bob", Role: switchboard.TaskAssignedTo, Status: switchboard.TaskDone, Limit: 3}, "done-199,done-198,done-197", 2},
	} {
		before := s.Stats().Ops["tasks.list"]
		ts, err := x.List(ctx, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, task := range ts {
			ids = append(ids, task.ID)
		}
		if got := strings.Join(ids, ","); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.q, got, tc.want)
		}
		rcu := s.Stats().Ops["tasks.list"].ReadUnits - before.ReadUnits
		t.Logf("%+v: %.1f RCU", tc.q, rcu)
		if rcu > tc.maxRCU {
			t.Errorf("%+v: %.1f RCU, want at most %.0f (the party's done tasks are ~200 KB, ~25 RCU)", tc.q, rcu, tc.maxRCU)
		}
	}
}
