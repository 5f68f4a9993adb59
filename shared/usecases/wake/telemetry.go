package wake

import (
	"context"
	"crypto/rand"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// wakeSpan is the span of one woken run's handling: the run, its reply and
// marking the wake done. The run's invoke_agent span hangs under it.
type wakeSpan struct {
	id    sb.SpanID
	start time.Time
}

// startWake makes the run started under the returned context hang under
// this wake's span (nothing without Worker.Telemetry). A root run's trace
// is known only once the run has its id, so the parent names no trace.
func (h *handling) startWake(ctx context.Context) context.Context {
	if h.w.Telemetry == nil {
		return ctx
	}
	h.wake = &wakeSpan{start: h.now()}
	_, _ = rand.Read(h.wake.id[:])
	return sb.WithSpanParent(ctx, sb.SpanParent{Span: h.wake.id})
}

// endWake records the wake's span in run's trace; a wake that started no
// run has no trace to join. A task's or follow-up's wake hangs under the
// run that caused it (a parent, not a link: Jaeger folds a link to the
// parent into one FOLLOWS_FROM reference, and the span would lose its
// place in the tree).
func (h *handling) endWake(ctx context.Context, run sb.RunContext, err error) {
	if h.wake == nil || run.RunID == "" {
		return
	}
	outcome := h.outcome
	if outcome == "" && err != nil {
		outcome = "retrying"
	}
	s := sb.Span{Trace: sb.ChainTrace(run.RootRunID), ID: h.wake.id, Name: "wake " + h.job.AgentID,
		Start: h.wake.start, End: h.now(),
		Attrs: []sb.Attr{sb.StringAttr(sb.AttrAgentID, h.job.AgentID), sb.StringAttr(sb.AttrConversationID, run.RootRunID),
			sb.StringAttr(sb.AttrRunID, run.RunID), sb.StringAttr(sb.AttrOutcome, outcome), sb.IntAttr("switchboard.wake.attempt", h.attempt)}}
	if run.ParentRunID != "" {
		s.Parent = sb.RunSpan(run.ParentRunID)
	}
	if err != nil {
		s.Error = Classify(err).Code
	}
	h.w.Telemetry.Record(ctx, s)
}
