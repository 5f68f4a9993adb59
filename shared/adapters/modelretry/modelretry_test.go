package modelretry_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/modelretry"
	"github.com/switchboard-dev/switchboard/shared/adapters/modelretry/retrytest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// failing returns a call that fails with errs in turn, then answers "ok".
func failing(errs ...error) (func(context.Context) (string, error), *int) {
	calls := 0
	return func(context.Context) (string, error) {
		calls++
		if calls <= len(errs) {
			return "", errs[calls-1]
		}
		return "ok", nil
	}, &calls
}

func unavailable() error {
	return sb.E("openai.complete", sb.EUNAVAILABLE, "the model server failed (HTTP 500); try again later")
}

func limited(after time.Duration) error {
	e := sb.E("openai.complete", sb.ERATELIMITED, "the model server is rate limiting (HTTP 429); retry later")
	e.RetryAfter = after
	return e
}

func repeat(err error, n int) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}

func TestDo(t *testing.T) {
	tests := []struct {
		name      string
		errs      []error
		wantCalls int
		wantWaits []time.Duration
		wantCode  string // "" means success
	}{
		{"success at once", nil, 1, nil, ""},
		{"two 5xx then success", repeat(unavailable(), 2), 3, []time.Duration{time.Second, 2 * time.Second}, ""},
		{"Retry-After is honoured", []error{limited(2 * time.Second)}, 2, []time.Duration{2 * time.Second}, ""},
		{"429 without Retry-After backs off", []error{limited(0), limited(0)}, 3, []time.Duration{time.Second, 2 * time.Second}, ""},
		{"401 is not retried", []error{sb.E("openai.complete", sb.EUNAUTHORIZED, "bad key")}, 1, nil, sb.EUNAUTHORIZED},
		{"400 is not retried", []error{sb.E("openai.complete", sb.EINVALID, "rejected")}, 1, nil, sb.EINVALID},
		{"404 is not retried", []error{sb.E("openai.complete", sb.ENOTFOUND, "no such model")}, 1, nil, sb.ENOTFOUND},
		{"unexpected answer is not retried", []error{sb.E("openai.complete", sb.EINTERNAL, "not JSON")}, 1, nil, sb.EINTERNAL},
		{"a plain error is not retried", []error{errors.New("boom")}, 1, nil, sb.EINTERNAL},
		{"always 5xx gives up after MaxAttempts", repeat(unavailable(), 100), modelretry.DefaultMaxAttempts,
			[]time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}, sb.EUNAVAILABLE},
		{"Retry-After above the maximum gives up at once", []error{limited(10 * time.Minute)}, 1, nil, sb.EUNAVAILABLE},
		{"Retry-After waits stop at the wait budget", repeat(limited(time.Minute), 100), 2, []time.Duration{time.Minute}, sb.EUNAVAILABLE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := retrytest.New()
			call, calls := failing(tt.errs...)
			got, st, err := modelretry.Do(context.Background(), clock.Policy(modelretry.Default()), "model.complete", call)
			if *calls != tt.wantCalls || st.Attempts != tt.wantCalls || st.Retries != tt.wantCalls-1 {
				t.Errorf("calls = %d, stats %+v; want %d calls", *calls, st, tt.wantCalls)
			}
			if g, w := fmt.Sprint(clock.Sleeps()), fmt.Sprint(tt.wantWaits); g != w && !(len(tt.wantWaits) == 0 && len(clock.Sleeps()) == 0) {
				t.Errorf("waits = %s, want %s", g, w)
			}
			if st.Waited != clock.Total() {
				t.Errorf("stats waited %v, clock slept %v", st.Waited, clock.Total())
			}
			if tt.wantCode == "" {
				if err != nil || got != "ok" {
					t.Fatalf("Do = %q, %v; want ok", got, err)
				}
				return
			}
			if code := sb.ErrorCode(err); code != tt.wantCode {
				t.Fatalf("code = %q, want %q (err %v)", code, tt.wantCode, err)
			}
		})
	}
}

func TestGaveUpError(t *testing.T) {
	clock := retrytest.New()
	call, _ := failing(repeat(limited(3*time.Second), 100)...)
	_, _, err := modelretry.Do(context.Background(), clock.Policy(modelretry.Policy{MaxAttempts: 3}), "model.complete", call)
	if sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Fatalf("code %q, want %q", sb.ErrorCode(err), sb.EUNAVAILABLE)
	}
	msg := sb.ErrorMessage(err)
	for _, want := range []string{"the model server is rate limiting after 3 attempts over 6s; try again later", "HTTP 429"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	var g *modelretry.GaveUp
	if !errors.As(err, &g) || g.Attempts != 3 || g.Waited != 6*time.Second || g.Reason != "attempts" {
		t.Errorf("GaveUp = %+v, want 3 attempts, 6s waited, reason attempts", g)
	}
	var se *sb.Error
	if errors.As(err, &se); se.RetryAfter != 3*time.Second {
		t.Errorf("RetryAfter = %v, want the last error's 3s", se.RetryAfter)
	}
}

// TestDeadline: the next wait must end before ctx's deadline, or Do gives
// up at once with the last error; it never sleeps past the deadline.
func TestDeadline(t *testing.T) {
	clock := retrytest.New()
	ctx, cancel := context.WithDeadline(context.Background(), clock.Now().Add(10*time.Second))
	defer cancel()
	call, calls := failing(repeat(unavailable(), 100)...)
	_, st, err := modelretry.Do(ctx, clock.Policy(modelretry.Default()), "model.complete", call)
	// Waits 1+2+4 = 7 s; the next (8 s) would end at 15 s, past the deadline.
	if *calls != 4 || clock.Total() != 7*time.Second {
		t.Errorf("calls %d, waited %v; want 4 calls, 7s", *calls, clock.Total())
	}
	dl, _ := ctx.Deadline()
	if !clock.Now().Before(dl) {
		t.Errorf("gave up at %v, after the deadline %v", clock.Now(), dl)
	}
	var g *modelretry.GaveUp
	if !errors.As(err, &g) || g.Reason != "deadline" || st.Attempts != 4 {
		t.Errorf("err %v, stats %+v; want a deadline GaveUp after 4 attempts", err, st)
	}
	if !strings.Contains(sb.ErrorMessage(err), "no time left to retry") {
		t.Errorf("message %q does not say the time ran out", sb.ErrorMessage(err))
	}

	// A Retry-After that ends after the deadline is not waited for either.
	clock = retrytest.New()
	ctx2, cancel2 := context.WithDeadline(context.Background(), clock.Now().Add(5*time.Second))
	defer cancel2()
	call, calls = failing(limited(30 * time.Second))
	_, _, err = modelretry.Do(ctx2, clock.Policy(modelretry.Default()), "model.complete", call)
	if *calls != 1 || clock.Total() != 0 || sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Errorf("calls %d, waited %v, err %v; want one call, no wait, EUNAVAILABLE", *calls, clock.Total(), err)
	}
}

// TestCancelledContextIsNotRetried: a call that failed because the run was
// cancelled keeps its own error and is not repeated.
func TestCancelledContextIsNotRetried(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	call := func(context.Context) (string, error) {
		calls++
		cancel()
		return "", sb.Wrap("openai.complete", sb.EUNAVAILABLE, "the model request was cancelled", context.Canceled)
	}
	clock := retrytest.New()
	_, _, err := modelretry.Do(ctx, clock.Policy(modelretry.Default()), "model.complete", call)
	if calls != 1 || !errors.Is(err, context.Canceled) {
		t.Errorf("calls %d, err %v; want 1 call and the cancellation", calls, err)
	}
}

func TestJitterStaysBetweenHalfAndFull(t *testing.T) {
	var waits []time.Duration
	p := modelretry.Policy{MaxAttempts: 5, Base: time.Second, Cap: 20 * time.Second,
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	for range 50 {
		waits = waits[:0]
		call, _ := failing(repeat(unavailable(), 4)...)
		if _, _, err := modelretry.Do(context.Background(), p, "model.complete", call); err != nil {
			t.Fatal(err)
		}
		for i, w := range waits {
			nominal := time.Second << i
			if w < nominal/2 || w > nominal {
				t.Fatalf("wait %d = %v, want within [%v, %v]", i+1, w, nominal/2, nominal)
			}
		}
	}
}

func TestCounterSumsCalls(t *testing.T) {
	var rec sb.ModelCallCounter
	ctx := sb.WithModelCallCounter(context.Background(), &rec)
	clock := retrytest.New()
	for range 2 {
		call, _ := failing(unavailable())
		if _, _, err := modelretry.Do(ctx, clock.Policy(modelretry.Default()), "model.complete", call); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := rec.Calls(), (sb.ModelCalls{Attempts: 4, Retries: 2, Waited: 2 * time.Second}); got != want {
		t.Errorf("recorded %+v, want %+v", got, want)
	}
}
