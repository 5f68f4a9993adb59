package wake

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Pool is the local Dispatcher: a bounded queue and a fixed number of
// workers running the same handler the agent-worker Lambda runs.
type Pool struct {
	jobs   chan Job
	handle func(context.Context, Job) error
	log    *slog.Logger
	wg     sync.WaitGroup
	mu     sync.RWMutex // orders Dispatch's send against Close's close
	closed bool
	ctx    context.Context
	cancel context.CancelFunc
}

// NewPool starts workers goroutines. queue bounds the jobs waiting; Dispatch
// refuses (EUNAVAILABLE) when it is full rather than blocking a webhook.
func NewPool(workers, queue int, handle func(context.Context, Job) error, log *slog.Logger) *Pool {
	if workers < 1 {
		workers = 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pool{jobs: make(chan Job, queue), handle: handle, log: log, ctx: ctx, cancel: cancel}
	for range workers {
		p.wg.Add(1)
		go p.work()
	}
	return p
}

func (p *Pool) work() {
	defer p.wg.Done()
	for job := range p.jobs {
		if err := p.handle(p.ctx, job); err != nil {
			p.log.Error("wake job failed", "agent", job.AgentID, "source", job.Source, "err", err)
		}
	}
}

// Dispatch implements Dispatcher.
func (p *Pool) Dispatch(_ context.Context, job Job) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return sb.E("wake.dispatch", sb.EUNAVAILABLE, "shutting down; try again")
	}
	select {
	case p.jobs <- job:
		return nil
	default:
		return sb.E("wake.dispatch", sb.EUNAVAILABLE, fmt.Sprintf("the local run queue is full (%d jobs); try again", cap(p.jobs)))
	}
}

// Close stops taking jobs, lets queued ones finish, then returns. Runs still
// going when ctx ends are cancelled.
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
