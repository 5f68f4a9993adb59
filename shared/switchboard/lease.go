package switchboard

import (
	"context"
	"errors"
	"time"
)

// AgentLease is the lease key that keeps the runs of one agent from
// overlapping: a woken run and a run answering a question take the same.
func AgentLease(agentID string) string { return "agent#" + agentID }

// ErrLeaseBusy is WaitForLease's answer when another holder still had the
// lease at LeaseWait.GiveUp.
var ErrLeaseBusy = errors.New("the lease stayed with another holder")

// LeaseWait is how WaitForLease waits while another holder has a lease.
type LeaseWait struct {
	// Until is the end of the lease taken by an attempt made now.
	Until func() time.Time
	// GiveUp ends the wait with ErrLeaseBusy; zero waits until ctx ends.
	GiveUp time.Time
	// First is the first pause between attempts; each next one doubles, up
	// to Max.
	First, Max time.Duration
	Now        func() time.Time                                 // time.Now when nil
	Sleep      func(ctx context.Context, d time.Duration) error // a timer when nil
}

// WaitForLease takes key for holder, trying again while another holder
// has it. It returns nil once holder has the lease; ErrLeaseBusy at
// w.GiveUp; ctx's error when ctx ended first (also when an attempt failed
// because of it); otherwise the error of the failed Acquire, at once.
func WaitForLease(ctx context.Context, l Leases, key, holder string, w LeaseWait) error {
	now, sleep := w.Now, w.Sleep
	if now == nil {
		now = time.Now
	}
	if sleep == nil {
		sleep = sleepTimer
	}
	pause := w.First
	for {
		ok, err := l.Acquire(ctx, key, holder, w.Until())
		switch {
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return err
		case ok:
			return nil
		case !w.GiveUp.IsZero() && !now().Before(w.GiveUp):
			return ErrLeaseBusy
		}
		if err := sleep(ctx, pause); err != nil {
			return err
		}
		pause = min(2*pause, w.Max)
	}
}

func sleepTimer(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
