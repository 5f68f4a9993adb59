// Package sfntest gives a test the local Step Functions service with its
// own state machines and handlers: a lambdalocal endpoint on 127.0.0.1 for
// the handlers, one sfn-local process for the test, the machines created
// from their ASL files, and an SDK client built by shared/adapters/sfn.
package sfntest

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sfnapi "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/switchboard-dev/switchboard/shared/adapters/lambdalocal"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfn"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfn/sfnlocal"
)

// TimeScale shrinks Retry intervals, Wait seconds and heartbeats in tests
// (an IntervalSeconds of 2 waits 20 ms).
const TimeScale = 0.01

// Env is a running local Step Functions service.
type Env struct {
	Client  *sfnapi.Client
	Runtime *sfnlocal.Runtime
	arns    map[string]string
}

// Start runs handlers and the machines for t; everything stops when t ends.
// Name functions in Substitutions with sfnlocal.FunctionARN. It fails the
// test (never skips it) when Node or the packages are missing.
func Start(t testing.TB, handlers lambdalocal.Invoker, machines ...sfnlocal.Machine) *Env {
	t.Helper()
	lambdaSrv := httptest.NewServer(handlers)
	t.Cleanup(lambdaSrv.Close)

	rt, err := sfnlocal.Start(context.Background(), sfnlocal.Options{
		LambdaEndpoint: lambdaSrv.URL,
		TimeScale:      TimeScale,
	})
	if err != nil {
		t.Fatalf("sfntest: %v", err)
	}
	t.Cleanup(func() {
		rt.Stop()
		if t.Failed() {
			t.Logf("sfn-local output (last 4 KB):\n%s", rt.Output())
		}
	})

	// Built by hand, not from LoadDefaultConfig, so that no AWS_* variable
	// or profile of the developer can redirect a test.
	client := sfn.NewClient(aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String(rt.Endpoint),
	})
	arns, err := sfnlocal.Create(t.Context(), client, machines...)
	if err != nil {
		t.Fatalf("sfntest: %v", err)
	}
	return &Env{Client: client, Runtime: rt, arns: arns}
}

// ARN returns the ARN of a machine created by Start.
func (e *Env) ARN(t testing.TB, name string) string {
	t.Helper()
	arn, ok := e.arns[name]
	if !ok {
		t.Fatalf("sfntest: no state machine %q was created", name)
	}
	return arn
}
