package sfn_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sfnapi "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/switchboard-dev/switchboard/shared/adapters/lambdalocal"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfn"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfn/sfnlocal"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfn/sfntest"
	"github.com/switchboard-dev/switchboard/shared/platform/taskerr"
	"github.com/switchboard-dev/switchboard/shared/platform/waittest"
)

// messageRow is what the ask-agent machine hands the AgentMessages function.
type messageRow struct {
	Key, From, To, Channel, Direction, Status string
	Content, Reason                           string
	RunID                                     string `json:"runId"`
	ParentRunID                               string `json:"parentRunId"`
	RootRunID                                 string `json:"rootRunId"`
}

type askInput struct {
	From           string   `json:"from"`
	To             string   `json:"to"`
	Question       string   `json:"question"`
	RunID          string   `json:"runId"`
	RootRunID      string   `json:"rootRunId"`
	CallPath       []string `json:"callPath"`
	TimeoutSeconds int      `json:"timeoutSeconds"`
	ParentSpanID   string   `json:"parentSpanId"`          // always there: RunTarget's path to it must resolve
	ExecutionID    string   `json:"executionId,omitempty"` // the guard's payload only
}

type runInput struct {
	Agent, From, Question string
	ParentRunID           string `json:"parentRunId"`
	RootRunID             string `json:"rootRunId"`
	ParentSpanID          string `json:"parentSpanId"`
	ExecutionID           string `json:"executionId"`
}

type runOutput struct {
	Answer string `json:"answer"`
	RunID  string `json:"runId"`
}

// askWorld stands in for the ask_agent handlers (they belong to the agent
// communication use case): the guard's rules, a message log and agents
// that answer, never answer ("silent") or fail. Its guard records the
// question (the real one records a refused question only; the answering
// Task records an admitted one) and the answering run its answer; the
// machine's record Task writes only a timeout or a failure.
type askWorld struct {
	mu           sync.Mutex
	rows         []messageRow
	recordFails  int         // the next n record calls fail with a TransientError
	recordCalls  []time.Time // every record call, failed ones included
	targetCalled int
	parentSpan   string // the asking span the answering Task was handed
}

func (w *askWorld) handlers() lambdalocal.Invoker {
	return lambdalocal.Invoker{
		"ask-guard": lambda.NewHandler(func(ctx context.Context, in askInput) error {
			var denied error
			switch {
			case in.To == in.From:
				denied = &taskerr.DeniedError{Reason: "you cannot ask yourself"}
			case contains(in.CallPath, in.To):
				denied = &taskerr.DeniedError{Reason: in.To + " is already in this chain of questions (" + strings.Join(in.CallPath, " → ") + ")"}
			}
			row := messageRow{Key: in.ExecutionID + "#request", From: in.From, To: in.To, Channel: "ask", Direction: "request",
				Status: "delivered", Content: in.Question, RunID: in.RunID, RootRunID: in.RootRunID}
			var d *taskerr.DeniedError
			if errors.As(denied, &d) {
				row.Status, row.Reason = "denied", d.Reason
			}
			if err := w.record(row); err != nil {
				return err
			}
			return denied
		}),
		"agent-message": lambda.NewHandler(func(ctx context.Context, row messageRow) error {
			return w.record(row)
		}),
		"ask-run": lambda.NewHandler(func(ctx context.Context, in runInput) (runOutput, error) {
			w.mu.Lock()
			w.targetCalled++
			w.parentSpan = in.ParentSpanID
			w.mu.Unlock()
			switch in.Agent {
			case "silent":
				<-ctx.Done() // never answers; the Task's timeout must end it
				return runOutput{}, ctx.Err()
			case "broken":
				return runOutput{}, &taskerr.PermanentError{Message: "model refused the request"}
			}
			out := runOutput{Answer: in.Agent + " says: 42 is the answer to " + in.Question, RunID: "run-" + in.Agent}
			return out, w.record(messageRow{Key: in.ExecutionID + "#response", From: in.Agent, To: in.From, Channel: "ask",
				Direction: "response", Status: "delivered", Content: out.Answer, RunID: out.RunID, ParentRunID: in.ParentRunID,
				RootRunID: in.RootRunID})
		}),
	}
}

// record keeps row, unless a failure is due.
func (w *askWorld) record(row messageRow) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.recordCalls = append(w.recordCalls, time.Now())
	if w.recordFails > 0 {
		w.recordFails--
		return &taskerr.TransientError{Message: "table throttled"}
	}
	w.rows = append(w.rows, row)
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (w *askWorld) snapshot() []messageRow {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]messageRow(nil), w.rows...)
}

func askMachine() sfnlocal.Machine {
	return sfnlocal.Machine{
		Name: "ask-agent", Type: types.StateMachineTypeExpress,
		File: filepath.Join(repoRoot, "infra", "statemachines", "ask-agent.asl.json"),
		Substitutions: map[string]string{
			"AskGuardFunctionArn":     sfnlocal.FunctionARN("ask-guard"),
			"AgentMessageFunctionArn": sfnlocal.FunctionARN("agent-message"),
			"AskRunFunctionArn":       sfnlocal.FunctionARN("ask-run"),
		},
	}
}

type askResult struct {
	Status, Agent, Answer, Reason, RunID string
}

func ask(t testing.TB, env *sfntest.Env, in askInput) askResult {
	t.Helper()
	b, _ := json.Marshal(in)
	out, err := env.Client.StartSyncExecution(context.Background(), &sfnapi.StartSyncExecutionInput{
		StateMachineArn: aws.String(env.ARN(t, "ask-agent")), Input: aws.String(string(b)),
	})
	if err != nil {
		t.Fatalf("StartSyncExecution: %v", err)
	}
	if out.Status != types.SyncExecutionStatusSucceeded {
		t.Fatalf("execution %s: %s %s", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause))
	}
	var res askResult
	if err := json.Unmarshal([]byte(aws.ToString(out.Output)), &res); err != nil {
		t.Fatalf("output %s: %v", aws.ToString(out.Output), err)
	}
	return res
}

func question(from, to string, path ...string) askInput {
	return askInput{From: from, To: to, Question: "what is 6×7?", RunID: "run-" + from, RootRunID: "root-1",
		CallPath: append(path, from), TimeoutSeconds: 5, ParentSpanID: "5b2e9d0c4f1a7e36"}
}

func TestAskAgentDelivered(t *testing.T) {
	t.Parallel() // each test has its own runtime
	w := &askWorld{}
	env := sfntest.Start(t, w.handlers(), askMachine())
	t.Logf("runtime listened after %v", env.Runtime.Started)

	got := ask(t, env, question("alice", "bob"))
	if got.Status != "delivered" || got.Agent != "bob" || !strings.Contains(got.Answer, "bob says: 42") || got.RunID != "run-bob" {
		t.Fatalf("got %+v, want delivered with bob's answer", got)
	}
	w.mu.Lock()
	if w.parentSpan != "5b2e9d0c4f1a7e36" {
		t.Errorf("the answering Task got parentSpanId %q, want the asking tool call's span", w.parentSpan)
	}
	w.mu.Unlock()
	rows := w.snapshot()
	if len(rows) != 2 {
		t.Fatalf("got %d rows %+v, want request and response", len(rows), rows)
	}
	req, resp := rows[0], rows[1]
	if req.Direction != "request" || req.Status != "delivered" || req.From != "alice" || req.To != "bob" || req.Content != "what is 6×7?" || req.RunID != "run-alice" {
		t.Errorf("request row %+v", req)
	}
	if resp.Direction != "response" || resp.Status != "delivered" || resp.From != "bob" || resp.To != "alice" ||
		resp.Content != got.Answer || resp.RunID != "run-bob" || resp.ParentRunID != "run-alice" || resp.RootRunID != "root-1" {
		t.Errorf("response row %+v", resp)
	}
	if !strings.HasSuffix(req.Key, "#request") || strings.TrimSuffix(req.Key, "#request") != strings.TrimSuffix(resp.Key, "#response") {
		t.Errorf("row keys %q, %q: want one execution id with #request and #response", req.Key, resp.Key)
	}
}

// A refusal is a DeniedError returned by a Go handler; Catch matches it by
// its type name and the asking agent is told why, at once, in a row too.
func TestAskAgentDenied(t *testing.T) {
	t.Parallel() // each test has its own runtime
	w := &askWorld{}
	env := sfntest.Start(t, w.handlers(), askMachine())
	tests := []struct {
		name       string
		in         askInput
		wantReason string
	}{
		{"yourself", question("alice", "alice"), "you cannot ask yourself"},
		{"circle A→B→A", question("bob", "alice", "alice"), "alice is already in this chain of questions (alice → bob)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(w.snapshot())
			got := ask(t, env, tt.in)
			if got.Status != "denied" || got.Reason != tt.wantReason {
				t.Fatalf("got %+v, want denied: %s", got, tt.wantReason)
			}
			rows := w.snapshot()[before:]
			if len(rows) != 1 || rows[0].Status != "denied" || rows[0].Direction != "request" || rows[0].Reason != tt.wantReason {
				t.Fatalf("rows %+v, want one denied request row", rows)
			}
		})
	}
	if w.targetCalled != 0 {
		t.Errorf("the target ran %d times for refused questions", w.targetCalled)
	}
}

func TestAskAgentTimeout(t *testing.T) {
	t.Parallel() // each test has its own runtime
	w := &askWorld{}
	env := sfntest.Start(t, w.handlers(), askMachine())
	in := question("alice", "silent")
	in.TimeoutSeconds = 1 // the smallest whole timeout Step Functions takes
	got := ask(t, env, in)
	if got.Status != "timeout" || got.Reason != "no answer within 1 seconds" {
		t.Fatalf("got %+v, want timeout", got)
	}
	rows := w.snapshot()
	if len(rows) != 2 || rows[1].Status != "timeout" || rows[1].Direction != "response" || rows[1].From != "silent" {
		t.Fatalf("rows %+v, want the request and a timeout response row", rows)
	}
}

func TestAskAgentTargetFailure(t *testing.T) {
	t.Parallel() // each test has its own runtime
	w := &askWorld{}
	env := sfntest.Start(t, w.handlers(), askMachine())
	got := ask(t, env, question("alice", "broken"))
	if got.Status != "failed" || got.Reason != taskerr.NamePermanent {
		t.Fatalf("got %+v, want failed with %s", got, taskerr.NamePermanent)
	}
	rows := w.snapshot()
	if len(rows) != 2 || rows[1].Status != "failed" {
		t.Fatalf("rows %+v, want a failed response row", rows)
	}
	if w.targetCalled != 1 {
		t.Errorf("target ran %d times; a started run must not be retried", w.targetCalled)
	}
}

// Retry on TransientError waits IntervalSeconds × BackoffRate^n (scaled by
// sfntest.TimeScale) and gives up after MaxAttempts.
func TestAskAgentRetriesTransientErrors(t *testing.T) {
	t.Parallel() // each test has its own runtime
	w := &askWorld{recordFails: 2}
	env := sfntest.Start(t, w.handlers(), askMachine())
	got := ask(t, env, question("alice", "bob"))
	if got.Status != "delivered" {
		t.Fatalf("got %+v, want delivered after two retries", got)
	}
	if n := len(w.recordCalls); n != 4 { // request: 2 failures + 1 success; response: 1
		t.Fatalf("record called %d times, want 4", n)
	}
	t.Logf("retry waits: %v, %v (ASL 1 s and 2 s, time scale %v)",
		w.recordCalls[1].Sub(w.recordCalls[0]).Round(time.Millisecond),
		w.recordCalls[2].Sub(w.recordCalls[1]).Round(time.Millisecond), sfntest.TimeScale)

	// Four failures exceed MaxAttempts 3: Catch takes the execution to failed.
	w.mu.Lock()
	w.recordFails, w.recordCalls, w.rows = 4, nil, nil
	w.mu.Unlock()
	got = ask(t, env, question("alice", "bob"))
	if got.Status != "failed" || got.Reason != taskerr.NameTransient {
		t.Fatalf("got %+v, want failed with %s after the retries", got, taskerr.NameTransient)
	}
	if n := len(w.recordCalls); n != 4 {
		t.Errorf("record called %d times, want 1 + 3 retries", n)
	}
}

// approvalWorld drives the Standard test machine with a task token.
type approvalWorld struct {
	tokens  chan string
	hold    chan struct{} // when set, the approval Lambda returns only after it is closed
	mu      sync.Mutex
	uploads int
	told    []string
}

func (w *approvalWorld) handlers() lambdalocal.Invoker {
	return lambdalocal.Invoker{
		"upload": lambda.NewHandler(func(ctx context.Context, in struct{ Path, Key string }) (map[string]string, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.uploads++
			return map[string]string{"url": "https://cloud.example/s/" + in.Path}, nil
		}),
		"approval": lambda.NewHandler(func(ctx context.Context, in struct{ Token, URL string }) error {
			w.tokens <- in.Token // the approval request goes out with the token
			if w.hold != nil {
				<-w.hold
			}
			return nil
		}),
		"tell": lambda.NewHandler(func(ctx context.Context, in struct{ Error string }) error {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.told = append(w.told, in.Error)
			return nil
		}),
	}
}

func approvalMachine() sfnlocal.Machine {
	return sfnlocal.Machine{
		Name: "approval", Type: types.StateMachineTypeStandard, File: "testdata/approval.asl.json",
		Substitutions: map[string]string{
			"UploadFunctionArn":   sfnlocal.FunctionARN("upload"),
			"ApprovalFunctionArn": sfnlocal.FunctionARN("approval"),
			"TellFunctionArn":     sfnlocal.FunctionARN("tell"),
		},
	}
}

func startApproval(t *testing.T, env *sfntest.Env, input string) string {
	t.Helper()
	out, err := env.Client.StartExecution(context.Background(), &sfnapi.StartExecutionInput{
		StateMachineArn: aws.String(env.ARN(t, "approval")), Input: aws.String(input),
	})
	if err != nil {
		t.Fatalf("StartExecution: %v", err)
	}
	return aws.ToString(out.ExecutionArn)
}

// waitDone polls: the execution runs in the Step Functions Local child
// process, which sends no event when it ends.
func waitDone(t *testing.T, c *sfnapi.Client, arn string) *sfnapi.DescribeExecutionOutput {
	t.Helper()
	var d *sfnapi.DescribeExecutionOutput
	waittest.Poll(t, 10*time.Second, "execution ended", func() bool {
		var err error
		d, err = c.DescribeExecution(context.Background(), &sfnapi.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			t.Fatalf("DescribeExecution: %v", err)
		}
		return d.Status != types.ExecutionStatusRunning
	})
	return d
}

func TestTaskTokenSuccessResumes(t *testing.T) {
	t.Parallel() // each test has its own runtime
	w := &approvalWorld{tokens: make(chan string, 1)}
	env := sfntest.Start(t, w.handlers(), approvalMachine())
	ctx := context.Background()
	arn := startApproval(t, env, `{"path":"report.xlsx","approvalTimeoutSeconds":30}`)
	token := <-w.tokens

	d, err := env.Client.DescribeExecution(ctx, &sfnapi.DescribeExecutionInput{ExecutionArn: &arn})
	if err != nil || d.Status != types.ExecutionStatusRunning {
		t.Fatalf("while waiting for the approval: %v %v, want RUNNING", d.Status, err)
	}
	if _, err := env.Client.SendTaskSuccess(ctx, &sfnapi.SendTaskSuccessInput{TaskToken: &token, Output: aws.String(`{"by":"alice"}`)}); err != nil {
		t.Fatalf("SendTaskSuccess: %v", err)
	}
	d = waitDone(t, env.Client, arn)
	if d.Status != types.ExecutionStatusSucceeded || !strings.Contains(aws.ToString(d.Output), `"approval":{"by":"alice"}`) {
		t.Fatalf("got %v %s, want SUCCEEDED with the approval", d.Status, aws.ToString(d.Output))
	}

	// A token works once, as in AWS.
	_, err = env.Client.SendTaskSuccess(ctx, &sfnapi.SendTaskSuccessInput{TaskToken: &token, Output: aws.String(`{}`)})
	var timedOut *types.TaskTimedOut
	if !errors.As(err, &timedOut) {
		t.Errorf("second SendTaskSuccess: got %v, want TaskTimedOut", err)
	}
}

func TestTaskTokenFailureIsCaught(t *testing.T) {
	t.Parallel() // each test has its own runtime
	w := &approvalWorld{tokens: make(chan string, 1)}
	env := sfntest.Start(t, w.handlers(), approvalMachine())
	arn := startApproval(t, env, `{"path":"report.pdf","approvalTimeoutSeconds":30}`)
	token := <-w.tokens
	if _, err := env.Client.SendTaskFailure(context.Background(), &sfnapi.SendTaskFailureInput{
		TaskToken: &token, Error: aws.String("ApprovalDenied"), Cause: aws.String("bob said no"),
	}); err != nil {
		t.Fatalf("SendTaskFailure: %v", err)
	}
	d := waitDone(t, env.Client, arn)
	if d.Status != types.ExecutionStatusFailed || aws.ToString(d.Error) != "NotDelivered" {
		t.Fatalf("got %v %s, want FAILED NotDelivered", d.Status, aws.ToString(d.Error))
	}
	if len(w.told) != 1 || w.told[0] != "ApprovalDenied" {
		t.Errorf("told %v, want [ApprovalDenied]", w.told)
	}
}

// A person can answer before the Lambda that sent the request has returned
// (a fast click, a slow Lambda); the answer still decides the Task.
func TestTaskTokenClosedBeforeTheLambdaReturns(t *testing.T) {
	t.Parallel() // each test has its own runtime
	w := &approvalWorld{tokens: make(chan string, 1), hold: make(chan struct{})}
	env := sfntest.Start(t, w.handlers(), approvalMachine())
	arn := startApproval(t, env, `{"path":"report.pdf","approvalTimeoutSeconds":30}`)
	token := <-w.tokens
	_, err := env.Client.SendTaskFailure(context.Background(), &sfnapi.SendTaskFailureInput{
		TaskToken: &token, Error: aws.String("ApprovalDenied"), Cause: aws.String("bob said no"),
	})
	close(w.hold)
	if err != nil {
		t.Fatalf("SendTaskFailure while the Lambda runs: %v", err)
	}
	d := waitDone(t, env.Client, arn)
	if d.Status != types.ExecutionStatusFailed || aws.ToString(d.Error) != "NotDelivered" {
		t.Fatalf("got %v %s, want FAILED NotDelivered", d.Status, aws.ToString(d.Error))
	}
}

func TestTaskTokenTimesOut(t *testing.T) {
	t.Parallel() // each test has its own runtime
	w := &approvalWorld{tokens: make(chan string, 1)}
	env := sfntest.Start(t, w.handlers(), approvalMachine())
	arn := startApproval(t, env, `{"path":"report.pdf","approvalTimeoutSeconds":1}`)
	token := <-w.tokens
	d := waitDone(t, env.Client, arn)
	if d.Status != types.ExecutionStatusFailed || len(w.told) != 1 || w.told[0] != "States.Timeout" {
		t.Fatalf("got %v, told %v; want FAILED after States.Timeout", d.Status, w.told)
	}
	_, err := env.Client.SendTaskSuccess(context.Background(), &sfnapi.SendTaskSuccessInput{TaskToken: &token, Output: aws.String(`{}`)})
	var timedOut *types.TaskTimedOut
	if !errors.As(err, &timedOut) {
		t.Errorf("SendTaskSuccess after the timeout: got %v, want TaskTimedOut", err)
	}
}

// The local API refuses what AWS refuses, so code that works locally does
// not fail in AWS for it.
func TestRefusesWhatAWSRefuses(t *testing.T) {
	t.Parallel() // each test has its own runtime
	w := &approvalWorld{tokens: make(chan string, 1)}
	env := sfntest.Start(t, w.handlers(), approvalMachine(), askMachine())
	ctx := context.Background()

	_, err := env.Client.StartSyncExecution(ctx, &sfnapi.StartSyncExecutionInput{StateMachineArn: aws.String(env.ARN(t, "approval")), Input: aws.String(`{}`)})
	var unsupported *types.StateMachineTypeNotSupported
	if !errors.As(err, &unsupported) {
		t.Errorf("StartSyncExecution on a Standard machine: got %v, want StateMachineTypeNotSupported", err)
	}
	_, err = env.Client.StartExecution(ctx, &sfnapi.StartExecutionInput{StateMachineArn: aws.String(env.ARN(t, "approval")), Input: aws.String(`{"x":"` + strings.Repeat("a", 256*1024) + `"}`)})
	if err == nil || !strings.Contains(err.Error(), "262144") {
		t.Errorf("input over 256 KiB: got %v, want the size limit", err)
	}
	_, err = env.Client.CreateStateMachine(ctx, &sfnapi.CreateStateMachineInput{
		Name: aws.String("broken"), Definition: aws.String(`{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}}`),
		RoleArn: aws.String("arn:aws:iam::000000000000:role/x"),
	})
	var invalid *types.InvalidDefinition
	if !errors.As(err, &invalid) {
		t.Errorf("CreateStateMachine with a dangling Next: got %v, want InvalidDefinition", err)
	}
}

// hostRecorder answers every request with 400 and remembers the host asked.
type hostRecorder struct{ hosts []string }

func (h *hostRecorder) Do(r *http.Request) (*http.Response, error) {
	h.hosts = append(h.hosts, r.URL.Host)
	return nil, errors.New("recorded")
}

func TestClientSyncHostPrefix(t *testing.T) {
	tests := []struct {
		name     string
		endpoint *string
		wantHost string
	}{
		{"AWS keeps the sync data plane", nil, "sync-states.eu-central-1.amazonaws.com"},
		{"custom endpoint drops the prefix", aws.String("http://127.0.0.1:8703"), "127.0.0.1:8703"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &hostRecorder{}
			c := sfn.NewClient(aws.Config{
				Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider("a", "b", ""),
				BaseEndpoint: tt.endpoint, HTTPClient: rec, RetryMaxAttempts: 1,
			})
			_, _ = c.StartSyncExecution(context.Background(), &sfnapi.StartSyncExecutionInput{StateMachineArn: aws.String("arn:aws:states:eu-central-1:1:stateMachine:x")})
			if len(rec.hosts) != 1 || rec.hosts[0] != tt.wantHost {
				t.Fatalf("asked %v, want %s", rec.hosts, tt.wantHost)
			}
		})
	}
}

// BenchmarkAskAgentExecution measures one StartSyncExecution of the real
// ask-agent file with in-process handlers: 3 states, 2 Lambda Tasks.
func BenchmarkAskAgentExecution(b *testing.B) {
	w := &askWorld{}
	env := sfntest.Start(b, w.handlers(), askMachine())
	for b.Loop() {
		ask(b, env, question("alice", "bob"))
	}
	b.ReportMetric(float64(env.Runtime.Started.Milliseconds()), "ms-runtime-start")
}

// Concurrent Map iterations each wait with their own token; answering them
// in reverse order must resume each its own iteration.
func TestTaskTokensInMapIterations(t *testing.T) {
	t.Parallel() // each test has its own runtime
	type asked struct{ token, url string }
	requests := make(chan asked, 3)
	env := sfntest.Start(t, lambdalocal.Invoker{
		"approval": lambda.NewHandler(func(ctx context.Context, in struct{ Token, URL string }) error {
			requests <- asked{in.Token, in.URL}
			return nil
		}),
	}, sfnlocal.Machine{
		Name: "map", Type: types.StateMachineTypeStandard, File: "testdata/map-approval.asl.json",
		Substitutions: map[string]string{"ApprovalFunctionArn": sfnlocal.FunctionARN("approval")},
	})
	ctx := context.Background()
	out, err := env.Client.StartExecution(ctx, &sfnapi.StartExecutionInput{
		StateMachineArn: aws.String(env.ARN(t, "map")), Input: aws.String(`{"items":["a","b","c"]}`),
	})
	if err != nil {
		t.Fatalf("StartExecution: %v", err)
	}
	var all []asked
	for range 3 {
		all = append(all, <-requests)
	}
	for i := len(all) - 1; i >= 0; i-- {
		if _, err := env.Client.SendTaskSuccess(ctx, &sfnapi.SendTaskSuccessInput{
			TaskToken: aws.String(all[i].token), Output: aws.String(`"ok-` + all[i].url + `"`),
		}); err != nil {
			t.Fatalf("SendTaskSuccess: %v", err)
		}
	}
	d := waitDone(t, env.Client, aws.ToString(out.ExecutionArn))
	if got := aws.ToString(d.Output); got != `["ok-a","ok-b","ok-c"]` {
		t.Fatalf("output %s, want each item's own answer in order", got)
	}
}
