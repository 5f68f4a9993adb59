package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// task is an open task from creator to assignee created at at.
func task(id, creator, assignee string, at time.Time) switchboard.Task {
	return switchboard.Task{
		ID: id, Creator: creator, Assignee: assignee, Title: "title " + id, Description: "do " + id,
		Status: switchboard.TaskOpen, CreatedAt: at, UpdatedAt: at,
		Run:     switchboard.RunContext{RunID: "run-" + id, RootRunID: "root-" + id, AgentID: creator},
		ReplyTo: &switchboard.ReplyTo{RoomID: "room-" + id},
	}
}

func taskIDs(ts []switchboard.Task) string {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	return strings.Join(ids, ",")
}

// RunTaskStore checks a switchboard.TaskStore: round trip, the conditional
// transitions (one winner of racing completions), comments, the party
// listings and the watchdog's index with its once-only claim.
func RunTaskStore(t *testing.T, newStore func(t *testing.T) switchboard.TaskStore) {
	base := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

	t.Run("round trip and duplicate id", func(t *testing.T) {
		s := newStore(t)
		in := task("t1", "ada", "bob", base)
		// The task's depth and its creating run's depth and payer are kept.
		in.Hops, in.Run.TaskHops, in.Run.PaidBy = 2, 1, "cyd"
		noErr(t, "create", s.Create(t.Context(), in))
		got, err := s.Get(t.Context(), "t1")
		noErr(t, "get", err)
		if got.Title != in.Title || got.Description != in.Description || got.Creator != "ada" || got.Assignee != "bob" ||
			got.Status != switchboard.TaskOpen || !got.CreatedAt.Equal(base) || got.Run != in.Run || got.Hops != 2 ||
			got.ReplyTo == nil || *got.ReplyTo != *in.ReplyTo || len(got.Comments) != 0 {
			t.Fatalf("got %+v, want %+v", got, in)
		}
		wantCode(t, "create twice", s.Create(t.Context(), in), switchboard.ECONFLICT)
		_, err = s.Get(t.Context(), "nope")
		wantCode(t, "get unknown", err, switchboard.ENOTFOUND)
		bad := in
		bad.ID, bad.Title = "t2", ""
		wantCode(t, "no title", s.Create(t.Context(), bad), switchboard.EINVALID)
	})

	t.Run("comment then complete; a done task takes neither", func(t *testing.T) {
		s := newStore(t)
		noErr(t, "create", s.Create(t.Context(), task("t1", "ada", "bob", base)))
		got, err := s.Comment(t.Context(), "t1", switchboard.TaskComment{By: "bob", Text: "which file?", At: base.Add(time.Minute)})
		noErr(t, "comment", err)
		got, err = s.Comment(t.Context(), "t1", switchboard.TaskComment{By: "ada", Text: "report.md", At: base.Add(2 * time.Minute)})
		noErr(t, "comment 2", err)
		if len(got.Comments) != 2 || got.Comments[1].By != "ada" || got.Comments[1].Text != "report.md" || !got.UpdatedAt.Equal(base.Add(2*time.Minute)) {
			t.Fatalf("comments = %+v, updated %v", got.Comments, got.UpdatedAt)
		}
		by := switchboard.RunContext{RunID: "bob-run", ParentRunID: "run-t1", RootRunID: "root-t1", AgentID: "bob"}
		done, err := s.Finish(t.Context(), "t1", switchboard.TaskDone, "42", by, base.Add(time.Hour))
		noErr(t, "complete", err)
		if done.Status != switchboard.TaskDone || done.Result != "42" || done.FinishedBy != by || len(done.Comments) != 2 {
			t.Fatalf("done = %+v", done)
		}
		_, err = s.Finish(t.Context(), "t1", switchboard.TaskDone, "43", by, base.Add(2*time.Hour))
		wantCode(t, "complete twice", err, switchboard.ECONFLICT)
		_, err = s.Finish(t.Context(), "t1", switchboard.TaskBlocked, "stuck", by, base.Add(2*time.Hour))
		wantCode(t, "block a done task", err, switchboard.ECONFLICT)
		_, err = s.Comment(t.Context(), "t1", switchboard.TaskComment{By: "ada", Text: "thanks", At: base.Add(2 * time.Hour)})
		wantCode(t, "comment on a done task", err, switchboard.ECONFLICT)
		again, _ := s.Get(t.Context(), "t1")
		if again.Result != "42" {
			t.Fatalf("result = %q after refused writes, want 42", again.Result)
		}
		_, err = s.Finish(t.Context(), "nope", switchboard.TaskDone, "x", by, base)
		wantCode(t, "complete unknown", err, switchboard.ENOTFOUND)
		_, err = s.Comment(t.Context(), "nope", switchboard.TaskComment{By: "ada", Text: "x", At: base})
		wantCode(t, "comment unknown", err, switchboard.ENOTFOUND)
	})

	t.Run("block once, then complete", func(t *testing.T) {
		s := newStore(t)
		noErr(t, "create", s.Create(t.Context(), task("t1", "ada", "bob", base)))
		by := switchboard.RunContext{RunID: "bob-run", RootRunID: "root-t1", AgentID: "bob"}
		b, err := s.Finish(t.Context(), "t1", switchboard.TaskBlocked, "no access", by, base.Add(time.Minute))
		noErr(t, "block", err)
		if b.Status != switchboard.TaskBlocked || b.Blocker != "no access" {
			t.Fatalf("blocked = %+v", b)
		}
		_, err = s.Finish(t.Context(), "t1", switchboard.TaskBlocked, "still", by, base.Add(2*time.Minute))
		wantCode(t, "block twice", err, switchboard.ECONFLICT)
		d, err := s.Finish(t.Context(), "t1", switchboard.TaskDone, "found a way", by, base.Add(3*time.Minute))
		noErr(t, "complete a blocked task", err)
		if d.Status != switchboard.TaskDone || d.Blocker != "no access" || d.Result != "found a way" {
			t.Fatalf("done = %+v", d)
		}
	})

	t.Run("racing completions have one winner", func(t *testing.T) {
		s := newStore(t)
		noErr(t, "create", s.Create(t.Context(), task("t1", "ada", "bob", base)))
		const n = 8
		errs := make([]error, n)
		concurrently(n, func(i int) {
			_, errs[i] = s.Finish(t.Context(), "t1", switchboard.TaskDone, fmt.Sprint("result ", i),
				switchboard.RunContext{RunID: fmt.Sprint("run", i), RootRunID: "r", AgentID: "bob"}, base.Add(time.Minute))
		})
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("completions %d and %d both won", won, i)
			case err == nil:
				won = i
			default:
				wantCode(t, "loser", err, switchboard.ECONFLICT)
			}
		}
		got, _ := s.Get(t.Context(), "t1")
		if won < 0 || got.Result != fmt.Sprint("result ", won) {
			t.Fatalf("winner %d, stored result %q", won, got.Result)
		}
	})

	t.Run("listings by assignee and creator, newest first, with status", func(t *testing.T) {
		s := newStore(t)
		for i, tk := range []switchboard.Task{
			task("a1", "ada", "bob", base),
			task("a2", "ada", "cyd", base.Add(time.Minute)),
			task("a3", "cyd", "bob", base.Add(2*time.Minute)),
			task("a4", switchboard.HumanParty, "bob", base.Add(3*time.Minute)),
		} {
			noErr(t, fmt.Sprint("create ", i), s.Create(t.Context(), tk))
		}
		_, err := s.Finish(t.Context(), "a3", switchboard.TaskDone, "ok", switchboard.RunContext{RunID: "x", RootRunID: "x"}, base.Add(time.Hour))
		noErr(t, "finish a3", err)
		for _, c := range []struct {
			name string
			q    switchboard.TaskQuery
			want string
		}{
			{"bob's", switchboard.TaskQuery{Party: "bob", Role: switchboard.TaskAssignedTo}, "a4,a3,a1"},
			{"bob's open", switchboard.TaskQuery{Party: "bob", Role: switchboard.TaskAssignedTo, Status: switchboard.TaskOpen}, "a4,a1"},
			{"bob's done", switchboard.TaskQuery{Party: "bob", Role: switchboard.TaskAssignedTo, Status: switchboard.TaskDone}, "a3"},
			{"ada gave", switchboard.TaskQuery{Party: "ada", Role: switchboard.TaskCreatedBy}, "a2,a1"},
			{"the human gave", switchboard.TaskQuery{Party: switchboard.HumanParty, Role: switchboard.TaskCreatedBy}, "a4"},
			{"limit", switchboard.TaskQuery{Party: "bob", Role: switchboard.TaskAssignedTo, Limit: 2}, "a4,a3"},
			{"limit with status", switchboard.TaskQuery{Party: "bob", Role: switchboard.TaskAssignedTo, Status: switchboard.TaskOpen, Limit: 1}, "a4"},
			{"nobody's", switchboard.TaskQuery{Party: "zed", Role: switchboard.TaskCreatedBy}, ""},
		} {
			got, err := s.List(t.Context(), c.q)
			noErr(t, c.name, err)
			if ids := taskIDs(got); ids != c.want {
				t.Errorf("%s: got [%s], want [%s]", c.name, ids, c.want)
			}
		}
		_, err = s.List(t.Context(), switchboard.TaskQuery{Party: "bob", Role: "owner"})
		wantCode(t, "bad role", err, switchboard.EINVALID)
	})

	t.Run("watchdog: open tasks older than the cutoff, claimed once", func(t *testing.T) {
		s := newStore(t)
		for _, tk := range []switchboard.Task{
			task("old1", "ada", "bob", base),
			task("old2", "ada", "bob", base.Add(time.Minute)),
			task("oldblocked", "ada", "bob", base.Add(2*time.Minute)),
			task("young", "ada", "bob", base.Add(48*time.Hour)),
		} {
			noErr(t, "create "+tk.ID, s.Create(t.Context(), tk))
		}
		_, err := s.Finish(t.Context(), "oldblocked", switchboard.TaskBlocked, "x", switchboard.RunContext{RunID: "x", RootRunID: "x"}, base.Add(time.Hour))
		noErr(t, "block", err)
		cutoff := base.Add(24 * time.Hour)
		due, err := s.OpenSince(t.Context(), cutoff, 0)
		noErr(t, "open since", err)
		if ids := taskIDs(due); ids != "old1,old2" {
			t.Fatalf("due = [%s], want [old1,old2]", ids)
		}
		at := base.Add(25 * time.Hour)
		first, err := s.ClaimWatchdog(t.Context(), "old1", at)
		noErr(t, "claim", err)
		second, err := s.ClaimWatchdog(t.Context(), "old1", at.Add(time.Minute))
		noErr(t, "claim again", err)
		if !first || second {
			t.Fatalf("claims = %v, %v; want true, false", first, second)
		}
		if blocked, _ := s.ClaimWatchdog(t.Context(), "oldblocked", at); blocked {
			t.Fatal("a blocked task was claimed by the watchdog")
		}
		due, _ = s.OpenSince(t.Context(), cutoff, 0)
		if ids := taskIDs(due); ids != "old2" {
			t.Fatalf("due after claim = [%s], want [old2]", ids)
		}
		// Giving the claim back (the notice failed) makes it due again;
		// giving back someone else's claim changes nothing.
		noErr(t, "release other", s.ReleaseWatchdog(t.Context(), "old1", at.Add(time.Hour)))
		if again, _ := s.ClaimWatchdog(t.Context(), "old1", at); again {
			t.Fatal("a foreign release gave the claim back")
		}
		noErr(t, "release", s.ReleaseWatchdog(t.Context(), "old1", at))
		due, _ = s.OpenSince(t.Context(), cutoff, 0)
		if ids := taskIDs(due); ids != "old1,old2" {
			t.Fatalf("due after release = [%s], want [old1,old2]", ids)
		}
		// A task finished after its claim leaves the index for good.
		_, err = s.Finish(t.Context(), "old2", switchboard.TaskDone, "ok", switchboard.RunContext{RunID: "x", RootRunID: "x"}, at)
		noErr(t, "finish old2", err)
		due, _ = s.OpenSince(t.Context(), cutoff, 1)
		if ids := taskIDs(due); ids != "old1" {
			t.Fatalf("due after finish = [%s], want [old1]", ids)
		}
	})

	t.Run("deferred wakes: oldest first, taken once, not in the party listings", func(t *testing.T) {
		s := newStore(t)
		noErr(t, "create", s.Create(t.Context(), task("t1", "ada", "bob", base)))
		for i, id := range []string{"w2", "w1"} {
			noErr(t, "defer "+id, s.DeferWake(t.Context(), switchboard.DeferredWake{ID: id, TaskID: "t1", AgentID: "bob",
				Job: `{"agentId":"bob"}`, Notice: id == "w2", At: base.Add(time.Duration(2-i) * time.Minute)}))
		}
		got, err := s.DeferredWakes(t.Context(), 0)
		noErr(t, "list", err)
		if len(got) != 2 || got[0].ID != "w1" || got[1].ID != "w2" || got[0].Job != `{"agentId":"bob"}` || got[0].TaskID != "t1" ||
			got[0].AgentID != "bob" || !got[0].At.Equal(base.Add(time.Minute)) || got[0].Notice || !got[1].Notice {
			t.Fatalf("deferred = %+v, want w1 then w2", got)
		}
		if one, _ := s.DeferredWakes(t.Context(), 1); len(one) != 1 || one[0].ID != "w1" {
			t.Errorf("limit 1 = %+v", one)
		}
		took, errs := race(5, func(int) (bool, bool, error) {
			ok, err := s.TakeWake(t.Context(), "w1")
			return ok, ok, err
		})
		if len(errs) > 0 || len(took) != 1 {
			t.Fatalf("w1 taken %d times (errors %v), want once", len(took), errs)
		}
		got, _ = s.DeferredWakes(t.Context(), 0)
		if len(got) != 1 || got[0].ID != "w2" {
			t.Fatalf("after take = %+v, want w2", got)
		}
		listed, _ := s.List(t.Context(), switchboard.TaskQuery{Party: "bob", Role: switchboard.TaskAssignedTo})
		if taskIDs(listed) != "t1" {
			t.Errorf("bob's tasks = [%s], want only t1", taskIDs(listed))
		}
	})
}
