package tests

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

const (
	tgChat     = int64(123456789)
	tgApprover = int64(123456789)
	tgSecret   = "e2e_webhook-secret"
)

// startApprovalWorld runs a fake Telegram and `switchboard dev` where
// Workspace.delete needs approval, with the Telegram webhook pointed at dev.
func startApprovalWorld(t testing.TB) (*tgfake.Server, *devServer) {
	t.Helper()
	return startApprovalWorldWith(t, "e2e-approvals", "", "")
}

// startApprovalWorldWith is startApprovalWorld for instance name, with
// instance lines (indented two spaces) and agents (list items) added to
// its config and env given to the server.
func startApprovalWorldWith(t testing.TB, name, instance, agents string, env ...string) (*tgfake.Server, *devServer) {
	t.Helper()
	tg := tgfake.New()
	t.Cleanup(tg.Close)
	tg.AddUser(tgfake.User{ID: tgApprover, FirstName: "Richard", Username: "richard"})
	config := fmt.Sprintf(`instance:
  name: %s
  toolApiToken: env:E2E_TOOL_TOKEN
  channels: [Telegram]
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}"}
  telegram:
    apiBaseUrl: %s
    botToken: %s
    chatId: "%d"
    allowedChatIds: ["%d"]
    webhookSecret: %s
  approvals: {signingKey: env:E2E_SIGNING_KEY, ttlHours: 24, approverTelegramIds: ["%d"]}
  staging: {Workspace.delete: approve}
  dev: {scheduler: false}
%sagents:
  - id: hermes
    name: Hermes
    systemPrompt: You are Hermes.
    tools:
      Workspace: {}
%s`, name, tg.URL, tgfake.DefaultToken, tgChat, tgChat, tgSecret, tgApprover, instance, agents)
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDevConfig(t, path, env...)
	c, err := telegram.New(tg.URL, tgfake.DefaultToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetWebhook(context.Background(), d.base+"/hooks/telegram", tgSecret, nil, false); err != nil {
		t.Fatal(err)
	}
	return tg, d
}

var linkRE = regexp.MustCompile(`(http://[^\s]+/approvals/[A-Za-z0-9_-]+\?decision=(approve|deny)&token=[A-Za-z0-9_-]+)`)

// stageDelete has the agent ask to delete a file and returns the Telegram
// request message and its two links.
func stageDelete(t testing.TB, tg *tgfake.Server, d *devServer, file string) (tgfake.Message, map[string]string) {
	t.Helper()
	d.invoke("hermes", "Workspace", "write", map[string]any{"path": file, "content": "keep me until approved"})
	before := len(tg.Messages(tgChat))
	_, _, run := d.do("POST", "/dev/agents/hermes/run", "", map[string]any{
		"message": `call Workspace.delete {"path":"` + file + `"}`})
	if !strings.Contains(str(run["answer"]), "pending_approval") {
		t.Fatalf("run answer = %v, want the delete pending approval", run["answer"])
	}
	msgs := tg.Messages(tgChat)
	if len(msgs) != before+1 {
		t.Fatalf("Telegram got %d new messages, want the approval request", len(msgs)-before)
	}
	req := msgs[len(msgs)-1]
	links := map[string]string{}
	for _, m := range linkRE.FindAllStringSubmatch(req.Text, -1) {
		links[m[2]] = m[1]
	}
	if links["approve"] == "" || links["deny"] == "" || req.ReplyMarkup == nil {
		t.Fatalf("approval request lacks links or buttons: %q %+v", req.Text, req.ReplyMarkup)
	}
	if !strings.Contains(req.Text, "Workspace.delete") || !strings.Contains(req.Text, "Hermes") {
		t.Errorf("approval request does not say who wants what: %q", req.Text)
	}
	return req, links
}

func fileExists(t testing.TB, d *devServer, file string) bool {
	t.Helper()
	_, m := d.invoke("hermes", "Workspace", "read", map[string]any{"path": file})
	return m["status"] == "ok"
}

func postDecision(t testing.TB, link, decision string, tamper func(string) string) int {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	token := u.Query().Get("token")
	if tamper != nil {
		token = tamper(token)
	}
	resp, err := http.PostForm(u.Scheme+"://"+u.Host+u.Path, url.Values{"token": {token}, "decision": {decision}})
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestApprovalLinkGetChangesNothingPostApprovesOnce(t *testing.T) {
	tg, d := startApprovalWorld(t)
	_, links := stageDelete(t, tg, d, "personal:old.md")

	// GET (and a link-preview bot's HEAD) only shows a page.
	for _, method := range []string{"GET", "HEAD"} {
		req, _ := http.NewRequest(method, links["approve"], nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s link = %d, Referrer-Policy %q", method, resp.StatusCode, resp.Header.Get("Referrer-Policy"))
		}
		if strings.Contains(string(body), os.Getenv("E2E_SIGNING_KEY")) && os.Getenv("E2E_SIGNING_KEY") != "" {
			t.Error("the page shows the signing key")
		}
	}
	if !fileExists(t, d, "personal:old.md") {
		t.Fatal("opening the link deleted the file")
	}

	// Refusals: tampered token, approve token with decision=deny.
	if got := postDecision(t, links["approve"], "approve", func(s string) string { return s[:len(s)-2] + "xx" }); got != http.StatusForbidden {
		t.Errorf("tampered token = %d, want 403", got)
	}
	if got := postDecision(t, links["approve"], "deny", nil); got != http.StatusForbidden {
		t.Errorf("approve token used to deny = %d, want 403", got)
	}
	if !fileExists(t, d, "personal:old.md") {
		t.Fatal("a refused decision changed something")
	}

	// Two approvers click at once: the action runs exactly once.
	var wg sync.WaitGroup
	codes := make(chan int, 8)
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); codes <- postDecision(t, links["approve"], "approve", nil) }()
	}
	wg.Wait()
	close(codes)
	ok, conflict := 0, 0
	for c := range codes {
		switch c {
		case http.StatusOK:
			ok++
		case http.StatusConflict:
			conflict++
		}
	}
	if ok != 1 || conflict != 7 {
		t.Errorf("concurrent approvals: %d ok, %d conflict; want 1 and 7", ok, conflict)
	}
	// The decision answers at once; the worker runs the delete and the
	// Telegram message shows "running", then the outcome.
	if !eventually(10*time.Second, func() bool { return !fileExists(t, d, "personal:old.md") }) {
		t.Error("the approved delete did not run")
	}
	// Replay after the decision.
	if got := postDecision(t, links["approve"], "approve", nil); got != http.StatusConflict {
		t.Errorf("replay = %d, want 409", got)
	}
	if !eventually(10*time.Second, func() bool {
		e := tg.Edits()
		return len(e) > 0 && strings.Contains(e[len(e)-1].Text, "approved by link and done")
	}) {
		t.Errorf("approval message edits = %+v, want the outcome", tg.Edits())
	}
	if e := tg.Edits(); len(e) != 2 || !strings.Contains(e[0].Text, "running; the agent will report back") || e[0].ReplyMarkup != nil {
		t.Errorf("approval message edits = %+v, want \"running\" without buttons, then the outcome", e)
	}
}

func TestApprovalButtonsOnlyFromApprovers(t *testing.T) {
	tg, d := startApprovalWorld(t)
	req, _ := stageDelete(t, tg, d, "personal:b.md")
	data := req.ReplyMarkup.InlineKeyboard[0][0].CallbackData // Approve

	intruder := tgfake.User{ID: 555, FirstName: "Mallory"}
	tg.AddUser(intruder)
	tg.InjectCallback(intruder, req.MessageID, data)
	if _, err := tg.PushPending(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !fileExists(t, d, "personal:b.md") {
		t.Fatal("a button press from a non-approver deleted the file")
	}
	tg.InjectCallback(tgfake.User{ID: tgApprover, FirstName: "Richard"}, req.MessageID, data)
	if _, err := tg.PushPending(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !eventually(10*time.Second, func() bool { return !fileExists(t, d, "personal:b.md") }) {
		t.Error("the approver's button press did not run the delete")
	}
	a := tg.Answers()
	if len(a) < 2 {
		t.Fatalf("%d callback queries answered, want every press answered", len(a))
	}
	if !strings.Contains(a[len(a)-1].Text, "is running now; hermes will report back") {
		t.Errorf("the approver's press was answered %q, want that it runs and the agent reports back", a[len(a)-1].Text)
	}
}

func TestTelegramWebhookRefusesWrongSecret(t *testing.T) {
	_, d := startApprovalWorld(t)
	req, _ := http.NewRequest("POST", d.base+"/hooks/telegram", strings.NewReader(`{"update_id":1}`))
	req.Header.Set(telegram.SecretTokenHeader, "nope")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong secret = %d, want 401", resp.StatusCode)
	}
}

// BenchmarkApprovalStaging measures, in the local runtime, the time from an
// agent's tool call that needs approval to the request in the Telegram chat
// (stage: one conditional write set, one sendMessage).
func BenchmarkApprovalStaging(b *testing.B) {
	tg, d := startApprovalWorld(b)
	d.invoke("hermes", "Workspace", "write", map[string]any{"path": "personal:x.md", "content": "x"})
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		before := len(tg.Messages(tgChat))
		start := time.Now()
		d.invoke("hermes", "Workspace", "delete", map[string]any{"path": "personal:x.md"})
		if len(tg.Messages(tgChat)) != before+1 {
			b.Fatal("no approval request in Telegram after the call returned")
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-to-telegram")
}

func TestDailyBudgetStopsTheAgentAndTellsTheHumanOnce(t *testing.T) {
	tg := tgfake.New()
	t.Cleanup(tg.Close)
	tg.AddUser(tgfake.User{ID: tgApprover, FirstName: "Richard"})
	config := fmt.Sprintf(`instance:
  name: e2e-budget
  toolApiToken: env:E2E_TOOL_TOKEN
  channels: [Telegram]
  model: {provider: scripted, inputPer1M: 10000, outputPer1M: 10000}
  telegram: {apiBaseUrl: %s, botToken: %s, chatId: "%d"}
  approvals: {signingKey: env:E2E_SIGNING_KEY}
  dev: {scheduler: false}
agents:
  - id: hermes
    name: Hermes
    dailyBudgetUsd: 0.5
    tools: {}
`, tg.URL, tgfake.DefaultToken, tgChat)
	path := filepath.Join(t.TempDir(), "budget.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDevConfig(t, path)
	// One run at $0.01 per token spends more than $0.50.
	if status, _, m := d.do("POST", "/dev/agents/hermes/run", "", map[string]any{"message": "expensive question"}); status != http.StatusOK {
		t.Fatalf("first run = %d %v", status, m)
	}
	for i := 0; i < 3; i++ {
		status, _, m := d.do("POST", "/dev/agents/hermes/run", "", map[string]any{"message": "another"})
		if status != http.StatusForbidden || !strings.Contains(str(m["error"]), "daily budget") {
			t.Fatalf("run over budget = %d %v, want 403 naming the daily budget", status, m)
		}
	}
	var notices int
	for _, m := range tg.Messages(tgChat) {
		if strings.Contains(m.Text, "daily budget") {
			notices++
		}
	}
	if notices != 1 {
		t.Errorf("%d budget notices in Telegram, want exactly 1", notices)
	}
}

// TestApprovedCallIsAuditedAsApproved: the audit of a staged call says
// which approval it waits for; the executed call's entry says that a human
// approved it, which approval, and who — not "auto".
func TestApprovedCallIsAuditedAsApproved(t *testing.T) {
	tg, d := startApprovalWorld(t)
	d.invoke("hermes", "Workspace", "write", map[string]any{"path": "personal:old.md", "content": "x"})
	root := "run-audit-approved"
	// A call from inside a run names it by the engine's token (the test
	// signs as the engine does, with the key derived from the signing key).
	run := mint(t, engineKeys(t, time.Now), sb.RunContext{RunID: root, RootRunID: root, AgentID: "hermes"}, time.Now().Add(5*time.Minute))
	_, _, m := d.do("POST", "/tools/invoke", toolToken, map[string]any{"agent": "hermes", "tool": "Workspace", "action": "delete",
		"args": map[string]any{"path": "personal:old.md"}, "run": map[string]any{"token": run}})
	id := str(m["approval_id"])
	if m["status"] != "pending_approval" || id == "" {
		t.Fatalf("delete = %v, want pending_approval with an approval_id", m)
	}
	var link string
	for _, msg := range tg.Messages(tgChat) {
		for _, l := range linkRE.FindAllStringSubmatch(msg.Text, -1) {
			if l[2] == "approve" && strings.Contains(l[1], id) {
				link = l[1]
			}
		}
	}
	if link == "" {
		t.Fatal("no approve link for the approval in Telegram")
	}
	if got := postDecision(t, link, "approve", nil); got != http.StatusOK {
		t.Fatalf("approve = %d", got)
	}
	// The agent-worker runs the approved call after the page answered.
	var entries []any
	var staged, executed map[string]any
	eventually(10*time.Second, func() bool {
		_, _, chain := d.do("GET", "/dev/chains/"+root, "", nil)
		entries, _ = chain["audit"].([]any)
		staged, executed = nil, nil
		for _, x := range entries {
			e, _ := x.(map[string]any)
			if e["tool"] != "Workspace" || e["action"] != "delete" {
				continue
			}
			switch e["outcome"] {
			case "pending_approval":
				staged = e
			case "ok":
				executed = e
			}
		}
		return staged != nil && executed != nil
	})
	if staged == nil || executed == nil {
		t.Fatalf("audit of the chain = %v, want the staged and the executed delete", entries)
	}
	if staged["decision"] != "approve" || staged["approvalId"] != id {
		t.Errorf("staged entry = %v, want decision approve and approvalId %s", staged, id)
	}
	if executed["decision"] != "approved" || executed["approvalId"] != id || executed["decidedBy"] != "link" {
		t.Errorf("executed entry = %v, want decision approved, approvalId %s, decidedBy link", executed, id)
	}
}
