package switchboard_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// busyLeases refuses the first `busy` attempts, then grants (or fails with
// err), and keeps the end of every attempt's lease.
type busyLeases struct {
	busy  int
	err   error
	until []time.Time
}

func (l *busyLeases) Acquire(_ context.Context, _, _ string, until time.Time) (bool, error) {
	l.until = append(l.until, until)
	if l.err != nil {
		return false, l.err
	}
	if l.busy > 0 {
		l.busy--
		return false, nil
	}
	return true, nil
}

func (l *busyLeases) Release(context.Context, string, string) error { return nil }

func TestWaitForLease(t *testing.T) {
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	down := sb.E("leases.acquire", sb.EUNAVAILABLE, "the state table is down")
	tests := []struct {
		name      string
		leases    *busyLeases
		giveUp    time.Duration // after start; 0 = wait until ctx ends
		wantErr   error
		wantPause []time.Duration
	}{
		{"free", &busyLeases{}, time.Minute, nil, nil},
		{"freed while waiting", &busyLeases{busy: 3}, time.Minute, nil,
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}},
		{"pauses double up to the most", &busyLeases{busy: 6}, 0, nil,
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond}},
		{"busy past the give-up time", &busyLeases{busy: 100}, time.Second, sb.ErrLeaseBusy,
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond}},
		{"the store fails", &busyLeases{err: down}, time.Minute, down, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := start
			var pauses []time.Duration
			w := sb.LeaseWait{
				Until: func() time.Time { return now.Add(time.Minute) },
				First: 100 * time.Millisecond, Max: 500 * time.Millisecond,
				Now: func() time.Time { return now },
				Sleep: func(_ context.Context, d time.Duration) error {
					pauses = append(pauses, d)
					now = now.Add(d)
					return nil
				},
			}
			if tt.giveUp > 0 {
				w.GiveUp = start.Add(tt.giveUp)
			}
			err := sb.WaitForLease(context.Background(), tt.leases, sb.AgentLease("bob"), "h", w)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("WaitForLease = %v, want %v", err, tt.wantErr)
			}
			if !slices.Equal(pauses, tt.wantPause) {
				t.Errorf("pauses %v, want %v", pauses, tt.wantPause)
			}
			// Every attempt asks for a lease that ends a minute after it.
			for i, u := range tt.leases.until {
				var waited time.Duration
				for _, p := range pauses[:i] {
					waited += p
				}
				if want := start.Add(waited + time.Minute); !u.Equal(want) {
					t.Errorf("attempt %d asked until %v, want %v", i+1, u, want)
				}
			}
		})
	}
}

// A wait without a give-up time ends with its context: ctx's error, also
// when the attempt itself failed because ctx ended.
func TestWaitForLeaseEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := sb.LeaseWait{Until: func() time.Time { return time.Now().Add(time.Minute) }, First: time.Hour, Max: time.Hour}
	if err := sb.WaitForLease(ctx, &busyLeases{busy: 1}, "k", "h", w); !errors.Is(err, context.Canceled) {
		t.Errorf("busy lease, ended context: %v, want context.Canceled", err)
	}
	if err := sb.WaitForLease(ctx, &busyLeases{err: context.Canceled}, "k", "h", w); !errors.Is(err, context.Canceled) {
		t.Errorf("failed attempt, ended context: %v, want context.Canceled", err)
	}
	if got := sb.AgentLease("bob"); got != "agent#bob" {
		t.Errorf("AgentLease = %q", got)
	}
}
