package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// SampleApproval is a valid new approval created at created (any zone) with ttl.
func SampleApproval(id string, created time.Time, ttl time.Duration) sb.Approval {
	args := json.RawMessage(`{"path": "reports/q1.md", "n": 1.50}`)
	// Any hex SHA-256 will do: a store checks the hash's form, not how it
	// was computed.
	sum := sha256.Sum256(args)
	hash := hex.EncodeToString(sum[:])
	return sb.Approval{
		ID: id, AgentID: "hermes", Tool: "Nextcloud", Action: "delete",
		Args: args, ArgsHash: hash,
		// A run a task woke: its depth and payer come back with it, so
		// that the approved call and its follow-up stay bounded and charged.
		Run: sb.RunContext{RunID: "run-" + id, ParentRunID: "parent-" + id, RootRunID: "root-" + id, AgentID: "hermes",
			TaskHops: 2, PaidBy: "atlas"},
		Origin: sb.OriginAgent, Reason: "the report is outdated",
		ReplyTo:   &sb.ReplyTo{RoomID: "r1", RoomName: "finanz-team", RoomType: "p", ThreadID: "th1"},
		CreatedAt: created, ExpiresAt: created.Add(ttl).Truncate(time.Second),
		Status: sb.ApprovalPending,
	}
}

// utcApproval is a as a store returns it: times in UTC.
func utcApproval(a sb.Approval) sb.Approval {
	a.CreatedAt, a.ExpiresAt = a.CreatedAt.UTC(), a.ExpiresAt.UTC()
	if !a.DecidedAt.IsZero() {
		a.DecidedAt = a.DecidedAt.UTC()
	}
	if !a.StartedAt.IsZero() {
		a.StartedAt = a.StartedAt.UTC()
	}
	return a
}

func sameApproval(t *testing.T, what string, got, want sb.Approval) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		t.Fatalf("%s:\n got  %s\n want %s", what, gj, wj)
	}
}

// RunApprovalStore checks the switchboard.ApprovalStore contract: the
// documented errors, the compare-and-set Transition (exactly one of many
// concurrent deciders wins), SetNotice beside a decision, and ListOpen.
func RunApprovalStore(t *testing.T, newStore func(t *testing.T) sb.ApprovalStore) {
	t.Run("CreateGetRoundTrip", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		a := SampleApproval("Ab-_0123456789abcdefgh", base.In(cet), 24*time.Hour)
		noErr(t, "Create", s.Create(ctx, a))
		got, err := s.Get(ctx, a.ID)
		noErr(t, "Get", err)
		sameApproval(t, "Get after Create", got, utcApproval(a))
	})

	// A task token (an execution waits for the decision) comes back as it
	// went in, through a decision too.
	t.Run("TaskTokenRoundTrip", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		a := SampleApproval("with-token", base, time.Hour)
		a.TaskToken = "AQCEAAAAKgAAAAMAAAAA-token+/="
		noErr(t, "Create", s.Create(ctx, a))
		got, err := s.Get(ctx, a.ID)
		noErr(t, "Get", err)
		sameApproval(t, "Get", got, utcApproval(a))
		got, err = s.Transition(ctx, a.ID, sb.ApprovalPending, sb.ApprovalApproved, func(x *sb.Approval) { x.DecidedBy = "link" })
		noErr(t, "Transition", err)
		if got.TaskToken != a.TaskToken {
			t.Errorf("TaskToken after a decision = %q, want %q", got.TaskToken, a.TaskToken)
		}
	})

	// The reply destination is typed: every field comes back as it went
	// in, whichever channel, through decisions too; none is none.
	t.Run("ReplyToRoundTrip", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		for id, to := range map[string]*sb.ReplyTo{
			"rc-thread": {RoomID: "r1", RoomName: "finanz-team", RoomType: "p", ThreadID: "th1"},
			"rc-room":   {RoomID: "r2", RoomName: "general", RoomType: "c"},
			"telegram":  {TelegramChatID: "-100123456789"},
			"none":      nil,
		} {
			a := SampleApproval(id, base, time.Hour)
			a.ReplyTo = to
			noErr(t, "Create "+id, s.Create(ctx, a))
			got, err := s.Get(ctx, id)
			noErr(t, "Get "+id, err)
			sameApproval(t, "Get "+id, got, utcApproval(a))
			got, err = s.Transition(ctx, id, sb.ApprovalPending, sb.ApprovalDenied, func(x *sb.Approval) { x.DecidedBy = "link" })
			noErr(t, "Transition "+id, err)
			if !reflect.DeepEqual(got.ReplyTo, to) {
				t.Errorf("%s: ReplyTo after a decision = %+v, want %+v", id, got.ReplyTo, to)
			}
		}
	})

	t.Run("CreateTwiceConflicts", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		a := SampleApproval("dup", base, time.Hour)
		noErr(t, "first Create", s.Create(ctx, a))
		b := a
		b.Reason = "another"
		wantCode(t, "second Create", s.Create(ctx, b), sb.ECONFLICT)
		got, err := s.Get(ctx, a.ID)
		noErr(t, "Get", err)
		if got.Reason != a.Reason {
			t.Fatalf("reason %q after a refused Create, want %q", got.Reason, a.Reason)
		}
		open, err := s.ListOpen(ctx)
		noErr(t, "ListOpen", err)
		if len(open) != 1 {
			t.Fatalf("ListOpen after a repeated Create: %d approvals, want 1", len(open))
		}
	})

	t.Run("CreateInvalid", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		for name, mod := range map[string]func(*sb.Approval){
			"id with a slash": func(a *sb.Approval) { a.ID = "a/b" },
			"id too long":     func(a *sb.Approval) { a.ID = "abcdefghijklmnopqrstuvw" },
			"no agent":        func(a *sb.Approval) { a.AgentID = "" },
			"not pending":     func(a *sb.Approval) { a.Status = sb.ApprovalApproved },
			"no hash":         func(a *sb.Approval) { a.ArgsHash = "" },
			"args not JSON":   func(a *sb.Approval) { a.Args = json.RawMessage(`{`) },
			"no expiry":       func(a *sb.Approval) { a.ExpiresAt = time.Time{} },
		} {
			a := SampleApproval("bad", base, time.Hour)
			mod(&a)
			wantCode(t, name, s.Create(ctx, a), sb.EINVALID)
		}
	})

	t.Run("GetUnknown", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		_, err := s.Get(ctx, "nope")
		wantCode(t, "Get unknown", err, sb.ENOTFOUND)
		_, err = s.Get(ctx, "not/an/id")
		wantCode(t, "Get malformed id", err, sb.ENOTFOUND)
	})

	t.Run("TransitionAppliesPatchOnce", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		a := SampleApproval("t1", base, time.Hour)
		noErr(t, "Create", s.Create(ctx, a))
		decided := base.Add(time.Minute).In(cet)
		exec := sb.RunContext{RunID: "exec", ParentRunID: a.Run.RunID, RootRunID: a.Run.RootRunID, AgentID: "hermes"}
		got, err := s.Transition(ctx, a.ID, sb.ApprovalPending, sb.ApprovalApproved, func(x *sb.Approval) {
			x.DecidedBy, x.DecidedAt, x.ExecRun = "telegram:42", decided, exec
			// A patch cannot move these:
			x.ID, x.ExpiresAt, x.CreatedAt, x.Status = "other", base, base, sb.ApprovalDenied
		})
		noErr(t, "Transition pending→approved", err)
		want := utcApproval(a)
		want.Status, want.DecidedBy, want.DecidedAt, want.ExecRun = sb.ApprovalApproved, "telegram:42", decided.UTC(), exec
		sameApproval(t, "Transition result", got, want)
		stored, err := s.Get(ctx, a.ID)
		noErr(t, "Get", err)
		sameApproval(t, "Get after Transition", stored, want)

		_, err = s.Transition(ctx, a.ID, sb.ApprovalPending, sb.ApprovalDenied, nil)
		wantCode(t, "second decision", err, sb.ECONFLICT)

		_, err = s.Transition(ctx, a.ID, sb.ApprovalApproved, sb.ApprovalExecuted, nil)
		wantCode(t, "approved→executed skips executing", err, sb.EINVALID)
		started := decided.Add(time.Second)
		got, err = s.Transition(ctx, a.ID, sb.ApprovalApproved, sb.ApprovalExecuting, func(x *sb.Approval) { x.StartedAt = started })
		noErr(t, "Transition approved→executing", err)
		want.Status, want.StartedAt = sb.ApprovalExecuting, started.UTC()
		sameApproval(t, "Transition to executing", got, want)
		stored, err = s.Get(ctx, a.ID)
		noErr(t, "Get executing", err)
		sameApproval(t, "Get executing", stored, want)
		_, err = s.Transition(ctx, a.ID, sb.ApprovalApproved, sb.ApprovalExecuting, nil)
		wantCode(t, "second start", err, sb.ECONFLICT)

		res := sb.OK(map[string]any{"deleted": "reports/q1.md", "size": 12})
		got, err = s.Transition(ctx, a.ID, sb.ApprovalExecuting, sb.ApprovalExecuted, func(x *sb.Approval) { x.Result = res })
		noErr(t, "Transition executing→executed", err)
		if got.Status != sb.ApprovalExecuted || got.Result.Status != "ok" || got.Result.Data["deleted"] != "reports/q1.md" ||
			got.Result.Data["size"] != float64(12) || got.DecidedBy != "telegram:42" || !got.StartedAt.Equal(started) {
			t.Fatalf("after execution: %+v", got)
		}
		_, err = s.Transition(ctx, a.ID, sb.ApprovalExecuting, sb.ApprovalFailed, nil)
		wantCode(t, "second result", err, sb.ECONFLICT)
	})

	t.Run("TransitionErrors", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		_, err := s.Transition(ctx, "nope", sb.ApprovalPending, sb.ApprovalApproved, nil)
		wantCode(t, "unknown id", err, sb.ENOTFOUND)
		a := SampleApproval("t2", base, time.Hour)
		noErr(t, "Create", s.Create(ctx, a))
		for _, step := range [][2]sb.ApprovalStatus{
			{sb.ApprovalPending, sb.ApprovalExecuted},
			{sb.ApprovalPending, sb.ApprovalPending},
			{sb.ApprovalDenied, sb.ApprovalApproved},
			{sb.ApprovalExpired, sb.ApprovalPending},
			{"bogus", sb.ApprovalApproved},
			{sb.ApprovalExecuting, sb.ApprovalApproved},
			{sb.ApprovalPending, sb.ApprovalExecuting},
		} {
			_, err := s.Transition(ctx, a.ID, step[0], step[1], nil)
			wantCode(t, string(step[0])+"→"+string(step[1]), err, sb.EINVALID)
		}
		_, err = s.Transition(ctx, a.ID, sb.ApprovalApproved, sb.ApprovalExecuting, nil)
		wantCode(t, "from a status it is not in", err, sb.ECONFLICT)
		got, err := s.Get(ctx, a.ID)
		noErr(t, "Get", err)
		sameApproval(t, "after refused transitions", got, utcApproval(a))
	})

	t.Run("ConcurrentDecidersOneWins", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		a := SampleApproval("race", base, time.Hour)
		noErr(t, "Create", s.Create(ctx, a))
		const n = 10
		results := make([]error, n)
		concurrently(n, func(i int) {
			to := sb.ApprovalApproved
			if i%2 == 1 {
				to = sb.ApprovalDenied
			}
			_, results[i] = s.Transition(ctx, a.ID, sb.ApprovalPending, to, func(x *sb.Approval) {
				x.DecidedBy = "decider-" + string(rune('0'+i))
			})
		})
		wins := 0
		for i, err := range results {
			switch sb.ErrorCode(err) {
			case "":
				wins++
			case sb.ECONFLICT:
			default:
				t.Errorf("decider %d: %v", i, err)
			}
		}
		if wins != 1 {
			t.Fatalf("%d deciders won, want exactly 1", wins)
		}
	})

	t.Run("SetNoticeKeepsDecision", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		_, err := s.SetNotice(ctx, "nope", json.RawMessage(`{}`))
		wantCode(t, "SetNotice unknown", err, sb.ENOTFOUND)
		a := SampleApproval("n1", base, time.Hour)
		noErr(t, "Create", s.Create(ctx, a))
		notice := json.RawMessage(`{"chatId":"123","messageId":77}`)
		got, err := s.SetNotice(ctx, a.ID, notice)
		noErr(t, "SetNotice", err)
		if string(got.Notice) != string(notice) || got.Status != sb.ApprovalPending {
			t.Fatalf("SetNotice returned notice %s status %s", got.Notice, got.Status)
		}
		// A decision after the notice keeps it; a notice after a decision keeps the decision.
		b := SampleApproval("n2", base, time.Hour)
		noErr(t, "Create", s.Create(ctx, b))
		_, err = s.Transition(ctx, b.ID, sb.ApprovalPending, sb.ApprovalDenied, func(x *sb.Approval) { x.DecidedBy = "link" })
		noErr(t, "deny", err)
		got, err = s.SetNotice(ctx, b.ID, notice)
		noErr(t, "SetNotice after the decision", err)
		if got.Status != sb.ApprovalDenied || got.DecidedBy != "link" || string(got.Notice) != string(notice) {
			t.Fatalf("after SetNotice on a denied approval: status %s by %q notice %s", got.Status, got.DecidedBy, got.Notice)
		}
		got, err = s.Transition(ctx, a.ID, sb.ApprovalPending, sb.ApprovalApproved, nil)
		noErr(t, "approve", err)
		if string(got.Notice) != string(notice) {
			t.Fatalf("notice after a transition: %s", got.Notice)
		}
	})

	t.Run("ListOpenPendingAndApprovedByExpiry", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		got, err := s.ListOpen(ctx)
		noErr(t, "ListOpen empty", err)
		if got == nil || len(got) != 0 {
			t.Fatalf("ListOpen of an empty store: %#v, want an empty list", got)
		}
		late := SampleApproval("late", base, 3*time.Hour)
		early := SampleApproval("early", base, time.Hour)
		mid := SampleApproval("mid", base, 2*time.Hour)
		denied := SampleApproval("denied", base, 30*time.Minute)
		done := SampleApproval("done", base, 30*time.Minute)
		running := SampleApproval("running", base, 150*time.Minute)
		for _, a := range []sb.Approval{late, early, mid, denied, done, running} {
			noErr(t, "Create "+a.ID, s.Create(ctx, a))
		}
		for _, step := range []struct {
			what, id string
			from, to sb.ApprovalStatus
		}{
			{"approve running", running.ID, sb.ApprovalPending, sb.ApprovalApproved},
			{"start running", running.ID, sb.ApprovalApproved, sb.ApprovalExecuting},
			{"approve mid", mid.ID, sb.ApprovalPending, sb.ApprovalApproved},
			{"deny", denied.ID, sb.ApprovalPending, sb.ApprovalDenied},
			{"approve done", done.ID, sb.ApprovalPending, sb.ApprovalApproved},
			{"fail done", done.ID, sb.ApprovalApproved, sb.ApprovalFailed},
		} {
			_, err = s.Transition(ctx, step.id, step.from, step.to, nil)
			noErr(t, step.what, err)
		}
		got, err = s.ListOpen(ctx)
		noErr(t, "ListOpen", err)
		var ids []string
		for _, a := range got {
			ids = append(ids, a.ID+":"+string(a.Status))
		}
		want := []string{"early:pending", "mid:approved", "running:executing", "late:pending"}
		if !reflect.DeepEqual(ids, want) {
			t.Fatalf("ListOpen: %v, want %v", ids, want)
		}
		sameApproval(t, "listed approval", got[0], utcApproval(early))
	})
}
