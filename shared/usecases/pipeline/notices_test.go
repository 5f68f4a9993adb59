package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/pipeline"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// failed is the ReportFailure Task's input for a delivery of agent that
// failed at step with the step's error message.
func failed(agent, execution, step, message string) pipeline.FinishInput {
	cause, _ := json.Marshal(map[string]string{"errorType": "PermanentError", "errorMessage": message})
	r := run
	r.AgentID = agent
	return pipeline.FinishInput{
		StepInput: pipeline.StepInput{Op: pipeline.OpFinish, Execution: execution, State: pipeline.State{
			Delivery: pipeline.Delivery{AgentID: agent, Run: r}}},
		Status: "failed", FailedStep: step, Error: &pipeline.TaskError{Error: "PermanentError", Cause: string(cause)},
	}
}

// One agent's failing deliveries tell the human at most
// pipeline.MaxFailureNotices times in any hour; the last of those says so
// and until when, the rest are held (logged and audited, and the agent is
// still told of each). Other agents have their own budget; an hour after
// the first notice the next failure is told again. A share whose approval
// could not be verified is always told.
func TestFailureNoticesAreLimitedPerAgent(t *testing.T) {
	// The state table expires the notice list by the real clock: start near it.
	begin := time.Now().UTC().Truncate(time.Hour).Add(30 * time.Minute)
	clock := clocktest.New(begin)
	store := memstore.New()
	told, jobs := &toldChannel{}, &jobRecorder{}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	steps := &pipeline.Steps{KV: store.KV(), Notify: router.New([]router.Channel{told}, store, log),
		Waker: jobs, Audit: store, Log: log, Now: clock.Now}
	finish := func(in pipeline.FinishInput) pipeline.Outcome {
		t.Helper()
		out, err := steps.Finish(context.Background(), in)
		if err != nil {
			t.Fatalf("Finish %s: %v", in.Execution, err)
		}
		return out
	}

	const n = 5
	var outs []pipeline.Outcome
	for i := range n {
		outs = append(outs, finish(failed(agentID, fmt.Sprintf("doc-hermes-%d", i), "upload", "upload: the quota is full (507)")))
		clock.Add(time.Minute)
	}
	got := told.all()
	if len(got) != pipeline.MaxFailureNotices {
		t.Fatalf("human told %d times for %d failures, want %d: %q", len(got), n, pipeline.MaxFailureNotices, got)
	}
	last := got[len(got)-1]
	for _, want := range []string{"doc-hermes-2 failed at step upload",
		"further failed deliveries of hermes are not sent to you until " + begin.Add(time.Hour).Format("15:04") + " UTC",
		"audit", "hermes is told of each"} {
		if !strings.Contains(last, want) {
			t.Errorf("the last notice %q does not say %q", last, want)
		}
	}
	for i, o := range outs {
		if held := i >= pipeline.MaxFailureNotices; o.NoticeHeld != held || (o.Told == "") != held {
			t.Errorf("failure %d: told %q, held %v; want held %v", i, o.Told, o.NoticeHeld, held)
		}
	}
	if js := jobs.all(); len(js) != n {
		t.Errorf("%d follow-up runs, want %d: the agent hears of every failure", len(js), n)
	}
	entries, _ := store.ByRoot(context.Background(), run.RootRunID)
	audited := 0
	for _, e := range entries {
		if e.Tool == pipeline.ToolName && e.Outcome == sb.OutcomeError {
			audited++
		}
	}
	if audited != n {
		t.Errorf("%d failed deliveries audited, want %d", audited, n)
	}

	// Another agent's failure has its own budget.
	finish(failed(plainID, "doc-ares-1", "upload", "upload: the quota is full (507)"))
	// A forged approval is told even now.
	finish(failed(agentID, "doc-hermes-forged", "share", "share: the approval could not be verified: the approval named is not the one asked for this delivery (x); no share was made"))
	if got := told.all(); len(got) != pipeline.MaxFailureNotices+2 || !strings.Contains(got[len(got)-2], "doc-ares-1") ||
		!strings.Contains(got[len(got)-1], "could not be verified") {
		t.Errorf("after hermes's budget was spent, told %q; want ares's failure and the unverified approval told", got[pipeline.MaxFailureNotices:])
	}

	// An hour after the first notice, its slot is free again.
	clock.Set(begin.Add(time.Hour))
	finish(failed(agentID, "doc-hermes-next", "upload", "upload: the quota is full (507)"))
	if got := told.all(); len(got) != pipeline.MaxFailureNotices+3 || !strings.Contains(got[len(got)-1], "doc-hermes-next") {
		t.Errorf("an hour on, told %q; want the new failure told", got[pipeline.MaxFailureNotices+2:])
	}
}
