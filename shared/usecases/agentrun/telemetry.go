package agentrun

import (
	"context"
	"encoding/json"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// runSpans builds the spans of one run as it goes: invoke_agent for the
// run, chat per model call, execute_tool per tool call (docs/telemetry.md).
// Without Engine.Telemetry it builds nothing and reads no clock.
type runSpans struct {
	tel   sb.Telemetry // nil: off
	now   func() time.Time
	agent sb.Agent
	run   sb.RunContext
	span  sb.Span // the invoke_agent span, recorded by end
}

func (e *Engine) startSpans(ctx context.Context, agent sb.Agent, run sb.RunContext, now time.Time) *runSpans {
	tel := e.Telemetry
	if _, off := tel.(sb.NoTelemetry); off || tel == nil {
		return &runSpans{}
	}
	trace := sb.ChainTrace(run.RootRunID)
	s := sb.Span{Trace: trace, ID: sb.RunSpan(run.RunID), Parent: parentSpan(ctx, run, trace),
		Name: sb.OpInvokeAgent + " " + agent.ID, Start: now,
		Attrs: []sb.Attr{
			sb.StringAttr(sb.AttrOperation, sb.OpInvokeAgent), sb.StringAttr(sb.AttrAgentName, agent.ID),
			sb.StringAttr(sb.AttrAgentID, agent.ID), sb.StringAttr(sb.AttrConversationID, run.RootRunID),
			sb.StringAttr(sb.AttrRunID, run.RunID), sb.StringAttr(sb.AttrProvider, providerName(agent.Provider)),
			// No gen_ai.request.model here: backends take a span with one
			// for a model call (Langfuse's generations) and would count
			// the run's cost twice.
		}}
	if run.ParentRunID != "" {
		s.Attrs = append(s.Attrs, sb.StringAttr(sb.AttrParentRunID, run.ParentRunID))
	}
	if tel.CapturesContent() {
		s.Attrs = append(s.Attrs, sb.StringAttr(sb.AttrSystemInstructions, agent.SystemPrompt))
	}
	return &runSpans{tel: tel, now: e.now, agent: agent, run: run, span: s}
}

// clock is the time now, zero when telemetry is off (the engine's clock is
// read only for what it records).
func (r *runSpans) clock() time.Time {
	if r.tel == nil {
		return time.Time{}
	}
	return r.now()
}

// parentSpan is where a run's span hangs: the span ctx names (the asking
// tool call in this process, the wake), else the parent run's span, else
// none (the chain's root).
func parentSpan(ctx context.Context, run sb.RunContext, trace sb.TraceID) sb.SpanID {
	if p, ok := sb.SpanParentFrom(ctx); ok && (p.Trace.IsZero() || p.Trace == trace) {
		return p.Span
	}
	if run.ParentRunID != "" {
		return sb.RunSpan(run.ParentRunID)
	}
	return sb.SpanID{}
}

// chat records the step-th model call.
func (r *runSpans) chat(ctx context.Context, step int, start time.Time, req sb.ModelRequest, resp sb.ModelResponse, err error, calls sb.ModelCalls) {
	if r.tel == nil {
		return
	}
	end := r.now()
	model := r.agent.ModelName
	s := sb.Span{Trace: r.span.Trace, ID: sb.ChatSpan(r.run.RunID, step), Parent: r.span.ID,
		Name: sb.OpChat + " " + model, Kind: sb.SpanClient, Start: start, End: end,
		Attrs: []sb.Attr{
			sb.StringAttr(sb.AttrOperation, sb.OpChat), sb.StringAttr(sb.AttrProvider, providerName(r.agent.Provider)),
			sb.StringAttr(sb.AttrRequestModel, model), sb.StringAttr(sb.AttrConversationID, r.run.RootRunID),
		}}
	if err != nil {
		s.Error = modelReason(err)
		s.Attrs = append(s.Attrs, sb.StringAttr(sb.AttrErrorType, s.Error))
	} else {
		reason := "stop"
		if len(resp.ToolCalls) > 0 {
			reason = "tool_calls"
		}
		s.Attrs = append(s.Attrs, sb.IntAttr(sb.AttrInputTokens, resp.TokensIn), sb.IntAttr(sb.AttrOutputTokens, resp.TokensOut),
			sb.FloatAttr(sb.AttrCost, r.agent.Pricing.Cost(resp.TokensIn, resp.TokensOut)),
			sb.StringAttr(sb.AttrFinishReasons, reason))
	}
	// The providers count retries, not when each happened: the events
	// stand at the call's end, one per retried attempt.
	if calls.Retries > 0 {
		s.Attrs = append(s.Attrs, sb.IntAttr(sb.AttrRetries, calls.Retries))
	}
	for i := range calls.Retries {
		s.Events = append(s.Events, sb.SpanEvent{Name: "retry", Time: end, Attrs: []sb.Attr{
			sb.IntAttr("switchboard.retry.number", i+1), sb.IntAttr("switchboard.retry.waited_ms", int(calls.Waited.Milliseconds()))}})
	}
	if r.tel.CapturesContent() {
		in, _ := json.Marshal(req.Messages)
		s.Attrs = append(s.Attrs, sb.StringAttr(sb.AttrInputMessages, string(in)))
		if err == nil {
			out, _ := json.Marshal(sb.ModelMessage{Role: "assistant", Content: resp.Text, ToolCalls: resp.ToolCalls})
			s.Attrs = append(s.Attrs, sb.StringAttr(sb.AttrOutputMessages, string(out)))
		}
	}
	r.tel.Record(ctx, s)
}

// tool records the run's index-th tool call, with what the executor's
// audit entry says of it (audit: see toolContext; nil or empty when the
// invoker records none).
func (r *runSpans) tool(ctx context.Context, index int, tc sb.ModelToolCall, start time.Time, env sb.Envelope, audit *sb.ToolAudit) {
	if r.tel == nil {
		return
	}
	end := r.now()
	name := tc.Tool + "." + tc.Action
	s := sb.Span{Trace: r.span.Trace, ID: sb.ToolSpan(r.run.RunID, index), Parent: r.span.ID,
		Name: sb.OpExecuteTool + " " + name, Start: start, End: end,
		Attrs: []sb.Attr{
			sb.StringAttr(sb.AttrOperation, sb.OpExecuteTool), sb.StringAttr(sb.AttrToolName, name),
			sb.StringAttr(sb.AttrToolCallID, tc.ID), sb.StringAttr(sb.AttrToolStatus, env.Status),
		}}
	var entry sb.AuditEntry
	if audit != nil {
		entry = audit.Entry
	}
	if entry.Decision != "" {
		s.Attrs = append(s.Attrs, sb.StringAttr(sb.AttrToolStaging, string(entry.Decision)))
	}
	if entry.Outcome != "" {
		s.Attrs = append(s.Attrs, sb.StringAttr(sb.AttrOutcome, entry.Outcome))
	}
	id := entry.ApprovalID
	if id == "" {
		id, _ = env.Data["approval_id"].(string)
	}
	if id != "" {
		s.Attrs = append(s.Attrs, sb.StringAttr(sb.AttrApprovalID, id))
	}
	if ex, ok := env.Data["executionId"].(string); ok && ex != "" {
		// A state machine it started (Documents.deliver): the execution's
		// span hangs under this run's, named by it.
		s.Attrs = append(s.Attrs, sb.StringAttr(sb.AttrExecution, ex))
	}
	if entry.DecidedBy != "" {
		s.Attrs = append(s.Attrs, sb.StringAttr(sb.AttrDecidedBy, entry.DecidedBy))
	}
	if env.Status == "error" {
		s.Error = env.Error
		s.Attrs = append(s.Attrs, sb.StringAttr(sb.AttrErrorType, "tool_error"))
	}
	if r.tel.CapturesContent() {
		body, _ := json.Marshal(env)
		s.Attrs = append(s.Attrs, sb.StringAttr(sb.AttrToolArguments, string(tc.Args)), sb.StringAttr(sb.AttrToolResult, string(body)))
	}
	r.tel.Record(ctx, s)
}

// toolContext is ctx for the index-th tool call: a run started under it in
// this process (an ask_agent target) and an approval it stages hang under
// the tool call's span, and the executor leaves its audit entry in the
// returned ToolAudit (nil when telemetry is off).
func (r *runSpans) toolContext(ctx context.Context, index int) (context.Context, *sb.ToolAudit) {
	if r.tel == nil {
		return ctx, nil
	}
	audit := &sb.ToolAudit{}
	ctx = sb.WithToolAudit(ctx, audit)
	return sb.WithSpanParent(ctx, sb.SpanParent{Trace: r.span.Trace, Span: sb.ToolSpan(r.run.RunID, index)}), audit
}

// end records the run's span with its totals and outcome.
func (r *runSpans) end(ctx context.Context, rec sb.Receipt, end time.Time) {
	if r.tel == nil {
		return
	}
	s := r.span
	s.End = end
	s.Attrs = append(s.Attrs, sb.IntAttr(sb.AttrInputTokens, rec.TokensIn), sb.IntAttr(sb.AttrOutputTokens, rec.TokensOut),
		sb.FloatAttr(sb.AttrCost, rec.CostUSD), sb.StringAttr(sb.AttrOutcome, rec.Outcome), sb.IntAttr(sb.AttrSteps, rec.Steps))
	if rec.Outcome == "error" {
		s.Error = rec.Reason
		s.Attrs = append(s.Attrs, sb.StringAttr(sb.AttrErrorType, rec.Reason))
	}
	r.tel.Record(ctx, s)
}

// providerName is gen_ai.provider.name for a configured provider: the
// conventions' names where they have one.
func providerName(p string) string {
	switch p {
	case "bedrock":
		return "aws.bedrock"
	case "":
		return "unknown"
	}
	return p
}
