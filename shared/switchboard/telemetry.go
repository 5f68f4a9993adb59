package switchboard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// Telemetry records the spans of a chain (one trace per chain, the
// OpenTelemetry GenAI conventions) for an OpenTelemetry backend. Record
// never blocks on the network and never fails its caller: a span that
// cannot be kept is dropped and counted by the implementation, which also
// masks secrets in every attribute and caps long values. Content
// attributes (IsContentKey) are dropped unless CapturesContent is true;
// a caller may skip building them then.
type Telemetry interface {
	Record(ctx context.Context, s Span)
	CapturesContent() bool
}

// SpanExporter sends finished spans to a backend (OTLP), or to where an
// exporter picks them up. Export may block up to ctx's deadline; an error
// means the spans are lost, and the caller counts them.
type SpanExporter interface {
	ExportSpans(ctx context.Context, spans []Span) error
}

// NoTelemetry records nothing: the telemetry of an instance without
// instance.telemetry.otlp.endpoint.
type NoTelemetry struct{}

func (NoTelemetry) Record(context.Context, Span) {}
func (NoTelemetry) CapturesContent() bool        { return false }

// TraceID and SpanID are the W3C trace-context identifiers.
type (
	TraceID [16]byte
	SpanID  [8]byte
)

func (t TraceID) IsZero() bool   { return t == TraceID{} }
func (s SpanID) IsZero() bool    { return s == SpanID{} }
func (t TraceID) String() string { return hex.EncodeToString(t[:]) }
func (s SpanID) String() string  { return hex.EncodeToString(s[:]) }

// ChainTrace is the trace of the chain whose root run is rootRunID. It is
// derived from the id alone, so every run of a chain finds it, in
// whichever Lambda it runs.
func ChainTrace(rootRunID string) TraceID {
	var t TraceID
	sum := sha256.Sum256([]byte("switchboard trace " + rootRunID))
	copy(t[:], sum[:])
	return t
}

// RunSpan is the invoke_agent span of run runID; a child run in another
// Lambda names it as its parent from the run id alone.
func RunSpan(runID string) SpanID { return derivedSpan("run " + runID) }

// ToolSpan is the execute_tool span of the run's index-th tool call
// (ToolCall.CallIndex).
func ToolSpan(runID string, index int) SpanID {
	return derivedSpan("tool " + runID + " " + strconv.Itoa(index))
}

// ChatSpan is the chat span of the run's step-th model call (from 1).
func ChatSpan(runID string, step int) SpanID {
	return derivedSpan("chat " + runID + " " + strconv.Itoa(step))
}

// PipelineSpan is the span of document-pipeline execution (its name) that
// run runID started; StepSpan is the attempt-th try (from 1) of one of its
// steps. Each step runs in its own Lambda invocation and finds its parent
// from these ids alone.
func PipelineSpan(runID, execution string) SpanID {
	return derivedSpan("pipeline " + runID + " " + execution)
}

func StepSpan(runID, execution, step string, attempt int) SpanID {
	return derivedSpan("step " + runID + " " + execution + " " + step + " " + strconv.Itoa(attempt))
}

// ApprovalSpan is the span of the wait for approval id, from staging to
// the decision.
func ApprovalSpan(approvalID string) SpanID { return derivedSpan("approval " + approvalID) }

// ParseSpanID reads a SpanID's String form; ok is false for anything else.
func ParseSpanID(s string) (id SpanID, ok bool) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(id) {
		return SpanID{}, false
	}
	copy(id[:], b)
	return id, !id.IsZero()
}

func derivedSpan(key string) SpanID {
	var s SpanID
	sum := sha256.Sum256([]byte("switchboard span " + key))
	copy(s[:], sum[:])
	return s
}

// Span kinds (OpenTelemetry's): chat calls a model server, the rest run
// here.
const (
	SpanInternal = "internal"
	SpanClient   = "client"
)

// Span is one finished span. Parent zero makes it the trace's root.
type Span struct {
	Trace  TraceID
	ID     SpanID
	Parent SpanID
	Name   string
	Kind   string // SpanInternal (default) or SpanClient
	Start  time.Time
	End    time.Time
	Attrs  []Attr
	Events []SpanEvent
	// Error, when set, marks the span failed with this (caller-safe)
	// description.
	Error string
}

// SpanEvent is something that happened at one moment of a span (a retry).
type SpanEvent struct {
	Name  string
	Time  time.Time
	Attrs []Attr
}

// Attr is one span attribute. Value is a string, int64, float64 or bool
// (the constructors below make sure).
type Attr struct {
	Key   string
	Value any
}

func StringAttr(k, v string) Attr        { return Attr{k, v} }
func IntAttr(k string, v int) Attr       { return Attr{k, int64(v)} }
func FloatAttr(k string, v float64) Attr { return Attr{k, v} }
func BoolAttr(k string, v bool) Attr     { return Attr{k, v} }

// The GenAI semantic-convention attributes the spans carry
// (gen_ai_latest_experimental), and Switchboard's own.
const (
	AttrOperation      = "gen_ai.operation.name" // invoke_agent | chat | execute_tool
	AttrProvider       = "gen_ai.provider.name"
	AttrRequestModel   = "gen_ai.request.model"
	AttrAgentName      = "gen_ai.agent.name"
	AttrAgentID        = "gen_ai.agent.id"
	AttrConversationID = "gen_ai.conversation.id" // the chain's root run id
	AttrInputTokens    = "gen_ai.usage.input_tokens"
	AttrOutputTokens   = "gen_ai.usage.output_tokens"
	AttrCost           = "gen_ai.usage.cost" // USD
	AttrFinishReasons  = "gen_ai.response.finish_reasons"
	AttrToolName       = "gen_ai.tool.name"
	AttrToolCallID     = "gen_ai.tool.call.id"
	AttrErrorType      = "error.type"

	AttrRunID       = "switchboard.run.id"
	AttrParentRunID = "switchboard.run.parent_id"
	AttrOutcome     = "switchboard.outcome"
	AttrSteps       = "switchboard.run.steps"
	AttrToolStatus  = "switchboard.tool.status" // the envelope's: ok | error | pending_approval
	// AttrToolStaging is the executor's decision as its audit entry
	// records it: auto | approve (staged) | deny | approved | allowed.
	AttrToolStaging    = "switchboard.tool.staging"
	AttrApprovalID     = "switchboard.approval.id"
	AttrApprovalResult = "switchboard.approval.decision" // approved | denied | expired
	AttrDecidedBy      = "switchboard.approval.decided_by"
	AttrWaitMS         = "switchboard.approval.wait_ms"
	AttrExecution      = "switchboard.pipeline.execution"
	AttrStep           = "switchboard.pipeline.step"
	AttrAttempt        = "switchboard.pipeline.attempt"
	AttrRetries        = "switchboard.model.retries"

	// Content: only with instance.telemetry.captureContent.
	AttrInputMessages      = "gen_ai.input.messages"
	AttrOutputMessages     = "gen_ai.output.messages"
	AttrSystemInstructions = "gen_ai.system_instructions"
	AttrToolArguments      = "gen_ai.tool.call.arguments"
	AttrToolResult         = "gen_ai.tool.call.result"
)

// Operation names (gen_ai.operation.name), also the first word of the
// span names.
const (
	OpInvokeAgent = "invoke_agent"
	OpChat        = "chat"
	OpExecuteTool = "execute_tool"
)

// IsContentKey reports whether an attribute carries message content, kept
// only with instance.telemetry.captureContent.
func IsContentKey(key string) bool {
	switch key {
	case AttrInputMessages, AttrOutputMessages, AttrSystemInstructions, AttrToolArguments, AttrToolResult:
		return true
	}
	return false
}

// SpanParent is the span under which the next run started with a context
// carries it begins: the asking execute_tool span for an ask_agent target
// in the same process, the wake span for a woken run. Trace zero means
// "whatever trace the run is in" (a root run's trace is known only once
// the run has its id).
type SpanParent struct {
	Trace TraceID
	Span  SpanID
}

type spanParentKey struct{}

// WithSpanParent is ctx carrying p for the run started under it.
func WithSpanParent(ctx context.Context, p SpanParent) context.Context {
	return context.WithValue(ctx, spanParentKey{}, p)
}

// SpanParentFrom is the parent ctx carries, if any.
func SpanParentFrom(ctx context.Context) (SpanParent, bool) {
	p, ok := ctx.Value(spanParentKey{}).(SpanParent)
	return p, ok
}
