package devrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/switchboard-dev/switchboard/shared/adapters/awsconfig/awsprofile"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	sfnapi "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"github.com/switchboard-dev/switchboard/shared/adapters/awsconfig"
	"github.com/switchboard-dev/switchboard/shared/adapters/lambdalocal"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfn"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfn/sfnlocal"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/platform/noderun"
)

// StepFunctions is the local Step Functions service of the dev runtime:
// sfn-local on Node with its Task states calling the real handlers of this
// process through a loopback Lambda Invoke endpoint. When the user set
// AWS_ENDPOINT_URL_SFN or AWS_ENDPOINT_URL, nothing is started and the
// user's endpoint is used.
type StepFunctions struct {
	Endpoint string            // "" when the local runtime could not start
	Server   string            // "aws-local-stepfunctions 3.0.0" when local
	Err      error             // why the local runtime did not start
	ARNs     map[string]string // created machines by name (local runtime only)

	root    string
	invoker atomic.Pointer[lambdalocal.Invoker] // bound once the App exists
	lambda  *http.Server
	rt      *sfnlocal.Runtime
}

// startStepFunctions starts the local runtime unless an endpoint is set,
// and points AWS_ENDPOINT_URL_SFN at it. A missing Node or npm package is
// not fatal: no feature needs a state machine yet, so dev starts without
// one and says how to get it.
func startStepFunctions(ctx context.Context, root string) *StepFunctions {
	s := &StepFunctions{root: root}
	if os.Getenv("AWS_ENDPOINT_URL_SFN") != "" || os.Getenv("AWS_ENDPOINT_URL") != "" {
		s.Endpoint = firstSet("AWS_ENDPOINT_URL_SFN", "AWS_ENDPOINT_URL") // the user's endpoint wins
		return s
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.Err = fmt.Errorf("dev: Lambda endpoint for Step Functions: %w", err)
		return s
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.lambda = srv
	go func() { _ = srv.Serve(ln) }()
	s.rt, err = sfnlocal.Start(ctx, sfnlocal.Options{Root: root, LambdaEndpoint: "http://" + ln.Addr().String(), Log: os.Stderr})
	if err != nil {
		s.Err = err
		_ = s.lambda.Close()
		s.lambda = nil
		return s
	}
	s.Endpoint = s.rt.Endpoint
	s.Server = "aws-local-stepfunctions " + npmVersion(root, "aws-local-stepfunctions")
	_ = os.Setenv("AWS_ENDPOINT_URL_SFN", s.Endpoint)
	return s
}

// ServeHTTP is the Lambda Invoke endpoint; before bind it knows no function.
func (s *StepFunctions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	inv := lambdalocal.Invoker{}
	if p := s.invoker.Load(); p != nil {
		inv = *p
	}
	inv.ServeHTTP(w, r)
}

// bind serves every catalogue function's handler, built by handler (the
// App's, the same value each function hands to lambda.Start), and creates
// the catalogue's state machines on the local runtime.
func (s *StepFunctions) bind(ctx context.Context, handler func(fn string) (any, error), machines []deploy.StateMachine) error {
	if s.rt == nil {
		return nil
	}
	inv := lambdalocal.Invoker{}
	for _, f := range deploy.Functions {
		h, err := handler(f.Name)
		if err != nil {
			return fmt.Errorf("dev: Step Functions handler %s: %w", f.Name, err)
		}
		inv[f.Name] = lambda.NewHandler(h)
	}
	s.invoker.Store(&inv)
	if len(machines) == 0 {
		return nil
	}
	var ms []sfnlocal.Machine
	for _, m := range machines {
		subs := map[string]string{}
		for _, sub := range m.Substitutions {
			subs[sub.Key] = sfnlocal.FunctionARN(sub.Function)
		}
		file := m.Definition
		if !filepath.IsAbs(file) {
			file = filepath.Join(s.root, file)
		}
		ms = append(ms, sfnlocal.Machine{Name: m.Name, Type: types.StateMachineType(m.Type), File: file, Substitutions: subs})
	}
	c, err := s.client(ctx)
	if err != nil {
		return err
	}
	s.ARNs, err = sfnlocal.Create(ctx, c, ms...)
	return err
}

func (s *StepFunctions) client(ctx context.Context) (*sfnapi.Client, error) {
	cfg, err := awsprofile.Load(ctx)
	if err != nil {
		return nil, err
	}
	cfg = awsconfig.LocalCredentials(ctx, cfg, s.Endpoint) // make dev sets no AWS credentials
	return sfn.NewClient(cfg), nil
}

// Ping says whether the service answers: any answer of the API (here: "no
// such execution") counts; only a failed connection does not.
func (s *StepFunctions) Ping(ctx context.Context) error {
	if s.Err != nil {
		return s.Err
	}
	if s.Endpoint == "" {
		return errors.New("dev: Step Functions not started")
	}
	c, err := s.client(ctx)
	if err != nil {
		return err
	}
	_, err = c.DescribeExecution(ctx, &sfnapi.DescribeExecutionInput{
		ExecutionArn: aws.String("arn:aws:states:us-east-1:000000000000:execution:healthz:healthz"),
	})
	var api smithy.APIError
	if err == nil || errors.As(err, &api) {
		return nil
	}
	return err
}

// Close stops the local runtime and its Lambda endpoint.
func (s *StepFunctions) Close() {
	if s.rt != nil {
		s.rt.Stop()
	}
	if s.lambda != nil {
		_ = s.lambda.Close()
	}
}

// warn logs why the local runtime is missing and how to get it.
func (s *StepFunctions) warn(log *slog.Logger) {
	if s.Err != nil {
		log.Warn("switchboard dev: local Step Functions not started; no feature needs it yet. "+
			"Install Node 20+ and run `npm ci` in the repository, or set AWS_ENDPOINT_URL_SFN", "error", s.Err.Error())
	}
}

// npmVersion is the version of an installed npm package, or "unknown".
func npmVersion(root, pkg string) string {
	var p struct{ Version string }
	b, err := os.ReadFile(filepath.Join(root, "node_modules", pkg, "package.json"))
	if err != nil || json.Unmarshal(b, &p) != nil || p.Version == "" {
		return "unknown"
	}
	return p.Version
}

// repoRoot is where scripts/ and node_modules/ are: the repository holding
// the working directory, or the working directory itself.
func repoRoot() string {
	if root, err := noderun.RepoRoot(); err == nil {
		return root
	}
	wd, _ := os.Getwd()
	return wd
}
