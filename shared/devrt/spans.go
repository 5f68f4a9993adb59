package devrt

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/spantable"
	"github.com/switchboard-dev/switchboard/shared/app"
	"github.com/switchboard-dev/switchboard/shared/app/telemetryexportfn"
	"github.com/switchboard-dev/switchboard/shared/platform/telemetry"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Span export in dev: runs and wakes write their spans into the span table
// as the functions do in AWS; instead of the table's stream (dynalite has
// none) a goroutine reads the new items every spanPoll, at most
// spanReadLimit at a time, and hands each to telemetryexportfn.Export, the
// code the telemetry-export function runs.
const (
	spanPoll      = time.Second
	spanReadLimit = 100
)

// spanExport is that goroutine and the Recorder that feeds it.
type spanExport struct {
	a        *app.App
	rec      *telemetry.Recorder
	reader   *spantable.Reader
	otlp     sb.SpanExporter
	stop     chan struct{}
	done     chan struct{}
	exported atomic.Uint64
	// notExported counts the spans of items the collector did not take;
	// dev does not retry them (telemetry-export's stream does, three times).
	notExported atomic.Uint64
}

// startSpanExport starts recording and exporting; nil without
// instance.telemetry.otlp.endpoint.
func startSpanExport(a *app.App) (*spanExport, error) {
	otlp, err := telemetryexportfn.NewExporter(a.Config())
	if err != nil || otlp == nil {
		return nil, err
	}
	e := &spanExport{a: a, reader: a.SpanReader(), otlp: otlp, stop: make(chan struct{}), done: make(chan struct{})}
	e.rec = a.StartTelemetry()
	go e.loop()
	return e, nil
}

func (e *spanExport) loop() {
	defer close(e.done)
	t := time.NewTicker(spanPoll)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			e.forward(context.Background())
		}
	}
}

// forward exports the items written since the last call.
func (e *spanExport) forward(ctx context.Context) {
	items, err := e.reader.Next(ctx, spanReadLimit)
	if err != nil {
		e.a.Log().Warn("telemetry: cannot read the span table; trying again in a second", "err", err.Error())
	}
	for _, it := range items {
		n, err := telemetryexportfn.Export(ctx, e.otlp, it.Payload)
		if err != nil {
			total := e.notExported.Add(uint64(n))
			e.a.Log().Warn("telemetry: spans not exported, the collector did not take them", "spans", n,
				"notExportedTotal", total, "err", err.Error())
			continue
		}
		e.exported.Add(uint64(n))
	}
}

// Close writes the last spans into the table (the Recorder's bounded last
// flush), stops the goroutine and exports what is left.
func (e *spanExport) Close(ctx context.Context) {
	_ = e.rec.Close(ctx)
	close(e.stop)
	<-e.done
	e.forward(ctx)
}
