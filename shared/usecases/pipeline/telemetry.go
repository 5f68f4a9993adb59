package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/taskerr"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// The spans of a delivery (docs/telemetry.md): one per execution, under
// the invoke_agent span of the run that started it, and one per attempt
// of each step under it. Every step runs in its own invocation, so the ids
// are derived from the run id and the execution name (sb.PipelineSpan,
// sb.StepSpan); the execution's span is recorded by Finish, with the
// start its first step's marker kept.

// Span names.
const (
	executionSpanName = "pipeline " + deliverOp
	stepSpanPrefix    = "step "
)

// Step outcomes on a step's span (switchboard.outcome).
const (
	spanOK      = "ok"
	spanWaiting = "waiting"          // the share waits for Nextcloud's share limit
	spanPending = "pending_approval" // the public link waits for a human
	spanFailed  = "error"
)

// stepTrace is one attempt of a step, recorded by end (nothing without
// Steps.Telemetry).
type stepTrace struct {
	s       *Steps
	ctx     context.Context
	span    sb.Span
	outcome string // set by the step when it is not what end tells from the answer
}

// traceStep starts the span of the attempt-th try of step (its marker
// key, which names the span's id) of in's execution; name is what the span
// says.
func (s *Steps) traceStep(ctx context.Context, in StepInput, key, name string, attempt int) *stepTrace {
	if s.Telemetry == nil {
		return &stepTrace{}
	}
	d := in.Delivery
	return &stepTrace{s: s, ctx: ctx, span: sb.Span{Trace: sb.ChainTrace(d.Run.RootRunID),
		ID: sb.StepSpan(d.Run.RunID, in.Execution, key, attempt), Parent: sb.PipelineSpan(d.Run.RunID, in.Execution),
		Name: stepSpanPrefix + name, Start: s.now(),
		Attrs: []sb.Attr{sb.StringAttr(sb.AttrExecution, in.Execution), sb.StringAttr(sb.AttrStep, name),
			sb.IntAttr(sb.AttrAttempt, attempt), sb.StringAttr(sb.AttrAgentID, d.AgentID),
			sb.StringAttr(sb.AttrRunID, d.Run.RunID), sb.StringAttr(sb.AttrConversationID, d.Run.RootRunID)}}}
}

// context is ctx for the step's tool calls: an approval they stage hangs
// under the step's span.
func (t *stepTrace) context(ctx context.Context) context.Context {
	if t.s == nil {
		return ctx
	}
	return sb.WithSpanParent(ctx, sb.SpanParent{Trace: t.span.Trace, Span: t.span.ID})
}

// end records the attempt: its outcome from what the step answers (wait:
// State.Wait) unless the step named one.
func (t *stepTrace) end(wait int, err error) {
	if t.s == nil {
		return
	}
	s := t.span
	s.End = t.s.now()
	outcome := t.outcome
	switch {
	case err != nil:
		outcome = spanFailed
		s.Error = err.Error()
		kind := "permanent"
		if te := (*taskerr.TransientError)(nil); errors.As(err, &te) {
			kind = "transient" // the machine retries it
		}
		s.Attrs = append(s.Attrs, sb.StringAttr(sb.AttrErrorType, kind))
	case outcome != "":
	case wait > 0:
		outcome = spanWaiting
		s.Attrs = append(s.Attrs, sb.IntAttr("switchboard.pipeline.wait_seconds", wait))
	default:
		outcome = spanOK
	}
	s.Attrs = append(s.Attrs, sb.StringAttr(sb.AttrOutcome, outcome))
	t.s.Telemetry.Record(t.ctx, s)
}

// recordExecution records the execution's span when Finish ends it: from
// its first step's start to now.
func (s *Steps) recordExecution(ctx context.Context, in FinishInput, out Outcome) {
	if s.Telemetry == nil {
		return
	}
	d := in.Delivery
	end := s.now()
	sp := sb.Span{Trace: sb.ChainTrace(d.Run.RootRunID), ID: sb.PipelineSpan(d.Run.RunID, in.Execution), Parent: sb.RunSpan(d.Run.RunID),
		Name: executionSpanName, Start: s.firstStepStart(ctx, in.Execution, end), End: end,
		Attrs: []sb.Attr{sb.StringAttr(sb.AttrExecution, in.Execution), sb.StringAttr(sb.AttrAgentID, d.AgentID),
			sb.StringAttr(sb.AttrRunID, d.Run.RunID), sb.StringAttr(sb.AttrConversationID, d.Run.RootRunID),
			sb.StringAttr(sb.AttrOutcome, out.Status)}}
	if out.Status == "failed" {
		sp.Error = out.Reason
		sp.Attrs = append(sp.Attrs, sb.StringAttr(sb.AttrStep, out.FailedStep), sb.StringAttr(sb.AttrErrorType, "step_failed"))
	}
	s.Telemetry.Record(ctx, sp)
}

// firstStepStart is when the execution's first step (convert, else
// upload) first began, as its marker keeps it; otherwise (no marker, or
// one written before markers kept it) fallback.
func (s *Steps) firstStepStart(ctx context.Context, execution string, fallback time.Time) time.Time {
	for _, step := range []string{StepConvert, StepUpload} {
		m, found, err := s.readMarker(ctx, execution, step)
		if err == nil && found && !m.StartedAt.IsZero() {
			return m.StartedAt
		}
	}
	return fallback
}
