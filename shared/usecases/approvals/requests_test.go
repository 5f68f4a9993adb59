package approvals_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
)

// writeOps are the adapter's write operations on approvals.
var writeOps = map[string]bool{
	"approvals.create": true, "approvals.index": true, "approvals.setNotice": true,
	"approvals.transition": true, "approvals.unindex": true,
}

// delta is after − before, per operation.
func delta(before, after dynamo.Stats) (writes, reads int64, wcu, rcu float64, ops string) {
	var names []string
	for op, a := range after.Ops {
		b := before.Ops[op]
		if n := a.Calls - b.Calls; n > 0 {
			names = append(names, fmt.Sprintf("%s×%d", op, n))
			if writeOps[op] {
				writes += n
			} else {
				reads += n
			}
			wcu += a.WriteUnits - b.WriteUnits
			rcu += a.ReadUnits - b.ReadUnits
		}
	}
	sort.Strings(names)
	return writes, reads, wcu, rcu, strings.Join(names, " ")
}

// TestDynamoRequestsPerLifecycle counts the DynamoDB requests of one
// approval from Stage to its end, on dynalite (see dynamo.OpStats for how
// dynalite's capacity figures relate to AWS's).
func TestDynamoRequestsPerLifecycle(t *testing.T) {
	b := backends[1]
	for _, tt := range []struct {
		name       string
		run        func(t *testing.T, e *env)
		wantWrites int64
	}{
		{"approve → executed", func(t *testing.T, e *env) {
			_, req := e.stage(t)
			id, d, tok := linkParts(t, req.ApproveURL)
			if o, err := e.svc.DecideByLink(t.Context(), id, d, tok); err != nil || o.Kind != "approved" {
				t.Fatalf("%+v %v", o, err)
			}
			e.work(t) // approved → executing → executed
		}, 7},
		{"deny", func(t *testing.T, e *env) {
			_, req := e.stage(t)
			id, d, tok := linkParts(t, req.DenyURL)
			if o, err := e.svc.DecideByLink(t.Context(), id, d, tok); err != nil || o.Kind != "denied" {
				t.Fatalf("%+v %v", o, err)
			}
		}, 5},
		{"expire (ExpireDue)", func(t *testing.T, e *env) {
			e.stage(t)
			e.clock.Add(25 * time.Hour)
			if n, err := e.svc.ExpireDue(t.Context()); err != nil || n != 1 {
				t.Fatalf("%d %v", n, err)
			}
		}, 5},
		{"approve, replayed twice", func(t *testing.T, e *env) {
			_, req := e.stage(t)
			id, d, tok := linkParts(t, req.ApproveURL)
			for range 3 {
				if _, err := e.svc.DecideByLink(t.Context(), id, d, tok); err != nil {
					t.Fatal(err)
				}
			}
			e.work(t)
			e.work(t) // a retried job writes nothing
		}, 7},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, b)
			before := e.dyn.Stats()
			tt.run(t, e)
			// The stage helper's own Get is a test read, not part of the lifecycle.
			writes, reads, wcu, rcu, ops := delta(before, e.dyn.Stats())
			t.Logf("%s: %d writes (%.0f WCU on dynalite), %d reads incl. 1 test read (%.1f RCU): %s", tt.name, writes, wcu, reads, rcu, ops)
			if writes != tt.wantWrites {
				t.Fatalf("%d writes, want %d", writes, tt.wantWrites)
			}
		})
	}
}
