// Package health is the rocketchat-health job (RC12): every 5 minutes it asks
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

	"github.com/switchboard-dev/switchboard/shared/router"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
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
			// Give the notice back: the next tick tries again (exactly one
			// notice, never none).
			undo := next
			undo.Notified = st.Notified
			if infoErr == nil {
				undo = st
			}
			if b, merr := json.Marshal(undo); merr == nil {
				if perr := c.KV.PutIf(context.WithoutCancel(ctx), c.Key, written, string(b), time.Time{}); perr != nil {
					c.Log.ErrorContext(ctx, "health: could not undo the state after a failed notice", "err", perr)
				}
			}
			return "", fmt.Errorf("health notice (%s): %w", notice.Kind, err)
		}
		return fmt.Sprintf("%s notice sent via %s", notice.Kind, d.Channel), nil
	}
	if infoErr != nil {
		return fmt.Sprintf("Rocket.Chat unreachable (%d in a row)", next.Failures), nil
	}
	return "Rocket.Chat " + version + " answers", nil
}
