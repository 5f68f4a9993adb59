package waittest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// fakeT records a failure instead of ending the test.
type fakeT struct{ failed string }

func (f *fakeT) Helper()                        {}
func (f *fakeT) Fatalf(format string, a ...any) { f.failed = fmt.Sprintf(format, a...) }

func TestWaitSeesAChangeNotifiedFromAnotherGoroutine(t *testing.T) {
	var s Signal
	var n atomic.Int64
	go func() {
		for range 3 {
			n.Add(1)
			s.Notify()
		}
	}()
	if !s.Wait(t.Context(), func() bool { return n.Load() == 3 }) {
		t.Fatal("Wait = false, want true once the third change was notified")
	}
}

func TestWaitReturnsAtOnceWhenTheConditionHolds(t *testing.T) {
	var s Signal
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // no wait may happen
	if !s.Wait(ctx, func() bool { return true }) {
		t.Fatal("Wait = false for a condition that already holds")
	}
}

func TestWaitEndsWithTheContext(t *testing.T) {
	var s Signal
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if s.Wait(ctx, func() bool { return false }) {
		t.Fatal("Wait = true for a condition that never holds")
	}
}

func TestUntilNamesWhatDidNotHappen(t *testing.T) {
	var s Signal
	ft := &fakeT{}
	s.Until(ft, time.Millisecond, "the reply", func() bool { return false })
	if ft.failed != "the reply: not within 1ms" {
		t.Fatalf("failure = %q, want it to name the reply and the timeout", ft.failed)
	}
}

func TestPollChecksUntilTheConditionHolds(t *testing.T) {
	var n atomic.Int64
	Poll(t, time.Minute, "the third check", func() bool { return n.Add(1) == 3 })
	if n.Load() != 3 {
		t.Fatalf("%d checks, want 3", n.Load())
	}
	ft := &fakeT{}
	Poll(ft, time.Millisecond, "the server", func() bool { return false })
	if ft.failed != "the server: not within 1ms" {
		t.Fatalf("failure = %q, want it to name the server", ft.failed)
	}
}
