package wake_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/telemetry/telemetrytest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

// A woken run is one wake span in the run's chain trace, the run's own
// span under it (the run reads its parent from the context), with the
// outcome the claim was marked with.
func TestWorkerRecordsTheWakeSpanAroundTheRun(t *testing.T) {
	spans := &telemetrytest.Spans{}
	var parent sb.SpanParent
	w, _, r := newWorker(memstore.New(), func(ctx context.Context, j sb.WakeJob) (agentrun.Result, error) {
		parent, _ = sb.SpanParentFrom(ctx)
		return answered("hermes", "Die Zahlen stimmen."), nil
	})
	w.Telemetry = spans
	if err := w.Handle(context.Background(), job("hermes")); err != nil {
		t.Fatal(err)
	}
	if len(r.all()) != 1 {
		t.Fatalf("replies = %d, want 1", len(r.all()))
	}
	all := spans.Named("wake hermes")
	if len(all) != 1 {
		t.Fatalf("wake spans = %d, want 1", len(all))
	}
	s := all[0]
	if s.Trace != sb.ChainTrace("run-hermes") || !s.Parent.IsZero() || s.ID.IsZero() {
		t.Errorf("wake span trace %s parent %s id %s, want the run's chain trace as its root", s.Trace, s.Parent, s.ID)
	}
	if parent.Span != s.ID || !parent.Trace.IsZero() {
		t.Errorf("the run's context names parent %+v, want the wake span %s", parent, s.ID)
	}
	if got := telemetrytest.Attr(s, sb.AttrOutcome); got != "answered" {
		t.Errorf("outcome = %v, want answered", got)
	}
}

// A wake of a follow-up run hangs under the run that caused it.
func TestWorkerWakeOfAFollowUpJoinsItsCause(t *testing.T) {
	spans := &telemetrytest.Spans{}
	w, _, _ := newWorker(memstore.New(), func(ctx context.Context, j sb.WakeJob) (agentrun.Result, error) {
		res := answered("hermes", "")
		res.Run.ParentRunID, res.Run.RootRunID = "run-atlas", "run-atlas"
		return res, nil
	})
	w.Telemetry = spans
	if err := w.Handle(context.Background(), job("hermes")); err != nil {
		t.Fatal(err)
	}
	s := spans.Named("wake hermes")[0]
	if s.Trace != sb.ChainTrace("run-atlas") || s.Parent != sb.RunSpan("run-atlas") {
		t.Errorf("wake span = %+v, want it under the creating run", s)
	}
}
