package wake

import (
	"context"
	"errors"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

// OutcomeBudget is the result outcome of a wake the daily budget stopped
// (no run happened).
const OutcomeBudget = agentrun.OutcomeBudget

// Reason is why a run ended without an answer: a code for the claim, the
// receipt and the log, whether another attempt can help, and what the
// person is told. The text says what happened and what to do; internal
// error text never goes into it.
type Reason struct {
	Code  string
	Retry bool
	Text  string
}

var (
	reasonBusy = Reason{Code: "busy", Retry: true,
		Text: "I'm still busy with earlier requests and could not get to this one in time. Please send it again in a few minutes."}
	reasonModelUnavailable = Reason{Code: "model_unavailable", Retry: true,
		Text: "I could not answer: the language model is not reachable right now. Please try again in a few minutes; if it keeps happening, tell the operator."}
	// reasonModelRetrying is said once, after the first attempt found the
	// model unreachable, so that nobody waits the minutes of the retries in
	// silence; the outcome follows (the answer, or reasonModelUnavailable).
	reasonModelRetrying = Reason{Code: "model_retrying", Retry: true,
		Text: "I cannot reach the language model right now. I will try again in a minute or two and answer here — or tell you here if it still fails."}
	reasonModelRefused = Reason{Code: "model_refused", Retry: false,
		Text: "I could not answer: the language model refused the request. Please tell the operator; trying again will not help until it is fixed."}
	reasonCrashed = Reason{Code: "crashed", Retry: false,
		Text: "Something broke on my side while I worked on this (a tool or a service failed). Please try again later; if it keeps happening, tell the operator."}
	reasonUnavailable = Reason{Code: "unavailable", Retry: true,
		Text: "I could not work on this because a service I depend on is not reachable right now. Please try again in a few minutes; if it keeps happening, tell the operator."}
	reasonBudget = Reason{Code: OutcomeBudget, Retry: false,
		Text: "I've used up today's budget and take no new requests until 00:00 UTC. If this is urgent, ask the operator."}
)

// Classify turns a failed attempt's error into the reason the person is
// told. Temporary failures (unavailable, rate limited, a deadline) are worth
// another attempt; a refusal (bad request, credentials) and a crash are not.
func Classify(err error) Reason {
	var e *sb.Error
	if errors.As(err, &e) && e.Op == busyOp {
		return reasonBusy
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return reasonModelUnavailable
	}
	switch sb.ErrorCode(err) {
	case sb.EUNAVAILABLE, sb.ERATELIMITED:
		return reasonModelUnavailable
	case sb.EINVALID, sb.EUNAUTHORIZED, sb.EFORBIDDEN, sb.ENOTFOUND:
		return reasonModelRefused
	default:
		return reasonCrashed
	}
}

// busyOp marks the error of a wait for a busy agent that ran out.
const busyOp = "wake.worker"

// notify posts reason's text into the person's thread through the reply
// path, with the router origin like every automatic reply. A notice that
// cannot be posted is logged; it never fails the job.
func (h *handling) notify(ctx context.Context, run sb.RunContext, reason Reason) bool {
	job := h.job
	if job.ReplyTo == nil {
		h.log.WarnContext(ctx, "wake ended without an answer and there is nowhere to say so", "agent", job.AgentID, "reason", reason.Code)
		return false
	}
	if run.RunID == "" {
		run = sb.NewRun(job.AgentID, job.Parent, h.now())
	}
	if err := h.post(ctx, run, reason.Text); err != nil {
		h.log.ErrorContext(ctx, "wake notice could not be posted", "agent", job.AgentID, "room", job.ReplyTo.RoomID, "reason", reason.Code, "err", err)
		return false
	}
	h.log.InfoContext(ctx, "wake ended without an answer; the person was told", "agent", job.AgentID, "room", job.ReplyTo.RoomID, "reason", reason.Code, "run", run.RunID)
	return true
}

// budgetNotice tells the person whose message the daily budget refused
// that the agent takes no requests until 00:00 UTC: every refused message
// gets this answer in its thread, once however often its job comes (a
// marker per message), so that a budget spent by other wakes never leaves
// a person unanswered. A job without message ids (Telegram) is one message
// and is told. The human hears it once per agent and day through the
// router besides.
func (h *handling) budgetNotice(ctx context.Context, run sb.RunContext) {
	job := h.job
	if job.ReplyTo == nil {
		return
	}
	if len(job.MessageIDs) == 0 || h.w.Notes == nil {
		h.notify(ctx, run, reasonBudget)
		return
	}
	// A job's messages are claimed by it alone, so its first id names it.
	key := "budget-note#" + job.AgentID + "#" + job.MessageIDs[0]
	first, err := h.w.Notes.Claim(ctx, key, h.now().Add(budgetNoteFor))
	if err != nil || !first {
		return
	}
	if !h.notify(ctx, run, reasonBudget) {
		_ = h.w.Notes.Unclaim(context.WithoutCancel(ctx), key) // say it on the message's retry instead
	}
}

// budgetNoteFor is how long a message's budget notice is remembered:
// longer than its job's retries and take-overs last.
const budgetNoteFor = 24 * time.Hour
