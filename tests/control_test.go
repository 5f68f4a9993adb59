package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// The operator's hands through `switchboard dev`: a chain over its budget,
// pause and resume, and stop from Telegram and the console.

// tgGroup is the Telegram group where the approver and a colleague who is
// not one both write; tgColleague is that colleague.
const (
	tgGroup     = int64(-1001234567)
	tgColleague = int64(555000111)
)

// modelCall is one chat-completions request: who asked (by the system
// prompt), when it came in and when it was answered.
type modelCall struct {
	agent      string
	start, end time.Time
}

// stepModel is an OpenAI-compatible chat-completions server for a chain
// that works in many steps. Hermes, asked to "delegate the count", gives
// Atlas a task and then says so; to anything else he answers in one step.
// Atlas, woken by the task, thinks for think and writes one more file in
// every step, without end (until maxSteps or a stop).
type stepModel struct {
	*httptest.Server
	think time.Duration
	mu    sync.Mutex
	calls []modelCall
}

func newStepModel(t *testing.T, think time.Duration) *stepModel {
	m := &stepModel{think: think}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		agent := "hermes"
		for _, msg := range req.Messages {
			if msg.Role == "system" && strings.Contains(msg.Content, "You are Atlas.") {
				agent = "atlas"
			}
		}
		last := req.Messages[len(req.Messages)-1]
		call := func(tool, action string, args map[string]any) []any {
			b, _ := json.Marshal(args)
			return []any{map[string]any{"id": "call_1", "type": "function",
				"function": map[string]any{"name": sb.FunctionName(tool, action), "arguments": string(b)}}}
		}
		msg := map[string]any{"role": "assistant"}
		switch {
		case agent == "atlas":
			m.mu.Lock()
			n := 1
			for _, c := range m.calls {
				if c.agent == "atlas" {
					n++
				}
			}
			m.mu.Unlock()
			thinking(r, m.think) // keeps Atlas at work while the stop is sent
			msg["tool_calls"] = call("Workspace", "write", map[string]any{"path": fmt.Sprintf("personal:count-%d.txt", n), "content": fmt.Sprint(n)})
		case last.Role == "user" && strings.Contains(last.Content, "delegate the count"):
			msg["tool_calls"] = call("Taskboard", "task_create", map[string]any{"assignee": "atlas", "title": "Count the trucks",
				"description": "Count the trucks on the road, one file per step."})
		case last.Role == "tool":
			msg["content"] = "Atlas counts the trucks now."
		default:
			msg["content"] = "Hermes here: noted."
		}
		m.mu.Lock()
		m.calls = append(m.calls, modelCall{agent: agent, start: start, end: time.Now()})
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": msg}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 3}})
	}))
	t.Cleanup(m.Close)
	return m
}

// of returns agent's model calls so far, in the order they were answered.
func (m *stepModel) of(agent string) []modelCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []modelCall
	for _, c := range m.calls {
		if c.agent == agent {
			out = append(out, c)
		}
	}
	return out
}

// controlWorld is `switchboard dev` with Hermes and Atlas on the step
// model, Telegram (the approver and a colleague in one group), Rocket.Chat
// for Hermes, the console, and a store on the server's tables.
type controlWorld struct {
	dev   *devServer
	tg    *tgfake.Server
	rc    *rcfake.Server
	model *stepModel
	room  string
	store *dynamo.Store
	chat  int64 // the Telegram chat commands come from
	next  int64 // the next Telegram update id
}

func startControlWorld(t *testing.T) *controlWorld {
	t.Helper()
	tg := tgfake.New()
	t.Cleanup(tg.Close)
	tg.AddUser(tgfake.User{ID: tgApprover, FirstName: "Richard", Username: "richard"})
	tg.AddUser(tgfake.User{ID: tgColleague, FirstName: "Mallory", Username: "mallory"})
	tg.AddChat(tgGroup, "group")
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0)
	rc.SetWebhookToken(rcWebhookToken)
	rc.AddUser("richard", "user")
	hermesID, hermesToken := rc.AddUser("agent-hermes", "bot", "user")
	w := &controlWorld{tg: tg, rc: rc, model: newStepModel(t, 150*time.Millisecond), chat: tgGroup, next: 9000}
	w.room = rc.AddChannel("finanz-team", "richard", "agent-hermes")
	config := fmt.Sprintf(`instance:
  name: e2e-control
  toolApiToken: env:E2E_TOOL_TOKEN
  channels: [Telegram]
  model: {provider: openai, baseUrl: %s/v1, model: fake}
  rocketchat:
    baseUrl: %s
    webhookTokens: [%s]
  telegram:
    apiBaseUrl: %s
    botToken: %s
    chatId: "%d"
    allowedChatIds: ["%d", "%d"]
    webhookSecret: %s
  approvals: {signingKey: env:E2E_SIGNING_KEY, approverTelegramIds: ["%d"]}
  console:
    password: env:E2E_CONSOLE_PASSWORD
  dev: {scheduler: false, workers: 2}
agents:
  - id: hermes
    name: Hermes
    systemPrompt: You are Hermes.
    tools:
      Taskboard: {}
      RocketChat:
        userId: %s
        authToken: %s
        username: agent-hermes
        allowedRooms: [finanz-team]
  - id: atlas
    name: Atlas
    systemPrompt: You are Atlas.
    maxSteps: 40
    tools:
      Taskboard: {}
      Workspace: {}
`, w.model.URL, rc.URL, rcWebhookToken, tg.URL, tgfake.DefaultToken, tgApprover, tgApprover, tgGroup, tgSecret, tgApprover,
		hermesID, hermesToken)
	path := filepath.Join(t.TempDir(), "control.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	w.dev, w.store = startDevWithStore(t, path, "e2ectl", "E2E_CONSOLE_PASSWORD="+consolePassword)
	return w
}

// startDevWithStore is startDevConfig on tables of its own prefix, with a
// store on them to read what the server wrote.
func startDevWithStore(t *testing.T, config, prefix string, env ...string) (*devServer, *dynamo.Store) {
	t.Helper()
	prefix = fmt.Sprintf("%s%d-", prefix, time.Now().UnixNano())
	d := startDevConfig(t, config, append(env, deploy.EnvTablePrefix+"="+prefix)...)
	return d, dynamo.New(dynamotest.Client(t), func(k string) string {
		if k == deploy.EnvTablePrefix {
			return prefix
		}
		return ""
	})
}

// telegram sends text from user in the world's chat through the Telegram
// webhook, as Telegram delivers it, and returns when the webhook answered.
func (w *controlWorld) telegram(t *testing.T, from int64, text string) {
	t.Helper()
	w.next++
	chat := map[string]any{"id": w.chat, "type": "private", "first_name": "Richard"}
	if w.chat < 0 {
		chat = map[string]any{"id": w.chat, "type": "group", "title": "Finance"}
	}
	u := map[string]any{"update_id": w.next, "message": map[string]any{
		"message_id": w.next, "date": time.Now().Unix(), "text": text,
		"from": map[string]any{"id": from, "is_bot": false, "first_name": "Someone"}, "chat": chat}}
	raw, _ := json.Marshal(u)
	req, _ := http.NewRequest("POST", w.dev.base+"/hooks/telegram", strings.NewReader(string(raw)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(telegram.SecretTokenHeader, tgSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("Telegram webhook of %q = %d %s", text, resp.StatusCode, body)
	}
}

// answered waits for the bot's answer in the world's chat that contains
// want.
func (w *controlWorld) answered(t *testing.T, want string) string {
	t.Helper()
	var got string
	if !eventually(10*time.Second, func() bool {
		for _, m := range w.tg.Messages(w.chat) {
			if strings.Contains(m.Text, want) {
				got = m.Text
			}
		}
		return got != ""
	}) {
		t.Fatalf("no answer containing %q in chat %d: %+v\n%s", want, w.chat, w.tg.Messages(w.chat), w.dev.logs.String())
	}
	return got
}

// delegate runs Hermes on "delegate the count": he gives Atlas the task
// and answers; Atlas's run, woken by the task, counts in its chain. It
// returns the chain's root run id once Atlas has made that many model
// calls.
func (w *controlWorld) delegate(t *testing.T, calls int) string {
	t.Helper()
	status, _, run := w.dev.do("POST", "/dev/agents/hermes/run", "", map[string]any{"message": "please delegate the count"})
	if status != http.StatusOK || run["outcome"] != "answered" {
		t.Fatalf("Hermes's run = %d %v", status, run)
	}
	root := str(run["run"].(map[string]any)["rootRunId"])
	if !eventually(15*time.Second, func() bool { return len(w.model.of("atlas")) >= calls }) {
		t.Fatalf("Atlas made %d model calls, want %d before the stop\n%s", len(w.model.of("atlas")), calls, w.dev.logs.String())
	}
	return root
}

// receipt is the chain's receipt of agent's run.
func (w *controlWorld) receipt(t *testing.T, root, agent string) sb.Receipt {
	t.Helper()
	cost, err := w.store.ChainCost(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cost.Receipts {
		if r.AgentID == agent {
			return r
		}
	}
	t.Fatalf("chain %s has no receipt of %s: %+v", root, agent, cost.Receipts)
	return sb.Receipt{}
}

// A stop while Atlas works in many steps: a colleague's /stop is refused
// and Atlas goes on; the approver's /stop ends Atlas's run at its next
// model step (no model call begins after the stop, the receipt says
// chain_stopped), audited with who did it. The time from the stop to the
// chain's last model call is measured.
func TestStopEndsARunningChainAtItsNextModelStepE2E(t *testing.T) {
	w := startControlWorld(t)
	root := w.delegate(t, 3)

	w.telegram(t, tgColleague, "/stop "+root)
	w.answered(t, "/stop is for approvers only")
	before := len(w.model.of("atlas"))
	if !eventually(10*time.Second, func() bool { return len(w.model.of("atlas")) >= before+2 }) {
		t.Fatalf("after the refused /stop Atlas made %d more model calls, want it to go on", len(w.model.of("atlas"))-before)
	}

	sent := time.Now()
	w.telegram(t, tgApprover, "/stop "+root)
	stopped := time.Now() // the stop marker is written: the webhook has answered
	answer := w.answered(t, "Chain "+root+" is stopped")
	mustContain(t, "the stop's answer", answer, "0 pipeline executions were stopped")
	w.dev.idle()

	r := w.receipt(t, root, "atlas")
	if r.Outcome != "chain_stopped" || r.Reason != "chain_stopped" {
		t.Errorf("Atlas's receipt: outcome %q reason %q, want chain_stopped", r.Outcome, r.Reason)
	}
	calls := w.model.of("atlas")
	var after int
	for _, c := range calls {
		if c.start.After(stopped) {
			after++
		}
	}
	// A gate passed just before the marker was written lets one call in.
	if after > 1 {
		t.Errorf("%d model calls began after the stop, want at most the one whose gate had passed", after)
	}
	last := calls[len(calls)-1]
	t.Logf("stop → last model call answered: %v (stop sent at +0; webhook answered %v; last call began %v; Atlas's run ended %v; %d calls in all, %d began after the stop; model think %v)",
		last.end.Sub(sent).Round(time.Millisecond), stopped.Sub(sent).Round(time.Millisecond), last.start.Sub(sent).Round(time.Millisecond),
		r.StartedAt.Add(r.Duration).Sub(sent).Round(time.Millisecond), len(calls), after, w.model.think)

	audit, err := w.store.ByRoot(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	var by []string
	for _, e := range audit {
		if e.Tool == "control" && e.Action == "stop" {
			by = append(by, e.DecidedBy)
		}
	}
	if want := fmt.Sprintf("telegram:%d", tgApprover); len(by) != 1 || by[0] != want {
		t.Errorf("stop audit entries decided by %v, want one by %s", by, want)
	}
}

// /pause hermes from the approver: a mention of Hermes in Rocket.Chat
// starts no run and gets no answer; /resume hermes runs the held wake,
// once.
func TestPauseHoldsAMentionUntilResumeE2E(t *testing.T) {
	w := startControlWorld(t)
	rw := &rcWorld{rc: w.rc, dev: w.dev, room: w.room}

	w.telegram(t, tgApprover, "/pause hermes")
	w.answered(t, "hermes is paused")
	m, err := w.rc.Post("richard", w.room, "@agent-hermes are the Q3 numbers in?", rcfake.PostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if status, body := rw.deliver(t, m); status != http.StatusOK {
		t.Fatalf("webhook = %d %s", status, body)
	}
	w.dev.settled()
	if n := len(w.model.of("hermes")); n != 0 {
		t.Fatalf("paused Hermes made %d model calls, want none", n)
	}
	if n := rw.replies(w.room); n != 0 {
		t.Fatalf("paused Hermes answered %d times, want not at all", n)
	}

	w.telegram(t, tgApprover, "/resume hermes")
	mustContain(t, "the resume's answer", w.answered(t, "hermes is resumed"), "1 waiting wakes were queued")
	rw.waitForReply(t, w.room, "Hermes here: noted.")
	w.dev.settled()
	if n := rw.replies(w.room); n != 1 {
		t.Errorf("after the resume Hermes answered %d times, want once", n)
	}
	if n := len(w.model.of("hermes")); n != 1 {
		t.Errorf("after the resume Hermes made %d model calls, want the held wake's one", n)
	}
}

// The console stops a chain with a POST that carries the session's CSRF
// token, after a confirmation page; without the token the POST is refused
// and the chain goes on.
func TestConsoleStopsAChainE2E(t *testing.T) {
	w := startControlWorld(t)
	root := w.delegate(t, 2)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if st, _ := consoleLogin(t, w.dev, c, consolePassword); st != http.StatusSeeOther {
		t.Fatalf("console login = %d, want 303", st)
	}
	page := func(res *http.Response, err error) (int, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	st, confirm := page(c.Get(w.dev.base + "/console/control?action=stop&root=" + url.QueryEscape(root)))
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(confirm)
	if st != http.StatusOK || csrf == nil || !strings.Contains(confirm, "Stop chain "+root+"?") {
		t.Fatalf("confirmation page = %d, want the question and a form with the CSRF token:\n%s", st, confirm)
	}

	form := url.Values{"action": {"stop"}, "root": {root}}
	if st, body := page(c.PostForm(w.dev.base+"/console/control", form)); st != http.StatusForbidden {
		t.Errorf("POST without the CSRF token = %d, want 403:\n%s", st, body)
	}
	before := len(w.model.of("atlas"))
	if !eventually(10*time.Second, func() bool { return len(w.model.of("atlas")) >= before+1 }) {
		t.Fatal("after the refused POST Atlas stopped counting; want it to go on")
	}

	form.Set("csrf", csrf[1])
	st, done := page(c.PostForm(w.dev.base+"/console/control", form))
	if st != http.StatusOK || !strings.Contains(done, "Chain "+root+" is stopped") {
		t.Fatalf("POST with the CSRF token = %d:\n%s", st, done)
	}
	w.dev.idle()
	if r := w.receipt(t, root, "atlas"); r.Outcome != "chain_stopped" {
		t.Errorf("Atlas's receipt outcome %q, want chain_stopped", r.Outcome)
	}
	audit, _ := w.store.ByRoot(t.Context(), root)
	var by string
	for _, e := range audit {
		if e.Tool == "control" && e.Action == "stop" {
			by = e.DecidedBy
		}
	}
	if !strings.HasPrefix(by, "console:") {
		t.Errorf("the stop's audit entry is decided by %q, want the console session", by)
	}
}

// A chain over instance.chainBudgetUsd: Hermes asks Atlas twice; Atlas's
// answer spends the budget, so the second question is refused (a denied
// agent-message row with reason chain_budget) and Hermes's run ends before
// its next model call (receipt reason chain_budget). The human hears it
// once, with the chain and its spend.
func TestChainOverBudgetStopsWithOneNoticeE2E(t *testing.T) {
	tg := tgfake.New()
	t.Cleanup(tg.Close)
	tg.AddUser(tgfake.User{ID: tgApprover, FirstName: "Richard", Username: "richard"})
	// $0.01 a token: every run costs more than the chain's $0.05.
	config := fmt.Sprintf(`instance:
  name: e2e-chain-budget
  toolApiToken: env:E2E_TOOL_TOKEN
  channels: [Telegram]
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}", inputPer1M: 10000, outputPer1M: 10000}
  telegram:
    apiBaseUrl: %s
    botToken: %s
    chatId: "%d"
    allowedChatIds: ["%d"]
    webhookSecret: %s
  approvals: {signingKey: env:E2E_SIGNING_KEY, approverTelegramIds: ["%d"]}
  chainBudgetUsd: 0.05
  askAgent: {timeoutSeconds: 30, maxSteps: 3}
  dev: {scheduler: false, workers: 2}
agents:
  - id: hermes
    name: Hermes
    tools:
      ask_agent: {agents: [atlas]}
  - id: atlas
    name: Atlas
    tools: {}
`, tg.URL, tgfake.DefaultToken, tgChat, tgChat, tgSecret, tgApprover)
	path := filepath.Join(t.TempDir(), "chain-budget.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	d, store := startDevWithStore(t, path, "e2ebud")

	_, _, run := d.do("POST", "/dev/agents/hermes/run", "", map[string]any{"message": "ask Atlas twice\n" +
		`call ask_agent.ask {"agent":"atlas","question":"how many trucks?"}` + "\n" +
		`call ask_agent.ask {"agent":"atlas","question":"and how many drivers?"}`})
	root := str(run["run"].(map[string]any)["rootRunId"])
	if run["outcome"] != "chain_budget" || !strings.Contains(str(run["answer"]), "used up its budget") {
		t.Fatalf("Hermes's run = %v, want it ended by the chain budget", run)
	}
	if r, _ := run["receipt"].(map[string]any); r["reason"] != "chain_budget" {
		t.Errorf("Hermes's receipt = %v, want reason chain_budget", r)
	}
	d.idle()

	page, err := store.AgentMessages(nil).Chain(t.Context(), root, sb.MessageQuery{OldestFirst: true, Limit: sb.MaxMessagePage})
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, m := range page.Messages {
		rows = append(rows, fmt.Sprintf("%s→%s %s %s", m.From, m.To, m.Status, strings.SplitN(m.Reason, ":", 2)[0]))
	}
	if got, want := strings.Join(rows, ", "), "hermes→atlas delivered , atlas→hermes delivered , hermes→atlas denied chain_budget"; got != want {
		t.Errorf("the chain's agent messages %q, want %q", got, want)
	}

	var notices []string
	for _, m := range tg.Messages(tgChat) {
		if strings.Contains(m.Text, "reached its budget") {
			notices = append(notices, m.Text)
		}
	}
	if len(notices) != 1 {
		t.Fatalf("budget notices %q, want exactly one\n%s", notices, d.logs.String())
	}
	cost, err := store.ChainCost(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "the notice", notices[0], "Chain "+root+" reached its budget of $0.05")
	if !regexp.MustCompile(`\(\$\d+\.\d{4} spent\)`).MatchString(notices[0]) || cost.CostUSD < 0.05 {
		t.Errorf("notice %q does not name the spend (the chain's receipts sum to $%.4f)", notices[0], cost.CostUSD)
	}
}

// A delivery with a public link waits for the human's approval; the
// approver's /stop of its chain stops the waiting execution (GET
// /dev/executions/{id} shows it ABORTED), the stop's answer counts it, and
// no link is made.
func TestStopEndsADeliveryWaitingForApprovalE2E(t *testing.T) {
	pw := startPublicLinkWorld(t, "e2e-docs-stop")
	d, tg, rc, nc, room := pw.dev, pw.tg, pw.rc, pw.nc, pw.room
	run := pw.deliver(t)
	calls, _ := run["calls"].([]any)
	if len(calls) != 1 {
		t.Fatalf("run = %v, want the one delivery", run)
	}
	env, _ := calls[0].(map[string]any)["envelope"].(map[string]any)
	id, root := str(env["executionId"]), str(run["run"].(map[string]any)["rootRunId"])
	if env["status"] != "ok" || id == "" {
		t.Fatalf("Documents.deliver answered %v, want the delivery started", env)
	}
	if !eventually(10*time.Second, func() bool {
		for _, m := range tg.Messages(tgChat) {
			if strings.Contains(m.Text, "Nextcloud.share") {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the delivery does not wait for an approval: %+v\n%s", tg.Messages(tgChat), d.logs.String())
	}
	if _, _, x := d.do("GET", "/dev/executions/"+id, "", nil); x["status"] != "RUNNING" {
		t.Fatalf("before the stop the execution is %v, want RUNNING", x["status"])
	}

	w := &controlWorld{dev: d, tg: tg, chat: tgChat, next: 9500}
	w.telegram(t, tgApprover, "/stop "+root)
	mustContain(t, "the stop's answer", w.answered(t, "Chain "+root+" is stopped"), "1 pipeline executions were stopped")
	_, _, x := d.do("GET", "/dev/executions/"+id, "", nil)
	if x["status"] != "ABORTED" || x["error"] != "Switchboard.ChainStopped" {
		t.Errorf("after the stop the execution is %v (%v), want ABORTED by the chain's stop", x["status"], x["error"])
	}
	d.idle()
	if nc.Shares() != 0 || len(rc.Messages(room)) != 0 {
		t.Errorf("%d shares, room %+v; want no link made or posted", nc.Shares(), rc.Messages(room))
	}
}
