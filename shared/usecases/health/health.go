// Package health is the rocketchat-health job: every 5 minutes it asks
// Rocket.Chat for /api/info; after three consecutive failures it sends ONE
// notice through the next channel ("Rocket.Chat unreachable since HH:MM,
// I'm here now"), on recovery ONE "Rocket.Chat is back", and never one per
// tick. The state lives in DynamoDB so that every Lambda sees the same.
package health

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// Threshold is how many consecutive failures make an outage.
const Threshold = 3

// State is what the checker remembers between ticks.
type State struct {
	Failures int       `json:"failures"`
	Since    time.Time `json:"since,omitzero"` // first failure of the current streak
	Notified bool      `json:"notified"`       // the outage notice went out
	Version  string    `json:"version,omitempty"`
}

// Checker runs one health check per tick.
type Checker struct {
	Info   func(ctx context.Context) (string, error) // GET /api/info → version
	KV     sb.KV
	Key    string         // e.g. "health#rocketchat"
	Notify *router.Router // the router without Rocket.Chat
	Loc    *time.Location // renders HH:MM
	Now    func() time.Time
	Log    *slog.Logger
}

// Tick checks once. The state moves with compare-and-swap writes, so two
// overlapping ticks cannot both send a notice: the loser sees ECONFLICT and
// leaves the notice to the winner.
func (c *Checker) Tick(ctx context.Context) (string, error) {
	raw, found, err := c.KV.Get(ctx, c.Key)
	if err != nil {
		return "", err
	}
	var st State
	if found {
		if err := json.Unmarshal([]byte(raw), &st); err != nil {
			return "", fmt.Errorf("health state %q: %w", raw, err)
		}
	}
	version, infoErr := c.Info(ctx)
	next := st
	var notice *router.Notice
	switch {
	case infoErr == nil:
		if st.Notified {
			notice = &router.Notice{Kind: router.KindRecovery, Text: "Rocket.Chat is back. We can talk there again."}
		}
		next = State{Version: version}
	default:
		next.Failures++
		if next.Failures == 1 {
			next.Since = c.Now()
		}
		if next.Failures >= Threshold && !st.Notified {
			next.Notified = true
			notice = &router.Notice{Kind: router.KindOutage, Text: fmt.Sprintf(
				"Rocket.Chat unreachable since %s, I'm here now.", next.Since.In(c.Loc).Format("15:04"))}
		}
	}
	old := ""
	if found {
		old = raw
	}
	written := old
	if next != st {
		b, _ := json.Marshal(next)
		written = string(b)
		if err := c.KV.PutIf(ctx, c.Key, old, written, time.Time{}); err != nil {
			if sb.ErrorCode(err) == sb.ECONFLICT {
				return "another check ran at the same time; skipped", nil
			}
			return "", err
		}
	}
	if notice != nil {
		d, err := c.Notify.Deliver(ctx, *notice)
		if err != nil {
			// Give the notice back so that the next tick tries again
			// (exactly one notice, never none).
			c.giveBack(ctx, notice.Kind, next.Since)
			return "", fmt.Errorf("health notice (%s): %w", notice.Kind, err)
		}
		return fmt.Sprintf("%s notice sent via %s", notice.Kind, d.Channel), nil
	}
	if infoErr != nil {
		return fmt.Sprintf("Rocket.Chat unreachable (%d in a row)", next.Failures), nil
	}
	return "Rocket.Chat " + version + " answers", nil
}

// giveBack undoes the effect of a notice that could not be delivered: an
// outage notice makes Notified false again, a recovery notice makes the
// state "notified outage" again. Other ticks may have written meanwhile, so
// it re-reads and retries its compare-and-swap a few times, and only while
// the state still describes the same outage streak.
func (c *Checker) giveBack(ctx context.Context, kind string, since time.Time) {
	ctx = context.WithoutCancel(ctx)
	for range 5 {
		raw, found, err := c.KV.Get(ctx, c.Key)
		if err != nil {
			c.Log.ErrorContext(ctx, "health: could not read the state to give a notice back", "err", err)
			return
		}
		var st State
		if found {
			if json.Unmarshal([]byte(raw), &st) != nil {
				return
			}
		}
		switch kind {
		case router.KindOutage:
			if !st.Notified || !st.Since.Equal(since) {
				return // another tick moved on (recovered, or notified): nothing to give back
			}
			st.Notified = false
		case router.KindRecovery:
			if st.Failures != 0 || st.Notified {
				return // failing again, or already marked
			}
			st = State{Failures: Threshold, Since: since, Notified: true, Version: st.Version}
		}
		b, _ := json.Marshal(st)
		old := ""
		if found {
			old = raw
		}
		err = c.KV.PutIf(ctx, c.Key, old, string(b), time.Time{})
		if err == nil {
			return
		}
		if sb.ErrorCode(err) != sb.ECONFLICT {
			c.Log.ErrorContext(ctx, "health: could not give a notice back", "err", err)
			return
		}
	}
	c.Log.ErrorContext(ctx, "health: gave up giving a notice back after repeated conflicts", "kind", kind)
}
