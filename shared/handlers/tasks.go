package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/switchboard-dev/switchboard/shared/platform/taskerr"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// Task is one Step Functions Task a function serves besides its own event:
// the machine's Payload carries {"op": "<name>", …}. Its errors go back to
// the machine unwrapped (taskerr types), so Retry and Catch match them.
type Task func(ctx context.Context, payload json.RawMessage) (any, error)

// Tasks are a function's Tasks by op.
type Tasks map[string]Task

// TaskOf adapts a typed Task handler: the payload is decoded into In.
func TaskOf[In, Out any](fn func(context.Context, In) (Out, error)) Task {
	return func(ctx context.Context, payload json.RawMessage) (any, error) {
		var in In
		if err := json.Unmarshal(payload, &in); err != nil {
			return nil, &taskerr.PermanentError{Message: fmt.Sprintf("task payload: %v", err)}
		}
		return fn(ctx, in)
	}
}

// route reports the op of payload ("" for a function's own events, which
// have no top-level op) and runs its Task.
func (ts Tasks) route(ctx context.Context, payload json.RawMessage) (handled bool, out any, err error) {
	var head struct {
		Op string `json:"op"`
	}
	if json.Unmarshal(payload, &head) != nil || head.Op == "" {
		return false, nil, nil
	}
	t, ok := ts[head.Op]
	if !ok {
		ops := make([]string, 0, len(ts))
		for op := range ts {
			ops = append(ops, op)
		}
		sort.Strings(ops)
		return true, nil, &taskerr.PermanentError{Message: fmt.Sprintf("this function has no task %q; it serves %s", head.Op, strings.Join(ops, ", "))}
	}
	out, err = t(ctx, payload)
	return true, out, err
}

// URLWithTasks is URL that also serves tasks: a payload with an op goes
// to its Task, anything else is a function URL request as before.
func URLWithTasks(url any, tasks Tasks) any {
	serve, ok := url.(func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error))
	if !ok || len(tasks) == 0 {
		return url
	}
	return withTasks(tasks, func(ctx context.Context, req *events.LambdaFunctionURLRequest) (any, error) {
		// The streaming response goes back as it is: the runtime streams
		// it as it did when the handler returned it directly.
		return serve(ctx, req)
	})
}

// AgentWorkerWithTasks is AgentWorker that also serves tasks, and the
// wake queue's SQS events (see WakeQueueEvents); retry may be nil where no
// queue feeds the function.
func AgentWorkerWithTasks(w *wake.Worker, tasks Tasks, retry WakeRetry) any {
	return withTasks(tasks, func(ctx context.Context, job *wakeEvent) (any, error) {
		if len(job.Records) > 0 {
			return WakeQueueEvents(ctx, w, retry, job.Records)
		}
		return nil, w.Handle(ctx, job.WakeJob)
	})
}

// wakeEvent is what the agent-worker is invoked with: a wake job (an async
// invoke), or the wake queue's batch of them (an SQS event).
type wakeEvent struct {
	sb.WakeJob
	Records []events.SQSMessage `json:"Records"`
}

// WakeRetry makes a failed wake's message (receipt) on the queue arn
// names come again after delay.
type WakeRetry interface {
	RetryIn(ctx context.Context, arn, receipt string, delay time.Duration) error
}

// WakeQueueEvents hands one SQS batch from the wake queue to the worker
// (wake.Worker.HandleBatch decides what fails and when it comes again)
// and translates the outcome: the failed message and the rest of the
// batch are batch item failures, and the failed one's visibility is set
// to its retry delay.
func WakeQueueEvents(ctx context.Context, w *wake.Worker, retry WakeRetry, records []events.SQSMessage) (events.SQSEventResponse, error) {
	batch := make([]wake.QueuedJob, len(records))
	for i, r := range records {
		q := wake.QueuedJob{MessageID: r.MessageId}
		q.BadBody = json.Unmarshal([]byte(r.Body), &q.Job)
		q.Receives, _ = strconv.Atoi(r.Attributes["ApproximateReceiveCount"])
		batch[i] = q
	}
	res := w.HandleBatch(ctx, batch)
	var out events.SQSEventResponse
	if res.Failed >= len(records) {
		return out, nil
	}
	if failed := records[res.Failed]; retry != nil && res.Retry {
		if err := retry.RetryIn(context.WithoutCancel(ctx), failed.EventSourceARN, failed.ReceiptHandle, res.RetryIn); err != nil {
			slog.WarnContext(ctx, "wake queue: could not set the retry delay; the message comes again after the queue's visibility timeout", "err", err)
		}
	}
	for _, rest := range records[res.Failed:] {
		out.BatchItemFailures = append(out.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rest.MessageId})
	}
	return out, nil
}

// withTasks is a handler that runs a payload with an op as its Task and
// decodes any other payload, the function's own event, into an E for own.
func withTasks[E any](tasks Tasks, own func(context.Context, *E) (any, error)) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, payload json.RawMessage) (any, error) {
		if handled, out, err := tasks.route(ctx, payload); handled {
			return out, err
		}
		var event E
		if err := json.Unmarshal(payload, &event); err != nil {
			return nil, err
		}
		return own(ctx, &event)
	}
}
