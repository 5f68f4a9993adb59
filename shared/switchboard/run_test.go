package switchboard_test

import (
	"fmt"
	"regexp"
	"sort"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

var idPattern = regexp.MustCompile(`^[0-9a-f]{26}$`)

func TestNewRun(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 15, 0, 0, time.UTC)
	root := sb.NewRun("hermes", nil, now)
	tests := []struct {
		name       string
		parent     *sb.RunContext
		wantParent string
		wantRoot   string // "" = the new run's own id
	}{
		{name: "no parent: root of a new chain", parent: nil},
		{name: "parent without run id: root of a new chain", parent: &sb.RunContext{AgentID: "atlas"}},
		{name: "child of a root", parent: &root, wantParent: root.RunID, wantRoot: root.RootRunID},
		{name: "grandchild keeps the chain's root",
			parent:     &sb.RunContext{RunID: "child-run", ParentRunID: root.RunID, RootRunID: root.RunID, AgentID: "atlas"},
			wantParent: "child-run", wantRoot: root.RunID},
		{name: "parent without root id is the root",
			parent:     &sb.RunContext{RunID: "legacy-run", AgentID: "atlas"},
			wantParent: "legacy-run", wantRoot: "legacy-run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := sb.NewRun("atlas", tt.parent, now)
			if !idPattern.MatchString(rc.RunID) {
				t.Errorf("RunID = %q, want 26 lower-case hex characters", rc.RunID)
			}
			if rc.AgentID != "atlas" {
				t.Errorf("AgentID = %q, want atlas", rc.AgentID)
			}
			if rc.ParentRunID != tt.wantParent {
				t.Errorf("ParentRunID = %q, want %q", rc.ParentRunID, tt.wantParent)
			}
			wantRoot := tt.wantRoot
			if wantRoot == "" {
				wantRoot = rc.RunID
			}
			if rc.RootRunID != wantRoot {
				t.Errorf("RootRunID = %q, want %q", rc.RootRunID, wantRoot)
			}
			if tt.parent != nil && rc.RunID == tt.parent.RunID {
				t.Errorf("child RunID %q equals the parent's", rc.RunID)
			}
		})
	}
}

// A follow-up takes on its parent's task depth and payer: the run a task
// woke, its approved calls and the creator's wake with the result stay in
// the same depth and are charged to the same agent.
func TestNewRunKeepsTaskDepthAndPayer(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 15, 0, 0, time.UTC)
	parent := sb.RunContext{RunID: "ada-1", RootRunID: "ada-1", AgentID: "ada", TaskHops: 2, PaidBy: "cyd"}
	rc := sb.NewRun("bob", &parent, now)
	if rc.TaskHops != 2 || rc.PaidBy != "cyd" || rc.Payer() != "cyd" {
		t.Errorf("follow-up = %+v (payer %s), want depth 2 paid by cyd", rc, rc.Payer())
	}
	if root := sb.NewRun("bob", nil, now); root.TaskHops != 0 || root.PaidBy != "" || root.Payer() != "bob" {
		t.Errorf("root run = %+v (payer %s), want depth 0, its own payer", root, root.Payer())
	}
}

func TestNewIDShape(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 15, 0, 123_000_000, time.UTC)
	id := sb.NewID(now)
	if !idPattern.MatchString(id) {
		t.Fatalf("NewID = %q, want 26 lower-case hex characters", id)
	}
	// The first 12 hex digits are the Unix milliseconds.
	if got, want := id[:12], fmt.Sprintf("%012x", now.UnixMilli()); got != want {
		t.Errorf("time prefix of %q = %s, want %s (%d ms)", id, got, want, now.UnixMilli())
	}
}

func TestNewIDSortsByTime(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	// Steps from 1 ms to years, including carries across byte boundaries.
	for _, step := range []time.Duration{0, time.Millisecond, 2 * time.Millisecond, 255 * time.Millisecond,
		256 * time.Millisecond, time.Second, time.Minute, time.Hour, 24 * time.Hour, 365 * 24 * time.Hour,
		20 * 365 * 24 * time.Hour} {
		ids = append(ids, sb.NewID(base.Add(step)))
	}
	if !sort.StringsAreSorted(ids) {
		t.Errorf("ids for increasing times are not sorted: %v", ids)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i-1] == ids[i] {
			t.Errorf("ids %d and %d are equal: %s", i-1, i, ids[i])
		}
	}
}

func TestNewIDUnique(t *testing.T) {
	const n = 10_000
	now := time.Now() // all in (nearly) the same millisecond: only the random part differs
	seen := make(map[string]bool, n)
	for i := 0; i < n; i++ {
		id := sb.NewID(now)
		if seen[id] {
			t.Fatalf("NewID repeated %s after %d calls", id, i)
		}
		seen[id] = true
	}
}
