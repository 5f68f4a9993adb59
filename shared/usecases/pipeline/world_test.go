package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	sfnapi "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/switchboard-dev/switchboard/shared/adapters/awssigned"
	"github.com/switchboard-dev/switchboard/shared/adapters/collabora"
	"github.com/switchboard-dev/switchboard/shared/adapters/collabora/cofake"
	"github.com/switchboard-dev/switchboard/shared/adapters/lambdalocal"
	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud"
	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob/s3fake"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfn"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfn/sfnlocal"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfn/sfntest"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfntoken"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	"github.com/switchboard-dev/switchboard/shared/platform/waittest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
	"github.com/switchboard-dev/switchboard/shared/tools/rctool"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
	"github.com/switchboard-dev/switchboard/shared/usecases/pipeline"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

const (
	agentID = "hermes"
	agentRC = "agent-hermes"
	// plainID is a second agent with the least Nextcloud and Rocket.Chat
	// settings: no collaboraUrl, no public links, no shared reports
	// folder, no defaultRoom.
	plainID = "ares"
	plainRC = "agent-ares"
	root    = "/Switchboard/Hermes"
	bucket  = "switchboard-test"
	machine = "document-pipeline"
)

var start = time.Date(2026, 5, 1, 21, 30, 0, 0, time.UTC)

// world is one test's installation: fake Nextcloud, Collabora and
// Rocket.Chat, an in-process S3 workspace, the real tools behind the real
// executor, the steps on a local Lambda endpoint and the real ASL file on
// the local Step Functions runtime.
type world struct {
	t         *testing.T
	nc        *ncfake.Server
	co        *cofake.Server
	rc        *rcfake.Server
	room      string
	blobs     *s3blob.Store
	store     *memstore.Store
	clock     *clocktest.Clock
	exec      *tools.Executor
	steps     *pipeline.Steps
	tool      *pipeline.Tool
	sfn       *sfntest.Env
	told      *toldChannel
	approvals *approvals.Service
	// approvalStore is the approvals' store, which the Share step reads.
	approvalStore *memstore.Approvals
	asked         *askedNotifier
	kv            *countingKV
	audit         *countingAudit
	jobs          *jobRecorder
	invoke        *countingRunner
	starts        *countingStarter
}

// countingStarter counts StartExecution calls.
type countingStarter struct {
	pipeline.Starter
	mu sync.Mutex
	n  int
}

func (c *countingStarter) Start(ctx context.Context, name, input string) (string, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.Starter.Start(ctx, name, input)
}

func (c *countingStarter) count() int { c.mu.Lock(); defer c.mu.Unlock(); return c.n }

// toldChannel is the human's channel behind the real router.
type toldChannel struct {
	mu    sync.Mutex
	texts []string
	down  bool
}

func (c *toldChannel) Name() string { return "Telegram" }
func (c *toldChannel) Send(_ context.Context, n router.Notice) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down {
		return fmt.Errorf("down")
	}
	c.texts = append(c.texts, n.Text)
	return nil
}
func (c *toldChannel) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.texts...)
}

// askedNotifier is the human's view of approval requests (the Telegram
// message with its links and buttons).
type askedNotifier struct {
	mu       sync.Mutex
	requests []approvals.Request
	decided  []approvals.Approval
	asked    waittest.Signal // notified at every request
}

func (n *askedNotifier) RequestApproval(_ context.Context, r approvals.Request) (json.RawMessage, error) {
	defer n.asked.Notify()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.requests = append(n.requests, r)
	return nil, nil
}

func (n *askedNotifier) Decided(_ context.Context, a approvals.Approval) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.decided = append(n.decided, a)
	return nil
}

// request waits for the approval request of the delivery.
func (n *askedNotifier) request(t *testing.T) approvals.Request {
	t.Helper()
	var r approvals.Request
	n.asked.Until(t, 10*time.Second, "the approval request", func() bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		if len(n.requests) == 0 {
			return false
		}
		r = n.requests[0]
		return true
	})
	return r
}

// jobRecorder stands in for the agent-worker queue (the follow-up runs).
type jobRecorder struct {
	mu   sync.Mutex
	jobs []sb.WakeJob
}

func (j *jobRecorder) Dispatch(_ context.Context, job sb.WakeJob) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.jobs = append(j.jobs, job)
	return nil
}
func (j *jobRecorder) all() []sb.WakeJob {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]sb.WakeJob(nil), j.jobs...)
}

// countingKV counts the state-table writes of the steps.
type countingKV struct {
	sb.KV
	mu     sync.Mutex
	writes int
}

func (k *countingKV) Put(ctx context.Context, key, value string, expires time.Time) error {
	k.mu.Lock()
	k.writes++
	k.mu.Unlock()
	return k.KV.Put(ctx, key, value, expires)
}

func (k *countingKV) PutIf(ctx context.Context, key, old, value string, expires time.Time) error {
	k.mu.Lock()
	k.writes++
	k.mu.Unlock()
	return k.KV.PutIf(ctx, key, old, value, expires)
}

// countingAudit counts the audit-table writes.
type countingAudit struct {
	*memstore.Store
	mu     sync.Mutex
	writes int
}

func (a *countingAudit) Append(ctx context.Context, e sb.AuditEntry) error {
	a.mu.Lock()
	a.writes++
	a.mu.Unlock()
	return a.Store.Append(ctx, e)
}

// countingRunner is the executor's typed path under the tools' services:
// it counts the tool calls the steps make; after (when set) sees each
// call's answer before the step does.
type countingRunner struct {
	x     *tools.Executor
	mu    sync.Mutex
	calls map[string]int
	after func(sb.ToolCall, error)
}

func (c *countingRunner) Run(ctx context.Context, call sb.ToolCall, do func(context.Context) error) error {
	c.mu.Lock()
	c.calls[call.Tool+"."+call.Action]++
	after := c.after
	c.mu.Unlock()
	err := c.x.Run(ctx, call, do)
	if after != nil {
		after(call, err)
	}
	return err
}

// onAnswer sets the runner's after hook.
func (c *countingRunner) onAnswer(fn func(sb.ToolCall, error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.after = fn
}
func (c *countingRunner) count(k string) int { c.mu.Lock(); defer c.mu.Unlock(); return c.calls[k] }

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, clock: clocktest.New(start), store: memstore.New(), told: &toldChannel{}, jobs: &jobRecorder{}}
	w.kv, w.audit = &countingKV{KV: w.store.KV()}, &countingAudit{Store: w.store}
	w.nc = ncfake.Start(t, ncfake.Options{User: "switchboard", Now: w.clock.Now})
	w.nc.AddUser("richard", "anna")
	w.nc.AddGroup("finance")
	ncc, err := nextcloud.New(w.nc.URL, w.nc.User(), w.nc.Password(), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.co = cofake.New(cofake.Options{})
	t.Cleanup(w.co.Close)
	coc, err := collabora.New(w.co.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.rc = rcfake.New()
	t.Cleanup(w.rc.Close)
	w.rc.SetRateLimit(0, 0)
	uid, token := w.rc.AddUser(agentRC, "bot", "user")
	plainUID, plainToken := w.rc.AddUser(plainRC, "bot", "user")
	w.rc.AddUser("richard")
	w.room = w.rc.AddChannel("finanz-team", agentRC, plainRC, "richard")
	w.rc.AddChannel("vorstand", agentRC, plainRC, "richard") // exists, but is in nobody's allowedRooms
	rcc, err := rocketchat.New(w.rc.URL, uid, token, w.rc.Client())
	if err != nil {
		t.Fatal(err)
	}
	plainRCC, err := rocketchat.New(w.rc.URL, plainUID, plainToken, w.rc.Client())
	if err != nil {
		t.Fatal(err)
	}
	blobs, stop, err := s3fake.NewStore(bucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	w.blobs = blobs

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	nct := nctool.New(func(id string) (nctool.Agent, bool) {
		switch id {
		case agentID:
			return nctool.Agent{Client: ncc, Collabora: coc, RootPath: root, AgentName: "Hermes", BaseURL: "https://cloud.example.org", AllowPublicShares: true, SharedReportsPath: "/Switchboard/Berichte"}, true
		case plainID:
			return nctool.Agent{Client: ncc, RootPath: "/Switchboard/Ares", AgentName: "Ares", BaseURL: "https://cloud.example.org"}, true
		}
		return nctool.Agent{}, false
	}, blobs, w.clock.Now)
	rcAgents := map[string]rctool.Agent{
		agentID: {Client: rcc, Username: agentRC, DefaultRoom: "finanz-team", AllowedRooms: []string{"finanz-team"}},
		plainID: {Client: plainRCC, Username: plainRC, AllowedRooms: []string{"#finanz-team"}},
	}
	rct := rctool.New(func(id string) (rctool.Agent, bool) { a, ok := rcAgents[id]; return a, ok }, blobs)
	policy, err := staging.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	w.exec, err = tools.New(tools.Options{
		Tools:  []sb.Tool{workspace.NewTool(blobs, func(string) (int64, bool) { return 10 << 20, true }), nct, rct},
		Policy: policy, Audit: w.audit, Scrub: scrub.New(nil), Log: log,
		Permits: func(agent, tool string) bool { return agent == agentID || agent == plainID },
	})
	if err != nil {
		t.Fatal(err)
	}
	w.invoke = &countingRunner{x: w.exec, calls: map[string]int{}}
	// The local runtime waits a Wait state's SecondsPath in real time: the
	// share-limit schedule here is 1, 2, 4, 4 s.
	w.steps = &pipeline.Steps{Files: nct.Service(w.invoke), Chat: rct.Service(w.invoke), KV: w.kv, Notify: router.New([]router.Channel{w.told}, w.audit, log),
		Waker: w.jobs, Audit: w.audit, ShareLimitWaitSeconds: 1, Log: log}
	w.sfn = sfntest.Start(t, lambdalocal.Invoker{"tools": lambda.NewHandler(w.serve)}, sfnlocal.Machine{
		Name: machine, Type: types.StateMachineTypeStandard, File: "../../../infra/statemachines/document-pipeline.asl.json",
		Substitutions: map[string]string{"DocumentStepFunctionArn": sfnlocal.FunctionARN("tools")},
	})
	tokens := &sfntoken.Client{Endpoint: w.sfn.Runtime.Endpoint, Signer: awssigned.Signer{Service: "states", Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), HTTP: http.DefaultClient}}
	w.steps.Tokens = tokens
	signer, err := approvals.NewSigner([]byte("a-signing-key-of-at-least-32-bytes!!"))
	if err != nil {
		t.Fatal(err)
	}
	w.asked = &askedNotifier{}
	w.approvalStore = memstore.NewApprovals()
	w.steps.Approvals = w.approvalStore
	w.approvals, err = approvals.New(approvals.Options{Store: w.approvalStore, Signer: signer, Notifier: w.asked,
		Waker: w.jobs, Tokens: tokens, PublicBaseURL: "http://127.0.0.1:9", Log: log})
	if err != nil {
		t.Fatal(err)
	}
	w.exec.SetStager(w.approvals)
	w.starts = &countingStarter{Starter: sfntoken.Machine{Client: tokens, ARN: func() string { return w.sfn.ARN(t, machine) }}}
	w.tool = &pipeline.Tool{Machine: w.starts, KV: w.kv, Log: log,
		Checks: map[string]pipeline.Preflighter{nctool.ToolName: nct, rctool.ToolName: rct}, Workspace: blobs,
		Rooms: func(id string) (pipeline.Rooms, bool) {
			a, ok := rcAgents[id]
			return pipeline.Rooms{AllowedRooms: a.AllowedRooms, DefaultRoom: a.DefaultRoom}, ok
		}}
	return w
}

// serve is the tools function's Task routing, as handlers.Tasks does it.
func (w *world) serve(ctx context.Context, raw json.RawMessage) (any, error) {
	var head struct {
		Op string `json:"op"`
	}
	_ = json.Unmarshal(raw, &head)
	if head.Op == pipeline.OpFinish {
		var in pipeline.FinishInput
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, err
		}
		return w.steps.Finish(ctx, in)
	}
	if head.Op == pipeline.OpApproval {
		var in pipeline.ApprovalInput
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, err
		}
		return w.steps.RequestApproval(ctx, in)
	}
	var in pipeline.StepInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	switch head.Op {
	case pipeline.OpConvert:
		return w.steps.Convert(ctx, in)
	case pipeline.OpUpload:
		return w.steps.Upload(ctx, in)
	case pipeline.OpShare:
		return w.steps.Share(ctx, in)
	case pipeline.OpPost:
		return w.steps.Post(ctx, in)
	}
	return nil, fmt.Errorf("no task %q", head.Op)
}

// put writes a workspace file of the agent.
func (w *world) put(ref, content string) { w.t.Helper(); w.putAs(agentID, ref, content) }

// putAs writes a workspace file of agent.
func (w *world) putAs(agent, ref, content string) {
	w.t.Helper()
	key, err := workspace.Resolve(agent, ref)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := w.blobs.Put(context.Background(), key, strings.NewReader(content), int64(len(content)), "text/csv"); err != nil {
		w.t.Fatal(err)
	}
}

var run = sb.RunContext{RunID: "run-1", RootRunID: "run-1", AgentID: agentID}

// deliver calls Documents.deliver as the agent's run does.
func (w *world) deliver(args string) sb.Envelope { w.t.Helper(); return w.deliverAs(agentID, args) }

// deliverAs calls Documents.deliver as agent's run does.
func (w *world) deliverAs(agent, args string) sb.Envelope {
	w.t.Helper()
	r := run
	r.AgentID = agent
	return w.exec2().Invoke(context.Background(), sb.ToolCall{AgentID: agent, Tool: pipeline.ToolName, Action: "deliver",
		Args: json.RawMessage(args), Run: r, Origin: sb.OriginAgent, ReplyTo: &sb.ReplyTo{RoomID: w.room, RoomName: "finanz-team", ThreadID: "thread-1"}})
}

// exec2 is an executor with the Documents tool, as the agent's run has it.
func (w *world) exec2() *tools.Executor {
	policy, _ := staging.New(nil)
	x, err := tools.New(tools.Options{Tools: []sb.Tool{w.tool}, Policy: policy, Audit: w.audit, Scrub: scrub.New(nil),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Permits: func(string, string) bool { return true }})
	if err != nil {
		w.t.Fatal(err)
	}
	return x
}

// wait waits for the execution to end and returns its description. It
// polls: the execution runs in the Step Functions Local child process,
// which sends no event when it ends.
func (w *world) wait(name string) *sfnapi.DescribeExecutionOutput {
	w.t.Helper()
	arn := strings.Replace(w.sfn.ARN(w.t, machine), ":stateMachine:", ":execution:", 1) + ":" + name
	var d *sfnapi.DescribeExecutionOutput
	waittest.Poll(w.t, 20*time.Second, "execution "+name+" ended", func() bool {
		var err error
		d, err = w.sfn.Client.DescribeExecution(context.Background(), &sfnapi.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			w.t.Fatalf("DescribeExecution: %v", err)
		}
		return d.Status != types.ExecutionStatusRunning
	})
	return d
}

// started returns the execution id of an ok envelope.
func started(t *testing.T, env sb.Envelope) string {
	t.Helper()
	if env.Status != "ok" || env.Data["status"] != "running" {
		t.Fatalf("deliver answered %+v, want ok and running", env)
	}
	id, _ := env.Data["executionId"].(string)
	return id
}

// files lists the files below the agent's folder on Nextcloud.
func (w *world) files(dir string) []string {
	var out []string
	for _, e := range w.nc.Tree(root + dir) {
		if !e.Dir {
			out = append(out, strings.TrimPrefix(e.Path, root))
		}
	}
	return out
}

// arn is the execution ARN of the execution called name.
func (w *world) arn(name string) string {
	return strings.Replace(w.sfn.ARN(w.t, machine), ":stateMachine:", ":execution:", 1) + ":" + name
}

// history reads the execution as GET /dev/executions/{id} shows it.
func (w *world) history(name string) sfn.Execution {
	w.t.Helper()
	x, err := sfn.Describe(context.Background(), w.sfn.Client, w.arn(name))
	if err != nil {
		w.t.Fatalf("Describe: %v", err)
	}
	return x
}

// visits returns the visits of state name.
func visits(x sfn.Execution, name string) []sfn.Step {
	var out []sfn.Step
	for _, s := range x.Steps {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}
