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

// A failed delivery reaches the human once: when the router's notice went
// out, the agent's follow-up run knows it and is not answered into the
// conversation again; when the notice could not go out, the follow-up
// answers where the delivery was asked for, so the human still hears.
func TestFailureIsToldOnce(t *testing.T) {
	store := memstore.New()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	room := &sb.ReplyTo{RoomID: "GENERAL", RoomName: "general"}
	tests := []struct {
		name        string
		channelDown bool
		wantTold    int
		wantReplyTo bool
	}{
		{name: "told by the router", wantTold: 1, wantReplyTo: false},
		{name: "no channel delivered", channelDown: true, wantTold: 0, wantReplyTo: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			told, jobs := &toldChannel{down: tt.channelDown}, &jobRecorder{}
			steps := &pipeline.Steps{KV: store.KV(), Notify: router.New([]router.Channel{told}, store, log),
				Waker: jobs, Audit: store, Log: log}
			in := failed(fmt.Sprintf("agent-%d", i), fmt.Sprintf("doc-once-%d", i), "share", "share: Nextcloud knows no such user")
			in.Delivery.ReplyTo = room
			if _, err := steps.Finish(context.Background(), in); err != nil {
				t.Fatal(err)
			}
			if got := told.all(); len(got) != tt.wantTold {
				t.Errorf("the human was told %d times, want %d: %q", len(got), tt.wantTold, got)
			}
			js := jobs.all()
			if len(js) != 1 {
				t.Fatalf("%d follow-up runs, want 1", len(js))
			}
			if got := js[0].ReplyTo != nil; got != tt.wantReplyTo {
				t.Errorf("follow-up answers into the conversation = %v, want %v", got, tt.wantReplyTo)
			}
			if mentions := strings.Contains(js[0].Text, "told this already (through Telegram)"); mentions != !tt.wantReplyTo {
				t.Errorf("follow-up text %q: says the human was told = %v, want %v", js[0].Text, mentions, !tt.wantReplyTo)
			}
			if !strings.Contains(js[0].Text, "failed at step share") {
				t.Errorf("follow-up text %q lacks the facts", js[0].Text)
			}
		})
	}
}

// "link posted" is said only when a link was posted.
func TestFactsSayWhatWasPosted(t *testing.T) {
	tests := []struct {
		name string
		done pipeline.Progress
		want string
		not  string
	}{
		{name: "a share's link", done: pipeline.Progress{Uploaded: "/r/q3.xlsx", Link: "https://c/s/x", MessageID: "m1"}, want: "link posted in the room"},
		{name: "the file's link", done: pipeline.Progress{Uploaded: "/r/q3.xlsx", FileLink: "https://c/f/7", MessageID: "m1"}, want: "link posted in the room"},
		{name: "no link at all", done: pipeline.Progress{Uploaded: "/r/q3.xlsx", MessageID: "m1"}, want: "its path posted in the room (there was no link to post)", not: "link posted"},
		{name: "not posted", done: pipeline.Progress{Uploaded: "/r/q3.xlsx"}, not: "posted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pipeline.Facts("doc-x", pipeline.Outcome{Status: "delivered", Done: tt.done})
			if tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("Facts = %q, want %q in it", got, tt.want)
			}
			if tt.not != "" && strings.Contains(got, tt.not) {
				t.Errorf("Facts = %q, must not say %q", got, tt.not)
			}
		})
	}
}
