package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// attackConfig: Hermes and Atlas hand each other tasks; Atlas's budget is
// small (a few runs of the scripted model), Pauper's smaller than one run.
const attackConfig = `instance:
  name: e2e-task-attack
  toolApiToken: env:E2E_TOOL_TOKEN
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}", inputPer1M: 3, outputPer1M: 15}
  approvals: {signingKey: env:E2E_SIGNING_KEY}
  dev: {scheduler: false}
agents:
  - id: hermes
    name: Hermes
    dailyBudgetUsd: 5
    tools: {Taskboard: {}}
  - id: atlas
    name: Atlas
    dailyBudgetUsd: 0.01
    tools: {Taskboard: {}, ask_agent: {}}
  - id: pauper
    name: Pauper
    dailyBudgetUsd: 0.0001
    tools: {Taskboard: {}}
`

// attackWorld is the dev server and a store on its tables, to read what
// the server wrote (agent messages, tasks, what each agent is charged).
type attackWorld struct {
	d     *devServer
	store *dynamo.Store
}

func startAttackWorld(t *testing.T) *attackWorld {
	t.Helper()
	path := filepath.Join(t.TempDir(), "attack.yaml")
	if err := os.WriteFile(path, []byte(attackConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("e2eatk%d-", time.Now().UnixNano())
	d := startDevConfig(t, path, deploy.EnvTablePrefix+"="+prefix)
	getenv := func(k string) string {
		if k == deploy.EnvTablePrefix {
			return prefix
		}
		return ""
	}
	return &attackWorld{d: d, store: dynamo.New(dynamotest.Client(t), getenv)}
}

// createAs calls task_create through POST /tools/invoke within the run
// token names.
func (w *attackWorld) createAs(agent, token, assignee, title string) (int, map[string]any) {
	status, _, m := w.d.do("POST", "/tools/invoke", toolToken, map[string]any{
		"agent": agent, "tool": "Taskboard", "action": "task_create", "run": map[string]any{"token": token},
		"args": map[string]any{"assignee": assignee, "title": title, "description": "Check the backups of " + title + "."}})
	return status, m
}

// rows are the agent messages between a and b, oldest first.
func (w *attackWorld) rows(t *testing.T, a, b string) []sb.AgentMessage {
	t.Helper()
	page, err := w.store.AgentMessages(nil).Pair(t.Context(), a, b, sb.MessageQuery{OldestFirst: true, Limit: sb.MaxMessagePage})
	if err != nil {
		t.Fatal(err)
	}
	return page.Messages
}

// denied counts a|b's denied rows by the reason's code.
func (w *attackWorld) denied(t *testing.T, a, b string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range w.rows(t, a, b) {
		if r.Status == sb.MessageDenied {
			code, _, _ := strings.Cut(r.Reason, ":")
			out[code]++
		}
	}
	return out
}

func (w *attackWorld) charged(t *testing.T, agent string) float64 {
	t.Helper()
	spent, err := w.store.AgentCostSince(t.Context(), agent, time.Now().UTC().Truncate(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return spent
}

// receiptsOf waits until the wakes of root's chain are over (the pool runs
// them in the background) and returns its receipts.
func (w *attackWorld) receiptsOf(t *testing.T, root string) []map[string]any {
	t.Helper()
	w.d.idleWithin(90 * time.Second)
	_, receipts := chainOf(t, w.d, root)
	return receipts
}

// TestTaskboardAttackReplayed replays the attack run's taskboard abuse
// against `switchboard dev` and checks what holds:
//   - storm: 500 task_create within one run (concurrent, through the tool
//     API with the run's token) create 5 tasks and wake Atlas 5 times;
//     495 are refused (run_limit rows); Atlas's runs are charged to
//     Hermes, Atlas's own budget is untouched;
//   - ping-pong: a task whose every hand-over hands it on again stops 3
//     hand-overs deep, with a hop_limit row;
//   - an answering run's task_create is refused (answering_run row);
//   - Pauper, whose budget buys less than one of Atlas's runs, causes one
//     run of Atlas with 35 task_create; its other wakes and tasks are
//     refused (payer_budget rows), Atlas's budget untouched;
//   - afterwards the human's message to Atlas is answered.
func TestTaskboardAttackReplayed(t *testing.T) {
	w := startAttackWorld(t)
	keys := engineKeys(t, time.Now)

	t.Run("storm", func(t *testing.T) {
		run := sb.NewRun("hermes", nil, time.Now())
		token := mint(t, keys, run, time.Now().Add(10*time.Minute))
		const calls = 500
		statuses := make([]string, calls)
		var wg sync.WaitGroup
		sem := make(chan struct{}, 50)
		start := time.Now()
		for i := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				status, m := w.createAs("hermes", token, "atlas", fmt.Sprint("storm ", i))
				switch {
				case status == http.StatusOK && m["status"] == "ok":
					statuses[i] = "ok"
				case status == http.StatusOK && m["refused"] == "run_limit" && m["code"] == "rate_limited" &&
					strings.Contains(str(m["error"]), "this run has created 5 tasks"):
					statuses[i] = "refused"
				default:
					statuses[i] = fmt.Sprintf("%d %v", status, m)
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		count := map[string]int{}
		for _, s := range statuses {
			count[s]++
		}
		t.Logf("storm: %d task_create in %v: %v", calls, elapsed.Round(time.Millisecond), count)
		if count["ok"] != 5 || count["refused"] != calls-5 {
			t.Fatalf("storm answers %v, want 5 ok and %d refused for the run's bound", count, calls-5)
		}
		receipts := w.receiptsOf(t, run.RootRunID)
		tasks, err := w.store.Tasks().List(t.Context(), sb.TaskQuery{Party: "hermes", Role: sb.TaskCreatedBy, Limit: 100})
		if err != nil || len(tasks) != 5 {
			t.Fatalf("hermes created %d tasks (%v), want 5", len(tasks), err)
		}
		var atlasCost float64
		for _, r := range receipts {
			rr, _ := r["run"].(map[string]any)
			if r["agentId"] != "atlas" || rr["paidBy"] != "hermes" || rr["taskHops"] != float64(1) {
				t.Errorf("receipt %v, want a run of atlas one hop deep, paid by hermes", r)
			}
			atlasCost += r["costUsd"].(float64)
		}
		t.Logf("storm: %d runs of atlas (%.4f USD, charged to hermes)", len(receipts), atlasCost)
		if len(receipts) != 5 {
			t.Errorf("%d runs of atlas, want 5 (one per task)", len(receipts))
		}
		if got := w.denied(t, "hermes", "atlas"); got["run_limit"] != calls-5 {
			t.Errorf("denied rows %v, want %d run_limit", got, calls-5)
		}
		if c := w.charged(t, "atlas"); c != 0 {
			t.Errorf("atlas is charged %.4f USD, want 0: hermes pays for the tasks it gave", c)
		}
		if c := w.charged(t, "hermes"); c < atlasCost-1e-9 {
			t.Errorf("hermes is charged %.4f USD, want at least atlas's runs (%.4f)", c, atlasCost)
		}
	})

	t.Run("ping-pong", func(t *testing.T) {
		// Each task's description is the call that hands it on: Atlas's
		// and Hermes's scripted models make the calls their wake names, six
		// hand-overs deep if nothing stops them.
		who := []string{"atlas", "hermes"}
		desc := "pong"
		for k := 6; k >= 2; k-- {
			args, _ := json.Marshal(map[string]string{"assignee": who[(k-1)%2], "title": fmt.Sprint("ping ", k), "description": desc})
			desc = "call Taskboard.create " + string(args)
		}
		first, _ := json.Marshal(map[string]string{"assignee": "atlas", "title": "ping 1", "description": desc})
		status, _, m := w.d.do("POST", "/dev/agents/hermes/run", "", map[string]any{"message": "call Taskboard.create " + string(first)})
		if status != http.StatusOK {
			t.Fatalf("hermes's run = %d %v", status, m)
		}
		rr, _ := m["run"].(map[string]any)
		root := str(rr["rootRunId"])
		receipts := w.receiptsOf(t, root) // the chain's wakes are over: its denials are written
		got := w.denied(t, "atlas", "hermes")
		var chain []string
		for _, r := range receipts {
			rr, _ := r["run"].(map[string]any)
			chain = append(chain, fmt.Sprintf("%v@%v", r["agentId"], rr["taskHops"]))
		}
		t.Logf("ping-pong: chain %v, denied %v", chain, got)
		if got["hop_limit"] != 1 {
			t.Fatalf("denied rows atlas|hermes %v, want one hop_limit refusal", got)
		}
		if len(receipts) != 4 {
			t.Errorf("chain %v, want hermes → atlas → hermes → atlas (4 runs) and no more", chain)
		}
		var pings []string
		for _, agent := range who {
			ts, _ := w.store.Tasks().List(t.Context(), sb.TaskQuery{Party: agent, Role: sb.TaskAssignedTo, Limit: 100})
			for _, tk := range ts {
				if strings.HasPrefix(tk.Title, "ping") {
					pings = append(pings, fmt.Sprintf("%s@%d", tk.Title, tk.Hops))
				}
			}
		}
		if len(pings) != 3 {
			t.Errorf("ping tasks %v, want ping 1..3 at hops 1..3", pings)
		}
	})

	t.Run("answering run", func(t *testing.T) {
		ans := sb.NewRun("atlas", &sb.RunContext{RunID: "hermes-q", RootRunID: "hermes-q", AgentID: "hermes"}, time.Now())
		ans.CallPath = "hermes"
		status, m := w.createAs("atlas", mint(t, keys, ans, time.Now().Add(5*time.Minute)), "pauper", "hand it on")
		if status != http.StatusOK || m["refused"] != "answering_run" || !strings.Contains(str(m["error"]), "answers a question from Hermes") {
			t.Fatalf("task_create from an answering run = %d %v, want refused", status, m)
		}
		if got := w.denied(t, "atlas", "pauper"); got["answering_run"] != 1 {
			t.Errorf("denied rows %v, want one answering_run", got)
		}
	})

	t.Run("creator without budget", func(t *testing.T) {
		// Pauper's first task is created (nothing spent yet) and wakes
		// Atlas; that run, charged to Pauper, uses Pauper's budget up.
		// From then on Pauper causes no run: a task created before is
		// refused at its wake (the worker asks the taskboard), every later
		// task_create at once. However the pool interleaves the two, 35
		// attempts make one run of Atlas and 34 payer_budget refusals.
		run := sb.NewRun("pauper", nil, time.Now())
		token := mint(t, keys, run, time.Now().Add(10*time.Minute))
		var mu sync.Mutex
		created, refused := 0, 0
		create := func(i int) {
			status, m := w.createAs("pauper", token, "atlas", fmt.Sprint("poor ", i))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case status == http.StatusOK && m["status"] == "ok":
				created++
			case status == http.StatusOK && m["refused"] == "payer_budget" && strings.Contains(str(m["error"]), "your daily budget is used up"):
				refused++
			default:
				t.Errorf("create %d = %d %v", i, status, m)
			}
		}
		// The first five at once (the run's bound): some are created before
		// Atlas's first run is charged, and their wakes meet the gate.
		var wg sync.WaitGroup
		for i := range 5 {
			wg.Add(1)
			go func() { defer wg.Done(); create(i) }()
		}
		wg.Wait()
		// Atlas's first run, charged to Pauper, uses the budget up; until it
		// is charged a sixth task_create would meet the run's bound first.
		if !eventually(30*time.Second, func() bool { return w.charged(t, "pauper") > 0 }) {
			t.Fatal("atlas's first run for pauper was never charged to pauper")
		}
		for i := 5; i < 35; i++ {
			create(i)
		}
		if created < 1 || created+refused != 35 {
			t.Fatalf("%d created, %d refused; want the first created and the rest refused", created, refused)
		}
		w.d.idleWithin(90 * time.Second) // the refused wakes are written
		_, receipts := chainOf(t, w.d, run.RootRunID)
		denied := w.denied(t, "pauper", "atlas")
		t.Logf("pauper: %d of 35 tasks created, %d refused at task_create, %d wakes refused; %d run of atlas; pauper charged %.4f USD (budget 0.0001)",
			created, refused, denied["payer_budget"]-refused, len(receipts), w.charged(t, "pauper"))
		if len(receipts) != 1 || denied["payer_budget"] != 34 {
			t.Fatalf("%d runs of atlas for pauper, denied %v; want 1 run and 34 payer_budget refusals", len(receipts), denied)
		}
		if c := w.charged(t, "atlas"); c != 0 {
			t.Errorf("atlas is charged %.4f USD, want 0", c)
		}
	})

	t.Run("the human is answered", func(t *testing.T) {
		status, _, m := w.d.do("POST", "/dev/agents/atlas/run", "", map[string]any{"message": "Are the backups fine?"})
		if status != http.StatusOK || !strings.Contains(str(m["answer"]), "Atlas heard") {
			t.Fatalf("the human's message to atlas = %d %v, want answered: atlas's budget is its own", status, m)
		}
	})
}
