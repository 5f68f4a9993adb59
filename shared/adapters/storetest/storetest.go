// Package storetest is the contract every implementation of the domain's
// stores must meet: the documented errors, orderings and conditional
// semantics of switchboard.AuditStore, ReceiptStore, JobStore, Markers,
// Counters, KV, Leases and ApprovalStore. The DynamoDB adapter (on dynalite) and the
// in-memory fakes both run it, each from its own package's tests:
//
//	func TestAuditStore(t *testing.T) {
//		storetest.RunAuditStore(t, func(t *testing.T) switchboard.AuditStore { return newStore(t) })
//	}
//
// newStore must return an empty store for every call. RunCounters, RunKV
// and RunLeases also pass the clock the store must read (its Now), so that
// expiry is tested by moving a Clock, never by sleeping.
package storetest

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// base is a fixed instant with all nine fractional digits in use, so that a
// store that drops precision fails.
var base = time.Date(2026, 3, 14, 9, 26, 53, 589793238, time.UTC)

// cet checks that stores normalise other zones (times come back in UTC).
var cet = time.FixedZone("CET", 3600)

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := switchboard.ErrorCode(err); got != code {
		t.Fatalf("%s: error code %q (err %v), want %q", what, got, err, code)
	}
}

func noErr(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// ----- AuditStore -----

func auditEntry(id, agent, root string, at time.Time) switchboard.AuditEntry {
	return switchboard.AuditEntry{
		ID: id, At: at, AgentID: agent,
		Run:  switchboard.RunContext{RunID: "run-" + id, ParentRunID: "parent-" + id, RootRunID: root, AgentID: agent},
		Tool: "nextcloud", Action: "upload",
		Args:     `{"path":"reports/` + id + `.md"}`,
		Decision: switchboard.DecisionAuto, Outcome: switchboard.OutcomeOK,
		Error: "", Duration: 1234567 * time.Nanosecond,
	}
}

// utcEntry is e as a store returns it: times in UTC.
func utcEntry(e switchboard.AuditEntry) switchboard.AuditEntry { e.At = e.At.UTC(); return e }

// RunAuditStore checks the AuditStore contract.
func RunAuditStore(t *testing.T, newStore func(t *testing.T) switchboard.AuditStore) {
	t.Run("AppendTwiceConflicts", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		e := auditEntry("e1", "alice", "root1", base)
		noErr(t, "first append", s.Append(ctx, e))
		wantCode(t, "second append of the same entry", s.Append(ctx, e), switchboard.ECONFLICT)
		got, err := s.ByRoot(ctx, "root1")
		noErr(t, "ByRoot", err)
		if len(got) != 1 {
			t.Fatalf("ByRoot after a repeated append: %d entries, want 1", len(got))
		}
	})

	t.Run("ByRootOneChainOldestFirstAcrossAgents", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		// Appended out of order, interleaving two agents and two chains.
		chain := []switchboard.AuditEntry{
			auditEntry("a3", "alice", "root1", base.Add(3*time.Second)),
			auditEntry("b1", "bob", "root1", base.Add(1*time.Second).In(cet)),
			auditEntry("a0", "alice", "root1", base),
			auditEntry("b2", "bob", "root1", base.Add(2*time.Second+time.Nanosecond)),
		}
		other := []switchboard.AuditEntry{
			auditEntry("x1", "alice", "root2", base.Add(1500*time.Millisecond)),
			auditEntry("x2", "carol", "root2", base.Add(-time.Hour)),
		}
		for _, e := range append(append([]switchboard.AuditEntry{}, chain...), other...) {
			noErr(t, "append "+e.ID, s.Append(ctx, e))
		}
		got, err := s.ByRoot(ctx, "root1")
		noErr(t, "ByRoot", err)
		want := []switchboard.AuditEntry{utcEntry(chain[2]), utcEntry(chain[1]), utcEntry(chain[3]), utcEntry(chain[0])}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ByRoot(root1):\n got %s\nwant %s", auditIDs(got), auditIDs(want))
		}
		for i := range got {
			if !got[i].At.Equal(want[i].At) || got[i].At.Location() != time.UTC {
				t.Errorf("entry %s: At %v, want %v in UTC", got[i].ID, got[i].At, want[i].At)
			}
		}
	})

	t.Run("ByRootRoundTripsEveryField", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		e := switchboard.AuditEntry{
			ID: "full", At: base.In(cet), AgentID: "alice",
			Run:  switchboard.RunContext{RunID: "r2", ParentRunID: "r1", RootRunID: "r1", AgentID: "alice"},
			Tool: "rocketchat", Action: "send_message",
			Args:     strings.Repeat("x", switchboard.MaxAuditArgs),
			Decision: switchboard.DecisionApproved, Outcome: switchboard.OutcomeError,
			Error: "room not allowed", Duration: 90 * time.Second,
			ApprovalID: "K57yDmE8hXJFVKxbPiQe4A", DecidedBy: "telegram:123456789",
			Origin: switchboard.OriginMCP, Client: "laptop",
		}
		noErr(t, "append", s.Append(ctx, e))
		got, err := s.ByRoot(ctx, "r1")
		noErr(t, "ByRoot", err)
		if len(got) != 1 || !reflect.DeepEqual(got[0], utcEntry(e)) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, utcEntry(e))
		}
	})

	t.Run("ByRootUnknownChainIsEmpty", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		noErr(t, "append", s.Append(ctx, auditEntry("e1", "alice", "root1", base)))
		for _, root := range []string{"nope", ""} {
			got, err := s.ByRoot(ctx, root)
			noErr(t, fmt.Sprintf("ByRoot(%q)", root), err)
			if len(got) != 0 {
				t.Errorf("ByRoot(%q) = %s, want none", root, auditIDs(got))
			}
		}
	})

	t.Run("AppendNeedsKeys", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		wantCode(t, "append without id", s.Append(ctx, auditEntry("", "alice", "r", base)), switchboard.EINVALID)
		wantCode(t, "append without agent", s.Append(ctx, auditEntry("e", "", "r", base)), switchboard.EINVALID)
	})
}

func auditIDs(es []switchboard.AuditEntry) string {
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	return "[" + strings.Join(ids, " ") + "]"
}

// ----- ReceiptStore -----

func receipt(runID, agent, root string, started time.Time, cost float64, in, out int) switchboard.Receipt {
	return switchboard.Receipt{
		Run:      switchboard.RunContext{RunID: runID, RootRunID: root, AgentID: agent},
		AgentID:  agent,
		Provider: "bedrock", Model: "claude", StartedAt: started,
		Duration: 3 * time.Second, TokensIn: in, TokensOut: out,
		CostUSD: cost, Steps: 4, Outcome: "error", Reason: "model_unavailable",
	}
}

// RunReceiptStore checks the ReceiptStore contract.
func RunReceiptStore(t *testing.T, newStore func(t *testing.T) switchboard.ReceiptStore) {
	t.Run("PutTwiceConflicts", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		r := receipt("run1", "alice", "run1", base, 0.5, 10, 20)
		noErr(t, "first put", s.Put(ctx, r))
		wantCode(t, "second put of the same receipt", s.Put(ctx, r), switchboard.ECONFLICT)
		c, err := s.ChainCost(ctx, "run1")
		noErr(t, "ChainCost", err)
		if c.Runs != 1 || c.CostUSD != 0.5 {
			t.Fatalf("after a repeated put: runs %d cost %v, want 1 and 0.5", c.Runs, c.CostUSD)
		}
	})

	t.Run("ChainCostSumsOneChainAcrossAgents", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		chain := []switchboard.Receipt{
			receipt("r1", "alice", "r1", base, 0.25, 100, 10),
			receipt("r2", "bob", "r1", base.Add(time.Minute).In(cet), 0.5, 200, 20),
			receipt("r3", "alice", "r1", base.Add(2*time.Minute), 1.0, 300, 30),
		}
		other := receipt("q1", "alice", "q1", base.Add(30*time.Second), 8, 9000, 900)
		for _, r := range []switchboard.Receipt{chain[2], other, chain[0], chain[1]} {
			noErr(t, "put "+r.Run.RunID, s.Put(ctx, r))
		}
		c, err := s.ChainCost(ctx, "r1")
		noErr(t, "ChainCost", err)
		if c.Runs != 3 || c.TokensIn != 600 || c.TokensOut != 60 || c.CostUSD != 1.75 {
			t.Errorf("ChainCost(r1) = runs %d in %d out %d cost %v, want 3 600 60 1.75",
				c.Runs, c.TokensIn, c.TokensOut, c.CostUSD)
		}
		if c.RootRunID != "r1" {
			t.Errorf("RootRunID = %q, want r1", c.RootRunID)
		}
		got := map[string]switchboard.Receipt{}
		for _, r := range c.Receipts {
			got[r.Run.RunID] = r
		}
		for _, r := range chain {
			r.StartedAt = r.StartedAt.UTC()
			if !reflect.DeepEqual(got[r.Run.RunID], r) {
				t.Errorf("receipt %s:\n got %+v\nwant %+v", r.Run.RunID, got[r.Run.RunID], r)
			}
		}
		if len(c.Receipts) != 3 {
			t.Errorf("%d receipts, want 3", len(c.Receipts))
		}
	})

	t.Run("ChainCostUnknownChainIsZero", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		noErr(t, "put", s.Put(ctx, receipt("r1", "alice", "r1", base, 1, 1, 1)))
		c, err := s.ChainCost(ctx, "nope")
		noErr(t, "ChainCost", err)
		if c.Runs != 0 || c.CostUSD != 0 || c.TokensIn != 0 || c.TokensOut != 0 || len(c.Receipts) != 0 {
			t.Errorf("ChainCost(nope) = %+v, want zero", c)
		}
	})

	t.Run("AgentCostSinceIncludesTheBoundary", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		since := base
		for _, r := range []switchboard.Receipt{
			receipt("before", "alice", "x1", since.Add(-time.Nanosecond), 100, 0, 0),
			receipt("at", "alice", "x2", since.In(cet), 0.125, 0, 0),
			receipt("after", "alice", "x3", since.Add(time.Hour), 2, 0, 0),
			receipt("other-agent", "bob", "x4", since.Add(time.Hour), 50, 0, 0),
		} {
			noErr(t, "put "+r.Run.RunID, s.Put(ctx, r))
		}
		tests := []struct {
			name  string
			agent string
			since time.Time
			want  float64
		}{
			{"boundary included, earlier excluded", "alice", since, 2.125},
			{"since in another zone", "alice", since.In(cet), 2.125},
			{"one ns later drops the boundary run", "alice", since.Add(time.Nanosecond), 2},
			{"one ns earlier takes all", "alice", since.Add(-time.Nanosecond), 102.125},
			{"other agent", "bob", since, 50},
			{"unknown agent", "nobody", since, 0},
			{"nothing since", "alice", since.Add(2 * time.Hour), 0},
		}
		for _, tt := range tests {
			got, err := s.AgentCostSince(ctx, tt.agent, tt.since)
			noErr(t, tt.name, err)
			if got != tt.want {
				t.Errorf("%s: AgentCostSince(%s, %v) = %v, want %v", tt.name, tt.agent, tt.since, got, tt.want)
			}
		}
	})

	// A run paid for by another agent (a task's run, charged to the agent
	// that handed the task out) counts against the payer's budget, not
	// against the agent that ran; the chain still shows it as that agent's.
	t.Run("AgentCostSinceCountsWhatTheAgentIsChargedFor", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		own := receipt("bob-own", "bob", "h1", base, 1, 0, 0)
		paid := receipt("bob-for-alice", "bob", "a1", base.Add(time.Minute), 4, 0, 0)
		paid.Run.PaidBy, paid.Run.TaskHops = "alice", 2
		for _, r := range []switchboard.Receipt{own, paid, receipt("alice-own", "alice", "a1", base, 0.5, 0, 0)} {
			noErr(t, "put "+r.Run.RunID, s.Put(ctx, r))
		}
		for agent, want := range map[string]float64{"alice": 4.5, "bob": 1} {
			got, err := s.AgentCostSince(ctx, agent, base)
			noErr(t, agent, err)
			if got != want {
				t.Errorf("AgentCostSince(%s) = %v, want %v", agent, got, want)
			}
		}
		c, err := s.ChainCost(ctx, "a1")
		noErr(t, "ChainCost", err)
		var found bool
		for _, r := range c.Receipts {
			if r.Run.RunID == "bob-for-alice" {
				found = true
				if r.AgentID != "bob" || r.Run.AgentID != "bob" || r.Run.PaidBy != "alice" || r.Run.TaskHops != 2 {
					t.Errorf("paid receipt read back as %+v, want bob's run paid by alice at task depth 2", r)
				}
			}
		}
		if !found || c.CostUSD != 4.5 {
			t.Errorf("chain a1 = %+v, want alice's run and bob's paid one (4.5)", c)
		}
	})

	t.Run("PutNeedsKeys", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		wantCode(t, "put without run id", s.Put(ctx, receipt("", "alice", "r", base, 1, 1, 1)), switchboard.EINVALID)
		wantCode(t, "put without agent", s.Put(ctx, receipt("r", "", "r", base, 1, 1, 1)), switchboard.EINVALID)
	})
}

// ----- JobStore -----

// RunJobStore checks the JobStore contract.
func RunJobStore(t *testing.T, newStore func(t *testing.T) switchboard.JobStore) {
	t.Run("EmptyHasNoRuns", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		got, err := s.LastRuns(ctx)
		noErr(t, "LastRuns", err)
		if len(got) != 0 {
			t.Fatalf("LastRuns on an empty store = %+v, want none", got)
		}
	})

	t.Run("LastRunsOverwriteAndSortByName", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		run := func(job string, at time.Time, outcome string) switchboard.JobRun {
			return switchboard.JobRun{Job: job, StartedAt: at, Duration: 150 * time.Millisecond,
				Outcome: outcome, Detail: job + " " + outcome, Trigger: "schedule"}
		}
		for _, r := range []switchboard.JobRun{
			run("zeta", base, "ok"),
			run("heartbeat", base, "error"),
			run("alpha", base.Add(time.Second), "ok"),
			run("heartbeat", base.Add(5*time.Minute).In(cet), "ok"), // overwrites
		} {
			noErr(t, "RecordRun "+r.Job, s.RecordRun(ctx, r))
		}
		got, err := s.LastRuns(ctx)
		noErr(t, "LastRuns", err)
		want := []switchboard.JobRun{
			run("alpha", base.Add(time.Second), "ok"),
			run("heartbeat", base.Add(5*time.Minute), "ok"),
			run("zeta", base, "ok"),
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("LastRuns:\n got %+v\nwant %+v", got, want)
		}
	})

	t.Run("RecordRunNeedsAName", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		wantCode(t, "RecordRun without job", s.RecordRun(ctx, switchboard.JobRun{StartedAt: base}), switchboard.EINVALID)
	})
}

// ----- Markers -----

// RunMarkers checks the Markers contract.
func RunMarkers(t *testing.T, newStore func(t *testing.T) switchboard.Markers) {
	claim := func(t *testing.T, s switchboard.Markers, key string, expires time.Time, want bool) {
		t.Helper()
		got, err := s.Claim(t.Context(), key, expires)
		noErr(t, "Claim "+key, err)
		if got != want {
			t.Fatalf("Claim(%q, %v) = %v, want %v", key, expires, got, want)
		}
	}
	later := func() time.Time { return time.Now().Add(time.Hour) }

	t.Run("ClaimOnce", func(t *testing.T) {
		s := newStore(t)
		claim(t, s, "rc:msg:1", later(), true)
		claim(t, s, "rc:msg:1", later(), false)
		claim(t, s, "rc:msg:1", later().Add(time.Hour), false)
		claim(t, s, "rc:msg:2", later(), true)
	})

	t.Run("UnclaimMakesTheKeyClaimableAgain", func(t *testing.T) {
		s := newStore(t)
		u, ok := s.(interface {
			Unclaim(ctx context.Context, key string) error
		})
		if !ok {
			t.Fatalf("%T has no Unclaim(ctx, key)", s)
		}
		claim(t, s, "rc:msg:u", later(), true)
		noErr(t, "Unclaim", u.Unclaim(t.Context(), "rc:msg:u"))
		claim(t, s, "rc:msg:u", later(), true)
		claim(t, s, "rc:msg:u", later(), false)
		noErr(t, "Unclaim of a missing key", u.Unclaim(t.Context(), "rc:msg:never"))
	})

	t.Run("ConcurrentClaimsOneWinner", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		const n = 20
		won, errs := race(n, func(int) (bool, bool, error) {
			ok, err := s.Claim(ctx, "approval:42", time.Now().Add(time.Hour))
			return ok, ok, err
		})
		if len(errs) > 0 || len(won) != 1 {
			t.Fatalf("%d concurrent claims: %d won, errors %v; want exactly 1 winner and no errors", n, len(won), errs)
		}
	})

	t.Run("ExpiredMarkerCanBeClaimedAgain", func(t *testing.T) {
		s := newStore(t)
		claim(t, s, "notice:rc-down", time.Now().Add(-time.Minute), true) // already expired
		claim(t, s, "notice:rc-down", later(), true)
		claim(t, s, "notice:rc-down", later(), false)
	})

	t.Run("ZeroExpiryNeverExpires", func(t *testing.T) {
		s := newStore(t)
		claim(t, s, "forever", time.Time{}, true)
		claim(t, s, "forever", later(), false)
	})

	t.Run("ClaimNeedsAKey", func(t *testing.T) {
		s, ctx := newStore(t), t.Context()
		for _, key := range []string{"", strings.Repeat("k", 1025)} {
			_, err := s.Claim(ctx, key, later())
			wantCode(t, fmt.Sprintf("Claim of a %d-byte key", len(key)), err, switchboard.EINVALID)
		}
		claim(t, s, strings.Repeat("k", 1024), later(), true)
	})
}
