package askagent_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/lambdalocal"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob/s3fake"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfn/sfnlocal"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfn/sfntest"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfntoken"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	"github.com/switchboard-dev/switchboard/shared/platform/taskerr"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
	"github.com/switchboard-dev/switchboard/shared/usecases/askagent"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

const repoRoot = "../../.."

// agentSpec is one agent of a test world: its model and its ask_agent
// block (nil: ask_agent not enabled; empty: may ask everyone).
type agentSpec struct {
	model  sb.Model
	ask    []string
	noAsk  bool
	budget float64 // daily budget in USD; 0 = none
}

// scripted answers like the demo model, with reply as its template.
func scripted(name, reply string) sb.Model {
	return agentrun.Scripted{AgentName: name, Reply: reply}
}

// silent never answers: it waits until its run's time is up.
type silent struct{}

func (silent) Complete(ctx context.Context, _ sb.ModelRequest) (sb.ModelResponse, error) {
	<-ctx.Done()
	return sb.ModelResponse{}, ctx.Err()
}

// seen records what each agent's model was offered, per run.
type seen struct {
	mu    sync.Mutex
	tools map[string][][]string // agent → per request, the tool names
}

type recording struct {
	id    string
	inner sb.Model
	seen  *seen
}

func (r recording) Complete(ctx context.Context, req sb.ModelRequest) (sb.ModelResponse, error) {
	var names []string
	for _, s := range req.Tools {
		names = append(names, s.Name)
	}
	r.seen.mu.Lock()
	r.seen.tools[r.id] = append(r.seen.tools[r.id], names)
	r.seen.mu.Unlock()
	return r.inner.Complete(ctx, req)
}

// timedMachine counts and times every start of the machine.
type timedMachine struct {
	inner askagent.Machine
	mu    sync.Mutex
	took  []time.Duration
}

func (m *timedMachine) StartSync(ctx context.Context, input string) (string, error) {
	start := time.Now()
	out, err := m.inner.StartSync(ctx, input)
	m.mu.Lock()
	m.took = append(m.took, time.Since(start))
	m.mu.Unlock()
	return out, err
}

// world is ask_agent end to end: real DynamoDB tables (dynalite), the
// real ASL file on the local Step Functions runtime, the real handlers
// (guard and recorder on "tools", the answerer on "agent-worker"; all three
// write rows through the same scrubbing log), the
// executor with the ask_agent tool, and the run engine.
type world struct {
	store    *dynamo.Store
	messages *dynamo.AgentMessages
	engine   *agentrun.Engine
	agents   map[string]agentSpec
	machine  *timedMachine
	seen     *seen
	answerer *askagent.Answerer
	// dynamo counts the DynamoDB requests of the world by operation.
	dynamo *dynamotest.FaultProxy

	mu      sync.Mutex
	targets int // ask.run Tasks
	records int // agentMessage.record Tasks
	guards  int // ask.guard Tasks
}

func newWorld(t testing.TB, timeout time.Duration, agents map[string]agentSpec) *world {
	t.Helper()
	tables := dynamotest.FreshTables(t, dynamotest.Client(t))
	proxy := dynamotest.NewFaultProxy(t, dynamotest.Endpoint(t))
	c := dynamo.NewClientFromConfig(context.Background(), aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String(proxy.URL),
	})
	w := &world{store: dynamo.New(c, tables), agents: agents, seen: &seen{tools: map[string][][]string{}}, dynamo: proxy}
	w.messages = w.store.AgentMessages(testBlobs(t))
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ask := &askagent.Tool{Timeout: timeout, Log: log}
	policy, err := staging.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	x, err := tools.New(tools.Options{Tools: []sb.Tool{ask}, Policy: policy, Audit: w.store, Scrub: scrub.New(nil), Log: log,
		Permits: func(agentID, tool string) bool {
			a, ok := agents[agentID]
			return ok && tool == sb.AskAgentTool && !a.noAsk
		}})
	if err != nil {
		t.Fatal(err)
	}
	w.engine = &agentrun.Engine{Tools: x, Receipts: w.store}
	rec := &askagent.Recorder{Log: sb.ScrubbingMessages{Log: w.messages, Scrub: scrub.New([]string{"s3cr3t-token"}).String}}
	w.answerer = &askagent.Answerer{Engine: w.engine, Recorder: rec, Agents: worldAgents{w}, Leases: w.store, MaxSteps: 5, Log: log,
		Budget: &agentrun.Budget{Store: w.store, Limits: worldAgents{w}, Notifier: worldAgents{w}, Log: log}}
	guard := &askagent.Guard{Recorder: rec, Askers: worldAgents{w}}

	// The functions as the machine reaches them: a payload's op picks the
	// Task, as shared/handlers routes it in the deployed functions.
	env := sfntest.Start(t, lambdalocal.Invoker{
		"tools": lambda.NewHandler(func(ctx context.Context, raw json.RawMessage) (any, error) {
			var head struct{ Op string }
			_ = json.Unmarshal(raw, &head)
			switch head.Op {
			case askagent.OpGuard:
				w.mu.Lock()
				w.guards++
				w.mu.Unlock()
				var q askagent.Question
				_ = json.Unmarshal(raw, &q)
				return nil, guard.Admit(ctx, q)
			case askagent.OpRecord:
				w.mu.Lock()
				w.records++
				w.mu.Unlock()
				var r askagent.Row
				_ = json.Unmarshal(raw, &r)
				return nil, rec.Record(ctx, r)
			}
			return nil, &taskerr.PermanentError{Message: "tools: unknown op " + head.Op}
		}),
		"agent-worker": lambda.NewHandler(func(ctx context.Context, a askagent.Ask) (askagent.Reply, error) {
			w.mu.Lock()
			w.targets++
			w.mu.Unlock()
			return w.answerer.Answer(ctx, a)
		}),
	}, sfnlocal.Machine{
		Name: "ask-agent", Type: types.StateMachineTypeExpress,
		File: filepath.Join(repoRoot, "infra", "statemachines", "ask-agent.asl.json"),
		Substitutions: map[string]string{
			"AskGuardFunctionArn":     sfnlocal.FunctionARN("tools"),
			"AgentMessageFunctionArn": sfnlocal.FunctionARN("tools"),
			"AskRunFunctionArn":       sfnlocal.FunctionARN("agent-worker"),
		},
	})
	arn := env.ARN(t, "ask-agent")
	signed := sfntoken.New(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")},
		func(k string) string { return map[string]string{"AWS_ENDPOINT_URL_SFN": env.Runtime.Endpoint}[k] })
	w.machine = &timedMachine{inner: sfntoken.SyncMachine{Client: signed, ARN: func() string { return arn }}}
	ask.Machine = w.machine
	return w
}

// worldAgents are the world's agents as the answerer builds them, as
// their daily budgets count and as the guard knows them; budget notices
// go nowhere.
type worldAgents struct{ w *world }

func (a worldAgents) Agent(id string) (sb.Agent, error) { return a.w.agent(id) }

func (a worldAgents) DailyBudget(id string) (float64, string) { return a.w.agents[id].budget, id }

func (worldAgents) NotifyBudget(context.Context, string) error { return nil }

func (a worldAgents) Asker(id string) askagent.Asker {
	ag, ok := a.w.agents[id]
	return askagent.Asker{Exists: ok, Enabled: ok && !ag.noAsk, Allowed: ag.ask}
}

func (w *world) agent(id string) (sb.Agent, error) {
	a, ok := w.agents[id]
	if !ok {
		return sb.Agent{}, sb.E("test.agent", sb.ENOTFOUND, "no agent "+id)
	}
	return sb.Agent{ID: id, MaxSteps: 8, Model: recording{id: id, inner: a.model, seen: w.seen},
		Provider: "scripted", ModelName: "scripted", Pricing: sb.Pricing{InputPer1M: 1, OutputPer1M: 2}}, nil
}

// run starts agent id on message as a human would.
func (w *world) run(t testing.TB, id, message string) agentrun.Result {
	t.Helper()
	ag, err := w.agent(id)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.engine.Run(context.Background(), ag, message, nil)
	if err != nil {
		t.Fatalf("run %s: %v", id, err)
	}
	return res
}

// chain lists the rows of a chain, oldest first.
func (w *world) chain(t *testing.T, root string) []sb.AgentMessage {
	t.Helper()
	page, err := w.messages.Chain(context.Background(), root, sb.MessageQuery{OldestFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	return page.Messages
}

func (w *world) count() (targets, records int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.targets, w.records
}

// tasks is every Task call of the machine so far.
func (w *world) tasks() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.targets + w.records + w.guards
}

func (w *world) offered(id string) [][]string {
	w.seen.mu.Lock()
	defer w.seen.mu.Unlock()
	return slices.Clone(w.seen.tools[id])
}

// testBlobs is the in-process S3 server with one bucket, for long content.
func testBlobs(t testing.TB) *s3blob.Store {
	t.Helper()
	endpoint, stop, err := s3fake.StartFake("")
	if err != nil {
		t.Fatalf("StartFake: %v", err)
	}
	t.Cleanup(stop)
	c := s3blob.NewClientFromConfig(aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String(endpoint),
	})
	if err := s3blob.EnsureBucket(t.Context(), c, "messages"); err != nil {
		t.Fatalf("EnsureBucket: %v", err)
	}
	return s3blob.New(c, "messages")
}
