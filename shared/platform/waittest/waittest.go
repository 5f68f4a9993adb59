// Package waittest lets a test wait for what the code under test or a fake
// does, instead of sleeping: a Signal that the watched side notifies at
// every change and the test waits on until its condition holds, and Poll
// for the one case with no event to wait on (a child process or an outside
// server becoming ready). Tests and fakes only.
package waittest

import (
	"context"
	"sync"
	"time"
)

// T is the part of *testing.T that Until and Poll use.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Signal tells waiters that something they watch may have changed. The
// zero value is ready to use; it is safe for concurrent use.
type Signal struct {
	mu sync.Mutex
	ch chan struct{} // closed by the next Notify; nil while nobody waits
}

// Notify wakes everyone waiting: their conditions are checked again.
// Cheap when nobody waits.
func (s *Signal) Notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// next returns a channel closed by the next Notify.
func (s *Signal) next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// Wait returns true as soon as cond holds, checking it now and after every
// Notify; false when ctx ends first. cond must only read state whose
// changes are followed by a Notify.
func (s *Signal) Wait(ctx context.Context, cond func() bool) bool {
	for {
		changed := s.next() // taken before the check: a Notify during it is not lost
		if cond() {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// Until is Wait for a test: it fails t, naming what, when cond does not
// hold within timeout.
func (s *Signal) Until(t T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if !s.Wait(ctx, cond) {
		t.Fatalf("%s: not within %v", what, timeout)
	}
}

// PollEvery is how often Poll checks.
const PollEvery = 20 * time.Millisecond

// Poll checks cond every PollEvery until it holds, and fails t, naming
// what, when it does not within timeout. Use it only for state that sends
// no event this process can wait on: a child process or an outside server
// becoming ready, an outside service finishing. Anything in the test's own
// process notifies a Signal instead.
func Poll(t T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !PollFor(timeout, cond) {
		t.Fatalf("%s: not within %v", what, timeout)
	}
}

// PollFor is Poll without a test: it reports whether cond held within
// timeout.
func PollFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(PollEvery)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline.C:
			return cond()
		}
	}
	return true
}
