// Package approvalstest is the contract of approvals.Store: the documented
// errors, the compare-and-set Transition (exactly one of many concurrent
// deciders wins), SetNotice beside a decision, and ListOpen. The DynamoDB
// adapter (on dynalite) and the in-memory fake both run it:
//
//	func TestApprovalStore(t *testing.T) {
//		approvalstest.RunStore(t, func(t *testing.T) approvals.Store { return newStore(t).Approvals() })
//	}
//
// newStore must return an empty store for every call.
package approvalstest

import (
	"encoding/json"
	"reflect"
	"sync"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

// base has all nine fractional digits in use, so a store that drops
// precision fails; cet checks that times come back in UTC.
var (
	base = time.Date(2026, 3, 14, 9, 26, 53, 589793238, time.UTC)
	cet  = time.FixedZone("CET", 3600)
)

// Sample is a valid new approval created at created (any zone) with ttl.
func Sample(id string, created time.Time, ttl time.Duration) approvals.Approval {
	args := json.RawMessage(`{"path": "reports/q1.md", "n": 1.50}`)
	hash, err := approvals.ArgsHash("Nextcloud", "delete", args)
	if err != nil {
		panic(err)
	}
	return approvals.Approval{
		ID: id, AgentID: "hermes", Tool: "Nextcloud", Action: "delete",
		Args: args, ArgsHash: hash,
		Run:    sb.RunContext{RunID: "run-" + id, ParentRunID: "parent-" + id, RootRunID: "root-" + id, AgentID: "hermes"},
		Origin: sb.OriginAgent, Reason: "the report is outdated",
		Context:   json.RawMessage(`{"replyTo":{"roomId":"r1"}}`),
		CreatedAt: created, ExpiresAt: created.Add(ttl).Truncate(time.Second),
		Status: approvals.StatusPending,
	}
}

// utc is a as a store returns it: times in UTC.
func utc(a approvals.Approval) approvals.Approval {
	a.CreatedAt, a.ExpiresAt = a.CreatedAt.UTC(), a.ExpiresAt.UTC()
	if !a.DecidedAt.IsZero() {
		a.DecidedAt = a.DecidedAt.UTC()
	}
	return a
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := sb.ErrorCode(err); got != code {
		t.Fatalf("%s: error code %q (err %v), want %q", what, got, err, code)
	}
}

func noErr(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func same(t *testing.T, what string, got, want approvals.Approval) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		t.Fatalf("%s:\n got  %s\n want %s", what, gj, wj)
	}
}

// RunStore checks the approvals.Store contract.
func RunStore(t *testing.T, newStore func(t *testing.T) approvals.Store) {
	t.Run("CreateGetRoundTrip", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		a := Sample("Ab-_0123456789abcdefgh", base.In(cet), 24*time.Hour)
		noErr(t, "Create", s.Create(ctx, a))
		got, err := s.Get(ctx, a.ID)
		noErr(t, "Get", err)
		same(t, "Get after Create", got, utc(a))
	})

	t.Run("CreateTwiceConflicts", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		a := Sample("dup", base, time.Hour)
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
		for name, mod := range map[string]func(*approvals.Approval){
			"id with a slash":  func(a *approvals.Approval) { a.ID = "a/b" },
			"id too long":      func(a *approvals.Approval) { a.ID = "abcdefghijklmnopqrstuvw" },
			"no agent":         func(a *approvals.Approval) { a.AgentID = "" },
			"not pending":      func(a *approvals.Approval) { a.Status = approvals.StatusApproved },
			"no hash":          func(a *approvals.Approval) { a.ArgsHash = "" },
			"args not JSON":    func(a *approvals.Approval) { a.Args = json.RawMessage(`{`) },
			"context not JSON": func(a *approvals.Approval) { a.Context = json.RawMessage(`nope`) },
			"no expiry":        func(a *approvals.Approval) { a.ExpiresAt = time.Time{} },
		} {
			a := Sample("bad", base, time.Hour)
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
		a := Sample("t1", base, time.Hour)
		noErr(t, "Create", s.Create(ctx, a))
		decided := base.Add(time.Minute).In(cet)
		exec := sb.RunContext{RunID: "exec", ParentRunID: a.Run.RunID, RootRunID: a.Run.RootRunID, AgentID: "hermes"}
		got, err := s.Transition(ctx, a.ID, approvals.StatusPending, approvals.StatusApproved, func(x *approvals.Approval) {
			x.DecidedBy, x.DecidedAt, x.ExecRun = "telegram:42", decided, exec
			// A patch cannot move these:
			x.ID, x.ExpiresAt, x.CreatedAt, x.Status = "other", base, base, approvals.StatusDenied
		})
		noErr(t, "Transition pending→approved", err)
		want := utc(a)
		want.Status, want.DecidedBy, want.DecidedAt, want.ExecRun = approvals.StatusApproved, "telegram:42", decided.UTC(), exec
		same(t, "Transition result", got, want)
		stored, err := s.Get(ctx, a.ID)
		noErr(t, "Get", err)
		same(t, "Get after Transition", stored, want)

		_, err = s.Transition(ctx, a.ID, approvals.StatusPending, approvals.StatusDenied, nil)
		wantCode(t, "second decision", err, sb.ECONFLICT)

		res := sb.OK(map[string]any{"deleted": "reports/q1.md", "size": 12})
		got, err = s.Transition(ctx, a.ID, approvals.StatusApproved, approvals.StatusExecuted, func(x *approvals.Approval) { x.Result = res })
		noErr(t, "Transition approved→executed", err)
		if got.Status != approvals.StatusExecuted || got.Result.Status != "ok" || got.Result.Data["deleted"] != "reports/q1.md" ||
			got.Result.Data["size"] != float64(12) || got.DecidedBy != "telegram:42" {
			t.Fatalf("after execution: %+v", got)
		}
		_, err = s.Transition(ctx, a.ID, approvals.StatusApproved, approvals.StatusFailed, nil)
		wantCode(t, "second result", err, sb.ECONFLICT)
	})

	t.Run("TransitionErrors", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		_, err := s.Transition(ctx, "nope", approvals.StatusPending, approvals.StatusApproved, nil)
		wantCode(t, "unknown id", err, sb.ENOTFOUND)
		a := Sample("t2", base, time.Hour)
		noErr(t, "Create", s.Create(ctx, a))
		for _, step := range [][2]approvals.Status{
			{approvals.StatusPending, approvals.StatusExecuted},
			{approvals.StatusPending, approvals.StatusPending},
			{approvals.StatusDenied, approvals.StatusApproved},
			{approvals.StatusExpired, approvals.StatusPending},
			{"bogus", approvals.StatusApproved},
		} {
			_, err := s.Transition(ctx, a.ID, step[0], step[1], nil)
			wantCode(t, string(step[0])+"→"+string(step[1]), err, sb.EINVALID)
		}
		_, err = s.Transition(ctx, a.ID, approvals.StatusApproved, approvals.StatusExecuted, nil)
		wantCode(t, "from a status it is not in", err, sb.ECONFLICT)
		got, err := s.Get(ctx, a.ID)
		noErr(t, "Get", err)
		same(t, "after refused transitions", got, utc(a))
	})

	t.Run("ConcurrentDecidersOneWins", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		a := Sample("race", base, time.Hour)
		noErr(t, "Create", s.Create(ctx, a))
		const n = 10
		var wg sync.WaitGroup
		results := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				to := approvals.StatusApproved
				if i%2 == 1 {
					to = approvals.StatusDenied
				}
				_, results[i] = s.Transition(ctx, a.ID, approvals.StatusPending, to, func(x *approvals.Approval) {
					x.DecidedBy = "decider-" + string(rune('0'+i))
				})
			}()
		}
		wg.Wait()
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
		a := Sample("n1", base, time.Hour)
		noErr(t, "Create", s.Create(ctx, a))
		notice := json.RawMessage(`{"chatId":"123","messageId":77}`)
		got, err := s.SetNotice(ctx, a.ID, notice)
		noErr(t, "SetNotice", err)
		if string(got.Notice) != string(notice) || got.Status != approvals.StatusPending {
			t.Fatalf("SetNotice returned notice %s status %s", got.Notice, got.Status)
		}
		// A decision after the notice keeps it; a notice after a decision keeps the decision.
		b := Sample("n2", base, time.Hour)
		noErr(t, "Create", s.Create(ctx, b))
		_, err = s.Transition(ctx, b.ID, approvals.StatusPending, approvals.StatusDenied, func(x *approvals.Approval) { x.DecidedBy = "link" })
		noErr(t, "deny", err)
		got, err = s.SetNotice(ctx, b.ID, notice)
		noErr(t, "SetNotice after the decision", err)
		if got.Status != approvals.StatusDenied || got.DecidedBy != "link" || string(got.Notice) != string(notice) {
			t.Fatalf("after SetNotice on a denied approval: status %s by %q notice %s", got.Status, got.DecidedBy, got.Notice)
		}
		got, err = s.Transition(ctx, a.ID, approvals.StatusPending, approvals.StatusApproved, nil)
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
		late := Sample("late", base, 3*time.Hour)
		early := Sample("early", base, time.Hour)
		mid := Sample("mid", base, 2*time.Hour)
		denied := Sample("denied", base, 30*time.Minute)
		done := Sample("done", base, 30*time.Minute)
		for _, a := range []approvals.Approval{late, early, mid, denied, done} {
			noErr(t, "Create "+a.ID, s.Create(ctx, a))
		}
		_, err = s.Transition(ctx, mid.ID, approvals.StatusPending, approvals.StatusApproved, nil)
		noErr(t, "approve mid", err)
		_, err = s.Transition(ctx, denied.ID, approvals.StatusPending, approvals.StatusDenied, nil)
		noErr(t, "deny", err)
		_, err = s.Transition(ctx, done.ID, approvals.StatusPending, approvals.StatusApproved, nil)
		noErr(t, "approve done", err)
		_, err = s.Transition(ctx, done.ID, approvals.StatusApproved, approvals.StatusFailed, nil)
		noErr(t, "fail done", err)
		got, err = s.ListOpen(ctx)
		noErr(t, "ListOpen", err)
		var ids []string
		for _, a := range got {
			ids = append(ids, a.ID+":"+string(a.Status))
		}
		want := []string{"early:pending", "mid:approved", "late:pending"}
		if !reflect.DeepEqual(ids, want) {
			t.Fatalf("ListOpen: %v, want %v", ids, want)
		}
		same(t, "listed approval", got[0], utc(early))
	})
}
