package sfn

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	sfnapi "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// SyncMachine starts one Express state machine with StartSyncExecution and
// waits for its output. ARN is read per call: the dev runtime creates its
// machines after the functions' handlers are built.
type SyncMachine struct {
	Client *sfnapi.Client
	ARN    func() string
}

// StartSync runs the machine on input and returns its output. ENOTFOUND
// when no ARN is configured; EUNAVAILABLE when the service cannot be
// reached or the execution did not succeed (its error and cause are kept
// for the log, not for the caller).
func (m SyncMachine) StartSync(ctx context.Context, input string) (string, error) {
	const op = "stepfunctions.startSync"
	arn := m.ARN()
	if arn == "" {
		return "", sb.E(op, sb.ENOTFOUND, "no state machine is configured")
	}
	out, err := m.Client.StartSyncExecution(ctx, &sfnapi.StartSyncExecutionInput{
		StateMachineArn: aws.String(arn), Input: aws.String(input),
	})
	if err != nil {
		return "", sb.Wrap(op, sb.EUNAVAILABLE, "Step Functions could not be reached", fmt.Errorf("start %s: %w", arn, err))
	}
	if out.Status != types.SyncExecutionStatusSucceeded {
		return "", sb.Wrap(op, sb.EUNAVAILABLE, "the state machine did not finish", fmt.Errorf("execution %s: %s: %s: %s",
			aws.ToString(out.ExecutionArn), out.Status, aws.ToString(out.Error), aws.ToString(out.Cause)))
	}
	return aws.ToString(out.Output), nil
}

// Machine starts executions of a Standard state machine with
// StartExecution. ARN is read per call, as for SyncMachine.
type Machine struct {
	Client *sfnapi.Client
	ARN    func() string
}

// Start starts an execution called name on input and returns its ARN.
// Starting a running execution's name with the same input again answers
// that execution (Step Functions' own idempotency). ENOTFOUND when no ARN
// is configured; ECONFLICT when the name was used with another input;
// EUNAVAILABLE when the service cannot be reached.
func (m Machine) Start(ctx context.Context, name, input string) (string, error) {
	const op = "stepfunctions.start"
	arn := m.ARN()
	if arn == "" {
		return "", sb.E(op, sb.ENOTFOUND, "no state machine is configured")
	}
	out, err := m.Client.StartExecution(ctx, &sfnapi.StartExecutionInput{
		StateMachineArn: aws.String(arn), Name: aws.String(name), Input: aws.String(input),
	})
	var exists *types.ExecutionAlreadyExists
	switch {
	case errors.As(err, &exists):
		return "", sb.Wrap(op, sb.ECONFLICT, "an execution with this name exists with other input", err)
	case err != nil:
		return "", sb.Wrap(op, sb.EUNAVAILABLE, "Step Functions could not be reached", fmt.Errorf("start %s: %w", arn, err))
	}
	return aws.ToString(out.ExecutionArn), nil
}
