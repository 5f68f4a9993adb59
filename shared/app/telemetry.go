package app

import (
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/telemetry"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// StartTelemetry is the one place that wires span recording
// (docs/telemetry.md) into a process built on App: with
// instance.telemetry.otlp.endpoint set, the engine, the wake worker, the
// approvals flow and the document pipeline's steps record into a Recorder that exports
// through the exporter newExporter builds, every second from its own
// goroutine. The caller passes the
// exporter in, so that App does not link the OpenTelemetry SDK; it closes
// the Recorder (a bounded last flush) when it stops. Nil without an
// endpoint.
func (a *App) StartTelemetry(newExporter func() (sb.SpanExporter, error)) (*telemetry.Recorder, error) {
	tc := a.core.Config.Instance.Telemetry
	if !tc.Enabled() {
		return nil, nil
	}
	exp, err := newExporter()
	if err != nil {
		return nil, err
	}
	rec := telemetry.New(telemetry.Options{Exporter: exp, Scrubber: a.core.Scrubber, CaptureContent: tc.CaptureContent,
		Interval: time.Second, Log: a.core.Log})
	a.agents.Engine.Telemetry, a.agents.Worker.Telemetry, a.core.Telemetry = rec, rec, rec
	if a.decide.Approvals != nil {
		a.decide.Approvals.SetTelemetry(rec)
	}
	return rec, nil
}
