// Package retrytest is a fake clock for tests of code that retries through
// modelretry: sleeping advances the clock at once and is recorded, so a test
// of "waits 2 s then answers" takes microseconds and can assert the wait.
package retrytest

import (
	"context"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/modelretry"
)

// Clock is a fake clock. It starts at the real time when it is made, so that
// a context deadline set from the real clock means the same to both.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

// New returns a Clock at the current real time.
func New() *Clock { return &Clock{now: time.Now()} }

// NewAt returns a Clock at t.
func NewAt(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep advances the clock by d, unless ctx is already done (like a real
// timer racing a done context, the context wins).
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.sleeps = append(c.sleeps, d)
	return nil
}

// Sleeps returns every wait so far, in order.
func (c *Clock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// Total returns the sum of the waits.
func (c *Clock) Total() time.Duration {
	var t time.Duration
	for _, d := range c.Sleeps() {
		t += d
	}
	return t
}

// Policy returns p on this clock, with the jitter pinned to the nominal
// backoff (its upper bound) so waits are predictable. Use p.Jitter after
// the call to test the jitter itself.
func (c *Clock) Policy(p modelretry.Policy) modelretry.Policy {
	p.Now, p.Sleep = c.Now, c.Sleep
	p.Jitter = func(d time.Duration) time.Duration { return d }
	return p
}
