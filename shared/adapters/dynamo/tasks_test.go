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
