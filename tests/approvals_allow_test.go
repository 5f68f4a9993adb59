package tests

import (
	"context"
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

	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// recordingModel is an OpenAI-compatible model that runs the tool call a
// user message spells as `call Tool.action {json}`, answers "noted"
// otherwise, and keeps every user message it was sent (the follow-up
// runs' texts among them).
type recordingModel struct {
	mu   sync.Mutex
	seen []string
}

func (m *recordingModel) saw(sub string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.seen {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func (m *recordingModel) find(sub string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.seen {
		if strings.Contains(s, sub) {
			return s
		}
	}
	return ""
}

var callRE = regexp.MustCompile(`call (\w+)\.(\w+) (\{.*\})`)

func startRecordingModel(t *testing.T) (*recordingModel, string) {
	m := &recordingModel{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		last := req.Messages[len(req.Messages)-1]
		msg := map[string]any{"role": "assistant", "content": "noted"}
		if last.Role == "user" {
			m.mu.Lock()
			m.seen = append(m.seen, last.Content)
			m.mu.Unlock()
			if c := callRE.FindStringSubmatch(last.Content); c != nil {
				msg = map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
					"function": map[string]any{"name": sb.FunctionName(c[1], c[2]), "arguments": c[3]}}}}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": msg}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 3}})
	}))
	t.Cleanup(srv.Close)
	return m, srv.URL
}

const allowConsolePassword = "e2e-console-password-1234"

// startAllowWorld is the approval world with a recording model, the
// console on, and allowForHours choices (the first one tiny, so that an
// allowance expires within the test).
func startAllowWorld(t *testing.T) (*tgfake.Server, *devServer, *recordingModel) {
	t.Helper()
	model, modelURL := startRecordingModel(t)
	tg := tgfake.New()
	t.Cleanup(tg.Close)
	tg.AddUser(tgfake.User{ID: tgApprover, FirstName: "Richard", Username: "richard"})
	config := fmt.Sprintf(`instance:
  name: e2e-allow
  toolApiToken: env:E2E_TOOL_TOKEN
  channels: [Telegram]
  model: {provider: openai, baseUrl: %s/v1, model: fake}
  telegram: {apiBaseUrl: %s, botToken: %s, chatId: "%d", allowedChatIds: ["%d"], webhookSecret: %s}
  console: {password: env:E2E_CONSOLE_PASSWORD}
  approvals: {signingKey: env:E2E_SIGNING_KEY, approverTelegramIds: ["%d"], allowForHours: [0.001, 4]}
  staging: {Workspace.delete: approve}
  dev: {scheduler: false}
agents:
  - id: hermes
    name: Hermes
    tools:
      Workspace: {}
`, modelURL, tg.URL, tgfake.DefaultToken, tgChat, tgChat, tgSecret, tgApprover)
	path := filepath.Join(t.TempDir(), "allow.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDevConfig(t, path, "E2E_CONSOLE_PASSWORD="+allowConsolePassword)
	c, err := telegram.New(tg.URL, tgfake.DefaultToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetWebhook(context.Background(), d.base+"/hooks/telegram", tgSecret, nil, false); err != nil {
		t.Fatal(err)
	}
	return tg, d, model
}

// askDelete has hermes's model call Workspace.delete of file in a run and
// returns the run's answer and the new approve link ("" when nothing was
// staged).
func askDelete(t *testing.T, tg *tgfake.Server, d *devServer, file string) (string, string) {
	t.Helper()
	before := len(tg.Messages(tgChat))
	_, _, run := d.do("POST", "/dev/agents/hermes/run", "", map[string]any{"message": `call Workspace.delete {"path":"` + file + `"}`})
	msgs := tg.Messages(tgChat)
	for _, m := range msgs[before:] {
		for _, l := range linkRE.FindAllStringSubmatch(m.Text, -1) {
			if l[2] == "approve" {
				return fmt.Sprint(run), l[1]
			}
		}
	}
	return fmt.Sprint(run), ""
}

// pageForm posts the confirmation page's form with extra fields and
// returns the status and the page.
func pageForm(t *testing.T, link string, extra url.Values) (int, string) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	v := url.Values{"token": {u.Query().Get("token")}, "decision": {u.Query().Get("decision")}}
	for k, x := range extra {
		v[k] = x
	}
	res, err := http.PostForm(u.Scheme+"://"+u.Host+u.Path, v)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func writeFile(t *testing.T, d *devServer, file, content string) {
	t.Helper()
	if status, m := d.invoke("hermes", "Workspace", "write", map[string]any{"path": file, "content": content}); status != 200 {
		t.Fatalf("write %s: %d %v", file, status, m)
	}
}

func TestDenyWithAReasonReachesTheFollowUpRun(t *testing.T) {
	tg, d, model := startAllowWorld(t)
	writeFile(t, d, "personal:keep.md", "still needed")
	_, link := askDelete(t, tg, d, "personal:keep.md")
	if link == "" {
		t.Fatal("no approval request for the delete")
	}
	// The page offers a reason with Deny.
	res, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(page), `name="reason"`) {
		t.Fatalf("the confirmation page offers no reason field:\n%s", page)
	}
	denyLink := strings.Replace(link, "decision=approve", "decision=deny", 1)
	// A deny token is signed for deny: take the one the page's deny form carries.
	tok := regexp.MustCompile(`name="token" value="([^"]+)">\s*<input type="hidden" name="decision" value="deny"`).FindStringSubmatch(string(page))
	if tok == nil {
		t.Fatalf("no deny form on the page:\n%s", page)
	}
	denyLink = regexp.MustCompile(`token=[^&]+`).ReplaceAllString(denyLink, "token="+tok[1])
	status, out := pageForm(t, denyLink, url.Values{"reason": {"Apollo still reads it; ask again on Friday"}})
	if status != http.StatusOK || !strings.Contains(out, "Denied") {
		t.Fatalf("deny = %d\n%s", status, out)
	}
	if !eventually(10*time.Second, func() bool { return model.saw("reason for the denial: Apollo still reads it") }) {
		t.Fatalf("the follow-up run did not see the reason; the model saw %q", model.seen)
	}
	f := model.find("reason for the denial")
	if !strings.Contains(f, "was denied by a human via the approval link") || !strings.Contains(f, "untrusted") {
		t.Errorf("follow-up text = %q, want that it was denied and the reason inside the untrusted frame", f)
	}
	if !fileExists(t, d, "personal:keep.md") {
		t.Error("the denied delete ran")
	}
}

func TestApproveAndAllowCoversTheSameFolderUntilRevoked(t *testing.T) {
	tg, d, _ := startAllowWorld(t)
	writeFile(t, d, "personal:drafts/a.md", "a")
	_, link := askDelete(t, tg, d, "personal:drafts/a.md")
	if link == "" {
		t.Fatal("no approval request for the first delete")
	}
	res, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(page), "Approve, and allow Workspace.delete in folder personal:/drafts/ for 4 hours") {
		t.Fatalf("the page offers no allowance for the folder:\n%s", page)
	}
	status, out := pageForm(t, link, url.Values{"allow_hours": {"4"}})
	if status != http.StatusOK || !strings.Contains(out, "without asking for 4 hours") {
		t.Fatalf("approve and allow = %d\n%s", status, out)
	}
	if !eventually(10*time.Second, func() bool { return !fileExists(t, d, "personal:drafts/a.md") }) {
		t.Fatal("the approved delete did not run")
	}
	// The same action in the same folder runs at once, audited as allowed.
	writeFile(t, d, "personal:drafts/b.md", "b")
	status, m := d.invoke("hermes", "Workspace", "delete", map[string]any{"path": "personal:drafts/b.md"})
	if status != 200 || m["status"] != "ok" || fileExists(t, d, "personal:drafts/b.md") {
		t.Fatalf("second delete in the folder = %d %v, want it run at once", status, m)
	}
	// Another folder still asks.
	writeFile(t, d, "personal:other/c.md", "c")
	if status, m := d.invoke("hermes", "Workspace", "delete", map[string]any{"path": "personal:other/c.md"}); status != http.StatusAccepted {
		t.Fatalf("delete in another folder = %d %v, want 202 pending_approval", status, m)
	}

	// Revoke from the console: the folder asks again.
	c := consoleSession(t, d)
	status, body := consoleGet(t, c, d.base+"/console/approvals")
	row := regexp.MustCompile(`name="revoke" value="([^"]+)"`).FindStringSubmatch(body)
	if status != 200 || row == nil || !strings.Contains(body, "folder personal:/drafts/") {
		t.Fatalf("console approvals page lists no allowance: %d\n%s", status, body)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if r, _ := c.PostForm(d.base+"/console/approvals", url.Values{"revoke": {row[1]}}); r == nil || r.StatusCode != http.StatusForbidden {
		t.Errorf("revoke without the CSRF token = %v, want 403", r)
	}
	r, err := c.PostForm(d.base+"/console/approvals", url.Values{"csrf": {csrf[1]}, "revoke": {row[1]}})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || !strings.Contains(string(after), "is revoked") || strings.Contains(string(after), `name="revoke"`) {
		t.Fatalf("after revoke: %d\n%s", r.StatusCode, after)
	}
	writeFile(t, d, "personal:drafts/d.md", "d")
	if status, m := d.invoke("hermes", "Workspace", "delete", map[string]any{"path": "personal:drafts/d.md"}); status != http.StatusAccepted {
		t.Fatalf("delete after the revoke = %d %v, want 202 pending_approval", status, m)
	}
}

func TestAllowanceExpires(t *testing.T) {
	tg, d, _ := startAllowWorld(t)
	writeFile(t, d, "personal:tmp/a.md", "a")
	_, link := askDelete(t, tg, d, "personal:tmp/a.md")
	if link == "" {
		t.Fatal("no approval request")
	}
	// 0.001 hours: 3.6 seconds.
	if status, out := pageForm(t, link, url.Values{"allow_hours": {"0.001"}}); status != http.StatusOK {
		t.Fatalf("approve and allow = %d\n%s", status, out)
	}
	if !eventually(10*time.Second, func() bool { return !fileExists(t, d, "personal:tmp/a.md") }) {
		t.Fatal("the approved delete did not run")
	}
	// Each delete runs while the allowance lasts; after it, one asks.
	asked := eventually(20*time.Second, func() bool {
		writeFile(t, d, "personal:tmp/b.md", "b")
		status, _ := d.invoke("hermes", "Workspace", "delete", map[string]any{"path": "personal:tmp/b.md"})
		return status == http.StatusAccepted
	})
	if !asked {
		t.Fatal("the expired allowance still lets deletes run")
	}
}

func TestApprovedDeleteOfAReplacedFileIsRefused(t *testing.T) {
	tg, d, model := startAllowWorld(t)
	writeFile(t, d, "personal:report.md", "version one")
	_, link := askDelete(t, tg, d, "personal:report.md")
	if link == "" {
		t.Fatal("no approval request")
	}
	writeFile(t, d, "personal:report.md", "version two, replaced while the human decided")
	if status, out := pageForm(t, link, nil); status != http.StatusOK {
		t.Fatalf("approve = %d\n%s", status, out)
	}
	if !eventually(10*time.Second, func() bool { return model.saw("its target changed") }) {
		t.Fatalf("the follow-up run was not told the target changed; the model saw %q", model.seen)
	}
	if !fileExists(t, d, "personal:report.md") {
		t.Error("the approved delete ran on the replaced file")
	}
	if !eventually(10*time.Second, func() bool {
		e := tg.Edits()
		return len(e) > 0 && strings.Contains(e[len(e)-1].Text, "target changed")
	}) {
		t.Errorf("the approver's message does not say why: %+v", tg.Edits())
	}
}

// consoleSession is a client logged into the console (consoleLogin).
func consoleSession(t *testing.T, d *devServer) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	if status, _ := consoleLogin(t, d, c, allowConsolePassword); status != 200 {
		t.Fatalf("login = %d", status)
	}
	return c
}

func consoleGet(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
