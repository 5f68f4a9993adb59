package wake_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// within fails the test unless ch closes (or yields) within d.
func within[T any](t *testing.T, d time.Duration, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s did not happen within %v", what, d)
	}
	var zero T
	return zero
}

func TestPoolRunsJobs(t *testing.T) {
	log, _ := newLog()
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	const n = 20
	wg.Add(n)
	p := wake.NewPool(3, n, func(_ context.Context, j sb.WakeJob) error {
		defer wg.Done()
		mu.Lock()
		defer mu.Unlock()
		seen[j.AgentID] = true
		return nil
	}, log)
	t.Cleanup(func() { p.Close(context.Background()) })
	for i := range n {
		if err := p.Dispatch(context.Background(), sb.WakeJob{AgentID: fmt.Sprint("a", i)}); err != nil {
			t.Fatalf("Dispatch %d: %v", i, err)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	within(t, 5*time.Second, done, "all jobs running")
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != n {
		t.Errorf("ran %d distinct jobs, want %d", len(seen), n)
	}
}

func TestPoolLogsFailedJobs(t *testing.T) {
	log, logs := newLog()
	ran := make(chan struct{})
	p := wake.NewPool(1, 1, func(context.Context, sb.WakeJob) error {
		defer close(ran)
		return errors.New("model down")
	}, log)
	p.SetRetryDelays(nil)
	if err := p.Dispatch(context.Background(), sb.WakeJob{AgentID: "hermes", Source: "rocketchat-poll"}); err != nil {
		t.Fatal(err)
	}
	within(t, 5*time.Second, ran, "the job")
	p.Close(context.Background())
	recs := logs.Find("wake job failed; no retries left")
	if len(recs) != 1 {
		t.Fatalf("got %d 'wake job failed' logs, want 1", len(recs))
	}
	if recs[0].Attrs["agent"] != "hermes" || recs[0].Attrs["source"] != "rocketchat-poll" {
		t.Errorf("log attrs = %v, want agent hermes and source rocketchat-poll", recs[0].Attrs)
	}
}

// blockingPool has one worker that blocks in every job until release is
// closed; started receives each job as the worker takes it.
func blockingPool(t *testing.T, queue int) (p *wake.Pool, started chan sb.WakeJob, release chan struct{}) {
	t.Helper()
	log, _ := newLog()
	started, release = make(chan sb.WakeJob, 16), make(chan struct{})
	p = wake.NewPool(1, queue, func(ctx context.Context, j sb.WakeJob) error {
		started <- j
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}, log)
	return p, started, release
}

// A full queue refuses at once with EUNAVAILABLE: the webhook must never
// wait for a run (the webhook must answer in under 1 s).
func TestPoolQueueFullIsUnavailable(t *testing.T) {
	p, started, release := blockingPool(t, 1)
	t.Cleanup(func() { close(release); p.Close(context.Background()) })
	ctx := context.Background()
	if err := p.Dispatch(ctx, sb.WakeJob{AgentID: "running"}); err != nil {
		t.Fatal(err)
	}
	within(t, 5*time.Second, started, "first job starting")
	if err := p.Dispatch(ctx, sb.WakeJob{AgentID: "queued"}); err != nil {
		t.Fatalf("second job should fill the queue: %v", err)
	}
	// The worker stays blocked until release: a Dispatch that waited for
	// room would never return here.
	refused := make(chan error, 1)
	go func() { refused <- p.Dispatch(ctx, sb.WakeJob{AgentID: "refused"}) }()
	err := within(t, 5*time.Second, refused, "Dispatch on a full queue returning while the queue stays full")
	if got := sb.ErrorCode(err); got != sb.EUNAVAILABLE {
		t.Fatalf("Dispatch on a full queue: code %q (%v), want %q", got, err, sb.EUNAVAILABLE)
	}
	if msg := sb.ErrorMessage(err); msg == "" {
		t.Error("the refusal has no caller-safe message")
	}
}

func TestPoolCloseDrains(t *testing.T) {
	p, started, release := blockingPool(t, 4)
	for i := range 4 {
		if err := p.Dispatch(context.Background(), sb.WakeJob{AgentID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	within(t, 5*time.Second, started, "first job")
	closed := make(chan struct{})
	go func() { p.Close(context.Background()); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while jobs were still running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	within(t, 5*time.Second, closed, "Close after the queue drained")
	if got := len(started) + 1; got != 4 {
		t.Errorf("%d jobs ran, want all 4 queued before Close", got)
	}
}

func TestPoolCloseExpiredContextCancelsRuns(t *testing.T) {
	log, _ := newLog()
	cancelled := make(chan error, 8)
	started := make(chan struct{}, 8)
	p := wake.NewPool(2, 4, func(ctx context.Context, _ sb.WakeJob) error {
		started <- struct{}{}
		<-ctx.Done() // a run that only ends when cancelled
		cancelled <- ctx.Err()
		return ctx.Err()
	}, log)
	for _, agent := range []string{"x", "y"} { // two agents: their runs go side by side
		if err := p.Dispatch(context.Background(), sb.WakeJob{AgentID: agent}); err != nil {
			t.Fatal(err)
		}
	}
	within(t, 5*time.Second, started, "first run")
	within(t, 5*time.Second, started, "second run")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	closed := make(chan struct{})
	go func() { p.Close(ctx); close(closed) }()
	within(t, 5*time.Second, closed, "Close with an expiring context")
	for range 2 {
		if err := within(t, time.Second, cancelled, "run cancelled"); !errors.Is(err, context.Canceled) {
			t.Errorf("run ended with %v, want context.Canceled", err)
		}
	}
}

func TestPoolDispatchAfterClose(t *testing.T) {
	log, _ := newLog()
	p := wake.NewPool(1, 1, func(context.Context, sb.WakeJob) error { return nil }, log)
	p.Close(context.Background())
	p.Close(context.Background()) // twice is fine
	err := p.Dispatch(context.Background(), sb.WakeJob{AgentID: "x"})
	if sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Fatalf("Dispatch after Close: %v, want EUNAVAILABLE", err)
	}
}

func TestPoolAtLeastOneWorker(t *testing.T) {
	log, _ := newLog()
	ran := make(chan struct{})
	p := wake.NewPool(0, 1, func(context.Context, sb.WakeJob) error { close(ran); return nil }, log)
	t.Cleanup(func() { p.Close(context.Background()) })
	if err := p.Dispatch(context.Background(), sb.WakeJob{}); err != nil {
		t.Fatal(err)
	}
	within(t, 5*time.Second, ran, "a job with workers=0")
}

// Idle waits for every dispatched job, a failed one's retry included.
func TestPoolIdleWaitsForJobsAndRetries(t *testing.T) {
	log, _ := newLog()
	release := make(chan struct{})
	var runs sync.Map // agent → attempts
	p := wake.NewPool(1, 4, func(_ context.Context, j sb.WakeJob) error {
		n, _ := runs.LoadOrStore(j.AgentID, new(int))
		*n.(*int)++
		if j.AgentID == "flaky" && *n.(*int) == 1 {
			return errors.New("model down") // retried once
		}
		<-release
		return nil
	}, log)
	p.SetRetryDelays([]time.Duration{time.Millisecond})
	t.Cleanup(func() { p.Close(context.Background()) })

	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	if err := p.Idle(done); err != nil {
		t.Fatalf("Idle of an empty pool: %v", err)
	}
	for _, id := range []string{"flaky", "steady"} {
		if err := p.Dispatch(context.Background(), sb.WakeJob{AgentID: id}); err != nil {
			t.Fatal(err)
		}
	}
	// Busy: Idle with an ended context gives up (an idle pool answers nil
	// even then).
	expired, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Idle(expired); !errors.Is(err, context.Canceled) {
		t.Fatalf("Idle while jobs wait for release = %v, want context.Canceled", err)
	}
	idle := make(chan error, 1)
	go func() { idle <- p.Idle(context.Background()) }()
	close(release)
	if err := within(t, 5*time.Second, idle, "Idle after every job and the retry ran"); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]int{"flaky": 2, "steady": 1} {
		n, _ := runs.Load(id)
		if n == nil || *n.(*int) != want {
			t.Errorf("%s ran %v times by Idle, want %d", id, n, want)
		}
	}
}

// Jobs of one agent run one after another, in the order they came, and
// while one runs the other workers take other agents' jobs instead of
// waiting on it.
func TestPoolRunsOneAgentsJobsInOrderAndOthersAlongside(t *testing.T) {
	log, _ := newLog()
	var mu sync.Mutex
	running := map[string]int{}
	var order []string
	overlap := false
	release := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	started := make(chan string, 16)
	p := wake.NewPool(3, 16, func(ctx context.Context, j sb.WakeJob) error {
		mu.Lock()
		running[j.AgentID]++
		if running[j.AgentID] > 1 {
			overlap = true
		}
		order = append(order, j.Source)
		mu.Unlock()
		started <- j.Source
		if j.AgentID == "a" {
			<-release["a"]
		}
		mu.Lock()
		running[j.AgentID]--
		mu.Unlock()
		return nil
	}, log)
	defer p.Close(context.Background())
	for _, j := range []sb.WakeJob{{AgentID: "a", Source: "a1"}, {AgentID: "a", Source: "a2"}, {AgentID: "a", Source: "a3"}, {AgentID: "b", Source: "b1"}, {AgentID: "b", Source: "b2"}} {
		if err := p.Dispatch(context.Background(), j); err != nil {
			t.Fatal(err)
		}
	}
	// a1 holds agent a; b's two jobs run meanwhile on the other workers.
	got := map[string]bool{}
	for range 3 {
		got[within(t, 5*time.Second, started, "a run")] = true
	}
	if !got["a1"] || !got["b1"] || !got["b2"] {
		t.Fatalf("first three runs %v, want a1, b1 and b2 (a2 waits for a1)", got)
	}
	select {
	case s := <-started:
		t.Fatalf("%s started while a1 was running", s)
	default:
	}
	close(release["a"])
	if err := p.Idle(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var as []string
	for _, s := range order {
		if s[0] == 'a' {
			as = append(as, s)
		}
	}
	if overlap || !slices.Equal(as, []string{"a1", "a2", "a3"}) {
		t.Errorf("agent a ran %v (overlap %v), want a1, a2, a3 one after another", as, overlap)
	}
}
