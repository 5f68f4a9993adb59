package taskboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
	"github.com/switchboard-dev/switchboard/shared/usecases/taskboard"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// jobs records dispatched wakes; fail makes the next dispatches fail as an
// unreachable agent-worker would.
type jobs struct {
	mu   sync.Mutex
	got  []sb.WakeJob
	fail bool
}

func (j *jobs) Dispatch(_ context.Context, job sb.WakeJob) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.fail {
		return sb.E("lambda.invoke", sb.EUNAVAILABLE, "agent-worker is throttled")
	}
	j.got = append(j.got, job)
	return nil
}

func (j *jobs) all() []sb.WakeJob {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]sb.WakeJob(nil), j.got...)
}

// human is a router channel that records what reached the human; fail
// makes it refuse, as an unreachable chat server does.
type human struct {
	mu      sync.Mutex
	notices []router.Notice
	fail    bool
}

func (h *human) Name() string { return "RocketChat" }

func (h *human) Send(_ context.Context, n router.Notice) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fail {
		return errors.New("rocket.chat is down")
	}
	h.notices = append(h.notices, n)
	return nil
}

func (h *human) kinds() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, n := range h.notices {
		out = append(out, n.Kind)
	}
	return out
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// budgets is the daily budget as the taskboard asks it: the agents in
// over have used theirs up.
type budgets struct {
	mu    sync.Mutex
	over  map[string]bool
	asked []string
}

func (b *budgets) Over(_ context.Context, agentID string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.asked = append(b.asked, agentID)
	return b.over[agentID], nil
}

func (b *budgets) spend(agentID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.over[agentID] = true
}

type world struct {
	svc     *taskboard.Service
	tool    *taskboard.Tool
	tasks   *dynamo.Tasks
	msgs    *memstore.AgentMessages
	jobs    *jobs
	human   *human
	clock   *clock
	budgets *budgets
}

var t0 = time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)

// newWorld is the service on a fresh tasks table, with agents ada and bob
// (Taskboard), cyd (Taskboard) and dan (no Taskboard).
func newWorld(t *testing.T) *world {
	t.Helper()
	c := dynamotest.Client(t)
	store := dynamo.New(c, dynamotest.FreshTables(t, c))
	w := &world{tasks: store.Tasks(), msgs: &memstore.AgentMessages{}, jobs: &jobs{}, human: &human{}, clock: &clock{t: t0},
		budgets: &budgets{over: map[string]bool{}}}
	store.Now = w.clock.Now // the counters' windows run on the test's clock
	agents := map[string]taskboard.Party{
		"ada": {Name: "Ada", Taskboard: true}, "bob": {Name: "Bob", Taskboard: true},
		"cyd": {Name: "Cyd", Taskboard: true}, "dan": {Name: "Dan"},
	}
	w.svc = &taskboard.Service{
		Tasks:         w.tasks,
		Messages:      sb.ScrubbingMessages{Log: w.msgs, Scrub: func(s string) string { return strings.ReplaceAll(s, "s3cret", "[redacted]") }},
		Waker:         w.jobs,
		Notify:        router.New([]router.Channel{w.human}, memstore.New(), slog.New(slog.DiscardHandler)),
		Agents:        partyMap(agents),
		Counters:      store,
		Budget:        w.budgets,
		WatchdogAfter: 24 * time.Hour,
		Now:           w.clock.Now,
		Log:           slog.New(slog.DiscardHandler),
	}
	w.tool = taskboard.NewTool(w.svc)
	return w
}

// run is a run of agent within the chain of root, as the engine stamps it.
func run(agent, id, parent, root string) sb.RunContext {
	return sb.RunContext{RunID: id, ParentRunID: parent, RootRunID: root, AgentID: agent}
}

// tasked is r as the parent of a task's wake: hops deep, paid by payer.
func tasked(r sb.RunContext, hops int, payer string) sb.RunContext {
	r.TaskHops, r.PaidBy = hops, payer
	return r
}

// call invokes the tool as agent within r and decodes the envelope.
func (w *world) call(t *testing.T, r sb.RunContext, action string, args map[string]any) sb.Envelope {
	t.Helper()
	raw, _ := json.Marshal(args)
	return w.tool.Invoke(t.Context(), sb.ToolCall{AgentID: r.AgentID, Tool: "Taskboard", Action: action, Args: raw, Run: r,
		Origin: sb.OriginAgent, ReplyTo: &sb.ReplyTo{RoomID: "room-" + r.AgentID}})
}

func (w *world) rows(t *testing.T, a, b string) []sb.AgentMessage {
	t.Helper()
	page, err := w.msgs.Pair(t.Context(), a, b, sb.MessageQuery{OldestFirst: true, Limit: sb.MaxMessagePage})
	if err != nil {
		t.Fatal(err)
	}
	return page.Messages
}

func mustOK(t *testing.T, what string, env sb.Envelope) sb.Envelope {
	t.Helper()
	if env.Status != "ok" {
		t.Fatalf("%s: %+v, want ok", what, env)
	}
	return env
}

// create has ada (run adaRun) give bob a task and returns its id.
func (w *world) create(t *testing.T, adaRun sb.RunContext) string {
	t.Helper()
	env := mustOK(t, "create", w.call(t, adaRun, taskboard.ActionCreate, map[string]any{
		"assignee": "bob", "title": "Sum the invoices", "description": "Add up the November invoices; token s3cret is in the vault."}))
	return env.Data["taskId"].(string)
}

func TestCreateWakesTheAssigneeAsAFollowUpOfTheCreatingRun(t *testing.T) {
	w := newWorld(t)
	adaRun := run("ada", "ada-1", "", "ada-1")
	id := w.create(t, adaRun)

	got := w.jobs.all()
	if len(got) != 1 {
		t.Fatalf("dispatched %d wakes, want 1 for bob", len(got))
	}
	j := got[0]
	// Bob's run follows ada's, one task hop deep, charged to ada.
	if j.AgentID != "bob" || j.Source != taskboard.JobSource || j.Parent == nil || *j.Parent != tasked(adaRun, 1, "ada") || j.ReplyTo != nil || j.Claim != nil {
		t.Errorf("wake = %+v (parent %+v), want bob's wake with Parent = ada's run (1 hop, paid by ada) and no reply place", j, j.Parent)
	}
	if !strings.Contains(j.Text, id) || !strings.Contains(j.Text, "task_complete") || !strings.Contains(j.Text, "Ada (ada)") {
		t.Errorf("wake text does not say which task and how to finish it: %q", j.Text)
	}
	// The creator's words are framed as untrusted, after our own.
	head, framed, ok := strings.Cut(j.Text, "<untrusted_content")
	if !ok || strings.Contains(head, "November") || !strings.Contains(framed, "Sum the invoices") || !strings.Contains(framed, "November invoices") {
		t.Errorf("the task's title and description are not (only) inside the untrusted frame: %q", j.Text)
	}

	rows := w.rows(t, "ada", "bob")
	if len(rows) != 1 {
		t.Fatalf("rows = %+v, want one", rows)
	}
	r := rows[0]
	if r.From != "ada" || r.To != "bob" || r.Channel != sb.ChannelTask || r.Direction != sb.DirectionRequest || r.TaskID != id ||
		r.RunID != "ada-1" || r.RootRunID != "ada-1" || r.ParentRunID != "" || r.Status != sb.MessageDelivered {
		t.Errorf("row = %+v", r)
	}
	if strings.Contains(r.Content, "s3cret") || !strings.Contains(r.Content, "[redacted]") {
		t.Errorf("row content not scrubbed: %q", r.Content)
	}
	stored, err := w.tasks.Get(t.Context(), id)
	if err != nil || stored.Creator != "ada" || stored.Run != adaRun || stored.ReplyTo == nil || stored.ReplyTo.RoomID != "room-ada" {
		t.Errorf("stored task = %+v, %v; want ada's run context and reply place", stored, err)
	}
	if k := w.human.kinds(); len(k) != 0 {
		t.Errorf("the human was told %v on a plain assignment", k)
	}
}

func TestCompleteWakesTheCreatorAsAFollowUpOfTheCompletingRun(t *testing.T) {
	w := newWorld(t)
	id := w.create(t, run("ada", "ada-1", "", "ada-1"))
	bobRun := run("bob", "bob-1", "ada-1", "ada-1") // the run the assignment woke
	w.clock.add(time.Hour)
	env := mustOK(t, "complete", w.call(t, bobRun, "task_complete", map[string]any{"taskId": id, "result": "4711 EUR"}))
	if env.Data["taskStatus"] != "done" || env.Data["creatorWoken"] != true || env.Data["humanTold"] != false {
		t.Errorf("envelope = %+v", env.Data)
	}

	got := w.jobs.all()
	if len(got) != 2 {
		t.Fatalf("dispatched %d wakes, want the assignment and the completion", len(got))
	}
	j := got[1]
	// Ada hears the result at the task's depth and pays for it herself.
	if j.AgentID != "ada" || j.Parent == nil || *j.Parent != tasked(bobRun, 1, "") || j.ReplyTo == nil || j.ReplyTo.RoomID != "room-ada" {
		t.Errorf("completion wake = %+v (parent %+v), want ada woken under bob's run, answering where ada was asked", j, j.Parent)
	}
	// The run it starts has ParentRunId = the completing run, in the chain.
	if next := sb.NewRun("ada", j.Parent, t0); next.ParentRunID != "bob-1" || next.RootRunID != "ada-1" {
		t.Errorf("creator's run = %+v, want parent bob-1 in chain ada-1", next)
	}
	head, framed, _ := strings.Cut(j.Text, "<untrusted_content")
	if !strings.Contains(head, "is done") || strings.Contains(head, "Sum the invoices") ||
		!strings.Contains(framed, "4711 EUR") || !strings.Contains(framed, "title: Sum the invoices") {
		t.Errorf("completion text = %q, want our words first and the title and result framed", j.Text)
	}

	rows := w.rows(t, "ada", "bob")
	if len(rows) != 2 {
		t.Fatalf("rows = %+v, want request and result", rows)
	}
	r := rows[1]
	if r.From != "bob" || r.To != "ada" || r.Channel != sb.ChannelTaskResult || r.Direction != sb.DirectionResponse ||
		r.Content != "4711 EUR" || r.TaskStatus != sb.TaskDone || r.TaskID != id || r.RunID != "bob-1" || r.ParentRunID != "ada-1" || r.RootRunID != "ada-1" {
		t.Errorf("result row = %+v", r)
	}

	// Completing again (a retry, or a second completion) changes nothing
	// and wakes nobody.
	env = w.call(t, bobRun, "task_complete", map[string]any{"taskId": id, "result": "other"})
	if env.Status != "error" || env.Data["code"] != sb.ECONFLICT {
		t.Errorf("second completion = %+v, want a conflict", env)
	}
	if n := len(w.jobs.all()); n != 2 {
		t.Errorf("%d wakes after a refused completion, want 2", n)
	}
}

func TestRacingCompletionsWakeTheCreatorOnce(t *testing.T) {
	w := newWorld(t)
	id := w.create(t, run("ada", "ada-1", "", "ada-1"))
	var wg sync.WaitGroup
	oks := make([]bool, 6)
	for i := range oks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := w.call(t, run("bob", fmt.Sprint("bob-", i), "ada-1", "ada-1"), "task_complete", map[string]any{"taskId": id, "result": fmt.Sprint(i)})
			oks[i] = env.Status == "ok"
		}()
	}
	wg.Wait()
	won := 0
	for _, ok := range oks {
		if ok {
			won++
		}
	}
	if won != 1 || len(w.jobs.all()) != 2 || len(w.rows(t, "ada", "bob")) != 2 {
		t.Errorf("%d completions won, %d wakes, %d rows; want 1, 2, 2", won, len(w.jobs.all()), len(w.rows(t, "ada", "bob")))
	}
}

func TestBlockWakesTheCreatorAndTellsTheHumanOnce(t *testing.T) {
	w := newWorld(t)
	id := w.create(t, run("ada", "ada-1", "", "ada-1"))
	bobRun := run("bob", "bob-1", "ada-1", "ada-1")
	w.clock.add(time.Minute)
	env := mustOK(t, "block", w.call(t, bobRun, "task_block", map[string]any{"taskId": id, "reason": "no access to the invoices folder"}))
	if env.Data["taskStatus"] != "blocked" || env.Data["creatorWoken"] != true || env.Data["humanTold"] != true {
		t.Errorf("envelope = %+v", env.Data)
	}
	got := w.jobs.all()
	if len(got) != 2 || got[1].AgentID != "ada" || *got[1].Parent != tasked(bobRun, 1, "") || !strings.Contains(got[1].Text, "blocked") ||
		!strings.Contains(got[1].Text, "no access") {
		t.Fatalf("wakes = %+v, want ada woken with the reason under bob's run", got)
	}
	if k := w.human.kinds(); len(k) != 1 || k[0] != router.KindTaskBlocked {
		t.Fatalf("human got %v, want one task_blocked notice", k)
	}
	if n := w.human.notices[0]; !strings.Contains(n.Text, "no access") || !strings.Contains(n.Text, "Bob (bob)") || n.Run != bobRun {
		t.Errorf("notice = %+v", n)
	}
	rows := w.rows(t, "ada", "bob")
	if r := rows[len(rows)-1]; r.Channel != sb.ChannelTaskResult || r.Direction != sb.DirectionResponse || r.Content != "blocked: no access to the invoices folder" || r.TaskStatus != sb.TaskBlocked {
		t.Errorf("block row = %+v", r)
	}

	// A retried block is refused and tells nobody again.
	env = w.call(t, bobRun, "task_block", map[string]any{"taskId": id, "reason": "still no access"})
	if env.Status != "error" || env.Data["code"] != sb.ECONFLICT {
		t.Errorf("second block = %+v, want a conflict", env)
	}
	// Completing it later wakes the creator, and the human hears nothing more.
	mustOK(t, "complete after block", w.call(t, bobRun, "complete", map[string]any{"taskId": id, "result": "found a copy"}))
	if k := w.human.kinds(); len(k) != 1 {
		t.Errorf("human got %v, want still the one notice", k)
	}
	if n := len(w.jobs.all()); n != 3 {
		t.Errorf("%d wakes, want assignment, block and completion", n)
	}
}

func TestABlockNoticeThatDidNotArriveIsDeliveredLaterOnce(t *testing.T) {
	w := newWorld(t)
	id := w.create(t, run("ada", "ada-1", "", "ada-1"))
	w.human.fail = true
	env := mustOK(t, "block", w.call(t, run("bob", "bob-1", "ada-1", "ada-1"), "task_block", map[string]any{"taskId": id, "reason": "no access"}))
	if env.Data["humanTold"] != false || env.Data["creatorWoken"] != true {
		t.Errorf("envelope = %+v", env.Data)
	}
	if _, err := w.svc.RunDeferredWakes(t.Context()); err == nil {
		t.Error("job with the human unreachable: no error")
	}
	w.human.fail = false
	for range 2 {
		if _, err := w.svc.RunDeferredWakes(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if k := w.human.kinds(); len(k) != 1 || k[0] != router.KindTaskBlocked || !strings.Contains(w.human.notices[0].Text, "no access") {
		t.Errorf("human got %v, want the block notice once", k)
	}
}

func TestCommentsAreRowsByDirection(t *testing.T) {
	w := newWorld(t)
	id := w.create(t, run("ada", "ada-1", "", "ada-1"))
	bobRun := run("bob", "bob-1", "ada-1", "ada-1")
	w.clock.add(time.Minute)
	mustOK(t, "bob asks", w.call(t, bobRun, "task_comment", map[string]any{"taskId": id, "text": "Net or gross?"}))
	w.clock.add(time.Minute)
	env := mustOK(t, "ada answers", w.call(t, run("ada", "ada-2", "", "ada-2"), "comment", map[string]any{"taskId": id, "text": "Gross."}))
	if env.Data["comments"] != 2 {
		t.Errorf("envelope = %+v", env.Data)
	}
	rows := w.rows(t, "ada", "bob")
	if len(rows) != 3 {
		t.Fatalf("rows = %+v", rows)
	}
	if r := rows[1]; r.From != "bob" || r.Channel != sb.ChannelTaskComment || r.Direction != sb.DirectionResponse || r.Content != "Net or gross?" || r.RunID != "bob-1" {
		t.Errorf("assignee's comment row = %+v, want a response", r)
	}
	if r := rows[2]; r.From != "ada" || r.Channel != sb.ChannelTaskComment || r.Direction != sb.DirectionRequest || r.RunID != "ada-2" {
		t.Errorf("creator's comment row = %+v, want a request", r)
	}
	if n := len(w.jobs.all()); n != 1 {
		t.Errorf("%d wakes, want only the assignment (comments wake nobody)", n)
	}
}

// TestCommentsStayWithinOneItem: comments in four-byte characters cannot
// push a task past DynamoDB's item limit; the last one is refused with
// what to do, and the result still fits.
func TestCommentsStayWithinOneItem(t *testing.T) {
	w := newWorld(t)
	id := w.create(t, run("ada", "ada-1", "", "ada-1"))
	bobRun := run("bob", "bob-1", "ada-1", "ada-1")
	long := strings.Repeat("😀", sb.MaxTaskText) // 80,000 bytes
	n := 0
	for ; n < 10; n++ {
		env := w.call(t, bobRun, "task_comment", map[string]any{"taskId": id, "text": long})
		if env.Status != "ok" {
			if env.Data["code"] != sb.ECONFLICT || !strings.Contains(env.Error, "put long text into a file") {
				t.Fatalf("comment %d = %+v, want a conflict that says what to do", n+1, env)
			}
			break
		}
	}
	if n == 0 || n == 10 {
		t.Fatalf("%d long comments were taken, want some and then a refusal", n)
	}
	mustOK(t, "complete with a long result", w.call(t, bobRun, "task_complete", map[string]any{"taskId": id, "result": long}))
}

func TestRefusals(t *testing.T) {
	w := newWorld(t)
	id := w.create(t, run("ada", "ada-1", "", "ada-1"))
	cyd := run("cyd", "cyd-1", "", "cyd-1")
	for _, c := range []struct {
		name   string
		r      sb.RunContext
		action string
		args   map[string]any
		code   string
		says   string
	}{
		{"unknown assignee", run("ada", "ada-2", "", "ada-2"), "task_create",
			map[string]any{"assignee": "zed", "title": "x", "description": "y"}, sb.ENOTFOUND, `no agent "zed"`},
		{"assignee without the tool", run("ada", "ada-2", "", "ada-2"), "task_create",
			map[string]any{"assignee": "dan", "title": "x", "description": "y"}, sb.EINVALID, "dan does not take tasks"},
		{"task for the human", run("ada", "ada-2", "", "ada-2"), "task_create",
			map[string]any{"assignee": sb.HumanParty, "title": "x", "description": "y"}, sb.EINVALID, "notify_user"},
		{"comment by an outsider", cyd, "task_comment", map[string]any{"taskId": id, "text": "me too"}, sb.EFORBIDDEN, "only they comment"},
		{"complete by the creator", run("ada", "ada-3", "", "ada-3"), "task_complete", map[string]any{"taskId": id, "result": "done"}, sb.EFORBIDDEN, "only the assignee completes"},
		{"complete by an outsider", cyd, "task_complete", map[string]any{"taskId": id, "result": "done"}, sb.EFORBIDDEN, "assigned to Bob (bob)"},
		{"block by an outsider", cyd, "task_block", map[string]any{"taskId": id, "reason": "no"}, sb.EFORBIDDEN, "only the assignee blocks"},
		{"unknown task", run("bob", "bob-1", "", "bob-1"), "task_complete", map[string]any{"taskId": "nope", "result": "x"}, sb.ENOTFOUND, "no task"},
		{"missing result", run("bob", "bob-1", "", "bob-1"), "task_complete", map[string]any{"taskId": id}, sb.EINVALID, `"result"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := w.call(t, c.r, c.action, c.args)
			if env.Status != "error" || env.Data["code"] != c.code || !strings.Contains(env.Error, c.says) {
				t.Errorf("%+v, want %s saying %q", env, c.code, c.says)
			}
		})
	}
	if n := len(w.jobs.all()); n != 1 {
		t.Errorf("%d wakes after refusals, want only the first assignment", n)
	}
	if k := w.human.kinds(); len(k) != 0 {
		t.Errorf("human got %v after refusals", k)
	}
	got, _ := w.tasks.Get(t.Context(), id)
	if got.Status != sb.TaskOpen || len(got.Comments) != 0 {
		t.Errorf("task after refusals = %+v", got)
	}
	// A refused hand-over to a real agent is a row (denied); a made-up
	// agent gets none.
	if rows := w.rows(t, "ada", "dan"); len(rows) != 1 || rows[0].Status != sb.MessageDenied || rows[0].Channel != sb.ChannelTask ||
		!strings.HasPrefix(rows[0].Reason, taskboard.ReasonNoTaskboard+": ") {
		t.Errorf("ada|dan rows = %+v, want one denied task row with its reason", rows)
	}
	if rows := w.rows(t, "ada", "zed"); len(rows) != 0 {
		t.Errorf("ada|zed rows = %+v, want none", rows)
	}
}

func TestHumanCreatorIsToldThroughTheRouter(t *testing.T) {
	w := newWorld(t)
	op := sb.NewRun("bob", nil, t0) // POST /tools/invoke stamps a fresh run
	raw, _ := json.Marshal(map[string]any{"assignee": "bob", "title": "Check the backup", "description": "Is last night's backup complete?"})
	env := mustOK(t, "operator create", w.tool.Invoke(t.Context(), sb.ToolCall{AgentID: "bob", Tool: "Taskboard", Action: "task_create",
		Args: raw, Run: op, Origin: sb.OriginOperator}))
	id := env.Data["taskId"].(string)
	if got, _ := w.tasks.Get(t.Context(), id); got.Creator != sb.HumanParty {
		t.Fatalf("creator = %q, want the human", got.Creator)
	}
	if j := w.jobs.all(); len(j) != 1 || j[0].AgentID != "bob" || !strings.Contains(j[0].Text, "the human gave you task") {
		t.Fatalf("wakes = %+v", j)
	}
	bobRun := run("bob", "bob-1", op.RunID, op.RootRunID)
	env = mustOK(t, "complete", w.call(t, bobRun, "task_complete", map[string]any{"taskId": id, "result": "complete, 12 GB"}))
	if env.Data["creatorWoken"] != false || env.Data["humanTold"] != true {
		t.Errorf("envelope = %+v", env.Data)
	}
	if k := w.human.kinds(); len(k) != 1 || k[0] != router.KindTaskDone || !strings.Contains(w.human.notices[0].Text, "12 GB") {
		t.Errorf("human got %v %+v, want one task_done notice with the result", k, w.human.notices)
	}
	if n := len(w.jobs.all()); n != 1 {
		t.Errorf("%d wakes, want no agent woken for the human's task", n)
	}
	page, _ := w.msgs.Agent(t.Context(), "bob", sb.MessageQuery{})
	if len(page.Messages) != 0 {
		t.Errorf("rows = %+v, want none: the human is not an agent", page.Messages)
	}
}

func TestWakesThatCannotBeQueuedWaitForTheJob(t *testing.T) {
	w := newWorld(t)
	w.jobs.fail = true // as in the agent-worker, which cannot invoke itself
	adaRun := run("ada", "ada-1", "", "ada-1")
	env := mustOK(t, "create", w.call(t, adaRun, "task_create", map[string]any{"assignee": "bob", "title": "x", "description": "y"}))
	if env.Data["assigneeWoken"] != true || env.Data["wakeDeferred"] != true {
		t.Errorf("envelope = %+v, want the wake deferred", env.Data)
	}
	if rows := w.rows(t, "ada", "bob"); len(rows) != 1 || rows[0].Status != sb.MessageDelivered {
		t.Errorf("rows = %+v, want one delivered request", rows)
	}
	// While the worker cannot be reached, the job keeps the wake.
	if _, err := w.svc.RunDeferredWakes(t.Context()); err == nil {
		t.Error("job with the worker unreachable: no error")
	}
	w.jobs.fail = false
	var wg sync.WaitGroup
	for range 3 { // overlapping runs queue it once
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = w.svc.RunDeferredWakes(t.Context()) }()
	}
	wg.Wait()
	got := w.jobs.all()
	if len(got) != 1 || got[0].AgentID != "bob" || got[0].Parent == nil || *got[0].Parent != tasked(adaRun, 1, "ada") || !strings.Contains(got[0].Text, "task_complete") {
		t.Fatalf("queued = %+v, want bob's wake once, as a follow-up of ada's run", got)
	}
	if out, err := w.svc.RunDeferredWakes(t.Context()); err != nil || !strings.HasPrefix(out, "0 ") {
		t.Errorf("job again = %q, %v; want nothing left", out, err)
	}
}

func TestAWakeThatCannotBeKeptEither(t *testing.T) {
	w := newWorld(t)
	w.jobs.fail = true
	w.svc.Tasks = noDefer{w.tasks}
	env := mustOK(t, "create", w.call(t, run("ada", "ada-1", "", "ada-1"), "task_create",
		map[string]any{"assignee": "bob", "title": "x", "description": "y"}))
	if env.Data["assigneeWoken"] != false || !strings.Contains(env.Data["note"].(string), "do not create it again") {
		t.Errorf("envelope = %+v", env.Data)
	}
	if rows := w.rows(t, "ada", "bob"); len(rows) != 1 || rows[0].Status != sb.MessageFailed {
		t.Errorf("rows = %+v, want one failed request", rows)
	}
}

// noDefer is the tasks store with its deferred-wake writes failing.
type noDefer struct{ sb.TaskStore }

func (noDefer) DeferWake(context.Context, sb.DeferredWake) error {
	return sb.E("tasks.deferWake", sb.EUNAVAILABLE, "throttled")
}

func TestWatchdogTellsTheHumanOncePerTask(t *testing.T) {
	w := newWorld(t)
	id := w.create(t, run("ada", "ada-1", "", "ada-1"))
	w.clock.add(2 * time.Hour)
	young := w.create(t, run("ada", "ada-2", "", "ada-2"))
	_ = young

	w.clock.add(23 * time.Hour) // the first task is 25 h old, the second 23 h
	out, err := w.svc.Watchdog(t.Context())
	if err != nil || !strings.HasPrefix(out, "1 open tasks") {
		t.Fatalf("watchdog = %q, %v", out, err)
	}
	if k := w.human.kinds(); len(k) != 1 || k[0] != router.KindWatchdog || !strings.Contains(w.human.notices[0].Text, id) {
		t.Fatalf("human got %v, want one watchdog notice for %s", k, id)
	}
	// The job again, and two overlapping runs of it: no second notice.
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = w.svc.Watchdog(t.Context()) }()
	}
	wg.Wait()
	if k := w.human.kinds(); len(k) != 1 {
		t.Fatalf("human got %v after reruns, want still one notice", k)
	}
	// The second task comes of age: one notice for it.
	w.clock.add(2 * time.Hour)
	if _, err := w.svc.Watchdog(t.Context()); err != nil {
		t.Fatal(err)
	}
	if k := w.human.kinds(); len(k) != 2 {
		t.Fatalf("human got %v, want a second notice", k)
	}
}

func TestWatchdogRetriesANoticeThatDidNotArrive(t *testing.T) {
	w := newWorld(t)
	w.create(t, run("ada", "ada-1", "", "ada-1"))
	w.clock.add(25 * time.Hour)
	w.human.fail = true
	if _, err := w.svc.Watchdog(t.Context()); err == nil {
		t.Fatal("watchdog with the human unreachable: no error")
	}
	w.human.fail = false
	if _, err := w.svc.Watchdog(t.Context()); err != nil {
		t.Fatal(err)
	}
	if k := w.human.kinds(); len(k) != 1 {
		t.Fatalf("human got %v, want the notice on the next run", k)
	}
}

func TestWatchdogSkipsFinishedTasksAndCanBeOff(t *testing.T) {
	w := newWorld(t)
	id := w.create(t, run("ada", "ada-1", "", "ada-1"))
	mustOK(t, "block", w.call(t, run("bob", "bob-1", "ada-1", "ada-1"), "task_block", map[string]any{"taskId": id, "reason": "waiting"}))
	w.clock.add(48 * time.Hour)
	if _, err := w.svc.Watchdog(t.Context()); err != nil {
		t.Fatal(err)
	}
	if k := w.human.kinds(); len(k) != 1 || k[0] != router.KindTaskBlocked {
		t.Errorf("human got %v, want only the block notice", k)
	}
	w.create(t, run("ada", "ada-2", "", "ada-2"))
	w.clock.add(48 * time.Hour)
	w.svc.WatchdogAfter = 0
	if out, err := w.svc.Watchdog(t.Context()); err != nil || !strings.Contains(out, "off") {
		t.Errorf("watchdog off = %q, %v", out, err)
	}
	if k := w.human.kinds(); len(k) != 1 {
		t.Errorf("human got %v with the watchdog off", k)
	}
}

func TestListShowsTheCallersTasksFramed(t *testing.T) {
	w := newWorld(t)
	id := w.create(t, run("ada", "ada-1", "", "ada-1"))
	mustOK(t, "cyd gives ada one", w.call(t, run("cyd", "cyd-1", "", "cyd-1"), "create", map[string]any{"assignee": "ada", "title": "Proofread", "description": "the memo"}))
	for _, c := range []struct {
		filter string
		want   int
	}{{"", 2}, {"created", 1}, {"assigned", 1}} {
		args := map[string]any{}
		if c.filter != "" {
			args["filter"] = c.filter
		}
		env := mustOK(t, "list "+c.filter, w.call(t, run("ada", "ada-2", "", "ada-2"), "task_list", args))
		if env.Data["count"] != c.want {
			t.Errorf("list %q: count %v, want %d", c.filter, env.Data["count"], c.want)
		}
	}
	env := mustOK(t, "bob's", w.call(t, run("bob", "bob-1", "", "bob-1"), "list", map[string]any{"status": "open"}))
	text, _ := env.Data["tasks"].(string)
	if !strings.HasPrefix(text, "<untrusted_content") || !strings.Contains(text, id) || !strings.Contains(text, "Sum the invoices") {
		t.Errorf("bob's list = %q", text)
	}
}

// TestModelSeesTaskNames: the function names a model is offered contain
// task_create, task_comment, task_complete, task_block and task_list, and
// read back as the Taskboard's actions.
func TestModelSeesTaskNames(t *testing.T) {
	spec := taskboard.NewTool(nil).Spec()
	var names []string
	for _, a := range spec.Actions {
		if err := sb.CheckFunctionName(spec.Name, a.Name); err != nil {
			t.Error(err)
		}
		names = append(names, sb.FunctionName(spec.Name, a.Name))
	}
	got := strings.Join(names, " ")
	for _, want := range []string{"task_create", "task_comment", "task_complete", "task_block", "task_list"} {
		if !strings.Contains(got, want) {
			t.Errorf("function names %q lack %s", got, want)
		}
	}
}

// partyMap is a taskboard.Parties of fixed parties.
type partyMap map[string]taskboard.Party

func (m partyMap) Party(id string) (taskboard.Party, bool) { p, ok := m[id]; return p, ok }
