package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
)

const rcWebhookToken = "e2e-webhook-token-7c21"

// rcWorld is a fake Rocket.Chat with a human, the agent's user and a room,
// plus a running `switchboard dev` configured against it.
type rcWorld struct {
	rc      *rcfake.Server
	dev     *devServer
	room    string // finanz-team
	dm      string // richard ↔ agent-hermes
	agentID string // agent-hermes's user id
}

func startRCWorld(t *testing.T) *rcWorld {
	t.Helper()
	return startRCWorldReply(t, `{{agent}} heard: {{message}}`)
}

// startRCWorldReply is startRCWorld with the scripted model answering reply
// (a template: {{agent}}, {{message}}).
func startRCWorldReply(t *testing.T, reply string) *rcWorld {
	t.Helper()
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0) // the e2e flows are not about the limiter
	rc.SetWebhookToken(rcWebhookToken)
	rc.AddUser("richard", "user")
	agentID, agentToken := rc.AddUser("agent-hermes", "bot", "user")
	rc.AddUser("agent-atlas", "bot", "user")
	w := &rcWorld{rc: rc, agentID: agentID}
	w.room = rc.AddChannel("finanz-team", "richard", "agent-hermes", "agent-atlas")
	w.dm = rc.AddDM("richard", "agent-hermes")

	config := fmt.Sprintf(`instance:
  name: e2e-rc
  toolApiToken: env:E2E_TOOL_TOKEN
  model: {provider: scripted, reply: %s}
  rocketchat:
    baseUrl: %s
    webhookTokens: [old-token-being-rotated-out, %s]
  approvals: {signingKey: env:E2E_SIGNING_KEY}
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
        agentUsernames: [agent-hermes, agent-atlas]
        maxWakesPerRoomPerHour: 12
`, yamlString(reply), rc.URL, rcWebhookToken, agentID, agentToken)
	path := filepath.Join(t.TempDir(), "rc.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	w.dev = startDevConfig(t, path)
	return w
}

// yamlString quotes s for YAML (a JSON string is a YAML double-quoted one).
func yamlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// waitForReply waits until agent-hermes posted in rid a message containing want.
func (w *rcWorld) waitForReply(t *testing.T, rid, want string) rcfake.Message {
	t.Helper()
	var reply rcfake.Message
	found := func() bool {
		for _, m := range w.rc.Messages(rid) {
			if m.Username == "agent-hermes" && strings.Contains(m.Text, want) {
				reply = m
				return true
			}
		}
		return false
	}
	w.rc.Until(soft{t}, 15*time.Second, "the reply", found)
	if !found() {
		t.Fatalf("no reply by agent-hermes containing %q in %s; messages: %+v\nserver log:\n%s", want, rid, w.rc.Messages(rid), w.dev.logs.String())
	}
	return reply
}

func (w *rcWorld) replies(rid string) int {
	n := 0
	for _, m := range w.rc.Messages(rid) {
		if m.Username == "agent-hermes" {
			n++
		}
	}
	return n
}

func (w *rcWorld) deliver(t *testing.T, m rcfake.Message) (int, string) {
	t.Helper()
	resp, err := http.Post(w.dev.base+"/hooks/rocketchat", "application/json", bytes.NewReader(w.rc.OutgoingWebhookPayload(m)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

func TestRocketChatWebhookWakesAndReplies(t *testing.T) {
	w := startRCWorld(t)
	m, err := w.rc.Post("richard", w.room, "@agent-hermes what were the Q3 numbers?", rcfake.PostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status, body := w.deliver(t, m)
	if status != http.StatusOK || !strings.Contains(body, `"success":true`) || strings.Contains(body, `"text"`) {
		t.Fatalf("webhook answer = %d %s, want 200 with a non-empty JSON body that posts nothing", status, body)
	}
	reply := w.waitForReply(t, w.room, "Hermes heard:")
	if !strings.Contains(reply.Text, "what were the Q3 numbers?") {
		t.Errorf("reply %q does not answer the message", reply.Text)
	}

	// A redelivery of the same message (Rocket.Chat retry) wakes nobody.
	if status, _ := w.deliver(t, m); status != http.StatusOK {
		t.Fatalf("redelivery = %d", status)
	}
	w.dev.idle() // a wake the redelivery queued has answered by now
	if n := w.replies(w.room); n != 1 {
		t.Errorf("agent replied %d times, want once", n)
	}

	// A plain message without a mention, and another agent's message, wake nobody.
	plain, _ := w.rc.Post("richard", w.room, "lunch anyone?", rcfake.PostOptions{})
	w.deliver(t, plain)
	other, _ := w.rc.Post("agent-atlas", w.room, "status report done", rcfake.PostOptions{})
	w.deliver(t, other)
	w.dev.idle()
	if n := w.replies(w.room); n != 1 {
		t.Errorf("agent replied %d times after unaddressed messages, want still 1", n)
	}

	// Wrong token.
	bad := bytes.Replace(w.rc.OutgoingWebhookPayload(m), []byte(rcWebhookToken), []byte("nope"), 1)
	resp, err := http.Post(w.dev.base+"/hooks/rocketchat", "application/json", bytes.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong token = %d, want 401", resp.StatusCode)
	}
}

func TestRocketChatPollWakesAndReplies(t *testing.T) {
	w := startRCWorld(t)

	// A quiet tick: one subscriptions.get, no history.
	before, hist := w.rc.Calls("subscriptions.get"), w.rc.Calls("im.history")+w.rc.Calls("channels.history")
	if status, _, m := w.dev.do("POST", "/dev/jobs/rocketchat-poll", "", nil); status != http.StatusOK || m["outcome"] != "ok" {
		t.Fatalf("quiet tick = %d %v", status, m)
	}
	if got := w.rc.Calls("subscriptions.get") - before; got != 1 {
		t.Errorf("quiet tick made %d subscriptions.get calls, want 1", got)
	}
	if got := w.rc.Calls("im.history") + w.rc.Calls("channels.history") - hist; got != 0 {
		t.Errorf("quiet tick fetched history %d times, want 0", got)
	}

	if _, err := w.rc.Post("richard", w.dm, "hi Hermes, are you there?", rcfake.PostOptions{}); err != nil {
		t.Fatal(err)
	}
	if status, _, m := w.dev.do("POST", "/dev/jobs/rocketchat-poll", "", nil); status != http.StatusOK {
		t.Fatalf("tick = %d %v", status, m)
	}
	reply := w.waitForReply(t, w.dm, "Hermes heard:")
	if !strings.Contains(reply.Text, "are you there?") {
		t.Errorf("reply %q does not answer the DM", reply.Text)
	}
	// The next tick finds nothing new: no second reply.
	w.dev.do("POST", "/dev/jobs/rocketchat-poll", "", nil)
	w.dev.idle()
	if n := w.replies(w.dm); n != 1 {
		t.Errorf("agent replied %d times in the DM, want once", n)
	}
}
