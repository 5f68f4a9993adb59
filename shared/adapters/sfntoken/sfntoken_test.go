package sfntoken_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sfnapi "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/switchboard-dev/switchboard/shared/adapters/awssigned"
	"github.com/switchboard-dev/switchboard/shared/adapters/lambdalocal"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfn/sfnlocal"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfn/sfntest"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfntoken"
	"github.com/switchboard-dev/switchboard/shared/platform/waittest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// waiting starts the test machine and returns its client, the execution
// and the token its approval Task waits on.
func waiting(t *testing.T) (*sfntoken.Client, *sfntest.Env, string, string) {
	t.Helper()
	tokens := make(chan string, 1)
	env := sfntest.Start(t, lambdalocal.Invoker{
		"upload": lambda.NewHandler(func(context.Context, struct{ Path string }) (map[string]string, error) {
			return map[string]string{"url": "https://cloud.example/s/x"}, nil
		}),
		"approval": lambda.NewHandler(func(_ context.Context, in struct{ Token string }) error { tokens <- in.Token; return nil }),
		"tell":     lambda.NewHandler(func(context.Context, struct{ Error string }) error { return nil }),
	}, sfnlocal.Machine{Name: "approval", Type: types.StateMachineTypeStandard, File: "../sfn/testdata/approval.asl.json",
		Substitutions: map[string]string{"UploadFunctionArn": sfnlocal.FunctionARN("upload"),
			"ApprovalFunctionArn": sfnlocal.FunctionARN("approval"), "TellFunctionArn": sfnlocal.FunctionARN("tell")}})
	out, err := env.Client.StartExecution(context.Background(), &sfnapi.StartExecutionInput{
		StateMachineArn: aws.String(env.ARN(t, "approval")), Input: aws.String(`{"path":"q3.xlsx","approvalTimeoutSeconds":30}`)})
	if err != nil {
		t.Fatal(err)
	}
	c := &sfntoken.Client{Endpoint: env.Runtime.Endpoint, Signer: awssigned.Signer{Service: "states", Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), HTTP: http.DefaultClient}}
	return c, env, aws.ToString(out.ExecutionArn), <-tokens
}

// ended polls: the execution runs in the Step Functions Local child
// process, which sends no event when it ends.
func ended(t *testing.T, env *sfntest.Env, arn string) *sfnapi.DescribeExecutionOutput {
	t.Helper()
	var d *sfnapi.DescribeExecutionOutput
	waittest.Poll(t, 10*time.Second, "execution ended", func() bool {
		var err error
		d, err = env.Client.DescribeExecution(context.Background(), &sfnapi.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		return d.Status != types.ExecutionStatusRunning
	})
	return d
}

func TestSucceedResumesOnce(t *testing.T) {
	t.Parallel()
	c, env, arn, token := waiting(t)
	if err := c.Succeed(context.Background(), token, `{"approvalId":"a1","decidedBy":"link"}`); err != nil {
		t.Fatalf("Succeed: %v", err)
	}
	if d := ended(t, env, arn); d.Status != types.ExecutionStatusSucceeded || !strings.Contains(aws.ToString(d.Output), `"approvalId":"a1"`) {
		t.Fatalf("execution %s %s, want SUCCEEDED with the output", d.Status, aws.ToString(d.Output))
	}
	if err := c.Succeed(context.Background(), token, `{}`); sb.ErrorCode(err) != sb.ECONFLICT {
		t.Errorf("second Succeed: %v, want ECONFLICT (nobody waits)", err)
	}
}

func TestFailIsCaughtByName(t *testing.T) {
	t.Parallel()
	c, env, arn, token := waiting(t)
	if err := c.Fail(context.Background(), token, "ApprovalDenied", "denied (link)"); err != nil {
		t.Fatalf("Fail: %v", err)
	}
	if d := ended(t, env, arn); d.Status != types.ExecutionStatusFailed || aws.ToString(d.Error) != "NotDelivered" {
		t.Fatalf("execution %s %s, want the Catch of ApprovalDenied to end it NotDelivered", d.Status, aws.ToString(d.Error))
	}
}

func TestUnreachableIsUnavailable(t *testing.T) {
	c := &sfntoken.Client{Endpoint: "http://127.0.0.1:1", Signer: awssigned.Signer{Service: "states", Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), HTTP: http.DefaultClient}}
	if err := c.Succeed(context.Background(), "t", "{}"); sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Errorf("got %v, want EUNAVAILABLE", err)
	}
	if _, err := c.Stop(context.Background(), "arn:aws:states:us-east-1:1:execution:m:x", "stop"); sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Errorf("Stop: got %v, want EUNAVAILABLE", err)
	}
}

// Stopping a chain stops its execution that waits for a human: it ends
// ABORTED with the stop's error and cause, its task token is void, and
// stopping it again, or one Step Functions does not know, stops nothing
// and is no error; a string that is no ARN is refused.
func TestStopAWaitingExecution(t *testing.T) {
	t.Parallel()
	c, env, arn, token := waiting(t)
	ctx := context.Background()
	stopped, err := c.Stop(ctx, arn, "the operator stopped chain root1")
	if err != nil || !stopped {
		t.Fatalf("Stop of the waiting execution = %v, %v; want true", stopped, err)
	}
	d := ended(t, env, arn)
	if d.Status != types.ExecutionStatusAborted || aws.ToString(d.Error) != sfntoken.StopError || aws.ToString(d.Cause) != "the operator stopped chain root1" {
		t.Errorf("after the stop: %v %q %q, want ABORTED with the stop's error and cause", d.Status, aws.ToString(d.Error), aws.ToString(d.Cause))
	}
	if err := c.Succeed(ctx, token, `{}`); sb.ErrorCode(err) != sb.ECONFLICT {
		t.Errorf("the stopped execution's token: Succeed = %v, want ECONFLICT (nobody waits)", err)
	}
	tests := []struct{ name, arn string }{
		{"stopped already", arn},
		{"unknown to Step Functions", arn + "-gone"},
	}
	for _, tt := range tests {
		if stopped, err := c.Stop(ctx, tt.arn, "again"); err != nil || stopped {
			t.Errorf("%s: Stop = %v, %v; want false, nil", tt.name, stopped, err)
		}
	}
	if _, err := c.Stop(ctx, "not-an-arn", "stop"); sb.ErrorCode(err) != sb.EINVALID {
		t.Errorf("Stop of a string that is no ARN = %v, want EINVALID", err)
	}
}

// Machine starts an execution once per name: the same name and input
// answer the same execution, other input is a conflict.
func TestMachineStartsOncePerName(t *testing.T) {
	t.Parallel()
	c, env, _, _ := waiting(t)
	m := sfntoken.Machine{Client: c, ARN: func() string { return env.ARN(t, "approval") }}
	ctx := context.Background()
	in := `{"path":"q4.xlsx","approvalTimeoutSeconds":30}`
	first, err := m.Start(ctx, "run-1", in)
	if err != nil || !strings.Contains(first, ":execution:") {
		t.Fatalf("Start = %q, %v; want an execution ARN", first, err)
	}
	if again, err := m.Start(ctx, "run-1", in); err != nil || again != first {
		t.Errorf("Start again = %q, %v; want %q", again, err, first)
	}
	if _, err := m.Start(ctx, "run-1", `{"path":"other.xlsx"}`); sb.ErrorCode(err) != sb.ECONFLICT {
		t.Errorf("Start with other input: %v, want conflict", err)
	}
	none := sfntoken.Machine{Client: c, ARN: func() string { return "" }}
	if _, err := none.Start(ctx, "run-2", in); sb.ErrorCode(err) != sb.ENOTFOUND {
		t.Errorf("without an ARN: %v, want not_found", err)
	}
}
