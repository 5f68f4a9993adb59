package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

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

// AgentWorkerWithTasks is AgentWorker that also serves tasks.
func AgentWorkerWithTasks(w *wake.Worker, tasks Tasks) any {
	return withTasks(tasks, func(ctx context.Context, job *sb.WakeJob) (any, error) {
		return nil, w.Handle(ctx, *job)
	})
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
