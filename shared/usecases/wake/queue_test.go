package wake_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

func TestRetryDelay(t *testing.T) {
	tests := []struct {
		name      string
		receives  int
		want      time.Duration
		wantRetry bool
	}{
		{name: "unknown", receives: 0},
		{name: "first delivery", receives: 1, want: wake.LambdaRetryDelays[0], wantRetry: true},
		{name: "last retry", receives: len(wake.LambdaRetryDelays), want: wake.LambdaRetryDelays[len(wake.LambdaRetryDelays)-1], wantRetry: true},
		{name: "past the retries", receives: len(wake.LambdaRetryDelays) + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, retry := wake.RetryDelay(tt.receives)
			if got != tt.want || retry != tt.wantRetry {
				t.Errorf("RetryDelay(%d) = %v, %v; want %v, %v", tt.receives, got, retry, tt.want, tt.wantRetry)
			}
		})
	}
}

// approvedCalls runs approved calls by id, failing those in fail.
type approvedCalls struct {
	ran  []string
	fail map[string]bool
}

func (a *approvedCalls) Execute(_ context.Context, id string) error {
	a.ran = append(a.ran, id)
	if a.fail[id] {
		return errors.New("rocket.chat unavailable")
	}
	return nil
}

func queued(id string, receives int) wake.QueuedJob {
	return wake.QueuedJob{MessageID: "m-" + id, Job: sb.WakeJob{AgentID: "hermes", ApprovalID: id}, Receives: receives}
}

// A batch runs in order and stops at the first job that fails; a message
// that is no job is dropped on the way; the failed job's retry delay is
// that of its receive count.
func TestHandleBatchStopsAtTheFirstFailure(t *testing.T) {
	tests := []struct {
		name       string
		batch      []wake.QueuedJob
		fail       map[string]bool
		wantRan    []string
		wantFailed int
		wantDelay  time.Duration
		wantRetry  bool
	}{
		{name: "all run", batch: []wake.QueuedJob{queued("a1", 1), {MessageID: "bad", BadBody: errors.New("not json")}, queued("a2", 1)},
			wantRan: []string{"a1", "a2"}, wantFailed: 3},
		{name: "second fails on its second receive", batch: []wake.QueuedJob{queued("a1", 1), queued("a2", 2), queued("a3", 1)},
			fail: map[string]bool{"a2": true}, wantRan: []string{"a1", "a2"}, wantFailed: 1, wantDelay: wake.LambdaRetryDelays[1], wantRetry: true},
		{name: "a failure past the retries leaves the delay to the queue", batch: []wake.QueuedJob{queued("a1", len(wake.LambdaRetryDelays)+1)},
			fail: map[string]bool{"a1": true}, wantRan: []string{"a1"}, wantFailed: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := &approvedCalls{fail: tt.fail}
			w := &wake.Worker{Approvals: calls}
			got := w.HandleBatch(context.Background(), tt.batch)
			if !slices.Equal(calls.ran, tt.wantRan) {
				t.Errorf("ran %v, want %v", calls.ran, tt.wantRan)
			}
			want := wake.BatchResult{Failed: tt.wantFailed, RetryIn: tt.wantDelay, Retry: tt.wantRetry}
			if got != want {
				t.Errorf("result %+v, want %+v", got, want)
			}
		})
	}
}
