package sfn

import (
	"context"
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
