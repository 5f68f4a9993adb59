package wake

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// LambdaRetryDelays are the waits of Lambda's async invoke before its two
// retries of a failed event (about one and two minutes). The local pool
// uses them by default so that a failed wake comes again here too.
var LambdaRetryDelays = []time.Duration{time.Minute, 2 * time.Minute}

// Pool is the local sb.WakeDispatcher: a bounded queue and a fixed number of
// workers running the same handler the agent-worker Lambda runs. Like
// Lambda's async invoke it retries a job whose handler failed, after the
// retry delays; the worker counts attempts in the job's claim.
type Pool struct {
	jobs   chan poolJob
	handle func(context.Context, sb.WakeJob) error
	log    *slog.Logger
	wg     sync.WaitGroup
	mu     sync.RWMutex // orders Dispatch's send against Close's close
	closed bool
	delays []time.Duration
	ctx    context.Context
	cancel context.CancelFunc
	open   outstanding
}

// outstanding counts the jobs queued, running or waiting for a retry, so
// that Idle can wait for none.
type outstanding struct {
	mu   sync.Mutex
	n    int
	none chan struct{} // closed while n is 0; nil means closed
}

func (o *outstanding) add(d int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == 0 && d > 0 {
		o.none = make(chan struct{})
	}
	o.n += d
	if o.n == 0 && o.none != nil {
		close(o.none)
	}
}

func (o *outstanding) wait() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == 0 {
		return closedChan
	}
	return o.none
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// poolJob is a job and how many times it ran already.
type poolJob struct {
	job  sb.WakeJob
	runs int
}

// NewPool starts workers goroutines. queue bounds the jobs waiting; Dispatch
// refuses (EUNAVAILABLE) when it is full rather than blocking a webhook.
func NewPool(workers, queue int, handle func(context.Context, sb.WakeJob) error, log *slog.Logger) *Pool {
	if workers < 1 {
		workers = 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pool{jobs: make(chan poolJob, queue), handle: handle, log: log, ctx: ctx, cancel: cancel,
		delays: LambdaRetryDelays}
	for range workers {
		p.wg.Add(1)
		go p.work()
	}
	return p
}

// SetRetryDelays replaces the waits before each retry of a failed job (one
// entry per retry; none: no retries). Tests shorten them.
func (p *Pool) SetRetryDelays(delays []time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delays = append([]time.Duration(nil), delays...)
}

func (p *Pool) work() {
	defer p.wg.Done()
	for pj := range p.jobs {
		err := p.handle(p.ctx, pj.job)
		if err == nil {
			p.open.add(-1)
			continue
		}
		pj.runs++
		p.mu.RLock()
		delays, closed := p.delays, p.closed
		p.mu.RUnlock()
		switch {
		case pj.runs > len(delays):
			p.log.Error("wake job failed; no retries left", "agent", pj.job.AgentID, "source", pj.job.Source, "attempts", pj.runs, "err", err)
			p.open.add(-1)
		case closed:
			p.log.Error("wake job failed; shutting down, so it is not retried here (the next start's poll takes its claim over)",
				"agent", pj.job.AgentID, "source", pj.job.Source, "attempts", pj.runs, "err", err)
			p.open.add(-1)
		default:
			delay := delays[pj.runs-1]
			p.log.Error("wake job failed; the wake will be retried", "agent", pj.job.AgentID, "source", pj.job.Source,
				"attempts", pj.runs, "retryIn", delay.String(), "err", err)
			time.AfterFunc(delay, func() { p.retry(pj) })
		}
	}
}

// retry queues a failed job again; a full queue or a closed pool is logged
// (the job's claim stays in progress, and the poll takes it over when its
// window passes).
func (p *Pool) retry(pj poolJob) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		p.log.Error("wake retry not run: shutting down (the next start's poll takes its claim over)", "agent", pj.job.AgentID, "source", pj.job.Source)
		p.open.add(-1)
		return
	}
	select {
	case p.jobs <- pj:
	default:
		p.log.Error("wake retry not queued: the local run queue is full (the poll takes its claim over later)", "agent", pj.job.AgentID, "source", pj.job.Source)
		p.open.add(-1)
	}
}

// Idle returns once no job is queued, running or waiting for a retry, or
// with ctx's error when ctx ends first. Tests and the dev listener's
// GET /dev/idle use it to know that every wake dispatched so far is over.
func (p *Pool) Idle(ctx context.Context) error {
	none := p.open.wait()
	select {
	case <-none:
		return nil // idle already: say so even when ctx has ended
	default:
	}
	select {
	case <-none:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Dispatch implements sb.WakeDispatcher.
func (p *Pool) Dispatch(_ context.Context, job sb.WakeJob) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return sb.E("wake.dispatch", sb.EUNAVAILABLE, "shutting down; try again")
	}
	p.open.add(1)
	select {
	case p.jobs <- poolJob{job: job}:
		return nil
	default:
		p.open.add(-1)
		return sb.E("wake.dispatch", sb.EUNAVAILABLE, fmt.Sprintf("the local run queue is full (%d jobs); try again", cap(p.jobs)))
	}
}

// Close stops taking jobs, lets queued ones finish, then returns. Runs still
// going when ctx ends are cancelled. Retries not yet due are dropped (and
// logged when due).
func (p *Pool) Close(ctx context.Context) {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.jobs)
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		p.cancel()
		<-done
	}
	p.cancel()
}
