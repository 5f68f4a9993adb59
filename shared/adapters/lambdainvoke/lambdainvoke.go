// Package lambdainvoke hands wake jobs to the agent-worker Lambda with an
// asynchronous invoke (InvocationType Event): Lambda queues the event,
// retries a failing run twice and keeps the caller's answer fast.
package lambdainvoke

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// API is the part of the Lambda client used here.
type API interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// Dispatcher invokes one function asynchronously per job.
type Dispatcher struct {
	Client   API
	Function string // name or ARN of the agent-worker function
}

var _ wake.Dispatcher = (*Dispatcher)(nil)

// maxAsyncPayload is Lambda's limit for an asynchronous invocation (256 KB).
const maxAsyncPayload = 256 * 1024

// Dispatch implements wake.Dispatcher. Throttling and service errors are
// EUNAVAILABLE so that the webhook answers 503 and the poll retries.
func (d *Dispatcher) Dispatch(ctx context.Context, job wake.Job) error {
	const op = "lambdainvoke.dispatch"
	payload, err := json.Marshal(job)
	if err != nil {
		return sb.Wrap(op, sb.EINTERNAL, "the wake job could not be encoded", err)
	}
	if len(payload) > maxAsyncPayload {
		return sb.E(op, sb.EINVALID, fmt.Sprintf("the wake job is %d bytes, over Lambda's 256 KB async limit; lower maxMessagesPerRoom", len(payload)))
	}
	out, err := d.Client.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(d.Function),
		InvocationType: types.InvocationTypeEvent,
		Payload:        payload,
	})
	if err != nil {
		var tooMany *types.TooManyRequestsException
		var apiErr smithy.APIError
		if errors.As(err, &tooMany) || !errors.As(err, &apiErr) || apiErr.ErrorFault() == smithy.FaultServer {
			return sb.Wrap(op, sb.EUNAVAILABLE, "the agent worker could not be reached; try again", err)
		}
		return sb.Wrap(op, sb.EINTERNAL, "invoking the agent worker failed; check its name and the invoke grant", err)
	}
	if out.StatusCode != 202 {
		return sb.E(op, sb.EUNAVAILABLE, fmt.Sprintf("the agent worker answered %d to an async invoke, want 202", out.StatusCode))
	}
	return nil
}
