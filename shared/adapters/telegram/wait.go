package telegram

import (
	"context"
	"errors"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/clock"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// DefaultMaxWait is the longest 429 wait SendLong and EditMessage sit out
// on their own when nothing else is configured.
const DefaultMaxWait = 5 * time.Second

// RateLimitWait says how SendLong and EditMessage treat a 429: once per
// call, when Telegram asks for a wait of at most Max, they wait and carry on
// (SendLong with the parts that did not arrive yet). A longer wait, or a
// second 429 in the same call, comes back to the caller as ERATELIMITED
// with RetryAfter: it may try another way to reach the human.
//
// A short wait is worth it because a 429 in a private chat usually means
// "one message per second", and the next second the message goes through;
// a long one is a flood limit that would keep the caller (a Lambda with a
// deadline) hanging.
type RateLimitWait struct {
	// Max is the longest wait sat out; 0 means the client's setting
	// (DefaultMaxWait unless WithRateLimitWait changed it); negative means
	// never wait.
	Max time.Duration
	// Sleep waits d or until ctx ends (then it returns ctx's error); nil
	// means the client's setting (a timer unless WithRateLimitWait changed
	// it). Tests pass a fake clock's sleep.
	Sleep func(ctx context.Context, d time.Duration) error
}

// WithRateLimitWait sets the client's default RateLimitWait; zero fields
// keep the defaults (DefaultMaxWait, a timer).
func WithRateLimitWait(w RateLimitWait) Option {
	return func(c *Client) { c.wait = w.or(c.wait) }
}

// or fills the zero fields of w from def, and those still zero with the
// package defaults.
func (w RateLimitWait) or(def RateLimitWait) RateLimitWait {
	if w.Max == 0 {
		w.Max = def.Max
	}
	if w.Max == 0 {
		w.Max = DefaultMaxWait
	}
	if w.Sleep == nil {
		w.Sleep = def.Sleep
	}
	if w.Sleep == nil {
		w.Sleep = clock.Sleep
	}
	return w
}

// waiter is one call's use of a RateLimitWait: it waits at most once.
type waiter struct {
	RateLimitWait
	waited bool
}

func (c *Client) waiter(w RateLimitWait) *waiter {
	return &waiter{RateLimitWait: w.or(c.wait)}
}

// retry reports whether the caller should repeat the request that failed
// with err: err is the first 429 of the call and its wait is short, and
// the wait was sat out. A wait cut short by ctx returns ctx's error.
func (w *waiter) retry(ctx context.Context, err error) (bool, error) {
	var e *sb.Error
	if w.waited || sb.ErrorCode(err) != sb.ERATELIMITED || !errors.As(err, &e) ||
		e.RetryAfter <= 0 || w.Max < 0 || e.RetryAfter > w.Max {
		return false, nil
	}
	w.waited = true
	if serr := w.Sleep(ctx, e.RetryAfter); serr != nil {
		return false, serr
	}
	return true, nil
}
