package askagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/platform/taskerr"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/askagent"
)

func TestToolSpec(t *testing.T) {
	spec := (&askagent.Tool{}).Spec()
	if spec.Name != "ask_agent" || len(spec.Actions) != 1 || spec.Actions[0].Name != "ask" {
		t.Fatalf("spec %+v, want ask_agent with the one action ask", spec)
	}
	if err := sb.CheckFunctionName(spec.Name, "ask"); err != nil || sb.FunctionName(spec.Name, "ask") != "ask_agent__ask" {
		t.Errorf("offered as %q (%v), want ask_agent__ask", sb.FunctionName(spec.Name, "ask"), err)
	}
	for _, want := range []string{"short question", "not to hand off work"} {
		if !strings.Contains(spec.Description, want) {
			t.Errorf("description %q lacks %q", spec.Description, want)
		}
	}
	params, _ := json.Marshal(spec.Actions[0].Parameters)
	for _, want := range []string{`"agent"`, `"question"`, `"required":["agent","question"]`} {
		if !strings.Contains(string(params), want) {
			t.Errorf("parameters %s lack %s", params, want)
		}
	}
}

// cannedMachine answers every start with out or err and keeps the input.
type cannedMachine struct {
	out   string
	err   error
	input string
}

func (m *cannedMachine) StartSync(_ context.Context, input string) (string, error) {
	m.input = input
	return m.out, m.err
}

func TestToolInvoke(t *testing.T) {
	run := sb.RunContext{RunID: "r-b", ParentRunID: "r-a", RootRunID: "root", AgentID: "bob", CallPath: "alice"}
	tests := []struct {
		name       string
		args       string
		run        sb.RunContext
		machine    *cannedMachine
		wantStatus string
		wantText   string // in the error, or the answer
	}{
		{"answer", `{"agent":"carol","question":"q?"}`, run, &cannedMachine{out: `{"status":"delivered","agent":"carol","answer":"yes","runId":"r-c"}`}, "ok", "yes"},
		{"denied", `{"agent":"carol","question":"q?"}`, run, &cannedMachine{out: `{"status":"denied","agent":"carol","reason":"not you"}`}, "error", "carol was not asked: not you"},
		{"timeout", `{"agent":"carol","question":"q?"}`, run, &cannedMachine{out: `{"status":"timeout","agent":"carol"}`}, "error", "carol gave no answer within 60 seconds"},
		{"failed with an error name", `{"agent":"carol","question":"q?"}`, run, &cannedMachine{out: `{"status":"failed","reason":"PermanentError"}`}, "error", "carol could not answer (its run failed)"},
		{"machine unreachable", `{"agent":"carol","question":"q?"}`, run, &cannedMachine{err: sb.E("x", sb.EUNAVAILABLE, "down")}, "error", "could not be delivered right now"},
		{"no question", `{"agent":"carol"}`, run, &cannedMachine{}, "error", `ask_agent.ask needs {"agent": "<agent id>", "question": "…"}`},
		{"unknown argument", `{"agent":"carol","question":"q","callPath":[]}`, run, &cannedMachine{}, "error", `unknown argument "callPath"`},
		{"outside a run", `{"agent":"carol","question":"q?"}`, sb.RunContext{}, &cannedMachine{}, "error", "only inside an agent run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := &askagent.Tool{Machine: tt.machine, Timeout: time.Minute, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			env := tool.Invoke(context.Background(), sb.ToolCall{AgentID: "bob", Tool: "ask_agent", Action: "ask",
				Args: json.RawMessage(tt.args), Run: tt.run})
			text := env.Error
			if env.Status == "ok" {
				text, _ = env.Data["answer"].(string)
			}
			if env.Status != tt.wantStatus || !strings.Contains(text, tt.wantText) {
				t.Fatalf("envelope %+v, want %s with %q", env, tt.wantStatus, tt.wantText)
			}
		})
	}
}

// The question the tool starts carries the call path and ids the engine
// stamped on the run, never anything from the arguments.
func TestToolStampsTheCallPath(t *testing.T) {
	m := &cannedMachine{out: `{"status":"delivered"}`}
	tool := &askagent.Tool{Machine: m, Timeout: 45 * time.Second}
	tool.Invoke(context.Background(), sb.ToolCall{AgentID: "bob", Tool: "ask_agent", Action: "ask",
		Args: json.RawMessage(`{"agent":"carol","question":"q?"}`),
		Run:  sb.RunContext{RunID: "r-b", ParentRunID: "r-a", RootRunID: "root", AgentID: "bob", CallPath: "alice"}})
	var q askagent.Question
	if err := json.Unmarshal([]byte(m.input), &q); err != nil {
		t.Fatal(err)
	}
	want := askagent.Question{From: "bob", To: "carol", Question: "q?", RunID: "r-b", RootRunID: "root",
		CallPath: []string{"alice", "bob"}, TimeoutSeconds: 45}
	if q.From != want.From || q.To != want.To || q.RunID != want.RunID || q.RootRunID != want.RootRunID ||
		strings.Join(q.CallPath, ",") != "alice,bob" || q.TimeoutSeconds != 45 {
		t.Errorf("started with %+v, want %+v", q, want)
	}
}

func TestGuard(t *testing.T) {
	g := &askagent.Guard{Askers: askagent.ConfigAskers{Config: &config.Config{Agents: []config.Agent{
		{ID: "alice", Tools: config.Tools{AskAgent: &config.AskAgentTool{}}},
		{ID: "bob", Tools: config.Tools{AskAgent: &config.AskAgentTool{Agents: []string{"alice"}}}},
		{ID: "mute"},
	}}}}
	q := func(from, to string, path ...string) askagent.Question {
		return askagent.Question{From: from, To: to, RunID: "r", CallPath: append(path, from)}
	}
	tests := []struct {
		name       string
		q          askagent.Question
		wantDenied string // "" = allowed
	}{
		{"allowed", q("alice", "bob"), ""},
		{"allowed by the list", q("bob", "alice"), ""},
		{"yourself", q("alice", "alice"), "you cannot ask yourself"},
		{"circle", q("bob", "alice", "alice"), "alice is already in this chain of questions (alice → bob)"},
		{"depth", q("bob", "mute", "alice"), "you are answering a question from alice and cannot ask others in turn"},
		{"not enabled", q("mute", "alice"), "ask_agent is not enabled for you"},
		{"unknown", q("alice", "zed"), `there is no agent "zed"`},
		{"not in the list", q("bob", "mute"), "you may not ask mute; you may ask alice"},
		// The call path comes from the engine's run; a payload without
		// one, or one that does not end with the asker, is not believed.
		{"call path left out", askagent.Question{From: "bob", To: "alice", RunID: "r"}, "this question carries no call path"},
		{"call path of another asker", askagent.Question{From: "bob", To: "alice", RunID: "r", CallPath: []string{"carol"}}, "this question carries no call path"},
		{"call path forged to hide the circle", askagent.Question{From: "bob", To: "alice", RunID: "r", CallPath: []string{"", "bob"}}, "this question carries no call path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := g.Check(context.Background(), tt.q)
			var denied *taskerr.DeniedError
			switch {
			case tt.wantDenied == "" && err != nil:
				t.Fatalf("Check = %v, want allowed", err)
			case tt.wantDenied != "" && (!errors.As(err, &denied) || !strings.HasPrefix(denied.Reason, tt.wantDenied)):
				t.Fatalf("Check = %#v, want DeniedError %q", err, tt.wantDenied)
			}
		})
	}
	if _, ok := g.Check(context.Background(), askagent.Question{To: "bob"}).(*taskerr.PermanentError); !ok {
		t.Error("a question without asker or run is not a PermanentError")
	}
	// Admit records every question it checks; one without the machine's
	// execution id or start would have no row of its own, so it is none.
	if _, ok := g.Admit(context.Background(), q("alice", "bob")).(*taskerr.PermanentError); !ok {
		t.Error("a question without execution id and start is not a PermanentError")
	}
}

// Admit writes the denied request row of a question it refuses, with the
// reason (and then says DeniedError), and nothing for one it lets through:
// the answering Task records that one. A retried Task writes the same row
// again and answers the same.
func TestGuardAdmitRecordsRefusals(t *testing.T) {
	c := dynamotest.Client(t)
	store := dynamo.New(c, dynamotest.FreshTables(t, c))
	msgs := store.AgentMessages(testBlobs(t))
	g := &askagent.Guard{Recorder: &askagent.Recorder{Log: sb.ScrubbingMessages{Log: msgs}},
		Askers: askersFunc(func(id string) askagent.Asker { return askagent.Asker{Exists: id != "zed", Enabled: true} })}
	at := time.Now()
	q := func(exec, to string) askagent.Question {
		return askagent.Question{From: "alice", To: to, Question: "q to " + to, RunID: "r-a", RootRunID: "root",
			CallPath: []string{"alice"}, ExecutionID: exec, AskedAt: at}
	}
	for range 2 {
		if err := g.Admit(context.Background(), q("arn:exec:1", "bob")); err != nil {
			t.Fatalf("Admit alice→bob = %v", err)
		}
		var denied *taskerr.DeniedError
		if err := g.Admit(context.Background(), q("arn:exec:2", "zed")); !errors.As(err, &denied) {
			t.Fatalf("Admit alice→zed = %v, want DeniedError", err)
		}
	}
	page, err := msgs.Chain(context.Background(), "root", sb.MessageQuery{OldestFirst: true})
	if err != nil || len(page.Messages) != 1 {
		t.Fatalf("chain = %+v, %v; want the one denied row", page.Messages, err)
	}
	m := page.Messages[0]
	if m.To != "zed" || m.Status != sb.MessageDenied || m.Direction != sb.DirectionRequest || m.Channel != sb.ChannelAsk ||
		m.Content != "q to zed" || m.RunID != "r-a" || !m.OccurredAt.Equal(at) || !strings.Contains(m.Reason, `there is no agent "zed"`) {
		t.Errorf("row %+v, want alice's denied request to zed at %v with the reason", m, at)
	}
}

// A record Task of a question that timed out or failed writes the
// question's request row with its response row, in one request: the
// answering Task, which writes it otherwise, may never have run. Both rows
// are what the guard and the answering Task would have written.
func TestRecorderWritesTheQuestionWithAnUnansweredResponse(t *testing.T) {
	c := dynamotest.Client(t)
	store := dynamo.New(c, dynamotest.FreshTables(t, c))
	msgs := store.AgentMessages(testBlobs(t))
	rec := &askagent.Recorder{Log: sb.ScrubbingMessages{Log: msgs}}
	at := time.Now()
	row := askagent.Row{Key: "arn:exec:3#response", From: "bob", To: "alice", Channel: "ask", Direction: "response", Status: "timeout",
		Reason: "no answer within 1 seconds", ParentRunID: "r-a", RootRunID: "root", OccurredAt: at, AfterSeconds: 1, Question: "q?"}
	before := store.Stats().Ops["agentMessages.recordAll"].Calls
	if err := rec.Record(context.Background(), row); err != nil {
		t.Fatal(err)
	}
	if n := store.Stats().Ops["agentMessages.recordAll"].Calls - before; n != 1 {
		t.Errorf("%d store requests, want 1", n)
	}
	page, err := msgs.Chain(context.Background(), "root", sb.MessageQuery{OldestFirst: true})
	if err != nil || len(page.Messages) != 2 {
		t.Fatalf("chain = %+v, %v; want request and response", page.Messages, err)
	}
	req, resp := page.Messages[0], page.Messages[1]
	if req.From != "alice" || req.To != "bob" || req.Direction != sb.DirectionRequest || req.Status != sb.MessageDelivered ||
		req.Content != "q?" || req.RunID != "r-a" || !req.OccurredAt.Equal(at) {
		t.Errorf("request row %+v", req)
	}
	if resp.Status != sb.MessageTimeout || resp.RunID != "r-a" || !resp.OccurredAt.Equal(at.Add(time.Second)) {
		t.Errorf("response row %+v", resp)
	}
}

// A retried record Task (same key, same time) writes the row once and
// answers success both times; a store that is down is a TransientError
// (the machine retries it).
func TestRecorderIsIdempotent(t *testing.T) {
	c := dynamotest.Client(t)
	store := dynamo.New(c, dynamotest.FreshTables(t, c))
	msgs := store.AgentMessages(testBlobs(t))
	rec := &askagent.Recorder{Log: sb.ScrubbingMessages{Log: msgs}}
	row := askagent.Row{Key: "arn:exec:1#request", From: "alice", To: "bob", Channel: "ask", Direction: "request",
		Status: "delivered", Content: "q?", RunID: "r-a", RootRunID: "root", OccurredAt: time.Now()}
	for i := range 2 {
		if err := rec.Record(context.Background(), row); err != nil {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
	}
	page, err := msgs.Pair(context.Background(), "alice", "bob", sb.MessageQuery{})
	if err != nil || len(page.Messages) != 1 {
		t.Fatalf("pair = %+v, %v; want one row", page.Messages, err)
	}

	down := &askagent.Recorder{Log: failingLog{sb.E("agentMessages.record", sb.EUNAVAILABLE, "throttled")}}
	if _, ok := down.Record(context.Background(), row).(*taskerr.TransientError); !ok {
		t.Error("an unavailable store is not a TransientError")
	}
	bad := row
	bad.Key = ""
	if _, ok := rec.Record(context.Background(), bad).(*taskerr.PermanentError); !ok {
		t.Error("a row without key is not a PermanentError")
	}
}

// A response recorded with its question's time (a failure has no time of
// its own) still lists after the question.
func TestRecorderKeepsAQuestionBeforeItsAnswer(t *testing.T) {
	c := dynamotest.Client(t)
	store := dynamo.New(c, dynamotest.FreshTables(t, c))
	msgs := store.AgentMessages(testBlobs(t))
	rec := &askagent.Recorder{Log: sb.ScrubbingMessages{Log: msgs}}
	at := time.Now()
	const exec = "arn:exec:0" // its hashed keys sort response first
	for _, r := range []askagent.Row{
		{Key: exec + "#response", From: "bob", To: "alice", Channel: "ask", Direction: "response", Status: "failed",
			Reason: "PermanentError", ParentRunID: "r-a", RootRunID: "root", OccurredAt: at},
		{Key: exec + "#request", From: "alice", To: "bob", Channel: "ask", Direction: "request", Status: "delivered",
			Content: "q?", RunID: "r-a", RootRunID: "root", OccurredAt: at},
	} {
		if err := rec.Record(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	page, err := msgs.Chain(context.Background(), "root", sb.MessageQuery{OldestFirst: true})
	if err != nil || len(page.Messages) != 2 {
		t.Fatalf("chain = %+v, %v", page.Messages, err)
	}
	if page.Messages[0].Direction != sb.DirectionRequest || page.Messages[1].RunID != "r-a" || page.Messages[1].Content != "PermanentError" {
		t.Errorf("chain %+v, want the question first, then the failed answer on the asking run", page.Messages)
	}
}

type failingLog struct{ err error }

func (f failingLog) Record(context.Context, sb.AgentMessage) error { return f.err }

func (f failingLog) RecordAll(context.Context, sb.MessageBatch) error { return f.err }

// The answering run's call path is the question's; a payload without one
// (or not ending with the asker) would start a run that may ask others in
// turn, so it starts none.
func TestAnswerNeedsTheCallPath(t *testing.T) {
	an := &askagent.Answerer{Agents: agentsFunc(func(string) (sb.Agent, error) {
		t.Fatal("the agent was looked up for a question without call path")
		return sb.Agent{}, nil
	})}
	for _, path := range [][]string{nil, {}, {"carol"}, {"alice", ""}} {
		_, err := an.Answer(context.Background(), askagent.Ask{Agent: "bob", From: "alice", Question: "q?", ParentRunID: "r-a", RootRunID: "root",
			CallPath: path, ExecutionID: "arn:exec:1", AskedAt: time.Now()})
		var perm *taskerr.PermanentError
		if !errors.As(err, &perm) || !strings.Contains(perm.Message, "call path") {
			t.Errorf("call path %q: %v, want a PermanentError naming the call path", path, err)
		}
	}
}

// agentsFunc is an askagent.Agents made of a function.
type agentsFunc func(id string) (sb.Agent, error)

func (f agentsFunc) Agent(id string) (sb.Agent, error) { return f(id) }

// askersFunc is an askagent.Askers made of a function.
type askersFunc func(id string) askagent.Asker

func (f askersFunc) Asker(id string) askagent.Asker { return f(id) }

// switches is a Control with fixed answers; it counts its reads.
type switches struct {
	paused            bool
	reason            string
	pausedErr, chkErr error
	reads             atomic.Int32
}

func (s *switches) Paused(context.Context, string) (bool, error) {
	s.reads.Add(1)
	return s.paused, s.pausedErr
}

func (s *switches) Check(context.Context, sb.RunContext, float64) (string, error) {
	s.reads.Add(1)
	return s.reason, s.chkErr
}

// The operator's switches refuse a question to a paused agent or in a
// stopped chain or one over its budget, a pause said first; a switch that
// cannot be read is a TransientError (the machine retries the guard).
func TestGuardAsksTheOperatorsSwitches(t *testing.T) {
	down := sb.E("kv.get", sb.EUNAVAILABLE, "throttled")
	tests := []struct {
		name       string
		sw         *switches
		wantDenied string // "" = allowed
		wantRetry  bool
	}{
		{"nothing set", &switches{}, "", false},
		{"paused", &switches{paused: true}, "agent_paused: bob is paused", false},
		{"paused in a stopped chain", &switches{paused: true, reason: "chain_stopped"}, "agent_paused: bob is paused", false},
		{"stopped", &switches{reason: "chain_stopped"}, "chain_stopped:", false},
		{"over the chain budget", &switches{reason: "chain_budget"}, "chain_budget:", false},
		{"pause unreadable", &switches{pausedErr: down}, "", true},
		{"chain unreadable", &switches{chkErr: down}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &askagent.Guard{Control: tt.sw,
				Askers: askersFunc(func(string) askagent.Asker { return askagent.Asker{Exists: true, Enabled: true} })}
			err := g.Check(context.Background(), askagent.Question{From: "alice", To: "bob", RunID: "r", CallPath: []string{"alice"}})
			var denied *taskerr.DeniedError
			var transient *taskerr.TransientError
			switch {
			case tt.wantRetry && !errors.As(err, &transient):
				t.Fatalf("Check = %#v, want a TransientError", err)
			case tt.wantDenied != "" && (!errors.As(err, &denied) || !strings.HasPrefix(denied.Reason, tt.wantDenied)):
				t.Fatalf("Check = %#v, want DeniedError %q", err, tt.wantDenied)
			case tt.wantDenied == "" && !tt.wantRetry && err != nil:
				t.Fatalf("Check = %v, want allowed", err)
			}
			if n := tt.sw.reads.Load(); n != 2 {
				t.Errorf("%d reads of the switches, want 2", n)
			}
		})
	}
}
