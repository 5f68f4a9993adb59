package agentrun_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	"github.com/switchboard-dev/switchboard/shared/platform/telemetry"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// discard takes every span and sends nothing.
type discard struct{}

func (discard) ExportSpans(context.Context, []sb.Span) error { return nil }

// BenchmarkRunTelemetry is what recording costs a run on the run's own
// path (building, scrubbing and queueing its spans; the export happens
// elsewhere): a run of two model calls and one tool call, without and with
// telemetry, and with content captured.
func BenchmarkRunTelemetry(b *testing.B) {
	scrubber := scrub.New([]string{"a-configured-secret-value", "another-secret-0123"})
	for _, bc := range []struct {
		name string
		rec  *telemetry.Recorder
	}{
		{"off", nil},
		{"on", telemetry.New(telemetry.Options{Exporter: discard{}, Scrubber: scrubber})},
		{"content", telemetry.New(telemetry.Options{Exporter: discard{}, Scrubber: scrubber, CaptureContent: true})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e, _ := newEngine(&recInvoker{}, memstore.New())
			if bc.rec != nil {
				e.Telemetry = bc.rec
			}
			m := &stepModel{steps: []step{calls(100, 10, call("c1", "Echo", "say", `{"text":"hi"}`)), answer("done", 200, 20)}}
			for b.Loop() {
				m.reqs = m.reqs[:0]
				if _, err := e.Run(context.Background(), agent(m), "please say hi to the team in the finance room", nil); err != nil {
					b.Fatal(err)
				}
				if bc.rec != nil {
					_ = bc.rec.Flush(context.Background()) // keeps the queue short; nothing is sent
				}
			}
		})
	}
}
