package dynamo_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// benchStore is a Store on fresh tables for a benchmark.
func benchStore(b *testing.B) *dynamo.Store {
	b.Helper()
	c := dynamotest.Client(b)
	return dynamo.New(c, dynamotest.FreshTables(b, c))
}

// reportCapacity reports op's consumed capacity and requests per iteration
// between two snapshots.
func reportCapacity(b *testing.B, n int, before, after dynamo.OpStats) {
	b.Helper()
	per := func(v float64) float64 { return v / float64(n) }
	b.ReportMetric(per(after.WriteUnits-before.WriteUnits), "WCU/op")
	b.ReportMetric(per(after.ReadUnits-before.ReadUnits), "RCU/op")
	b.ReportMetric(per(float64(after.Calls-before.Calls)), "calls/op")
}

// BenchmarkAuditAppend appends a typical entry (≈600 bytes: a tool call with
// a short JSON argument object) to the audit table and its byRoot index.
func BenchmarkAuditAppend(b *testing.B) {
	s := benchStore(b)
	ctx := b.Context()
	run := switchboard.NewRun("alice", nil, time.Now())
	args := `{"room":"general","text":"` + strings.Repeat("status update ", 25) + `"}`
	before := s.Stats().Ops["audit.append"]
	n := 0
	for b.Loop() {
		now := time.Now()
		err := s.Append(ctx, switchboard.AuditEntry{
			ID: switchboard.NewID(now), At: now, Run: run, AgentID: "alice",
			Tool: "rocketchat", Action: "send_message", Args: args,
			Decision: switchboard.DecisionAuto, Outcome: switchboard.OutcomeOK, Duration: 120 * time.Millisecond,
		})
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	reportCapacity(b, n, before, s.Stats().Ops["audit.append"])
}

// BenchmarkChainCost sums a chain of 20 receipts spread over two agents.
func BenchmarkChainCost(b *testing.B) {
	s := benchStore(b)
	ctx := b.Context()
	root := switchboard.NewRun("alice", nil, time.Now())
	start := time.Now()
	for i := range 20 {
		agent := []string{"alice", "bob"}[i%2]
		r := switchboard.Receipt{
			Run:     switchboard.RunContext{RunID: fmt.Sprintf("%s-%02d", root.RunID, i), RootRunID: root.RootRunID, AgentID: agent},
			AgentID: agent, Provider: "bedrock", Model: "anthropic.claude-sonnet",
			StartedAt: start.Add(time.Duration(i) * time.Second), Duration: 4 * time.Second,
			TokensIn: 1200, TokensOut: 300, CostUSD: 0.0123, Steps: 3, Outcome: "answered",
		}
		if err := s.Put(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	before := s.Stats().Ops["receipts.chainCost"]
	n := 0
	for b.Loop() {
		c, err := s.ChainCost(ctx, root.RootRunID)
		if err != nil || c.Runs != 20 {
			b.Fatalf("ChainCost = %d runs, %v; want 20", c.Runs, err)
		}
		n++
	}
	reportCapacity(b, n, before, s.Stats().Ops["receipts.chainCost"])
}

// BenchmarkClaim claims fresh keys (the webhook dedupe path: every delivery
// is new) and an already claimed key (a duplicate delivery). DynamoDB reports
// no capacity for a refused conditional write; AWS bills it 1 WCU anyway.
func BenchmarkClaim(b *testing.B) {
	for _, tc := range []struct {
		name string
		key  func(i int) string
		want bool
	}{
		{"new", func(i int) string { return fmt.Sprintf("rc:msg:%d:%d", time.Now().UnixNano(), i) }, true},
		{"taken", func(int) string { return "rc:msg:duplicate" }, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := benchStore(b)
			ctx := b.Context()
			if !tc.want {
				if _, err := s.Claim(ctx, tc.key(0), time.Now().Add(time.Hour)); err != nil {
					b.Fatal(err)
				}
			}
			before := s.Stats().Ops["markers.claim"]
			n := 0
			for b.Loop() {
				ok, err := s.Claim(ctx, tc.key(n), time.Now().Add(time.Hour))
				if err != nil || ok != tc.want {
					b.Fatalf("Claim = %v, %v; want %v", ok, err, tc.want)
				}
				n++
			}
			reportCapacity(b, n, before, s.Stats().Ops["markers.claim"])
		})
	}
}

// opsTotal adds up the stats of ops.
func opsTotal(s *dynamo.Store, ops ...string) dynamo.OpStats {
	st := s.Stats()
	var t dynamo.OpStats
	for _, op := range ops {
		o := st.Ops[op]
		t.Calls += o.Calls
		t.Errors += o.Errors
		t.ReadUnits += o.ReadUnits
		t.WriteUnits += o.WriteUnits
	}
	return t
}

// BenchmarkCounterIncr measures the three paths of Incr on dynalite:
// counted (the common case), refused at the limit, and the first call after
// expiry (a restart). dynalite reports no capacity for the refused
// conditional UpdateItem and returns no old item with it, so refused costs
// 2 calls / 1 RCU here but 1 call / 1 WCU in AWS, and restart 3 calls /
// 1 RCU / 1 WCU here but 2 calls / 2 WCU in AWS.
func BenchmarkCounterIncr(b *testing.B) {
	for _, tc := range []struct {
		name  string
		limit int
		pre   int           // calls before the loop
		step  time.Duration // the clock moves this much per call
		want  bool
	}{
		{"counted", 0, 0, 0, true},
		{"refused", 1, 1, 0, false},
		{"restart", 0, 1, 2 * time.Second, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := benchStore(b)
			ctx := b.Context()
			now := time.Now()
			s.Now = func() time.Time { return now }
			expires := func() time.Time {
				if tc.step > 0 {
					return now.Add(time.Second) // expired by the next call
				}
				return now.Add(time.Hour)
			}
			for range tc.pre {
				if _, _, err := s.Incr(ctx, "wake:room", tc.limit, expires()); err != nil {
					b.Fatal(err)
				}
			}
			before := s.Stats().Ops["counters.incr"]
			n := 0
			for b.Loop() {
				now = now.Add(tc.step)
				_, ok, err := s.Incr(ctx, "wake:room", tc.limit, expires())
				if err != nil || ok != tc.want {
					b.Fatalf("Incr = %v, %v; want %v", ok, err, tc.want)
				}
				n++
			}
			reportCapacity(b, n, before, s.Stats().Ops["counters.incr"])
		})
	}
}

// BenchmarkLeaseAcquireRelease takes a free lease and gives it back (one
// agent run's bracket): 2 calls, 2 WCU, in dynalite and in AWS.
func BenchmarkLeaseAcquireRelease(b *testing.B) {
	s := benchStore(b)
	ctx := b.Context()
	ops := []string{"leases.acquire", "leases.release"}
	before := opsTotal(s, ops...)
	n := 0
	for b.Loop() {
		holder := fmt.Sprintf("run-%d", n)
		ok, err := s.Acquire(ctx, "agent:alice", holder, time.Now().Add(time.Minute))
		if err != nil || !ok {
			b.Fatalf("Acquire = %v, %v; want true", ok, err)
		}
		if err := s.Release(ctx, "agent:alice", holder); err != nil {
			b.Fatal(err)
		}
		n++
	}
	reportCapacity(b, n, before, opsTotal(s, ops...))
}
