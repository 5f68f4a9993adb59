// Package jobs runs scheduled jobs by name. The same Runner serves the jobs
// Lambda (EventBridge sends {"job":"<name>"}), the dev runtime's in-process
// scheduler, POST /dev/jobs/{job} and `switchboard run-job`.
package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Func does one job run and returns a short, secret-free summary.
type Func func(ctx context.Context) (detail string, err error)

// RecordEvery is how old a job's recorded run may get before a run that
// changed nothing is recorded again. A run whose outcome or trigger differs
// from the one recorded, or that fails with another message, is recorded at
// once; a successful run's summary counts (rooms, messages, wakes) change
// nearly every tick and alone do not make a record. A per-minute job writes
// its row once an hour instead of every minute.
const RecordEvery = time.Hour

// Runner knows the job functions and records their runs: every run that
// says something new (see RecordEvery), and an unchanged one when the
// record is RecordEvery old. What it recorded is remembered per process (a
// warm Lambda, the dev runtime), so a cold start records its first run.
type Runner struct {
	funcs map[string]Func
	store sb.JobStore
	log   *slog.Logger
	now   func() time.Time

	mu       sync.Mutex
	recorded map[string]sb.JobRun // job → the run last written to the store
}

// New checks that every job in the deploy catalogue has a function and that
// no function is registered for a job the catalogue lacks: a schedule that
// would call nothing, or code no schedule calls, fails at start.
func New(funcs map[string]Func, store sb.JobStore, log *slog.Logger) (*Runner, error) {
	var missing, extra []string
	for _, j := range deploy.Jobs {
		if funcs[j.Name] == nil {
			missing = append(missing, j.Name)
		}
	}
	for name := range funcs {
		if _, ok := deploy.JobByName(name); !ok {
			extra = append(extra, name)
		}
	}
	if len(missing)+len(extra) > 0 {
		return nil, fmt.Errorf("jobs: catalogue and code disagree: no function for [%s], not in catalogue [%s]",
			strings.Join(missing, " "), strings.Join(extra, " "))
	}
	return &Runner{funcs: funcs, store: store, log: log, now: time.Now}, nil
}

// Names lists the jobs, sorted.
func (r *Runner) Names() []string {
	n := make([]string, 0, len(r.funcs))
	for k := range r.funcs {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Event is what a schedule sends to the jobs function.
type Event struct {
	Job string `json:"job"`
}

// Run runs job now and records the run. It returns ENOTFOUND for an unknown
// job and the job's own error otherwise.
func (r *Runner) Run(ctx context.Context, job, trigger string) (sb.JobRun, error) {
	f := r.funcs[job]
	if f == nil {
		return sb.JobRun{}, sb.E("jobs.run", sb.ENOTFOUND,
			fmt.Sprintf("no job %q; jobs are: %s", job, strings.Join(r.Names(), ", ")))
	}
	start := r.now()
	detail, err := safeRun(ctx, f)
	run := sb.JobRun{Job: job, StartedAt: start.UTC(), Duration: r.now().Sub(start), Outcome: "ok", Detail: detail, Trigger: trigger}
	if err != nil {
		run.Outcome = "error"
		run.Detail = sb.ErrorMessage(err)
		r.log.ErrorContext(ctx, "job failed", "job", job, "trigger", trigger, "err", err)
	} else {
		r.log.InfoContext(ctx, "job done", "job", job, "trigger", trigger, "detail", detail, "ms", run.Duration.Milliseconds())
	}
	if !r.needsRecord(run) {
		return run, err
	}
	if serr := r.store.RecordRun(context.WithoutCancel(ctx), run); serr != nil {
		r.log.ErrorContext(ctx, "recording job run failed", "job", job, "err", serr)
		if err == nil {
			err = serr
		}
		return run, err
	}
	r.mu.Lock()
	r.recorded[job] = run
	r.mu.Unlock()
	return run, err
}

// needsRecord reports whether run says something the store does not hold
// yet: a first run, a changed outcome or trigger, another error, or the
// same again after RecordEvery.
func (r *Runner) needsRecord(run sb.JobRun) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.recorded == nil {
		r.recorded = map[string]sb.JobRun{}
	}
	last, ok := r.recorded[run.Job]
	return !ok || last.Outcome != run.Outcome || last.Trigger != run.Trigger ||
		(run.Outcome == "error" && last.Detail != run.Detail) ||
		run.StartedAt.Sub(last.StartedAt) >= RecordEvery
}

// safeRun turns a panicking job into an error: one broken job must not take
// the dev runtime's scheduler (or a warm Lambda) down with it.
func safeRun(ctx context.Context, f Func) (detail string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("job panicked: %v", p)
		}
	}()
	return f(ctx)
}

// Schedule runs every catalogue job on its rate in-process until ctx ends
// (dev runtime). It checks every rate before starting any ticker. A job never
// overlaps itself; ticks that come while it is busy collapse into one.
func (r *Runner) Schedule(ctx context.Context) error {
	rates := make([]time.Duration, len(deploy.Jobs))
	for i, j := range deploy.Jobs {
		every, err := deploy.ParseRate(j.Schedule)
		if err != nil {
			return err
		}
		rates[i] = every
	}
	for i, j := range deploy.Jobs {
		t := time.NewTicker(rates[i])
		go func() { defer t.Stop(); r.every(ctx, j.Name, t.C) }()
	}
	return nil
}

// every runs job on each tick until ctx ends. A run holds the loop, so runs
// never overlap and the ticks that fall into a run are dropped.
func (r *Runner) every(ctx context.Context, job string, ticks <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
			_, _ = r.Run(ctx, job, "schedule")
		}
	}
}

type dryRunKey struct{}

// DryRun marks ctx so that jobs which change things only report what they
// would do (nextcloud-cleanup).
func DryRun(ctx context.Context) context.Context { return context.WithValue(ctx, dryRunKey{}, true) }

// IsDryRun reports whether ctx asks for a dry run.
func IsDryRun(ctx context.Context) bool { v, _ := ctx.Value(dryRunKey{}).(bool); return v }
