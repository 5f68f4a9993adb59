// Package spans wires span recording into the Lambda functions that run
// agents and tools (agent-worker, tools, mcp, jobs): with
// instance.telemetry.otlp.endpoint set, a Recorder that writes to the span
// table (shared/adapters/spantable), whose stream feeds telemetry-export,
// and a flush of what an invocation recorded before it returns, since a
// Lambda is frozen between invocations. The receivers and webhooks do not
// use it: they record nothing and never wait for a flush. Internal: only
// the builders under shared/app use it.
package spans

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/switchboard-dev/switchboard/shared/adapters/spantable"
	"github.com/switchboard-dev/switchboard/shared/app/internal/actions"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/platform/telemetry"
)

// FlushBound bounds the flush at the end of an invocation: one PutItem
// into the span table takes a few milliseconds; a table that does not
// answer costs the invocation at most this, and the spans are dropped and
// counted.
const FlushBound = 200 * time.Millisecond

// Start gives a the Recorder of this function's spans (a.Core.Telemetry,
// and the approvals flow's), or returns nil and leaves a as it is without
// an endpoint.
func Start(a *actions.Actions) *telemetry.Recorder {
	c := a.Core
	tc := c.Config.Instance.Telemetry
	if !tc.Enabled() {
		return nil
	}
	tb, _ := deploy.TableByID(spantable.TableID)
	rec := telemetry.New(telemetry.Options{
		Exporter:       &spantable.Exporter{Client: c.Dynamo, Table: deploy.TableName(tb, c.Getenv)},
		Scrubber:       c.Scrubber,
		CaptureContent: tc.CaptureContent,
		FlushTimeout:   FlushBound,
		Log:            c.Log,
	})
	c.Telemetry = rec
	if a.Decide.Approvals != nil {
		a.Decide.Approvals.SetTelemetry(rec)
	}
	return rec
}

// After is h followed by a flush of rec (nil: h itself). The flush runs
// once h has returned, so a span recorded anywhere in the invocation goes
// with it; it never fails the invocation.
func After[In, Out any](h func(context.Context, In) (Out, error), rec *telemetry.Recorder) func(context.Context, In) (Out, error) {
	if rec == nil {
		return h
	}
	return func(ctx context.Context, in In) (Out, error) {
		out, err := h(ctx, in)
		flush(ctx, rec)
		return out, err
	}
}

// Handler is After for the handler shapes the builders return as any: a
// payload router (Tasks besides the function's own events) or a function
// URL handler.
func Handler(h any, rec *telemetry.Recorder) (any, error) {
	if rec == nil {
		return h, nil
	}
	switch f := h.(type) {
	case func(context.Context, json.RawMessage) (any, error):
		return After(f, rec), nil
	case func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error):
		// The response streams on after the handler returns: a span of a
		// URL request goes with the next invocation's flush.
		return After(f, rec), nil
	}
	return nil, fmt.Errorf("spans: no flush for a handler of type %T; add its shape to spans.Handler", h)
}

func flush(ctx context.Context, rec *telemetry.Recorder) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), FlushBound)
	defer cancel()
	_ = rec.Flush(ctx) // failures are logged and counted by the Recorder
}
