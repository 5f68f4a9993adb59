// Package modelretry retries a model call where that can help: the server
// said "too many requests" (honouring its Retry-After), failed with a 5xx,
// timed out, or could not be reached. Both model providers (OpenAI-compatible
// and Bedrock) run their one HTTP exchange through Do, so the policy, the
// deadline rule and the counting live in one place.
//
// Waits grow exponentially from Base up to Cap, with jitter, for at most
// MaxAttempts attempts and MaxWait of waiting in all, and never past the
// context's deadline: when the next wait would end at or after it, Do gives
// up at once with the last error instead of sleeping into a run that will
// be killed anyway.
package modelretry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/clock"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Policy says how often and how long to retry. The zero value of a field
// means its default (see Default); Now, Sleep and Jitter exist for tests.
type Policy struct {
	Base          time.Duration // the first backoff
	Cap           time.Duration // the longest single backoff
	MaxAttempts   int           // attempts in all, the first included; 1 disables retries
	MaxRetryAfter time.Duration // a longer Retry-After is not waited for: Do gives up at once
	MaxWait       time.Duration // all waits of one call together; the wait that would pass it is not made

	Now    func() time.Time                                 // the clock the deadline is compared with
	Sleep  func(ctx context.Context, d time.Duration) error // waits d or until ctx is done
	Jitter func(d time.Duration) time.Duration              // picks the wait for a backoff of d, in [d/2, d]
}

// Default policy: 1 s, 2 s, 4 s, 8 s, 16 s nominal backoffs (each jittered
// down to half), so six attempts wait 15.5–31 s in all. That rides out a
// model server's restart or a short throttling burst, and leaves a run with
// a few minutes' deadline time to tell the person when it does not.
const (
	DefaultBase          = time.Second
	DefaultCap           = 20 * time.Second
	DefaultMaxAttempts   = 6
	DefaultMaxRetryAfter = time.Minute
	DefaultMaxWait       = 90 * time.Second // only servers that send Retry-After can use more than 31 s
)

// Default returns the default policy with the real clock.
func Default() Policy {
	return Policy{Base: DefaultBase, Cap: DefaultCap, MaxAttempts: DefaultMaxAttempts,
		MaxRetryAfter: DefaultMaxRetryAfter, MaxWait: DefaultMaxWait}
}

// Retryable reports whether a failed model call may succeed when repeated:
// the providers map rate limiting to ERATELIMITED and 5xx, timeouts and
// unreachable servers to EUNAVAILABLE. Every other code (a bad key, an
// unknown model, a rejected request, an unexpected answer) fails the same
// way again.
func Retryable(err error) bool {
	switch sb.ErrorCode(err) {
	case sb.ERATELIMITED, sb.EUNAVAILABLE:
		return true
	}
	return false
}

// GaveUp is the cause inside the error Do returns after a retryable failure
// it stopped retrying: how many attempts over how long, and why it stopped.
type GaveUp struct {
	Attempts int
	Elapsed  time.Duration // from the first attempt to giving up
	Waited   time.Duration
	Reason   string // "attempts", "deadline", "retry-after" or "wait budget"
	Last     error  // the last attempt's error, a provider's *sb.Error
}

func (g *GaveUp) Error() string {
	return fmt.Sprintf("gave up after %d attempts over %s (%s): %v", g.Attempts, g.Elapsed.Round(time.Millisecond), g.Reason, g.Last)
}

func (g *GaveUp) Unwrap() error { return g.Last }

// Do calls call until it succeeds, fails with an error Retryable rejects,
// or the policy gives up. op names the caller in the final error.
//
// Errors: call's own error, unchanged, when it is not retryable (one attempt),
// when ctx is done or when the policy allows one attempt only; otherwise EUNAVAILABLE with a *GaveUp cause, a message
// that says how many attempts over how long and what to do, and the last
// error's RetryAfter. The stats are also added to the counter in ctx
// (sb.WithModelCallCounter), if any.
func Do[T any](ctx context.Context, p Policy, op string, call func(context.Context) (T, error)) (T, sb.ModelCalls, error) {
	p = p.withDefaults()
	var st sb.ModelCalls
	defer func() { sb.ModelCallCounterFrom(ctx).Add(st) }()
	start := p.Now()
	for {
		st.Attempts++
		v, err := call(ctx)
		if err == nil || !Retryable(err) || ctx.Err() != nil || p.MaxAttempts == 1 {
			st.Retries = st.Attempts - 1
			return v, st, err
		}
		wait, reason := p.next(ctx, st, err)
		if reason != "" {
			st.Retries = st.Attempts - 1
			var zero T
			return zero, st, p.gaveUp(ctx, op, st, p.Now().Sub(start), reason, err)
		}
		slog.WarnContext(ctx, "model call failed; retrying", "op", op, "attempt", st.Attempts,
			"code", sb.ErrorCode(err), "wait", wait, "err", err)
		if serr := p.Sleep(ctx, wait); serr != nil {
			// The context ended while waiting: the last model error says
			// more than "context canceled".
			st.Retries = st.Attempts - 1
			var zero T
			return zero, st, p.gaveUp(ctx, op, st, p.Now().Sub(start), "deadline", err)
		}
		st.Waited += wait
	}
}

// next returns the wait before the next attempt after err, or why not to
// retry.
func (p Policy) next(ctx context.Context, st sb.ModelCalls, err error) (time.Duration, string) {
	n := st.Attempts
	if n >= p.MaxAttempts {
		return 0, "attempts"
	}
	var wait time.Duration
	var se *sb.Error
	if errors.As(err, &se) && se.RetryAfter > 0 {
		// The server said when; believe it rather than guess.
		if se.RetryAfter > p.MaxRetryAfter {
			return 0, "retry-after"
		}
		wait = se.RetryAfter
	} else {
		wait = p.Jitter(p.backoff(n))
	}
	if dl, ok := ctx.Deadline(); ok && !p.Now().Add(wait).Before(dl) {
		return 0, "deadline"
	}
	if st.Waited+wait > p.MaxWait {
		return 0, "wait budget"
	}
	return wait, ""
}

// backoff is the nominal wait after the n-th failed attempt: Base·2^(n-1),
// at most Cap.
func (p Policy) backoff(n int) time.Duration {
	d := p.Base
	for i := 1; i < n && d < p.Cap; i++ {
		d *= 2
	}
	return min(d, p.Cap)
}

func (p Policy) gaveUp(ctx context.Context, op string, st sb.ModelCalls, elapsed time.Duration, reason string, last error) error {
	g := &GaveUp{Attempts: st.Attempts, Elapsed: elapsed, Waited: st.Waited, Reason: reason, Last: last}
	what := "the model server is unavailable"
	if sb.ErrorCode(last) == sb.ERATELIMITED {
		what = "the model server is rate limiting"
	}
	var msg string
	switch reason {
	case "retry-after":
		msg = fmt.Sprintf("%s and asks to wait longer than this run can; try again later", what)
	case "deadline":
		msg = fmt.Sprintf("%s (%d attempts over %s; no time left to retry); try again later", what, st.Attempts, roundSecond(elapsed))
	default:
		msg = fmt.Sprintf("%s after %d attempts over %s; try again later", what, st.Attempts, roundSecond(elapsed))
	}
	if m := sb.ErrorMessage(last); m != "" {
		msg += " (last error: " + m + ")"
	}
	e := sb.Wrap(op, sb.EUNAVAILABLE, msg, g)
	var se *sb.Error
	if errors.As(last, &se) {
		e.RetryAfter = se.RetryAfter
	}
	slog.WarnContext(ctx, "model call failed; giving up", "op", op, "attempts", st.Attempts,
		"waited", st.Waited, "reason", reason, "err", last)
	return e
}

func roundSecond(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

func (p Policy) withDefaults() Policy {
	if p.Base <= 0 {
		p.Base = DefaultBase
	}
	if p.Cap <= 0 {
		p.Cap = DefaultCap
	}
	if p.Cap < p.Base {
		p.Cap = p.Base
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if p.MaxWait <= 0 {
		p.MaxWait = DefaultMaxWait
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Sleep == nil {
		p.Sleep = clock.Sleep
	}
	if p.Jitter == nil {
		p.Jitter = equalJitter
	}
	return p
}

// equalJitter waits between half and all of d: spreads clients that failed
// together without ever retrying at once.
func equalJitter(d time.Duration) time.Duration {
	half := d / 2
	return half + rand.N(d-half+1)
}
