package nctool

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// failure is err as the error of what the tool was doing ("cannot upload
// /reports/q3.md"): its caller-safe message comes first with what, and it
// keeps err's code and requested wait; err itself when what is "".
func (c *invocation) failure(what string, err error) error {
	if what == "" {
		return err
	}
	var se *sb.Error
	wait := time.Duration(0)
	if errors.As(err, &se) {
		wait = se.RetryAfter
	}
	return &sb.Error{Op: c.op, Code: sb.ErrorCode(err), Message: what + ": " + sb.ErrorMessage(err), RetryAfter: wait, Err: err}
}

// refuse is an error of our own making.
func (c *invocation) refuse(code, format string, a ...any) error {
	return sb.E(c.op, code, fmt.Sprintf(format, a...))
}

// fail turns err into an error envelope (see envelope).
func (c *invocation) fail(what string, err error) sb.Envelope {
	return c.envelope(c.failure(what, err))
}

// envelope is the model's answer for err: the caller-safe message of the
// outermost *switchboard.Error, which says what happened and what to do
// (internal errors get a generic text and are logged). When Nextcloud or
// Collabora answered, the envelope names the HTTP status, the endpoint (a
// path, never credentials) and, for OCS, ocs_status; a wait the server
// asked for comes as retryAfterSeconds and retry_at (UTC).
func (c *invocation) envelope(err error) sb.Envelope {
	code := sb.ErrorCode(err)
	if code == sb.EINTERNAL || errors.Is(err, context.Canceled) {
		c.t.log.ErrorContext(c.ctx, "nextcloud tool failed", "action", c.call.Action, "agent", c.call.AgentID,
			"runId", c.call.Run.RunID, "rootRunId", c.call.Run.RootRunID, "err", err.Error())
	}
	env := sb.FailErr(err)
	// What Nextcloud or Collabora answered (a RemoteFailure in the chain).
	if s := sb.HTTPStatus(err); s != 0 {
		env.HTTPStatus = s
	}
	if e := sb.Endpoint(err); e != "" {
		env.Endpoint = e
	}
	if s := sb.ServiceStatus(err); s != 0 {
		env.Data["ocs_status"] = s
	}
	var se *sb.Error
	if errors.As(err, &se) && se.RetryAfter > 0 && (code == sb.ERATELIMITED || code == sb.EUNAVAILABLE) {
		env.Data["retryAfterSeconds"] = int(math.Ceil(se.RetryAfter.Seconds()))
		env.Data["retry_at"] = c.t.now().UTC().Add(se.RetryAfter).Truncate(time.Second).Format(time.RFC3339)
	}
	return env
}

// failMsg is fail for an error of our own making.
func (c *invocation) failMsg(code, format string, a ...any) sb.Envelope {
	return c.envelope(c.refuse(code, format, a...))
}

// bad is fail for invalid arguments (EINVALID errors from decodeArgs and
// the path checks), without a "what" prefix: their messages stand alone.
func (c *invocation) bad(err error) sb.Envelope { return c.fail("", err) }

// status is the HTTP status Nextcloud answered for err (0 for none).
func status(err error) int { return sb.HTTPStatus(err) }
