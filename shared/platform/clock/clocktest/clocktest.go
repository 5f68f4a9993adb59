// Package clocktest is the settable clock that tests, fakes and store
// contract suites share: code under test takes its Now, and the test moves
// time forward (Add) or to a point (Set) instead of sleeping, and code that
// waits is given its Sleep, which only records the wait and moves the
// clock. Safe for concurrent use.
package clocktest

import (
	"context"
	"sync"
	"time"
)

// Clock is a settable clock.
type Clock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

// New returns a Clock at t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock forward by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Sleep records d and moves the clock on instead of waiting; like a real
// timer racing a context that is already done, the context wins.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.t = c.t.Add(d)
	return nil
}

// Slept returns every Sleep so far, in order.
func (c *Clock) Slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// Stepping is a clock that moves on by a fixed step at every reading, so
// that a duration measured between two readings is exact.
type Stepping struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

// NewStepping returns a Stepping clock whose first reading is t.
func NewStepping(t time.Time, step time.Duration) *Stepping { return &Stepping{t: t, step: step} }

// Now returns the clock's time and moves it on by the step.
func (c *Stepping) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.t
	c.t = c.t.Add(c.step)
	return now
}

// Step is the clock's step.
func (c *Stepping) Step() time.Duration { return c.step }
