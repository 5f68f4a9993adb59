package telemetry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	"github.com/switchboard-dev/switchboard/shared/platform/telemetry"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// chanExporter hands every batch to a channel; err, when set, refuses it.
type chanExporter struct {
	batches chan []sb.Span
	err     error
}

func (c *chanExporter) ExportSpans(_ context.Context, spans []sb.Span) error {
	c.batches <- spans
	return c.err
}

func span(name string, attrs ...sb.Attr) sb.Span {
	return sb.Span{Trace: sb.ChainTrace("r"), ID: sb.RunSpan(name), Name: name, Attrs: attrs}
}

func TestRecordCleansEverySpan(t *testing.T) {
	exp := &chanExporter{batches: make(chan []sb.Span, 1)}
	r := telemetry.New(telemetry.Options{Exporter: exp, Scrubber: scrub.New([]string{"hunter2-secret"})})
	r.Record(context.Background(), sb.Span{Name: "chat hunter2-secret", Error: "refused hunter2-secret",
		Attrs: []sb.Attr{sb.StringAttr("note", "key hunter2-secret"), sb.StringAttr(sb.AttrInputMessages, "hi"),
			sb.IntAttr("n", 3), {Key: "odd", Value: []int{1}}},
		Events: []sb.SpanEvent{{Name: "retry", Attrs: []sb.Attr{sb.StringAttr("why", "hunter2-secret")}}}})
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := (<-exp.batches)[0]
	if got.Name != "chat ***" || got.Error != "refused ***" || got.Events[0].Attrs[0].Value != "***" {
		t.Errorf("span = %+v, want every text masked", got)
	}
	want := []sb.Attr{sb.StringAttr("note", "key ***"), sb.IntAttr("n", 3)}
	if len(got.Attrs) != len(want) || got.Attrs[0] != want[0] || got.Attrs[1] != want[1] {
		t.Errorf("attrs = %v, want %v (no content without capture, no value of another type)", got.Attrs, want)
	}
}

func TestAFullQueueDropsAndCounts(t *testing.T) {
	r := telemetry.New(telemetry.Options{Exporter: &chanExporter{batches: make(chan []sb.Span, 1)}, QueueSize: 2})
	for _, n := range []string{"a", "b", "c", "d"} {
		r.Record(context.Background(), span(n))
	}
	if got := r.Dropped(); got != 2 {
		t.Errorf("dropped = %d, want the 2 past the queue", got)
	}
}

func TestAFailedExportDropsItsBatchAndCounts(t *testing.T) {
	exp := &chanExporter{batches: make(chan []sb.Span, 2), err: errors.New("collector down")}
	r := telemetry.New(telemetry.Options{Exporter: exp, BatchSize: 2})
	for _, n := range []string{"a", "b", "c"} {
		r.Record(context.Background(), span(n))
	}
	if err := r.Flush(context.Background()); err == nil {
		t.Fatal("Flush = nil, want the exporter's error")
	}
	if len(<-exp.batches) != 2 || len(<-exp.batches) != 1 {
		t.Error("want a batch of 2, then one of 1")
	}
	if r.Dropped() != 3 || r.Exported() != 0 {
		t.Errorf("dropped %d exported %d, want 3 and 0", r.Dropped(), r.Exported())
	}
}

// With an interval, a full batch goes at once from the Recorder's own
// goroutine; Close sends what is left.
func TestBackgroundExportAndClose(t *testing.T) {
	exp := &chanExporter{batches: make(chan []sb.Span, 4)}
	r := telemetry.New(telemetry.Options{Exporter: exp, BatchSize: 2, Interval: time.Hour})
	r.Record(context.Background(), span("a"))
	r.Record(context.Background(), span("b"))
	select {
	case b := <-exp.batches:
		if len(b) != 2 {
			t.Errorf("batch of %d, want 2", len(b))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a full batch was not exported")
	}
	r.Record(context.Background(), span("c"))
	if err := r.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b := <-exp.batches; len(b) != 1 || b[0].Name != "c" {
		t.Errorf("Close exported %v, want the last span", b)
	}
	if r.Exported() != 3 {
		t.Errorf("exported = %d, want 3", r.Exported())
	}
}
