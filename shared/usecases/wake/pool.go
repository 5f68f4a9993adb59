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
// workers running the same handler the agent-worker Lambda runs. Jobs of
// one agent run one after another in the order they came, and a worker
// only takes a job whose agent is not running: no worker sits on a job
// waiting for the agent's lease (the lease stays, for runs that come
// another way, such as an ask_agent answer). Like Lambda's async invoke it
// retries a job whose handler failed, after the retry delays; the worker
// counts attempts in the job's claim.
type Pool struct {
	handle func(context.Context, sb.WakeJob) error
	log    *slog.Logger
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
	open   outstanding

	mu      sync.Mutex
	work    *sync.Cond           // signalled when a lane is ready or the pool closes
	lanes   map[string][]poolJob // queued jobs per agent, oldest first
	ready   []string             // lanes with a queued job and no running one, oldest first
	running map[string]bool
	queued  int
	limit   int
	closed  bool
	delays  []time.Duration
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
	p := &Pool{handle: handle, log: log, ctx: ctx, cancel: cancel, delays: LambdaRetryDelays,
		lanes: map[string][]poolJob{}, running: map[string]bool{}, limit: queue}
	p.work = sync.NewCond(&p.mu)
	for range workers {
		p.wg.Add(1)
		go p.worker()
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

func (p *Pool) worker() {
	defer p.wg.Done()
	for {
		pj, ok := p.next()
		if !ok {
			return
		}
		err := p.handle(p.ctx, pj.job)
		p.done(pj.job)
		if err == nil {
			p.open.add(-1)
			continue
		}
		p.failed(pj, err)
	}
}

// next takes the oldest job of the lane that has waited longest, or false
// once the pool is closed and nothing is queued.
func (p *Pool) next() (poolJob, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.ready) == 0 {
		if p.closed && p.queued == 0 {
			return poolJob{}, false
		}
		p.work.Wait()
	}
	l := p.ready[0]
	p.ready = p.ready[1:]
	pj := p.lanes[l][0]
	if rest := p.lanes[l][1:]; len(rest) > 0 {
		p.lanes[l] = rest
	} else {
		delete(p.lanes, l)
	}
	p.queued--
	p.running[l] = true
	return pj, true
}

// done frees job's lane: its next job, if any, may run.
func (p *Pool) done(job sb.WakeJob) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := job.Lane()
	delete(p.running, l)
	if len(p.lanes[l]) > 0 {
		p.ready = append(p.ready, l)
		p.work.Signal()
	}
	if p.closed && p.queued == 0 {
		p.work.Broadcast() // idle workers may stop
	}
}

// enqueueLocked queues pj behind its lane's jobs; false when the queue is full.
func (p *Pool) enqueueLocked(pj poolJob) bool {
	if p.queued >= p.limit {
		return false
	}
	l := pj.job.Lane()
	p.lanes[l] = append(p.lanes[l], pj)
	p.queued++
	if len(p.lanes[l]) == 1 && !p.running[l] {
		p.ready = append(p.ready, l)
		p.work.Signal()
	}
	return true
}

// failed logs a failed job and schedules its retry, if any is left.
func (p *Pool) failed(pj poolJob, err error) {
	pj.runs++
	p.mu.Lock()
	delays, closed := p.delays, p.closed
	p.mu.Unlock()
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

// retry queues a failed job again, behind its agent's other jobs; a full
// queue or a closed pool is logged (the job's claim stays in progress, and
// the poll takes it over when its window passes).
func (p *Pool) retry(pj poolJob) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		p.log.Error("wake retry not run: shutting down (the next start's poll takes its claim over)", "agent", pj.job.AgentID, "source", pj.job.Source)
		p.open.add(-1)
		return
	}
	if !p.enqueueLocked(pj) {
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
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return sb.E("wake.dispatch", sb.EUNAVAILABLE, "shutting down; try again")
	}
	p.open.add(1)
	if !p.enqueueLocked(poolJob{job: job}) {
		p.open.add(-1)
		return sb.E("wake.dispatch", sb.EUNAVAILABLE, fmt.Sprintf("the local run queue is full (%d jobs); try again", p.limit))
	}
	return nil
}

// Close stops taking jobs, lets queued ones finish, then returns. Runs still
// going when ctx ends are cancelled. Retries not yet due are dropped (and
// logged when due).
func (p *Pool) Close(ctx context.Context) {
	p.mu.Lock()
	p.closed = true
	p.work.Broadcast()
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
