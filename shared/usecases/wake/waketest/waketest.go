// Package waketest is a fake of the wake dispatcher (the agent-worker's
// asynchronous invoke) that the wake and Telegram inbound tests share: it
// records the jobs it accepts and fails on demand. Tests only.
package waketest

import (
	"context"
	"sync"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Dispatcher records jobs. Set Before and Complete before use.
type Dispatcher struct {
	// Before, when set, runs first at every Dispatch (to look at the world
	// at dispatch time), also when the call fails.
	Before func(sb.WakeJob)
	// Complete, when set, runs after a job was queued: a worker that is
	// done at once (it marks the job's claims done, say).
	Complete func(sb.WakeJob)

	mu    sync.Mutex
	jobs  []sb.WakeJob
	calls int
	fail  []error
}

var _ sb.WakeDispatcher = (*Dispatcher)(nil)

// Dispatch implements sb.WakeDispatcher: it takes the next queued failure
// (a nil entry lets that call through) or records the job.
func (d *Dispatcher) Dispatch(_ context.Context, job sb.WakeJob) error {
	d.mu.Lock()
	d.calls++
	var err error
	if len(d.fail) > 0 {
		err, d.fail = d.fail[0], d.fail[1:]
	}
	d.mu.Unlock()
	if d.Before != nil {
		d.Before(job)
	}
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.jobs = append(d.jobs, job)
	d.mu.Unlock()
	if d.Complete != nil {
		d.Complete(job)
	}
	return nil
}

// FailNext queues errors for the next Dispatch calls, in order.
func (d *Dispatcher) FailNext(errs ...error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fail = append(d.fail, errs...)
}

// All returns the jobs recorded so far, oldest first.
func (d *Dispatcher) All() []sb.WakeJob {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]sb.WakeJob(nil), d.jobs...)
}

// Len is how many jobs were recorded.
func (d *Dispatcher) Len() int { return len(d.All()) }

// Attempts is how many times Dispatch was called, failures included.
func (d *Dispatcher) Attempts() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls
}
