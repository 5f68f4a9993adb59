package pipeline_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	"github.com/switchboard-dev/switchboard/shared/platform/telemetry/telemetrytest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/pipeline"
)

// tracedSteps is newSteps recording into spans on a clock that moves 5 ms
// a reading.
func tracedSteps(answers map[string][]any) (*pipeline.Steps, *telemetrytest.Spans) {
	steps, _, _ := newSteps(answers)
	spans := &telemetrytest.Spans{}
	// The state table ages markers out by the wall clock: the steps' clock
	// starts at the wall clock.
	steps.Telemetry, steps.Now = spans, clocktest.NewStepping(time.Now(), 5*time.Millisecond).Now
	return steps, spans
}

func attrOf(s sb.Span, key string) any { return telemetrytest.Attr(s, key) }

// A delivery is one span for its execution, under the invoke_agent span
// of the run that started it, and one span per step under that, each
// with its attempt, outcome and duration; the ids come from the run id
// and the execution name alone, so every step (its own invocation) finds
// its parent.
func TestDeliveryRecordsTheExecutionAndEachStep(t *testing.T) {
	steps, spans := tracedSteps(map[string][]any{
		"Nextcloud.convert":       {sb.FileConverted{LocalPath: "personal:q3.xlsx"}},
		"Nextcloud.upload":        {sb.FileUploaded{Path: "/reports/q3.xlsx"}},
		"Nextcloud.share":         {sharedOK},
		"RocketChat.send_message": {sb.ChatPosted{MessageID: "m1"}},
	})
	ctx := context.Background()
	in := shareStep
	in.Delivery.Format, in.Done = "xlsx", pipeline.Progress{}
	st, err := steps.Convert(ctx, in)
	for _, step := range []func(context.Context, pipeline.StepInput) (pipeline.State, error){steps.Upload, steps.Share, steps.Post} {
		if err != nil {
			t.Fatal(err)
		}
		in.State = st
		st, err = step(ctx, in)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := steps.Finish(ctx, pipeline.FinishInput{StepInput: pipeline.StepInput{Execution: in.Execution, State: st}, Status: "delivered"}); err != nil {
		t.Fatal(err)
	}

	trace, exec := sb.ChainTrace(run.RootRunID), sb.PipelineSpan(run.RunID, in.Execution)
	var firstStart time.Time
	for _, step := range []string{"convert", "upload", "share", "post", "finish"} {
		s := one(t, spans, "step "+step)
		if s.Trace != trace || s.Parent != exec || s.ID != sb.StepSpan(run.RunID, in.Execution, step, 1) {
			t.Errorf("step %s: trace %s parent %s id %s, want the chain's trace under the execution span", step, s.Trace, s.Parent, s.ID)
		}
		if attrOf(s, sb.AttrOutcome) != "ok" || attrOf(s, sb.AttrAttempt) != int64(1) || attrOf(s, sb.AttrStep) != step ||
			attrOf(s, sb.AttrExecution) != in.Execution || !s.End.After(s.Start) || s.Error != "" {
			t.Errorf("step %s: %v..%v attrs %v error %q, want attempt 1, ok, a duration", step, s.Start, s.End, s.Attrs, s.Error)
		}
		if firstStart.IsZero() {
			firstStart = s.Start
		}
	}
	e := one(t, spans, "pipeline Documents.deliver")
	if e.Trace != trace || e.ID != exec || e.Parent != sb.RunSpan(run.RunID) || attrOf(e, sb.AttrOutcome) != "delivered" ||
		attrOf(e, sb.AttrRunID) != run.RunID || attrOf(e, sb.AttrExecution) != in.Execution || e.Error != "" {
		t.Errorf("execution span %+v, want it under run-1's invoke_agent, delivered", e)
	}
	// The execution starts when its first step first began (the marker
	// keeps it), a reading before the first step's span began.
	if !e.Start.Before(firstStart) || !e.End.After(one(t, spans, "step finish").Start) {
		t.Errorf("execution %v..%v, want from the first step's start (%v) to the finish", e.Start, e.End, firstStart)
	}
}

// one returns the single span named name.
func one(t *testing.T, spans *telemetrytest.Spans, name string) sb.Span {
	t.Helper()
	got := spans.Named(name)
	if len(got) != 1 {
		t.Fatalf("%d spans named %q, want 1 (all: %v)", len(got), name, names(spans))
	}
	return got[0]
}

func names(spans *telemetrytest.Spans) []string {
	var out []string
	for _, s := range spans.All() {
		out = append(out, s.Name)
	}
	return out
}

// Each attempt of a step is its own span: a share that waits for the
// share limit says so, the try after it is attempt 2; a retried step that
// already succeeded records nothing again.
func TestStepAttemptsAreSpansOfTheirOwn(t *testing.T) {
	steps, spans := tracedSteps(map[string][]any{"Nextcloud.share": {bare429, sharedOK}})
	ctx := context.Background()
	for range 3 {
		if _, err := steps.Share(ctx, shareStep); err != nil {
			t.Fatal(err)
		}
	}
	got := spans.Named("step share")
	if len(got) != 2 {
		t.Fatalf("%d share spans, want 2 (the wait and the share; the third call found the step done)", len(got))
	}
	if attrOf(got[0], sb.AttrOutcome) != "waiting" || attrOf(got[0], "switchboard.pipeline.wait_seconds") != int64(60) ||
		attrOf(got[1], sb.AttrOutcome) != "ok" || attrOf(got[1], sb.AttrAttempt) != int64(2) || got[0].ID == got[1].ID {
		t.Errorf("share spans %v / %v, want a 60 s wait then attempt 2 ok, distinct ids", got[0].Attrs, got[1].Attrs)
	}
}

// A failed step's span carries the error and whether the machine retries
// it; the execution's span says which step failed.
func TestFailedDeliveryMarksTheStepAndTheExecution(t *testing.T) {
	steps, spans := tracedSteps(map[string][]any{"Nextcloud.upload": {toolErr(sb.EUNAVAILABLE, 503, 0, "Nextcloud is down")}})
	ctx := context.Background()
	in := shareStep
	in.Done = pipeline.Progress{}
	_, err := steps.Upload(ctx, in)
	if err == nil {
		t.Fatal("upload succeeded, want the scripted 503")
	}
	up := one(t, spans, "step upload")
	if attrOf(up, sb.AttrOutcome) != "error" || attrOf(up, sb.AttrErrorType) != "transient" || up.Error == "" {
		t.Errorf("upload span %v error %q, want a transient error", up.Attrs, up.Error)
	}
	cause := `{"errorMessage":"upload: Nextcloud is down"}`
	if _, err := steps.Finish(ctx, pipeline.FinishInput{StepInput: in, Status: "failed", FailedStep: "upload",
		Error: &pipeline.TaskError{Error: "TransientError", Cause: cause}}); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	e := one(t, spans, "pipeline Documents.deliver")
	if attrOf(e, sb.AttrOutcome) != "failed" || attrOf(e, sb.AttrStep) != "upload" || e.Error != "upload: Nextcloud is down" {
		t.Errorf("execution span %v error %q, want failed at upload with the reason", e.Attrs, e.Error)
	}
}

// Without Telemetry the steps record nothing (and keep working).
func TestStepsWithoutTelemetryRecordNothing(t *testing.T) {
	steps, _, _ := newSteps(map[string][]any{"Nextcloud.share": {sharedOK}})
	if _, err := steps.Share(context.Background(), shareStep); err != nil {
		t.Fatal(err)
	}
}
