package rctool

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

// fail turns err into an error envelope. The message is the
// caller-safe one of the outermost *switchboard.Error (internal errors get a
// generic text and are logged). When a Rocket.Chat call is in the chain, the
// envelope also names its HTTP status and endpoint, and a rate limit adds
// retryAfterSeconds.
func (c *invocation) fail(err error) sb.Envelope {
	code := sb.ErrorCode(err)
	if code == sb.EINTERNAL || errors.Is(err, context.Canceled) {
		c.t.log.ErrorContext(c.ctx, "rocketchat tool failed", "action", c.call.Action, "agent", c.call.AgentID,
			"runId", c.call.Run.RunID, "rootRunId", c.call.Run.RootRunID, "err", err.Error())
	}
	// Only *switchboard.Error messages reach the caller (the client's and
	// ours are written for it); anything else becomes a generic text.
	env := sb.FailErr(err)
	d := rcDetails(err)
	env.HTTPStatus, env.Endpoint = d.status, d.endpoint
	if d.status == 0 && code == sb.ERATELIMITED {
		env.HTTPStatus = 429
	}
	if code == sb.ERATELIMITED {
		wait := d.retryAfter
		if wait <= 0 {
			wait = time.Minute // Rocket.Chat's default window
			env.Error += "; wait about a minute before trying again"
		}
		env.Data["retryAfterSeconds"] = int(math.Ceil(wait.Seconds()))
	} else if code == sb.EUNAVAILABLE && d.retryAfter > 0 {
		env.Data["retryAfterSeconds"] = int(math.Ceil(d.retryAfter.Seconds()))
	}
	return env
}

// withWait is err as the typed service answers it: a rate limit that named
// no wait gets Rocket.Chat's default window, as the envelope says.
func withWait(err error) error {
	var se *sb.Error
	if sb.ErrorCode(err) != sb.ERATELIMITED || !errors.As(err, &se) || se.RetryAfter > 0 {
		return err
	}
	return &sb.Error{Op: se.Op, Code: se.Code, Message: se.Message + "; wait about a minute before trying again", RetryAfter: time.Minute, Err: err}
}

// failMsg is fail for an error of our own making.
func (c *invocation) failMsg(code, format string, a ...any) sb.Envelope {
	return c.fail(sb.E(c.op, code, fmt.Sprintf(format, a...)))
}

type details struct {
	status     int
	endpoint   string
	retryAfter time.Duration
}

// rcDetails reads HTTP status, endpoint and wait from an error of the chat
// port (its cause is a switchboard.RemoteFailure).
func rcDetails(err error) details {
	var se *sb.Error
	if !errors.As(err, &se) {
		return details{}
	}
	return details{retryAfter: se.RetryAfter, status: sb.HTTPStatus(err), endpoint: sb.Endpoint(err)}
}

// quote renders untrusted text for a message (toolargs.Quote).
func quote(s string) string { return toolargs.Quote(s) }
