package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
)

// A planted secret and the part of it that must never leave.
type plantedSecret struct {
	kind, text, leak string
}

// scrubWorld is `switchboard dev` wired to a fake Rocket.Chat, Telegram and
// Nextcloud, with a secret of every configured kind.
type scrubWorld struct {
	rc       *rcfake.Server
	tg       *tgfake.Server
	nc       *ncfake.Server
	dev      *devServer
	room, dm string
	secrets  []plantedSecret
}

const (
	scrubWebhookToken = "scrub-rc-webhook-token-3317"
	scrubTGSecret     = "scrub_tg-webhook-secret-8841"
	scrubNCPassword   = "scrub-nc-app-pass-5521"
	scrubModelKey     = "scrub-model-key-7731-abcd"
)

func startScrubWorld(t *testing.T) *scrubWorld {
	t.Helper()
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0)
	rc.SetWebhookToken(scrubWebhookToken)
	rc.AddUser("richard", "user")
	agentID, agentToken := rc.AddUser("agent-hermes", "bot", "user")
	w := &scrubWorld{rc: rc}
	w.room = rc.AddChannel("finanz-team", "richard", "agent-hermes")
	w.dm = rc.AddDM("richard", "agent-hermes")

	w.tg = tgfake.New()
	t.Cleanup(w.tg.Close)
	w.tg.AddUser(tgfake.User{ID: tgApprover, FirstName: "Richard", Username: "richard"})

	w.nc = ncfake.Start(t, ncfake.Options{User: "switchboard", Password: scrubNCPassword})
	w.nc.AddUser("richard")

	config := fmt.Sprintf(`instance:
  name: e2e-scrub
  toolApiToken: env:E2E_TOOL_TOKEN
  channels: [RocketChat, Telegram]
  human: {rocketchatUsername: richard}
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}"}
  rocketchat:
    baseUrl: %s
    webhookTokens: [%s]
  telegram:
    apiBaseUrl: %s
    botToken: %s
    chatId: "%d"
    allowedChatIds: ["%d"]
    webhookSecret: %s
  approvals: {signingKey: env:E2E_SIGNING_KEY, ttlHours: 24, approverTelegramIds: ["%d"]}
  staging: {Workspace.delete: approve}
  dev: {scheduler: false, workers: 2}
agents:
  - id: hermes
    name: Hermes
    systemPrompt: You are Hermes.
    tools:
      Workspace: {}
      RocketChat:
        userId: %s
        authToken: %s
        username: agent-hermes
        allowedRooms: [finanz-team, richard]
      Nextcloud:
        baseUrl: %s
        username: switchboard
        appPassword: %s
        rootPath: /Switchboard/Hermes
  - id: atlas
    name: Atlas
    systemPrompt: You are Atlas.
    model: {provider: openai, baseUrl: "http://127.0.0.1:9/v1", model: gpt-4o, apiKey: %s}
    tools: {}
`, rc.URL, scrubWebhookToken, w.tg.URL, tgfake.DefaultToken, tgChat, tgChat, scrubTGSecret, tgApprover,
		agentID, agentToken, w.nc.URL, scrubNCPassword, scrubModelKey)
	path := filepath.Join(t.TempDir(), "scrub.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	w.dev = startDevConfig(t, path)
	tc, err := telegram.New(w.tg.URL, tgfake.DefaultToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tc.SetWebhook(context.Background(), w.dev.base+"/hooks/telegram", scrubTGSecret, nil, false); err != nil {
		t.Fatal(err)
	}

	awsKeyID := "AKIA" + "Z7QX4M2K9W3R8T1Y"
	botSecret := tgfake.DefaultToken[strings.Index(tgfake.DefaultToken, ":")+1:]
	w.secrets = []plantedSecret{
		{"tool API token", toolToken, toolToken},
		{"approval signing key", signingKey, signingKey},
		{"Rocket.Chat auth token", agentToken, agentToken},
		{"Rocket.Chat webhook token", scrubWebhookToken, scrubWebhookToken},
		{"Nextcloud app password", scrubNCPassword, scrubNCPassword},
		{"Telegram bot token", tgfake.DefaultToken, botSecret},
		{"Telegram webhook secret", scrubTGSecret, scrubTGSecret},
		{"model key in its header", "Authorization: Bearer " + scrubModelKey, scrubModelKey},
		{"model key", scrubModelKey, scrubModelKey},
		{"AWS access key id", awsKeyID, awsKeyID[4:]},
		{"password in a URL", "https://richard:url-pass-4417@files.example/x", "url-pass-4417"},
		{"bearer token", "Bearer bearer-tok-9931xyz", "bearer-tok-9931xyz"},
	}
	return w
}

// plant is a text carrying every secret, labelled with the sink.
func (w *scrubWorld) plant(sink string) string {
	parts := []string{"[" + sink + "]"}
	for _, s := range w.secrets {
		parts = append(parts, s.kind+": "+s.text+" ;")
	}
	return strings.Join(parts, " ")
}

// call is one scripted-model line that calls tool.action with args.
func call(toolAction string, args map[string]any) string {
	b, _ := json.Marshal(args)
	return "call " + toolAction + " " + string(b)
}

// checkText asserts that text, which reached the outside through sink,
// carries the mask and none of the planted secrets in any spelling.
func (w *scrubWorld) checkText(t *testing.T, sink, text string) {
	t.Helper()
	if text == "" {
		t.Errorf("%s: nothing arrived", sink)
		return
	}
	for _, s := range w.secrets {
		if strings.Contains(text, s.leak) || strings.Contains(text, url.QueryEscape(s.leak)) {
			t.Errorf("%s leaks the %s (%q):\n%s", sink, s.kind, s.leak, text)
		}
	}
	if !strings.Contains(text, scrub.Mask) {
		t.Errorf("%s: the mask did not arrive:\n%s", sink, text)
	}
}

func (w *scrubWorld) rcMessage(t *testing.T, rid, label string) rcfake.Message {
	t.Helper()
	var got *rcfake.Message
	w.rc.Until(soft{t}, 15*time.Second, "the message", func() bool {
		for _, m := range w.rc.Messages(rid) {
			if m.Username == "agent-hermes" && strings.Contains(m.Text, label) {
				got = &m
				return true
			}
		}
		return false
	})
	if got != nil {
		return *got
	}
	t.Fatalf("no message by agent-hermes with %q in %s; server log:\n%s", label, rid, w.dev.logs.String())
	return rcfake.Message{}
}

func (w *scrubWorld) tgMessage(t *testing.T, label string) tgfake.Message {
	t.Helper()
	for _, m := range w.tg.Messages(tgChat) {
		if strings.Contains(m.Text, label) {
			return m
		}
	}
	t.Fatalf("no Telegram message with %q: %+v", label, w.tg.Messages(tgChat))
	return tgfake.Message{}
}

// run asks hermes through POST /dev/agents/hermes/run and returns the raw
// answer, which is itself a sink.
func (w *scrubWorld) run(t *testing.T, message string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"message": message})
	resp, err := http.Post(w.dev.base+"/dev/agents/hermes/run", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the run answer: %v", err)
	}
	if resp.StatusCode != http.StatusOK || !json.Valid(raw) {
		t.Fatalf("run = %d %s", resp.StatusCode, raw)
	}
	return string(raw)
}

// TestSecretsNeverLeaveInMessages plants every secret kind in every sink
// Switchboard sends text to and checks what the fake servers received and
// what the HTTP answers carried.
func TestSecretsNeverLeaveInMessages(t *testing.T) {
	w := startScrubWorld(t)

	// RocketChat.send_message and RocketChat.reply, called by the model;
	// the run's own answer echoes the message and is a sink too.
	parent, err := w.rc.Post("richard", w.room, "start of a thread", rcfake.PostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	answer := w.run(t, call("RocketChat.send_message", map[string]any{"room": "finanz-team", "text": w.plant("send_message")})+"\n"+
		call("RocketChat.reply", map[string]any{"room": "finanz-team", "tmid": parent.ID, "text": w.plant("reply")}))
	w.checkText(t, "/dev/agents/hermes/run answer", answer)
	w.checkText(t, "RocketChat.send_message", w.rcMessage(t, w.room, "[send_message]").Text)
	reply := w.rcMessage(t, w.room, "[reply]")
	w.checkText(t, "RocketChat.reply", reply.Text)
	if reply.ThreadID != parent.ID {
		t.Errorf("reply landed in thread %q, want %q", reply.ThreadID, parent.ID)
	}

	// The automatic reply after a wake: the model echoes what it was sent.
	m, err := w.rc.Post("richard", w.room, "@agent-hermes "+w.plant("wake"), rcfake.PostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(w.dev.base+"/hooks/rocketchat", "application/json", strings.NewReader(string(w.rc.OutgoingWebhookPayload(m))))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	wake := w.rcMessage(t, w.room, "[wake]")
	if !strings.HasPrefix(wake.Text, "Hermes heard:") {
		t.Errorf("wake reply = %q, want the model's echo", wake.Text)
	}
	w.checkText(t, "automatic wake reply", wake.Text)

	// notify_user: Rocket.Chat first (a DM the router opens), Telegram
	// when Rocket.Chat is down.
	w.run(t, call("notify_user.send", map[string]any{"message": w.plant("notify-rc")}))
	w.checkText(t, "notify_user → Rocket.Chat DM", w.rcMessage(t, w.dm, "[notify-rc]").Text)
	w.rc.SetDown(true)
	w.run(t, call("notify_user.send", map[string]any{"message": w.plant("notify-tg")}))
	w.rc.SetDown(false)
	w.checkText(t, "notify_user → Telegram", w.tgMessage(t, "[notify-tg]").Text)

	// A Nextcloud share note.
	if err := w.nc.WriteFile("/Switchboard/Hermes/q3.md", []byte("# Q3")); err != nil {
		t.Fatal(err)
	}
	w.run(t, call("Nextcloud.share", map[string]any{"path": "q3.md", "shareWith": "richard", "note": w.plant("share-note")}))
	var note string
	for _, r := range w.nc.Requests() {
		if r.Route == "POST shares" {
			form, _ := url.ParseQuery(string(r.Body))
			note = form.Get("note")
		}
	}
	w.checkText(t, "Nextcloud share note", note)

	// The Telegram approval request, its links, the approval page.
	file := "personal:" + signingKey + ".md"
	if _, m := w.dev.invoke("hermes", "Workspace", "write", map[string]any{"path": file, "content": "x"}); m["status"] != "ok" {
		t.Fatalf("write = %v", m)
	}
	w.run(t, call("Workspace.delete", map[string]any{"path": file}))
	request := w.tgMessage(t, "Workspace.delete")
	w.checkText(t, "Telegram approval request", request.Text)
	links := map[string]string{}
	for _, m := range linkRE.FindAllStringSubmatch(request.Text, -1) {
		links[m[2]] = m[1]
	}
	if links["approve"] == "" || strings.Contains(links["approve"], scrub.Mask) {
		t.Fatalf("the approval link did not survive scrubbing: %q", request.Text)
	}
	page, err := http.Get(links["approve"])
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != http.StatusOK {
		t.Fatalf("approval page = %d %s", page.StatusCode, html)
	}
	w.checkText(t, "approval page", string(html))
	u, _ := url.Parse(links["approve"])
	if !strings.Contains(string(html), u.Query().Get("token")) {
		t.Errorf("the approval page lost its token: the form could not decide")
	}
	if got := postDecision(t, links["approve"], "approve", nil); got != http.StatusOK {
		t.Errorf("approving through the scrubbed message's link = %d, want 200", got)
	}

	// An error envelope that quotes what the caller sent.
	status, _, env := w.dev.do("POST", "/dev/agents/"+url.PathEscape(toolToken)+"/run", "", map[string]any{"message": "hi"})
	raw, _ := json.Marshal(env)
	if status != http.StatusNotFound {
		t.Errorf("unknown agent = %d %s", status, raw)
	}
	if strings.Contains(string(raw), toolToken) || !strings.Contains(str(env["error"]), scrub.Mask) {
		t.Errorf("error envelope = %s, want the tool token masked", raw)
	}

	// Nothing Switchboard sent to any fake carried a secret: every body
	// (credentials travel in headers and the bot URL, where they belong).
	for _, r := range w.rc.Requests() {
		w.checkNoLeak(t, "Rocket.Chat "+r.Method+" "+r.Path, string(r.Body))
	}
	for _, r := range w.tg.Requests() {
		if r.Method == "setWebhook" { // the test's own call
			continue
		}
		w.checkNoLeak(t, "Telegram "+r.Method, string(r.Body))
	}
	for _, r := range w.nc.Requests() {
		w.checkNoLeak(t, "Nextcloud "+r.Route, string(r.Body))
	}
}

func (w *scrubWorld) checkNoLeak(t *testing.T, where, body string) {
	t.Helper()
	for _, s := range w.secrets {
		b, _ := json.Marshal(s.leak)
		if strings.Contains(body, s.leak) || strings.Contains(body, string(b[1:len(b)-1])) || strings.Contains(body, url.QueryEscape(s.leak)) {
			t.Errorf("%s received the %s: %s", where, s.kind, body)
		}
	}
}

// TestEveryClientIsBuiltWithTheScrubber keeps a new production client from
// forgetting the instance's secrets: every rocketchat.New, telegram.New
// and nextcloud.New outside tests passes WithScrubber, except in the
// provisioning and capability commands, which send no text to a person
// (their clients still mask the known shapes and their own credential).
func TestEveryClientIsBuiltWithTheScrubber(t *testing.T) {
	exempt := map[string]bool{
		"shared/usecases/provision/provision.go": true,
		"cmd/switchboard/provision.go":           true,
		"cmd/switchboard/capabilities.go":        true,
	}
	constructors := map[string]bool{"rocketchat.New": true, "telegram.New": true, "nextcloud.New": true}
	found := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		if d.IsDir() {
			if path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || exempt[filepath.ToSlash(rel)] {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := c.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok || !constructors[pkg.Name+"."+sel.Sel.Name] {
				return true
			}
			found++
			for _, a := range c.Args {
				if ac, ok := a.(*ast.CallExpr); ok {
					if s, ok := ac.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "WithScrubber" {
						return true
					}
				}
			}
			t.Errorf("%s: %s.%s without WithScrubber: pass the instance's Scrubber so that every configured secret is masked in what the client sends",
				filepath.ToSlash(rel), pkg.Name, sel.Sel.Name)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 3 {
		t.Errorf("found %d client constructions, want at least the three in shared/app", found)
	}
}
