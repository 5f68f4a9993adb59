package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

type Clock = clocktest.Clock

// newClock starts at base, whose nanoseconds make second and millisecond
// truncation visible.
func newClock() *Clock { return clocktest.New(base) }

// concurrently runs f(i) for i in [0, n) at once and waits for all.
func concurrently(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}

// race runs try n times at once (concurrently) and collects what the calls
// that won returned, and every error.
func race[T any](n int, try func(i int) (T, bool, error)) (won []T, errs []error) {
	var mu sync.Mutex
	concurrently(n, func(i int) {
		v, ok, err := try(i)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			won = append(won, v)
		}
	})
	return won, errs
}

// ----- Counters -----

// RunCounters checks the Counters contract. newStore must return an empty
// store that reads the time from now.
func RunCounters(t *testing.T, newStore func(t *testing.T, now func() time.Time) switchboard.Counters) {
	setup := func(t *testing.T) (switchboard.Counters, *Clock) {
		c := newClock()
		return newStore(t, c.Now), c
	}
	incr := func(t *testing.T, s switchboard.Counters, key string, limit int, expires time.Time, wantCount int, wantOK bool) {
		t.Helper()
		n, ok, err := s.Incr(t.Context(), key, limit, expires)
		noErr(t, fmt.Sprintf("Incr(%q, %d)", key, limit), err)
		if n != wantCount || ok != wantOK {
			t.Fatalf("Incr(%q, limit %d) = %d, %v; want %d, %v", key, limit, n, ok, wantCount, wantOK)
		}
	}
	hour := base.Add(time.Hour)

	t.Run("IncrUpToTheLimitThenRefused", func(t *testing.T) {
		s, _ := setup(t)
		for i := 1; i <= 3; i++ {
			incr(t, s, "wake:room1", 3, hour, i, true)
		}
		incr(t, s, "wake:room1", 3, hour, 3, false)
		incr(t, s, "wake:room1", 3, hour, 3, false)
		incr(t, s, "wake:room2", 3, hour, 1, true)
	})

	t.Run("NoLimit", func(t *testing.T) {
		s, _ := setup(t)
		for _, limit := range []int{0, -1} {
			key := fmt.Sprintf("failures:%d", limit)
			for i := 1; i <= 5; i++ {
				incr(t, s, key, limit, hour, i, true)
			}
		}
	})

	t.Run("ConcurrentIncrStopsAtTheLimit", func(t *testing.T) {
		s, _ := setup(t)
		const n, limit = 20, 12
		var (
			mu      sync.Mutex
			counted []int
			refused []int
			errs    []error
		)
		concurrently(n, func(int) {
			c, ok, err := s.Incr(t.Context(), "wake:busy", limit, hour)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, err)
			case ok:
				counted = append(counted, c)
			default:
				refused = append(refused, c)
			}
		})
		slices.Sort(counted)
		if len(errs) > 0 || !slices.Equal(counted, seq(1, limit)) || len(refused) != n-limit {
			t.Fatalf("%d concurrent Incr with limit %d: counted %v, refused %v, errors %v; want counts 1..%d once each and %d refused",
				n, limit, counted, refused, errs, limit, n-limit)
		}
		for _, c := range refused {
			if c != limit {
				t.Errorf("a refused Incr reported count %d, want %d", c, limit)
			}
		}
		incr(t, s, "wake:busy", limit, hour, limit, false)
	})

	t.Run("ExpiredCounterRestartsAtOne", func(t *testing.T) {
		s, clk := setup(t)
		expires := base.Add(time.Minute)
		incr(t, s, "limited", 2, expires, 1, true)
		incr(t, s, "limited", 2, expires, 2, true)
		incr(t, s, "unlimited", 0, expires, 1, true)
		incr(t, s, "unlimited", 0, expires, 2, true)
		incr(t, s, "unlimited", 0, expires, 3, true)

		clk.Set(expires) // the expiry second still counts
		incr(t, s, "limited", 2, expires, 2, false)

		clk.Set(expires.Add(time.Second))
		next := expires.Add(time.Minute)
		incr(t, s, "limited", 2, next, 1, true)
		incr(t, s, "limited", 2, next, 2, true)
		incr(t, s, "limited", 2, next, 2, false)
		incr(t, s, "unlimited", 0, next, 1, true) // not 4: an expired count is gone
		incr(t, s, "unlimited", 0, next, 2, true)
	})

	t.Run("ConcurrentIncrAfterExpiryRestartsOnce", func(t *testing.T) {
		s, clk := setup(t)
		const n, limit = 20, 12
		for i := 1; i <= limit; i++ {
			incr(t, s, "wake:room", limit, base.Add(time.Minute), i, true)
		}
		clk.Set(base.Add(2 * time.Minute))
		counted, errs := race(n, func(int) (int, bool, error) {
			return s.Incr(t.Context(), "wake:room", limit, base.Add(time.Hour))
		})
		slices.Sort(counted)
		if len(errs) > 0 || !slices.Equal(counted, seq(1, limit)) {
			t.Fatalf("%d concurrent Incr on an expired counter: counted %v, errors %v; want 1..%d once each",
				n, counted, errs, limit)
		}
	})

	t.Run("CountedCallsMoveTheExpiry", func(t *testing.T) {
		s, clk := setup(t)
		incr(t, s, "k", 0, base.Add(time.Minute), 1, true)
		incr(t, s, "k", 0, base.Add(10*time.Minute), 2, true)
		clk.Set(base.Add(5 * time.Minute))
		incr(t, s, "k", 0, base.Add(10*time.Minute), 3, true)
	})

	t.Run("RefusedCallsKeepTheExpiry", func(t *testing.T) {
		s, clk := setup(t)
		incr(t, s, "k", 1, base.Add(time.Minute), 1, true)
		incr(t, s, "k", 1, base.Add(time.Hour), 1, false)
		clk.Set(base.Add(2 * time.Minute))
		incr(t, s, "k", 1, base.Add(time.Hour), 1, true) // restarted: the refusal did not extend it
	})

	t.Run("ZeroExpiryNeverExpires", func(t *testing.T) {
		s, clk := setup(t)
		incr(t, s, "k", 0, time.Time{}, 1, true)
		clk.Set(base.AddDate(10, 0, 0))
		incr(t, s, "k", 0, time.Time{}, 2, true)
		// A later expiry applies from the next counted call on.
		incr(t, s, "k", 0, base.AddDate(10, 0, 0).Add(time.Minute), 3, true)
		clk.Set(base.AddDate(10, 0, 0).Add(time.Hour))
		incr(t, s, "k", 0, time.Time{}, 1, true)
	})

	t.Run("PeekReadsWithoutCounting", func(t *testing.T) {
		s, clk := setup(t)
		peek := func(key string, want int) {
			t.Helper()
			n, err := s.Peek(t.Context(), key)
			noErr(t, fmt.Sprintf("Peek(%q)", key), err)
			if n != want {
				t.Fatalf("Peek(%q) = %d, want %d", key, n, want)
			}
		}
		peek("k", 0) // missing
		expires := base.Add(time.Minute)
		incr(t, s, "k", 2, expires, 1, true)
		peek("k", 1)
		peek("k", 1) // a peek counts nothing
		incr(t, s, "k", 2, expires, 2, true)
		incr(t, s, "k", 2, expires, 2, false)
		peek("k", 2)
		clk.Set(expires) // the expiry second still counts
		peek("k", 2)
		clk.Set(expires.Add(time.Second))
		peek("k", 0) // expired
		incr(t, s, "k", 2, expires.Add(time.Hour), 1, true)
		if _, err := s.Peek(t.Context(), ""); switchboard.ErrorCode(err) != switchboard.EINVALID {
			t.Errorf("Peek of an empty key: %v, want EINVALID", err)
		}
	})

	t.Run("Reset", func(t *testing.T) {
		s, _ := setup(t)
		ctx := t.Context()
		incr(t, s, "k", 2, hour, 1, true)
		incr(t, s, "k", 2, hour, 2, true)
		incr(t, s, "k", 2, hour, 2, false)
		noErr(t, "Reset", s.Reset(ctx, "k"))
		incr(t, s, "k", 2, hour, 1, true)
		noErr(t, "Reset of a missing counter", s.Reset(ctx, "never-counted"))
		noErr(t, "second Reset", s.Reset(ctx, "never-counted"))
	})

	t.Run("KeyIsChecked", func(t *testing.T) {
		s, _ := setup(t)
		ctx := t.Context()
		for _, key := range []string{"", strings.Repeat("k", 1025)} {
			_, _, err := s.Incr(ctx, key, 1, hour)
			wantCode(t, fmt.Sprintf("Incr of a %d-byte key", len(key)), err, switchboard.EINVALID)
			wantCode(t, fmt.Sprintf("Reset of a %d-byte key", len(key)), s.Reset(ctx, key), switchboard.EINVALID)
		}
		incr(t, s, strings.Repeat("k", 1024), 1, hour, 1, true)
	})
}

// seq is [from, to].
func seq(from, to int) []int {
	var s []int
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

// ----- KV -----

// RunKV checks the KV contract. newStore must return an empty store that
// reads the time from now.
func RunKV(t *testing.T, newStore func(t *testing.T, now func() time.Time) switchboard.KV) {
	setup := func(t *testing.T) (switchboard.KV, *Clock) {
		c := newClock()
		return newStore(t, c.Now), c
	}
	get := func(t *testing.T, s switchboard.KV, key, want string, wantFound bool) {
		t.Helper()
		got, found, err := s.Get(t.Context(), key)
		noErr(t, "Get "+key, err)
		if got != want || found != wantFound {
			t.Fatalf("Get(%q) = %q, %v; want %q, %v", key, got, found, want, wantFound)
		}
	}
	hour := base.Add(time.Hour)

	t.Run("RoundTrip", func(t *testing.T) {
		s, _ := setup(t)
		ctx := t.Context()
		get(t, s, "poll:rc", "", false)
		noErr(t, "Put", s.Put(ctx, "poll:rc", "2026-03-14T09:00:00Z", hour))
		get(t, s, "poll:rc", "2026-03-14T09:00:00Z", true)
		noErr(t, "Put over", s.Put(ctx, "poll:rc", `{"since":"x","ids":["a","b"]}`, time.Time{}))
		get(t, s, "poll:rc", `{"since":"x","ids":["a","b"]}`, true)
		get(t, s, "poll:other", "", false)
	})

	t.Run("ExpiredIsNotFound", func(t *testing.T) {
		s, clk := setup(t)
		expires := base.Add(time.Minute)
		noErr(t, "Put", s.Put(t.Context(), "health:rc", "down", expires))
		clk.Set(expires) // the expiry second is still live
		get(t, s, "health:rc", "down", true)
		clk.Set(expires.Add(time.Second))
		get(t, s, "health:rc", "", false)
	})

	t.Run("ZeroExpiryNeverExpires", func(t *testing.T) {
		s, clk := setup(t)
		noErr(t, "Put", s.Put(t.Context(), "k", "v", time.Time{}))
		clk.Set(base.AddDate(10, 0, 0))
		get(t, s, "k", "v", true)
	})

	t.Run("PutIf", func(t *testing.T) {
		s, clk := setup(t)
		ctx := t.Context()
		steps := []struct {
			name     string
			old, val string
			wantErr  string
			want     string // the value after the step
		}{
			{"absent, old \"\"", "", "v1", "", "v1"},
			{"present, old \"\"", "", "v9", switchboard.ECONFLICT, "v1"},
			{"wrong old", "v0", "v9", switchboard.ECONFLICT, "v1"},
			{"matching old", "v1", "v2", "", "v2"},
			{"stale old", "v1", "v3", switchboard.ECONFLICT, "v2"},
			{"same value again", "v2", "v2", "", "v2"},
		}
		for _, st := range steps {
			err := s.PutIf(ctx, "marker:poll", st.old, st.val, hour)
			if st.wantErr == "" {
				noErr(t, st.name, err)
			} else {
				wantCode(t, st.name, err, st.wantErr)
			}
			get(t, s, "marker:poll", st.want, true)
		}
		wantCode(t, "absent, old set", s.PutIf(ctx, "absent", "v1", "v2", hour), switchboard.ECONFLICT)
		get(t, s, "absent", "", false)

		// An expired value counts as absent.
		clk.Set(hour.Add(time.Second))
		wantCode(t, "expired, old = the expired value", s.PutIf(ctx, "marker:poll", "v2", "v4", hour), switchboard.ECONFLICT)
		noErr(t, "expired, old \"\"", s.PutIf(ctx, "marker:poll", "", "v5", time.Time{}))
		get(t, s, "marker:poll", "v5", true)
	})

	t.Run("ConcurrentPutIfOneWinner", func(t *testing.T) {
		s, _ := setup(t)
		ctx := t.Context()
		noErr(t, "Put", s.Put(ctx, "cas", "v0", hour))
		const n = 10
		winners, errs := race(n, func(i int) (string, bool, error) {
			val := fmt.Sprintf("w%d", i)
			switch err := s.PutIf(ctx, "cas", "v0", val, hour); switchboard.ErrorCode(err) {
			case "":
				return val, true, nil
			case switchboard.ECONFLICT:
				return val, false, nil
			default:
				return val, false, err
			}
		})
		if len(errs) > 0 || len(winners) != 1 {
			t.Fatalf("%d concurrent PutIf: winners %v, errors %v; want one winner, the rest ECONFLICT", n, winners, errs)
		}
		get(t, s, "cas", winners[0], true)
	})

	t.Run("KeysAndValuesAreChecked", func(t *testing.T) {
		s, _ := setup(t)
		ctx := t.Context()
		long := strings.Repeat("k", 1025)
		for _, key := range []string{"", long} {
			what := fmt.Sprintf("a %d-byte key", len(key))
			_, _, err := s.Get(ctx, key)
			wantCode(t, "Get of "+what, err, switchboard.EINVALID)
			wantCode(t, "Put of "+what, s.Put(ctx, key, "v", hour), switchboard.EINVALID)
			wantCode(t, "PutIf of "+what, s.PutIf(ctx, key, "", "v", hour), switchboard.EINVALID)
		}
		big := strings.Repeat("v", 64<<10)
		for _, val := range []string{"", big + "v"} {
			what := fmt.Sprintf("a %d-byte value", len(val))
			wantCode(t, "Put of "+what, s.Put(ctx, "k", val, hour), switchboard.EINVALID)
			wantCode(t, "PutIf of "+what, s.PutIf(ctx, "k", "", val, hour), switchboard.EINVALID)
		}
		get(t, s, "k", "", false)
		noErr(t, "Put of a 64 KiB value", s.Put(ctx, strings.Repeat("k", 1024), big, hour))
		get(t, s, strings.Repeat("k", 1024), big, true)
	})
}

// ----- Leases -----

// RunLeases checks the Leases contract. newStore must return an empty
// store that reads the time from now.
func RunLeases(t *testing.T, newStore func(t *testing.T, now func() time.Time) switchboard.Leases) {
	setup := func(t *testing.T) (switchboard.Leases, *Clock) {
		c := newClock()
		return newStore(t, c.Now), c
	}
	acquire := func(t *testing.T, s switchboard.Leases, key, holder string, until time.Time, want bool) {
		t.Helper()
		got, err := s.Acquire(t.Context(), key, holder, until)
		noErr(t, "Acquire "+key+" for "+holder, err)
		if got != want {
			t.Fatalf("Acquire(%q, %q, %v) = %v, want %v", key, holder, until, got, want)
		}
	}
	release := func(t *testing.T, s switchboard.Leases, key, holder string) {
		t.Helper()
		noErr(t, "Release "+key+" by "+holder, s.Release(t.Context(), key, holder))
	}
	soon := base.Add(30 * time.Second)

	t.Run("ExclusiveUnderConcurrency", func(t *testing.T) {
		s, _ := setup(t)
		const n = 10
		holders, errs := race(n, func(i int) (string, bool, error) {
			h := fmt.Sprintf("run-%d", i)
			ok, err := s.Acquire(t.Context(), "agent:alice", h, soon)
			return h, ok, err
		})
		if len(errs) > 0 || len(holders) != 1 {
			t.Fatalf("%d concurrent acquirers: holders %v, errors %v; want exactly one holder", n, holders, errs)
		}
		acquire(t, s, "agent:alice", "someone-else", soon, false)
		acquire(t, s, "agent:bob", "someone-else", soon, true)
	})

	t.Run("SameHolderExtends", func(t *testing.T) {
		s, clk := setup(t)
		later := base.Add(time.Minute)
		acquire(t, s, "agent:alice", "run-1", soon, true)
		acquire(t, s, "agent:alice", "run-1", later, true)
		clk.Set(soon.Add(time.Second)) // past the first end, before the extended one
		acquire(t, s, "agent:alice", "run-2", later, false)
		clk.Set(later) // still held during its last millisecond
		acquire(t, s, "agent:alice", "run-2", later.Add(time.Minute), false)
		clk.Set(later.Add(time.Millisecond))
		acquire(t, s, "agent:alice", "run-2", later.Add(time.Minute), true)
	})

	t.Run("ExpiredLeaseIsTakeable", func(t *testing.T) {
		s, clk := setup(t)
		acquire(t, s, "agent:alice", "crashed-run", soon, true)
		clk.Set(soon.Add(time.Second))
		acquire(t, s, "agent:alice", "run-2", soon.Add(time.Minute), true)
		acquire(t, s, "agent:alice", "crashed-run", soon.Add(time.Minute), false)
	})

	t.Run("ReleaseOnlyByHolder", func(t *testing.T) {
		s, clk := setup(t)
		acquire(t, s, "agent:alice", "run-1", soon, true)
		release(t, s, "agent:alice", "run-2") // not the holder: nothing happens
		acquire(t, s, "agent:alice", "run-2", soon, false)
		release(t, s, "agent:alice", "run-1")
		acquire(t, s, "agent:alice", "run-2", soon, true)
		release(t, s, "agent:alice", "run-1") // no longer the holder
		acquire(t, s, "agent:alice", "run-3", soon, false)
		release(t, s, "agent:free", "run-1") // nobody holds it

		// A lease taken over after expiry is not the old holder's to release.
		clk.Set(soon.Add(time.Second))
		acquire(t, s, "agent:alice", "run-3", soon.Add(time.Minute), true)
		release(t, s, "agent:alice", "run-2")
		acquire(t, s, "agent:alice", "run-4", soon.Add(time.Minute), false)
	})

	t.Run("KeyHolderAndEndAreChecked", func(t *testing.T) {
		s, _ := setup(t)
		ctx := t.Context()
		long := strings.Repeat("k", 1025)
		for _, tc := range []struct{ key, holder string }{{"", "h"}, {long, "h"}, {"k", ""}, {"k", long}} {
			what := fmt.Sprintf("%d-byte key, %d-byte holder", len(tc.key), len(tc.holder))
			_, err := s.Acquire(ctx, tc.key, tc.holder, soon)
			wantCode(t, "Acquire with a "+what, err, switchboard.EINVALID)
			wantCode(t, "Release with a "+what, s.Release(ctx, tc.key, tc.holder), switchboard.EINVALID)
		}
		_, err := s.Acquire(ctx, "k", "h", time.Time{})
		wantCode(t, "Acquire without an end", err, switchboard.EINVALID)
		acquire(t, s, strings.Repeat("k", 1024), strings.Repeat("h", 1024), soon, true)
	})
}

// ----- Wake claims -----

// RunWakeClaims checks the wake claim state machine (switchboard.WakeClaims)
// on a store's KV. newKV must return an empty KV that reads the time from
// now.
func RunWakeClaims(t *testing.T, newKV func(t *testing.T, now func() time.Time) switchboard.KV) {
	setup := func(t *testing.T) (*switchboard.WakeClaims, *Clock) {
		c := newClock()
		return &switchboard.WakeClaims{KV: newKV(t, c.Now), Keep: 24 * time.Hour, Now: c.Now}, c
	}
	until := base.Add(time.Minute)
	// claim calls step, WakeClaims.Take or Begin (named name), and checks
	// whether it claimed key for owner.
	claim := func(t *testing.T, name string, step func(context.Context, string, string, time.Time) (switchboard.WakeClaim, bool, error),
		key, owner string, want bool) switchboard.WakeClaim {
		t.Helper()
		c, ok, err := step(t.Context(), key, owner, until)
		noErr(t, name+" "+key+" by "+owner, err)
		if ok != want {
			t.Fatalf("%s(%q, %q) = %v (claim %+v), want %v", name, key, owner, ok, c, want)
		}
		return c
	}
	take := func(t *testing.T, w *switchboard.WakeClaims, key, owner string, want bool) switchboard.WakeClaim {
		t.Helper()
		return claim(t, "Take", w.Take, key, owner, want)
	}
	begin := func(t *testing.T, w *switchboard.WakeClaims, key, owner string, want bool) switchboard.WakeClaim {
		t.Helper()
		return claim(t, "Begin", w.Begin, key, owner, want)
	}

	t.Run("TakenOnceWhileLive", func(t *testing.T) {
		w, clk := setup(t)
		c := take(t, w, "rc#a#m1", "job-1", true)
		if c.State != switchboard.ClaimInProgress || c.Owner != "job-1" || c.Attempt != 0 || !c.Until.Equal(until) {
			t.Fatalf("fresh claim = %+v", c)
		}
		if got := take(t, w, "rc#a#m1", "job-2", false); got.Owner != "job-1" {
			t.Fatalf("a refused Take reports owner %q, want job-1", got.Owner)
		}
		begin(t, w, "rc#a#m1", "job-1", true) // its run began
		clk.Set(until)                        // still live during its last instant
		take(t, w, "rc#a#m1", "job-2", false)
		take(t, w, "rc#a#m2", "job-2", true)
	})

	// A claim whose delivery gave up before queueing (the write landed
	// after the webhook's deadline) has no run: once OrphanAfter passed
	// without a Begin, the next Take has it; the late job, if any, loses
	// at Begin.
	t.Run("ClaimWithoutARunIsTakenOverAfterOrphanAfter", func(t *testing.T) {
		w, clk := setup(t)
		w.OrphanAfter = 10 * time.Second
		take(t, w, "late", "gave-up", true)
		clk.Set(base.Add(9 * time.Second))
		take(t, w, "late", "retry-1", false)
		clk.Set(base.Add(10 * time.Second))
		if c := take(t, w, "late", "retry-2", true); c.Owner != "retry-2" || c.Attempt != 0 || !c.Since.Equal(base.Add(10*time.Second)) {
			t.Fatalf("take-over = %+v", c)
		}
		begin(t, w, "late", "gave-up", false) // the first delivery's job, had it been queued, runs nothing
		begin(t, w, "late", "retry-2", true)
		clk.Set(base.Add(50 * time.Second))  // within Until
		take(t, w, "late", "retry-3", false) // a begun run is not an orphan
	})

	t.Run("ConcurrentTakersOneWinner", func(t *testing.T) {
		w, clk := setup(t)
		for round, key := range []string{"fresh", "expired"} {
			if key == "expired" {
				take(t, w, key, "crashed", true)
				clk.Set(until.Add(time.Second))
			}
			winners, errs := race(12, func(i int) (string, bool, error) {
				owner := fmt.Sprintf("job-%d", i)
				_, ok, err := w.Take(t.Context(), key, owner, until.Add(time.Hour))
				return owner, ok, err
			})
			if len(errs) > 0 || len(winners) != 1 {
				t.Fatalf("round %d (%s): winners %v, errors %v; want exactly one", round, key, winners, errs)
			}
			if c, _, _ := w.Get(t.Context(), key); c.Owner != winners[0] {
				t.Fatalf("claim owner %q, winner %q", c.Owner, winners[0])
			}
		}
	})

	t.Run("BeginCountsAttemptsAndTakesOverGoneOwners", func(t *testing.T) {
		w, clk := setup(t)
		take(t, w, "k", "job-1", true)
		if c := begin(t, w, "k", "job-1", true); c.Attempt != 1 {
			t.Fatalf("first attempt = %d, want 1", c.Attempt)
		}
		if c := begin(t, w, "k", "job-1", true); c.Attempt != 2 {
			t.Fatalf("retry attempt = %d, want 2", c.Attempt)
		}
		begin(t, w, "k", "job-2", false) // job-1 is live
		clk.Set(until.Add(time.Millisecond))
		c, ok, err := w.Begin(t.Context(), "k", "job-2", until.Add(time.Hour))
		noErr(t, "Begin take-over", err)
		if !ok || c.Attempt != 3 || c.Owner != "job-2" {
			t.Fatalf("take-over = %v %+v, want attempt 3 by job-2", ok, c)
		}
		begin(t, w, "k", "job-1", false) // the old owner's late retry
		if c := begin(t, w, "unclaimed", "job-9", true); c.Attempt != 1 {
			t.Fatalf("Begin without a claim: attempt %d, want 1", c.Attempt)
		}
	})

	t.Run("DoneSticks", func(t *testing.T) {
		w, clk := setup(t)
		take(t, w, "k", "job-1", true)
		clk.Set(until.Add(time.Hour)) // even past until, from a late owner
		noErr(t, "Finish", w.Finish(t.Context(), "k", "answered"))
		noErr(t, "Finish again", w.Finish(t.Context(), "k", "other"))
		c, found, err := w.Get(t.Context(), "k")
		noErr(t, "Get", err)
		if !found || c.State != switchboard.ClaimDone || c.Outcome != "answered" {
			t.Fatalf("finished claim = %+v, found %v; want done/answered", c, found)
		}
		take(t, w, "k", "job-2", false)
		begin(t, w, "k", "job-1", false)
		noErr(t, "Finish of a missing claim", w.Finish(t.Context(), "never", "no_wake"))
		take(t, w, "never", "job-3", false)
	})

	t.Run("ReleaseOnlyByOwnerKeepsAttempts", func(t *testing.T) {
		w, _ := setup(t)
		take(t, w, "k", "job-1", true)
		begin(t, w, "k", "job-1", true)
		noErr(t, "Release by another", w.Release(t.Context(), "k", "job-2"))
		take(t, w, "k", "job-2", false)
		noErr(t, "Release", w.Release(t.Context(), "k", "job-1"))
		if c := take(t, w, "k", "job-2", true); c.Attempt != 1 {
			t.Fatalf("after release: attempt %d, want 1 (kept)", c.Attempt)
		}
		noErr(t, "Release of a missing claim", w.Release(t.Context(), "none", "job-1"))
	})

	t.Run("ForgottenAfterKeep", func(t *testing.T) {
		w, clk := setup(t)
		take(t, w, "k", "job-1", true)
		noErr(t, "Finish", w.Finish(t.Context(), "k", "answered"))
		clk.Set(base.Add(25 * time.Hour))
		take(t, w, "k", "job-2", true)
	})
}
