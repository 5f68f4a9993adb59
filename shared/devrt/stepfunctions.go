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
	"strings"
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
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
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
	ARNs     map[string]string // created machines by name
	// UserKey is the variable the user's endpoint came from
	// (AWS_ENDPOINT_URL_SFN or AWS_ENDPOINT_URL); "" for the local runtime.
	UserKey string

	root    string
	devURL  string                              // the dev listener, which serves the Lambda Invoke API to a user's endpoint
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
	if key := firstSetKey("AWS_ENDPOINT_URL_SFN", "AWS_ENDPOINT_URL"); key != "" {
		s.Endpoint, s.UserKey = os.Getenv(key), key // the user's endpoint wins
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
// the catalogue's state machines on the local runtime or on the user's
// endpoint, as infra/ creates them in AWS. Their Tasks name the functions
// by FunctionARN; the local runtime calls this process's loopback Lambda
// endpoint, a user's server the Lambda Invoke API of the dev listener
// (LambdaPath), where it is pointed at it.
func (s *StepFunctions) bind(ctx context.Context, handler func(fn string) (any, error), machines []deploy.StateMachine) error {
	if s.Endpoint == "" {
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
	if s.rt != nil {
		s.ARNs, err = sfnlocal.Create(ctx, c, ms...)
		return err
	}
	s.ARNs = map[string]string{}
	for _, m := range ms {
		arn, err := createOrUpdate(ctx, c, m)
		if err != nil {
			return fmt.Errorf("dev: state machine %s on %s (%s): %w; start that Step Functions server, or unset %s to use the local runtime",
				m.Name, s.Endpoint, s.UserKey, err, s.UserKey)
		}
		s.ARNs[m.Name] = arn
	}
	return nil
}

// LambdaPath is where the dev listener serves the Lambda Invoke API to a
// user's Step Functions endpoint: POST LambdaPath{name}/invocations.
const LambdaPath = "/2015-03-31/functions/"

// createOrUpdate creates m on a user's Step Functions server; one that
// keeps its machines (LocalStack with persistence) already has it from
// the last start, and it gets this definition.
func createOrUpdate(ctx context.Context, c *sfnapi.Client, m sfnlocal.Machine) (string, error) {
	arns, err := sfnlocal.Create(ctx, c, m)
	var exists *types.StateMachineAlreadyExists
	if !errors.As(err, &exists) {
		return arns[m.Name], err
	}
	def, err := sfnlocal.Definition(m.File, m.Substitutions)
	if err != nil {
		return "", err
	}
	p := sfnapi.NewListStateMachinesPaginator(c, &sfnapi.ListStateMachinesInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return "", err
		}
		for _, sm := range page.StateMachines {
			if aws.ToString(sm.Name) == m.Name {
				_, err := c.UpdateStateMachine(ctx, &sfnapi.UpdateStateMachineInput{StateMachineArn: sm.StateMachineArn, Definition: aws.String(def)})
				return aws.ToString(sm.StateMachineArn), err
			}
		}
	}
	return "", fmt.Errorf("it exists but is not listed: %w", exists)
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

// required fails when the local runtime did not start but the config
// has a feature that runs on a state machine: ask_agent, or
// Documents.deliver (every agent with a Nextcloud block has it).
func (s *StepFunctions) required(cfg *swcfg.Config) error {
	if s.Err == nil {
		return nil
	}
	needs := machineFeatures(cfg)
	if needs == nil {
		return nil
	}
	return fmt.Errorf("dev: the local Step Functions runtime did not start (%v), and %s of %s run on it; "+
		"install Node 20+ and run `npm ci` in %s (make dev does), or set AWS_ENDPOINT_URL_SFN to a Step Functions server of yours",
		s.Err, strings.Join(needs, " and "), cfg.File, s.root)
}

// machineFeatures names the configured features that run on a state
// machine, with their agents; nil when there is none.
func machineFeatures(cfg *swcfg.Config) []string {
	var ask, deliver []string
	for _, a := range cfg.Agents {
		if a.Tools.AskAgent != nil {
			ask = append(ask, a.ID)
		}
		if a.Tools.Nextcloud != nil {
			deliver = append(deliver, a.ID)
		}
	}
	var needs []string
	if len(ask) > 0 {
		needs = append(needs, "ask_agent (agents "+strings.Join(ask, ", ")+")")
	}
	if len(deliver) > 0 {
		needs = append(needs, "Documents.deliver (agents "+strings.Join(deliver, ", ")+")")
	}
	return needs
}

// warn logs why the local runtime is missing and how to get it (no
// configured feature needs it: required said so), and, for a user's
// endpoint, where its Tasks must send their Lambda calls.
func (s *StepFunctions) warn(log *slog.Logger) {
	if s.Err != nil {
		log.Warn("switchboard dev: local Step Functions not started; no configured feature needs it (ask_agent, Documents.deliver). "+
			"Install Node 20+ and run `npm ci` in the repository, or set AWS_ENDPOINT_URL_SFN", "error", s.Err.Error())
	}
	if s.UserKey != "" {
		log.Info("switchboard dev: Step Functions is the server at "+s.Endpoint+" ("+s.UserKey+"); the state machines' Tasks invoke "+
			"Lambda functions by name: point that server's Lambda endpoint at "+s.devURL+" (it serves the Lambda Invoke API on "+LambdaPath+")",
			"endpoint", s.Endpoint)
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
