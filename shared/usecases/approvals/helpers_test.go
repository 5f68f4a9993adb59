package approvals_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	"github.com/switchboard-dev/switchboard/shared/platform/recordtest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

const publicBase = "https://approvals.example.test/base"

type clock = clocktest.Clock

// executor counts calls and answers a fixed envelope.
type executor struct {
	calls recordtest.List[sb.ToolCall]
	n     atomic.Int64
	env   sb.Envelope
}

func (e *executor) Invoke(_ context.Context, call sb.ToolCall) sb.Envelope {
	e.n.Add(1)
	e.calls.Add(call)
	return e.env
}

func (e *executor) Calls() []sb.ToolCall { return e.calls.All() }

// notifier records what it was asked to show.
type notifier struct {
	requests recordtest.List[approvals.Request]
	decided  recordtest.List[approvals.Approval]
	failWith error
	// decidedErr is what Decided answers: the outcome edit failed (a
	// Telegram 429 that outlasted the client's one wait).
	decidedErr error
}

func (n *notifier) RequestApproval(_ context.Context, r approvals.Request) (json.RawMessage, error) {
	if n.failWith != nil {
		return nil, n.failWith
	}
	n.requests.Add(r)
	return json.RawMessage(`{"chatId":"123456789","messageId":4711}`), nil
}

func (n *notifier) Decided(_ context.Context, a approvals.Approval) error {
	n.decided.Add(a)
	return n.decidedErr
}

func (n *notifier) Requests() []approvals.Request   { return n.requests.All() }
func (n *notifier) Decisions() []approvals.Approval { return n.decided.All() }

// waker records the jobs handed to the worker, as the asynchronous
// invoke does: approved calls to run (ApprovalID set) and follow-up runs.
type waker struct {
	jobs     recordtest.List[sb.WakeJob]
	starts   recordtest.List[sb.WakeJob]
	failWith error
}

func (w *waker) Dispatch(_ context.Context, j sb.WakeJob) error {
	if w.failWith != nil {
		return w.failWith
	}
	if j.ApprovalID != "" {
		w.starts.Add(j)
		return nil
	}
	w.jobs.Add(j)
	return nil
}

// Jobs are the follow-up runs queued so far.
func (w *waker) Jobs() []sb.WakeJob { return w.jobs.All() }

// Starts are the approved calls handed to the worker so far.
func (w *waker) Starts() []sb.WakeJob { return w.starts.All() }

// work is the agent-worker: it runs every approved call handed over so
// far through Execute, as the worker does with such a job. Running a job
// twice is what Lambda's retry does; Execute must make it harmless.
func (e *env) work(t *testing.T) {
	t.Helper()
	for _, j := range e.waker.Starts() {
		if j.AgentID == "" || j.Source != approvals.JobSource || j.Text != "" {
			t.Fatalf("job handing over approval %s: %+v", j.ApprovalID, j)
		}
		if err := e.svc.Execute(t.Context(), j.ApprovalID); err != nil {
			t.Fatalf("Execute %s: %v", j.ApprovalID, err)
		}
	}
}

// env is one Service over one store with its fakes.
type env struct {
	svc    *approvals.Service
	store  approvals.Store
	dyn    *dynamo.Store // nil for memstore
	exec   *executor
	notify *notifier
	waker  *waker
	clock  *clock
	signer *approvals.Signer
}

type backend struct {
	name  string
	store func(t *testing.T) (approvals.Store, *dynamo.Store)
}

var backends = []backend{
	{"memstore", func(*testing.T) (approvals.Store, *dynamo.Store) { return memstore.NewApprovals(), nil }},
	{"dynalite", func(t *testing.T) (approvals.Store, *dynamo.Store) {
		c := dynamotest.Client(t)
		s := dynamo.New(c, dynamotest.FreshTables(t, c))
		return s.Approvals(), s
	}},
}

// eachBackend runs f against the in-memory store and against dynalite.
func eachBackend(t *testing.T, f func(t *testing.T, e *env)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f(t, newEnv(t, b))
		})
	}
}

func newEnv(t *testing.T, b backend) *env {
	t.Helper()
	store, dyn := b.store(t)
	e := &env{store: store, dyn: dyn,
		exec:   &executor{env: sb.OK(map[string]any{"deleted": "reports/q1.md"})},
		notify: &notifier{}, waker: &waker{},
		clock:  clocktest.New(time.Date(2026, 3, 14, 9, 26, 53, 589793238, time.UTC)),
		signer: mustSigner(t, testKey),
	}
	e.svc = e.service(t, store)
	return e
}

// service builds a Service over store with e's fakes.
func (e *env) service(t *testing.T, store approvals.Store) *approvals.Service {
	t.Helper()
	svc, err := approvals.New(approvals.Options{
		Store: store, Signer: e.signer, Executor: e.exec, Notifier: e.notify, Waker: e.waker,
		PublicBaseURL: publicBase + "/", Now: e.clock.Now,
		Log: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// readBarrier holds each of the first n Gets back until all n have read,
// so that n racing deciders all read the same state ("pending") before any
// of them writes: only the store's conditional write can then keep the
// action from running twice. Later Gets pass straight through.
type readBarrier struct {
	approvals.Store
	t       *testing.T
	n       int
	mu      sync.Mutex
	arrived int
	all     chan struct{} // closed when the n-th Get has read
}

func newReadBarrier(t *testing.T, store approvals.Store, n int) *readBarrier {
	return &readBarrier{Store: store, t: t, n: n, all: make(chan struct{})}
}

func (b *readBarrier) Get(ctx context.Context, id string) (approvals.Approval, error) {
	a, err := b.Store.Get(ctx, id)
	b.mu.Lock()
	held := b.arrived < b.n
	if held {
		b.arrived++
		if b.arrived == b.n {
			close(b.all)
		}
	}
	arrived := b.arrived
	b.mu.Unlock()
	if held {
		select {
		case <-b.all:
		case <-time.After(10 * time.Second):
			b.t.Errorf("only %d of %d deciders read the approval: one decided without reading it", arrived, b.n)
		}
	}
	return a, err
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// requestingRun is the run that asks for approval: itself a child, so
// that RootRunID differs from RunID and its preservation shows.
var requestingRun = sb.RunContext{RunID: "run-ask", ParentRunID: "run-parent", RootRunID: "run-root", AgentID: "hermes"}

func deleteCall() sb.ToolCall {
	return sb.ToolCall{AgentID: "hermes", Tool: "Nextcloud", Action: "delete",
		Args: json.RawMessage(`{"path": "reports/q1.md", "password": "hunter2-secret"}`),
		Run:  requestingRun, Origin: sb.OriginAgent}
}

// stage stages deleteCall and returns the stored approval and its links.
func (e *env) stage(t *testing.T) (approvals.Approval, approvals.Request) {
	t.Helper()
	call := deleteCall()
	call.ReplyTo = &sb.ReplyTo{RoomID: "rFinanz", RoomName: "finanz-team", ThreadID: "th1"}
	envl, err := e.svc.Stage(t.Context(), call, "the Q1 report is outdated")
	if err != nil {
		t.Fatalf("Stage: %v", err)
	}
	id, _ := envl.Data["approval_id"].(string)
	a, err := e.store.Get(t.Context(), id)
	if err != nil {
		t.Fatalf("Get staged %q: %v", id, err)
	}
	reqs := e.notify.Requests()
	if len(reqs) == 0 || reqs[len(reqs)-1].Approval.ID != id {
		t.Fatalf("the notifier was not asked for %s", id)
	}
	return a, reqs[len(reqs)-1]
}

// linkParts splits an approval link into id, decision and token.
func linkParts(t *testing.T, link string) (id, decision, token string) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	id, ok := strings.CutPrefix(u.Path, "/base/approvals/")
	if !ok || !strings.HasPrefix(link, publicBase+"/approvals/") {
		t.Fatalf("link %s is not under %s/approvals/", link, publicBase)
	}
	return id, u.Query().Get("decision"), u.Query().Get("token")
}

// status is the stored status of id.
func (e *env) status(t *testing.T, id string) approvals.Status {
	t.Helper()
	a, err := e.store.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a.Status
}

// assertUnchanged fails when a is no longer exactly as it was.
func (e *env) assertUnchanged(t *testing.T, a approvals.Approval) {
	t.Helper()
	got, err := e.store.Get(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	gj, _ := json.Marshal(got)
	aj, _ := json.Marshal(a)
	if string(gj) != string(aj) {
		t.Fatalf("approval changed:\n got  %s\n want %s", gj, aj)
	}
	if n := e.exec.n.Load(); n != 0 {
		t.Fatalf("the executor ran %d times", n)
	}
	if n := len(e.waker.Jobs()); n != 0 {
		t.Fatalf("%d follow-up jobs, want none", n)
	}
	if n := len(e.waker.Starts()); n != 0 {
		t.Fatalf("%d approved calls handed to the worker, want none", n)
	}
}

var errDown = errors.New("telegram is down")
