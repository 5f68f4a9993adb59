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

// SendLong and EditMessage treat a 429 as a switchboard.TelegramWait says:
// wait once when Telegram asks for a short wait (at most Max), otherwise
// return ERATELIMITED with RetryAfter.
// WithRateLimitWait sets the client's default wait; zero fields keep the
// defaults (DefaultMaxWait, a timer).
func WithRateLimitWait(w sb.TelegramWait) Option {
	return func(c *Client) { c.wait = waitOr(w, c.wait) }
}

// waitOr fills the zero fields of w from def, and those still zero with the
// package defaults.
func waitOr(w, def sb.TelegramWait) sb.TelegramWait {
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

// waiter is one call's use of a TelegramWait: it waits at most once.
type waiter struct {
	sb.TelegramWait
	waited bool
}

func (c *Client) waiter(w sb.TelegramWait) *waiter {
	return &waiter{TelegramWait: waitOr(w, c.wait)}
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
