package approvals

import (
	"context"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// waitSpanPrefix names the span of the wait for a decision, followed by
// the staged call's Tool.action.
const waitSpanPrefix = "await_approval "

// stagedSpan is the span of the tool call staging a call of run under
// ctx (the asking execute_tool span, or the pipeline step's), "" when
// telemetry recorded none there.
func stagedSpan(ctx context.Context, run sb.RunContext) string {
	p, ok := sb.SpanParentFrom(ctx)
	if !ok || p.Span.IsZero() || (!p.Trace.IsZero() && p.Trace != sb.ChainTrace(run.RootRunID)) {
		return ""
	}
	return p.Span.String()
}

// recordWait records the wait for a's decision, from staging to the
// decision (approved, denied or expired), under the span that staged it,
// else under the asking run's invoke_agent span. Who decided is scrubbed
// by the recorder like every attribute.
func (s *Service) recordWait(ctx context.Context, a Approval) {
	if s.telemetry == nil {
		return
	}
	parent, ok := sb.ParseSpanID(a.StagedSpan)
	if !ok {
		parent = sb.RunSpan(a.Run.RunID)
	}
	span := sb.Span{Trace: sb.ChainTrace(a.Run.RootRunID), ID: sb.ApprovalSpan(a.ID), Parent: parent,
		Name: waitSpanPrefix + a.Tool + "." + a.Action, Start: a.CreatedAt, End: a.DecidedAt,
		Attrs: []sb.Attr{sb.StringAttr(sb.AttrApprovalID, a.ID), sb.StringAttr(sb.AttrApprovalResult, string(a.Status)),
			sb.StringAttr(sb.AttrDecidedBy, a.DecidedBy), sb.IntAttr(sb.AttrWaitMS, int(a.DecidedAt.Sub(a.CreatedAt).Milliseconds())),
			sb.StringAttr(sb.AttrToolName, a.Tool+"."+a.Action), sb.StringAttr(sb.AttrAgentID, a.AgentID),
			sb.StringAttr(sb.AttrRunID, a.Run.RunID), sb.StringAttr(sb.AttrConversationID, a.Run.RootRunID)}}
	s.telemetry.Record(ctx, span)
}
