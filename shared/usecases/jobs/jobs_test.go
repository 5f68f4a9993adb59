package jobs

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// catalogue returns one function per catalogue job, each answering detail.
func catalogue(detail string) map[string]Func {
	funcs := map[string]Func{}
	for _, j := range deploy.Jobs {
		funcs[j.Name] = func(context.Context) (string, error) { return detail, nil }
	}
	return funcs
}

// withCatalogue replaces deploy.Jobs for one test.
func withCatalogue(t *testing.T, jobs []deploy.Job) {
	t.Helper()
	saved := deploy.Jobs
	deploy.Jobs = jobs
	t.Cleanup(func() { deploy.Jobs = saved })
}

type stepClock = clocktest.Stepping

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.FixedZone("EST", -5*3600))

type fixture struct {
	r     *Runner
	store *memstore.Store
	logs  *bytes.Buffer
	clock *stepClock
}

func newFixture(t *testing.T, funcs map[string]Func, store sb.JobStore) *fixture {
	t.Helper()
	f := &fixture{store: memstore.New(), logs: &bytes.Buffer{}, clock: clocktest.NewStepping(t0, 42*time.Millisecond)}
	if store == nil {
		store = f.store
	}
	r, err := New(funcs, store, slog.New(slog.NewJSONHandler(f.logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	r.now = f.clock.Now
	f.r = r
	return f
}

func TestNewChecksCatalogueAgainstCode(t *testing.T) {
	withCatalogue(t, []deploy.Job{
		{Name: "heartbeat", Function: "jobs", Schedule: "rate(5 minutes)"},
		{Name: "digest", Function: "jobs", Schedule: "rate(1 day)"},
	})
	ok := func(context.Context) (string, error) { return "", nil }
	tests := []struct {
		name    string
		funcs   map[string]Func
		wantErr []string
	}{
		{name: "exact match", funcs: map[string]Func{"heartbeat": ok, "digest": ok}},
		{name: "job without function", funcs: map[string]Func{"heartbeat": ok},
			wantErr: []string{"catalogue and code disagree", "no function for [digest]"}},
		{name: "nil function counts as missing", funcs: map[string]Func{"heartbeat": ok, "digest": nil},
			wantErr: []string{"no function for [digest]"}},
		{name: "function without job", funcs: map[string]Func{"heartbeat": ok, "digest": ok, "cleanup": ok},
			wantErr: []string{"not in catalogue [cleanup]"}},
		{name: "both at once", funcs: map[string]Func{"heartbeat": ok, "cleanup": ok},
			wantErr: []string{"no function for [digest]", "not in catalogue [cleanup]"}},
		{name: "no functions at all", funcs: nil,
			wantErr: []string{"no function for [heartbeat digest]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(tt.funcs, memstore.New(), slog.New(slog.DiscardHandler))
			if tt.wantErr == nil {
				if err != nil || r == nil {
					t.Fatalf("New = %v, %v; want a runner", r, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("New accepted a mismatch")
			}
			if r != nil {
				t.Errorf("New returned a runner with its error")
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error = %q, want it to contain %q", err, s)
				}
			}
		})
	}
}

func TestNewAcceptsTheRealCatalogue(t *testing.T) {
	f := newFixture(t, catalogue("fine"), nil)
	var want []string
	for _, j := range deploy.Jobs {
		want = append(want, j.Name)
	}
	slices.Sort(want)
	if got := f.r.Names(); !slices.Equal(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
}

func TestNamesSorted(t *testing.T) {
	withCatalogue(t, []deploy.Job{{Name: "zeta"}, {Name: "alpha"}, {Name: "mid"}})
	noop := func(context.Context) (string, error) { return "", nil }
	f := newFixture(t, map[string]Func{"zeta": noop, "alpha": noop, "mid": noop}, nil)
	if got, want := f.r.Names(), []string{"alpha", "mid", "zeta"}; !slices.Equal(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
}

func TestRun(t *testing.T) {
	withCatalogue(t, []deploy.Job{{Name: "heartbeat"}, {Name: "digest"}, {Name: "broken"}, {Name: "leaky"}})
	domainErr := sb.E("heartbeat", sb.EUNAVAILABLE, "the audit table does not answer; check DynamoDB")
	internalErr := errors.New("dial tcp 10.0.0.7:443: password=hunter2 refused")
	funcs := map[string]Func{
		"heartbeat": func(context.Context) (string, error) { return "3 tables and the bucket answer", nil },
		"digest":    func(context.Context) (string, error) { return "", nil },
		"broken":    func(context.Context) (string, error) { return "half done", domainErr },
		"leaky":     func(context.Context) (string, error) { return "", internalErr },
	}
	tests := []struct {
		name    string
		job     string
		trigger string
		want    sb.JobRun
		wantErr error
		wantLog []string
	}{
		{
			name: "ok with detail", job: "heartbeat", trigger: "schedule",
			want:    sb.JobRun{Job: "heartbeat", Outcome: "ok", Detail: "3 tables and the bucket answer", Trigger: "schedule"},
			wantLog: []string{`"msg":"job done"`, `"job":"heartbeat"`, `"trigger":"schedule"`, `"ms":42`},
		},
		{
			name: "ok without detail", job: "digest", trigger: "cli",
			want: sb.JobRun{Job: "digest", Outcome: "ok", Trigger: "cli"},
		},
		{
			name: "domain error keeps its caller-safe message", job: "broken", trigger: "dev-route",
			want:    sb.JobRun{Job: "broken", Outcome: "error", Detail: "the audit table does not answer; check DynamoDB", Trigger: "dev-route"},
			wantErr: domainErr,
			wantLog: []string{`"level":"ERROR"`, `"msg":"job failed"`, `"job":"broken"`},
		},
		{
			name: "internal error text stays in the log", job: "leaky", trigger: "schedule",
			want:    sb.JobRun{Job: "leaky", Outcome: "error", Detail: "internal error; the operator can find details in the logs", Trigger: "schedule"},
			wantErr: internalErr,
			wantLog: []string{`"msg":"job failed"`, "dial tcp 10.0.0.7:443"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, funcs, nil)
			got, err := f.r.Run(context.Background(), tt.job, tt.trigger)
			if tt.wantErr == nil && err != nil {
				t.Fatalf("Run: %v", err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Run error = %v, want the job's own %v", err, tt.wantErr)
			}
			want := tt.want
			want.StartedAt, want.Duration = t0.UTC(), f.clock.Step()
			if got != want {
				t.Errorf("run = %+v\nwant  %+v", got, want)
			}
			runs, err := f.store.LastRuns(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 || runs[0] != want {
				t.Errorf("recorded = %+v, want [%+v]", runs, want)
			}
			for _, s := range tt.wantLog {
				if !strings.Contains(f.logs.String(), s) {
					t.Errorf("log = %s, want it to contain %s", f.logs, s)
				}
			}
		})
	}
}

func TestRunUnknownJob(t *testing.T) {
	withCatalogue(t, []deploy.Job{{Name: "heartbeat"}, {Name: "digest"}})
	called := false
	ok := func(context.Context) (string, error) { called = true; return "", nil }
	f := newFixture(t, map[string]Func{"heartbeat": ok, "digest": ok}, nil)

	run, err := f.r.Run(context.Background(), "hartbeat", "cli")

	if code := sb.ErrorCode(err); code != sb.ENOTFOUND {
		t.Errorf("code = %q, want %q (err %v)", code, sb.ENOTFOUND, err)
	}
	if msg, want := sb.ErrorMessage(err), `no job "hartbeat"; jobs are: digest, heartbeat`; msg != want {
		t.Errorf("message = %q, want %q", msg, want)
	}
	if run != (sb.JobRun{}) || called {
		t.Errorf("run = %+v, called = %v; want nothing run", run, called)
	}
	if runs, _ := f.store.LastRuns(context.Background()); len(runs) != 0 {
		t.Errorf("recorded %+v for an unknown job", runs)
	}
}

// failingJobStore refuses every write.
type failingJobStore struct{ memstore.Store }

func (*failingJobStore) RecordRun(context.Context, sb.JobRun) error {
	return sb.E("jobs.recordRun", sb.EUNAVAILABLE, "the state table is throttled")
}

func TestRunRecordFailure(t *testing.T) {
	withCatalogue(t, []deploy.Job{{Name: "good"}, {Name: "bad"}})
	jobErr := sb.E("bad", sb.EINVALID, "the bucket is missing")
	funcs := map[string]Func{
		"good": func(context.Context) (string, error) { return "fine", nil },
		"bad":  func(context.Context) (string, error) { return "", jobErr },
	}
	tests := []struct {
		name     string
		job      string
		wantCode string
		wantErr  error
		wantOut  string
	}{
		{name: "a good job reports the store's failure", job: "good", wantCode: sb.EUNAVAILABLE, wantOut: "ok"},
		{name: "a failing job keeps its own error", job: "bad", wantCode: sb.EINVALID, wantErr: jobErr, wantOut: "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, funcs, &failingJobStore{})
			run, err := f.r.Run(context.Background(), tt.job, "cli")
			if sb.ErrorCode(err) != tt.wantCode {
				t.Errorf("code = %q, want %q (err %v)", sb.ErrorCode(err), tt.wantCode, err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if run.Outcome != tt.wantOut {
				t.Errorf("outcome = %q, want %q", run.Outcome, tt.wantOut)
			}
			if !strings.Contains(f.logs.String(), "recording job run failed") {
				t.Errorf("log = %s, want the failed record logged", f.logs)
			}
		})
	}
}

func TestRunPassesContextAndRecordsAfterCancel(t *testing.T) {
	withCatalogue(t, []deploy.Job{{Name: "heartbeat"}})
	type key struct{}
	var sawValue atomic.Bool
	f := newFixture(t, map[string]Func{"heartbeat": func(ctx context.Context) (string, error) {
		sawValue.Store(ctx.Value(key{}) == "v")
		return "", ctx.Err()
	}}, cancelSensitiveJobStore{memstore.New()})
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	cancel()
	run, err := f.r.Run(ctx, "heartbeat", "schedule")
	if !sawValue.Load() {
		t.Errorf("the job did not get the caller's context")
	}
	if !errors.Is(err, context.Canceled) || run.Outcome != "error" {
		t.Errorf("run %+v, err %v; want an error run from the cancelled job", run, err)
	}
	if strings.Contains(f.logs.String(), "recording job run failed") {
		t.Errorf("the record was refused under the cancelled context: %s", f.logs)
	}
}

// cancelSensitiveJobStore refuses writes under a cancelled context, as an SDK
// call would.
type cancelSensitiveJobStore struct{ *memstore.Store }

func (c cancelSensitiveJobStore) RecordRun(ctx context.Context, r sb.JobRun) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.Store.RecordRun(ctx, r)
}

func TestScheduleAcceptsEveryValidRate(t *testing.T) {
	tests := []struct {
		name     string
		schedule string
		wantErr  bool
	}{
		{"the real catalogue's rates", "", false},
		{"one minute", "rate(1 minute)", false},
		{"minutes", "rate(15 minutes)", false},
		{"one hour", "rate(1 hour)", false},
		{"hours", "rate(6 hours)", false},
		{"one day", "rate(1 day)", false},
		{"days", "rate(7 days)", false},
		{"cron is not supported", "cron(0 12 * * ? *)", true},
		{"plural after one", "rate(1 minutes)", true},
		{"zero", "rate(0 minutes)", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.schedule != "" {
				withCatalogue(t, []deploy.Job{{Name: "heartbeat", Function: "jobs", Schedule: tt.schedule}})
			}
			f := newFixture(t, catalogue(""), nil)
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // the tickers stop at once; no test waits minutes
			err := f.r.Schedule(ctx)
			if (err != nil) != tt.wantErr {
				t.Errorf("Schedule(%q) = %v, want error %v", tt.schedule, err, tt.wantErr)
			}
		})
	}
}

func TestEveryRunsOnTicksWithoutOverlap(t *testing.T) {
	withCatalogue(t, []deploy.Job{{Name: "tick"}})
	var running, maxRunning, runs atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{}, 16)
	f := newFixture(t, map[string]Func{"tick": func(ctx context.Context) (string, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := maxRunning.Load()
			if n <= m || maxRunning.CompareAndSwap(m, n) {
				break
			}
		}
		runs.Add(1)
		select { // never block on the test: later runs just count
		case started <- struct{}{}:
		default:
		}
		select { // the first run stays busy across several ticks
		case <-release:
		case <-ctx.Done():
		}
		return "tock", nil
	}}, nil)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	ticks := make(chan time.Time) // unbuffered: a send succeeds only when the loop takes the tick
	go func() { f.r.every(ctx, "tick", ticks); close(done) }()

	ticks <- time.Now()
	waitFor(t, started)
	for range 5 { // ticks that fall into the busy run are not taken
		select {
		case ticks <- time.Now():
			t.Fatal("the loop took a tick while the first run is busy")
		default:
		}
	}
	if got := running.Load(); got != 1 {
		t.Errorf("running = %d while the first run is busy, want 1", got)
	}
	close(release)
	ticks <- time.Now() // a later tick runs the job again
	waitFor(t, started)
	cancel()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("every did not stop when its context ended")
	}
	if got := maxRunning.Load(); got != 1 {
		t.Errorf("up to %d runs at once, want 1", got)
	}
	runs2 := runs.Load()
	if runs2 < 2 {
		t.Errorf("runs = %d, want at least 2", runs2)
	}
	recorded, err := f.store.LastRuns(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded) != 1 || recorded[0].Trigger != "schedule" || recorded[0].Job != "tick" {
		t.Errorf("recorded = %+v, want the tick job triggered by schedule", recorded)
	}
}

func waitFor(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(2 * time.Second):
		t.Fatal("timed out waiting for the job to start")
	}
}

// countingJobStore counts the records written.
type countingJobStore struct {
	*memstore.Store
	writes int
}

func (c *countingJobStore) RecordRun(ctx context.Context, r sb.JobRun) error {
	c.writes++
	return c.Store.RecordRun(ctx, r)
}

// A run that changes nothing is not written again within RecordEvery; a
// changed outcome or trigger, or another error, is written at once; a
// successful run's changed counts are not.
func TestRunRecordsOnlyWhatChanged(t *testing.T) {
	withCatalogue(t, []deploy.Job{{Name: "task-wakes"}})
	detail, fail, failMsg := "0 wakes queued", false, ""
	store := &countingJobStore{Store: memstore.New()}
	f := newFixture(t, map[string]Func{"task-wakes": func(context.Context) (string, error) {
		if fail {
			return "", sb.E("task-wakes", sb.EUNAVAILABLE, failMsg)
		}
		return detail, nil
	}}, store)
	clock := clocktest.NewStepping(t0, 30*time.Second) // two readings per run: one run a minute
	f.r.now = clock.Now
	run := func(trigger string) {
		t.Helper()
		_, _ = f.r.Run(context.Background(), "task-wakes", trigger)
	}
	steps := []struct {
		name       string
		do         func()
		wantWrites int
	}{
		{"first run", func() { run("schedule") }, 1},
		{"same detail a minute later", func() { run("schedule") }, 1},
		{"29 more quiet runs", func() {
			for range 29 {
				run("schedule")
			}
		}, 1},
		{"the counts change", func() { detail = "1 wake queued"; run("schedule") }, 1},
		{"an error", func() { fail, failMsg = true, "the tasks table does not answer"; run("schedule") }, 2},
		{"the same error", func() { run("schedule") }, 2},
		{"another error", func() { failMsg = "the tasks table is throttled"; run("schedule") }, 3},
		{"recovers", func() { fail = false; run("schedule") }, 4},
		{"run by hand", func() { run("cli") }, 5},
		{"scheduled again", func() { detail = "0 wakes queued"; run("schedule") }, 6},
	}
	for _, s := range steps {
		s.do()
		if store.writes != s.wantWrites {
			t.Fatalf("%s: %d records written, want %d", s.name, store.writes, s.wantWrites)
		}
	}
	// Quiet runs: the one an hour after the last record is written.
	before, _ := store.LastRuns(context.Background())
	quiet := 0
	for store.writes == 6 {
		run("schedule")
		quiet++
	}
	if want := int(RecordEvery / time.Minute); quiet != want {
		t.Errorf("written again after %d quiet runs, want %d (RecordEvery at one run a minute)", quiet, want)
	}
	after, _ := store.LastRuns(context.Background())
	if got := after[0].StartedAt.Sub(before[0].StartedAt); got != RecordEvery {
		t.Errorf("records %v apart, want %v", got, RecordEvery)
	}
}

// A record that failed is tried again on the next run.
func TestRunRecordFailureIsRetriedNextRun(t *testing.T) {
	withCatalogue(t, []deploy.Job{{Name: "good"}})
	f := newFixture(t, map[string]Func{"good": func(context.Context) (string, error) { return "fine", nil }}, &failingJobStore{})
	_, _ = f.r.Run(context.Background(), "good", "schedule")
	_, err := f.r.Run(context.Background(), "good", "schedule")
	if sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Errorf("second run err = %v, want the store's failure again (the record was not remembered)", err)
	}
}
