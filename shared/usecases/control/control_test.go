package control_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/control"
)

type limits map[string]float64

func (l limits) ChainBudget(agent string) float64 { return l[agent] }

type notices struct{ texts []string }

func (n *notices) NotifyChain(_ context.Context, text string) error {
	n.texts = append(n.texts, text)
	return nil
}

type queue struct{ jobs []sb.WakeJob }

func (q *queue) Dispatch(_ context.Context, j sb.WakeJob) error {
	q.jobs = append(q.jobs, j)
	return nil
}

// stops fakes Step Functions: an execution named in ended has finished
// already, every other one runs until it is stopped.
type stops struct {
	arns  []string
	ended map[string]bool
}

func (s *stops) Stop(_ context.Context, arn, _ string) (bool, error) {
	if s.ended[arn] {
		return false, nil
	}
	s.arns = append(s.arns, arn)
	return true, nil
}

// The in-memory store keeps expiries against the wall clock.
var now = time.Now().UTC().Truncate(time.Second)

func newControl(t *testing.T) (*control.Control, *memstore.Store, *notices, *queue, *stops) {
	t.Helper()
	store, n, q, x := memstore.New(), &notices{}, &queue{}, &stops{}
	c := &control.Control{KV: store.KV(), Markers: store, Receipts: store, Audit: store, Limits: limits{"ada": 1},
		Notifier: n, Dispatch: q, Executions: x, Now: func() time.Time { return now },
		ChainLink: func(root string) string { return "https://sb.example/console/chain?root=" + root }}
	return c, store, n, q, x
}

func TestChainOverBudgetStopsWithOneNotice(t *testing.T) {
	ctx := context.Background()
	c, store, n, _, _ := newControl(t)
	run := sb.RunContext{RunID: "r2", RootRunID: "root1", AgentID: "ada"}
	if err := store.Put(ctx, sb.Receipt{Run: sb.RunContext{RunID: "root1", RootRunID: "root1", AgentID: "ada"}, AgentID: "ada", CostUSD: 0.7, StartedAt: now}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		running float64
		want    string
	}{
		{"under the budget", 0.2, ""},
		{"the running run takes it over", 0.3, control.ReasonChainBudget},
		{"still over: no second notice", 0.5, control.ReasonChainBudget},
	}
	for _, tt := range tests {
		got, err := c.Check(ctx, run, tt.running)
		if err != nil || got != tt.want {
			t.Errorf("%s: Check = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	if len(n.texts) != 1 {
		t.Fatalf("notices = %q, want exactly one", n.texts)
	}
	for _, want := range []string{"root1", "$1.00", "$1.0000 spent", "https://sb.example/console/chain?root=root1"} {
		if !strings.Contains(n.texts[0], want) {
			t.Errorf("notice %q does not name %q", n.texts[0], want)
		}
	}
	// Another agent without a chain budget is not limited by ada's.
	if got, _ := c.Check(ctx, sb.RunContext{RunID: "r3", RootRunID: "root1", AgentID: "bob"}, 5); got != "" {
		t.Errorf("bob without a chain budget: Check = %q, want \"\"", got)
	}
}

func TestStopEndsTheChainAndIsAudited(t *testing.T) {
	ctx := context.Background()
	c, store, _, _, x := newControl(t)
	run := sb.RunContext{RunID: "r2", RootRunID: "root1", AgentID: "bob"}
	if got, _ := c.Check(ctx, run, 0); got != "" {
		t.Fatalf("before the stop: Check = %q", got)
	}
	if err := c.RecordExecution(ctx, "root1", "arn:exec:1"); err != nil {
		t.Fatal(err)
	}
	rep, err := c.Stop(ctx, "root1", "telegram:42")
	if err != nil || rep.Executions != 1 || len(x.arns) != 1 || x.arns[0] != "arn:exec:1" {
		t.Fatalf("Stop = %+v, %v; stopped %v; want the one execution stopped", rep, err, x.arns)
	}
	if got, _ := c.Check(ctx, run, 0); got != control.ReasonStopped {
		t.Errorf("after the stop: Check = %q, want %q", got, control.ReasonStopped)
	}
	if got, _ := c.Check(ctx, sb.RunContext{RunID: "x", RootRunID: "other", AgentID: "bob"}, 0); got != "" {
		t.Errorf("another chain: Check = %q, want \"\"", got)
	}
	audit, _ := store.ByRoot(ctx, "root1")
	if len(audit) != 1 || audit[0].Tool != control.AuditTool || audit[0].Action != "stop" || audit[0].DecidedBy != "telegram:42" {
		t.Errorf("audit = %+v, want one stop entry by telegram:42", audit)
	}
}

func TestPauseHoldsWakesUntilResume(t *testing.T) {
	ctx := context.Background()
	c, _, _, q, _ := newControl(t)
	if err := c.Pause(ctx, "ada", "console:abc"); err != nil {
		t.Fatal(err)
	}
	if p, _ := c.Paused(ctx, "ada"); !p {
		t.Fatal("ada is not paused after Pause")
	}
	claim := &sb.WakeJobClaim{Keys: []string{"rc#ada#m1"}, Owner: "o1"}
	for _, job := range []sb.WakeJob{
		{AgentID: "ada", Text: "first", Claim: claim},
		{AgentID: "ada", Text: "first again", Claim: &sb.WakeJobClaim{Keys: []string{"rc#ada#m1"}, Owner: "o2"}}, // the poll's take-over
		{AgentID: "ada", Text: "telegram"},
	} {
		if err := c.Hold(ctx, job); err != nil {
			t.Fatal(err)
		}
	}
	held, _ := c.Held(ctx, "ada")
	if len(held) != 2 {
		t.Fatalf("held = %d wakes, want 2 (one per claim, one without)", len(held))
	}
	n, err := c.Resume(ctx, "ada", "console:abc")
	if err != nil || n != 2 || len(q.jobs) != 2 || q.jobs[0].Text != "first again" || q.jobs[1].Text != "telegram" {
		t.Fatalf("Resume = %d, %v; queued %+v", n, err, q.jobs)
	}
	if p, _ := c.Paused(ctx, "ada"); p {
		t.Error("ada is still paused after Resume")
	}
	if held, _ := c.Held(ctx, "ada"); len(held) != 0 {
		t.Errorf("after Resume %d wakes still wait", len(held))
	}
	if n, _ := c.Resume(ctx, "ada", "console:abc"); n != 0 {
		t.Errorf("a second Resume queued %d wakes again", n)
	}
}

// The stop counts the executions it stopped, not the ones that had ended;
// an execution the chain starts after the stop is stopped as it is
// recorded.
func TestStopStopsOnlyRunningExecutionsAndLateOnes(t *testing.T) {
	ctx := context.Background()
	c, _, _, _, x := newControl(t)
	x.ended = map[string]bool{"arn:exec:done": true}
	for _, arn := range []string{"arn:exec:done", "arn:exec:waiting"} {
		if err := c.RecordExecution(ctx, "root1", arn); err != nil {
			t.Fatal(err)
		}
	}
	if len(x.arns) != 0 {
		t.Fatalf("before the stop %v were stopped", x.arns)
	}
	rep, err := c.Stop(ctx, "root1", "console:abc")
	if err != nil || rep.Executions != 1 {
		t.Fatalf("Stop = %+v, %v; want 1 execution stopped (the other had ended)", rep, err)
	}
	if err := c.RecordExecution(ctx, "root1", "arn:exec:late"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"arn:exec:waiting", "arn:exec:late"}; !slices.Equal(x.arns, want) {
		t.Errorf("stopped %v, want %v", x.arns, want)
	}
	if err := c.RecordExecution(ctx, "other", "arn:exec:other"); err != nil || len(x.arns) != 2 {
		t.Errorf("another chain's execution: %v; stopped %v", err, x.arns)
	}
}
