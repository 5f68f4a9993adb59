package app

import (
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/spantable"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/platform/telemetry"
)

// StartTelemetry is the one place that wires span recording
// (docs/telemetry.md) into a process built on App: with
// instance.telemetry.otlp.endpoint set, the engine, the wake worker, the
// approvals flow and the document pipeline's steps record into a Recorder
// that writes their spans into the span table every second, from its own
// goroutine, through the same exporter the functions use in AWS
// (shared/adapters/spantable). SpanReader reads them back for the export.
// The caller closes the Recorder (a bounded last flush) when it stops. Nil
// without an endpoint.
func (a *App) StartTelemetry() *telemetry.Recorder {
	tc := a.core.Config.Instance.Telemetry
	if !tc.Enabled() {
		return nil
	}
	rec := telemetry.New(telemetry.Options{Exporter: &spantable.Exporter{Client: a.core.Dynamo, Table: a.spanTable()},
		Scrubber: a.core.Scrubber, CaptureContent: tc.CaptureContent, Interval: time.Second, Log: a.core.Log})
	a.core.Telemetry = rec
	a.agents.Engine.Telemetry, a.agents.Worker.Telemetry = rec, rec
	if a.decide.Approvals != nil {
		a.decide.Approvals.SetTelemetry(rec)
	}
	return rec
}

// SpanReader reads the items written to the span table from now on: the
// stand-in for the table's stream, which switchboard dev does not have.
func (a *App) SpanReader() *spantable.Reader {
	return spantable.NewReader(a.core.Dynamo, a.spanTable(), time.Now)
}

func (a *App) spanTable() string {
	tb, _ := deploy.TableByID(spantable.TableID)
	return deploy.TableName(tb, a.core.Getenv)
}
