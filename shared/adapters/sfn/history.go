package sfn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sfnapi "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Execution is what an execution did, read from its history: each state
// it entered, in order (a state entered again, as in a wait loop, appears
// again), with the attempts of a Task and how it ended. No inputs or
// outputs: they can hold message texts and link passwords.
type Execution struct {
	ARN     string     `json:"executionArn"`
	Name    string     `json:"name"`
	Machine string     `json:"stateMachineArn"`
	Status  string     `json:"status"` // RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED
	Started time.Time  `json:"startDate"`
	Stopped *time.Time `json:"stopDate,omitempty"`
	Error   string     `json:"error,omitempty"`
	Steps   []Step     `json:"steps"`
	// Transitions counts the states entered (what Standard workflows bill).
	Transitions int `json:"stateTransitions"`
}

// Step is one visit of a state.
type Step struct {
	Name    string     `json:"name"`
	Type    string     `json:"type"` // Task, Choice, Wait, Pass, Fail, …
	Entered time.Time  `json:"entered"`
	Exited  *time.Time `json:"exited,omitempty"`
	// Attempts counts a Task's invocations: 1 plus its retries.
	Attempts int `json:"attempts,omitempty"`
	// Outcome: succeeded, failed (its error was caught or ended the
	// execution), or running.
	Outcome string `json:"outcome"`
	// Errors are the errors of the failed attempts, in order.
	Errors []string `json:"errors,omitempty"`
}

// Describe reads an execution and its whole history (all pages).
// ENOTFOUND for an unknown execution; EUNAVAILABLE when the service
// cannot be reached.
func Describe(ctx context.Context, c *sfnapi.Client, arn string) (Execution, error) {
	const op = "stepfunctions.describe"
	d, err := c.DescribeExecution(ctx, &sfnapi.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		return Execution{}, describeErr(op, arn, err)
	}
	x := Execution{ARN: arn, Name: aws.ToString(d.Name), Machine: aws.ToString(d.StateMachineArn), Status: string(d.Status),
		Started: aws.ToTime(d.StartDate).UTC(), Error: aws.ToString(d.Error), Steps: []Step{}}
	if d.StopDate != nil {
		t := d.StopDate.UTC()
		x.Stopped = &t
	}
	p := sfnapi.NewGetExecutionHistoryPaginator(c, &sfnapi.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 1000})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return Execution{}, describeErr(op, arn, err)
		}
		for _, ev := range page.Events {
			x.add(ev)
		}
	}
	return x, nil
}

func describeErr(op, arn string, err error) error {
	var missing *types.ExecutionDoesNotExist
	if errors.As(err, &missing) {
		return sb.Wrap(op, sb.ENOTFOUND, "no such execution", err)
	}
	var bad *types.InvalidArn
	if errors.As(err, &bad) {
		return sb.Wrap(op, sb.EINVALID, "not an execution ARN", err)
	}
	return sb.Wrap(op, sb.EUNAVAILABLE, "Step Functions could not be reached", fmt.Errorf("execution %s: %w", arn, err))
}

// add folds one history event into x.
func (x *Execution) add(ev types.HistoryEvent) {
	at := aws.ToTime(ev.Timestamp).UTC()
	typ := string(ev.Type)
	last := func() *Step {
		if len(x.Steps) == 0 {
			return nil
		}
		return &x.Steps[len(x.Steps)-1]
	}
	switch {
	case ev.StateEnteredEventDetails != nil && strings.HasSuffix(typ, "StateEntered"):
		x.Transitions++
		x.Steps = append(x.Steps, Step{Name: aws.ToString(ev.StateEnteredEventDetails.Name),
			Type: strings.TrimSuffix(typ, "StateEntered"), Entered: at, Outcome: "running"})
		if typ == "FailStateEntered" {
			x.Steps[len(x.Steps)-1].Outcome = "failed"
		}
	case ev.StateExitedEventDetails != nil && strings.HasSuffix(typ, "StateExited"):
		if s := last(); s != nil {
			s.Exited = &at
			if s.Outcome == "running" {
				s.Outcome = "succeeded"
			}
		}
	case ev.Type == types.HistoryEventTypeTaskScheduled:
		if s := last(); s != nil {
			s.Attempts++
			s.Outcome = "running"
		}
	case ev.TaskFailedEventDetails != nil:
		x.failed(aws.ToString(ev.TaskFailedEventDetails.Error))
	case ev.TaskTimedOutEventDetails != nil:
		x.failed(aws.ToString(ev.TaskTimedOutEventDetails.Error))
	case ev.LambdaFunctionFailedEventDetails != nil:
		x.failed(aws.ToString(ev.LambdaFunctionFailedEventDetails.Error))
	}
}

func (x *Execution) failed(errName string) {
	if len(x.Steps) == 0 {
		return
	}
	s := &x.Steps[len(x.Steps)-1]
	s.Outcome = "failed"
	s.Errors = append(s.Errors, errName)
}
