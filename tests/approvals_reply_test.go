package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// deletingModel is an OpenAI-compatible chat-completions server that asks
// for Workspace.delete of file when a wake message says "can go", says it
// waits after the tool answered, and tells the outcome when woken by an
// approval.
func deletingModel(t *testing.T, file string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		last := req.Messages[len(req.Messages)-1]
		msg := map[string]any{"role": "assistant"}
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "was approved"):
			msg["content"] = "Follow-up: the delete was approved and done."
		case last.Role == "user" && strings.Contains(last.Content, "can go"):
			args, _ := json.Marshal(map[string]string{"path": file})
			msg["tool_calls"] = []any{map[string]any{"id": "call_1", "type": "function",
				"function": map[string]any{"name": sb.FunctionName("Workspace", "delete"), "arguments": string(args)}}}
		case last.Role == "tool":
			msg["content"] = "Staged: " + last.Content
		default:
			msg["content"] = "nothing to do"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": msg}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 3}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestApprovalFollowUpAnswersInTheThreadOfTheWake: a run woken by a
// mention in a Rocket.Chat thread stages an action; the human approves it
// in Telegram; the follow-up run (a later invocation, which knows the
// thread only from the stored approval) answers in that same thread, not
// in the room and not nowhere.
func TestApprovalFollowUpAnswersInTheThreadOfTheWake(t *testing.T) {
	tg := tgfake.New()
	t.Cleanup(tg.Close)
	tg.AddUser(tgfake.User{ID: tgApprover, FirstName: "Richard", Username: "richard"})
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0)
	rc.SetWebhookToken(rcWebhookToken)
	rc.AddUser("richard", "user")
	agentID, agentToken := rc.AddUser("agent-hermes", "bot", "user")
	room := rc.AddChannel("finanz-team", "richard", "agent-hermes")
	const file = "personal:q3-draft.md"
	model := deletingModel(t, file)
	config := fmt.Sprintf(`instance:
  name: e2e-approval-reply
  toolApiToken: env:E2E_TOOL_TOKEN
  channels: [Telegram]
  model: {provider: openai, baseUrl: %s/v1, model: fake}
  telegram:
    apiBaseUrl: %s
    botToken: %s
    chatId: "%d"
    allowedChatIds: ["%d"]
  rocketchat:
    baseUrl: %s
    webhookTokens: [%s]
  approvals: {signingKey: env:E2E_SIGNING_KEY, ttlHours: 24, approverTelegramIds: ["%d"]}
  staging: {Workspace.delete: approve}
  dev: {scheduler: false}
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
        allowedRooms: [finanz-team]
        agentUsernames: [agent-hermes]
`, model.URL, tg.URL, tgfake.DefaultToken, tgChat, tgChat, rc.URL, rcWebhookToken, tgApprover, agentID, agentToken)
	path := filepath.Join(t.TempDir(), "approval-reply.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	w := &rcWorld{rc: rc, agentID: agentID, room: room, dev: startDevConfig(t, path)}

	w.dev.invoke("hermes", "Workspace", "write", map[string]any{"path": file, "content": "draft"})
	parent, err := rc.Post("richard", room, "Q3 report: which drafts can go?", rcfake.PostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := rc.Post("richard", room, "@agent-hermes the draft can go",
		rcfake.PostOptions{Tmid: parent.ID})
	if err != nil {
		t.Fatal(err)
	}
	if status, body := w.deliver(t, m); status != http.StatusOK {
		t.Fatalf("webhook = %d %s", status, body)
	}
	first := w.waitForReply(t, room, "Staged:")
	if first.ThreadID != parent.ID {
		t.Fatalf("the woken run answered in thread %q, want %q", first.ThreadID, parent.ID)
	}

	var approve string
	tg.Until(soft{t}, 15*time.Second, "the approval request", func() bool {
		for _, msg := range tg.Messages(tgChat) {
			for _, l := range linkRE.FindAllStringSubmatch(msg.Text, -1) {
				if l[2] == "approve" {
					approve = l[1]
				}
			}
		}
		return approve != ""
	})
	if approve == "" {
		t.Fatalf("no approval request in Telegram: %+v", tg.Messages(tgChat))
	}
	if got := postDecision(t, approve, "approve", nil); got != http.StatusOK {
		t.Fatalf("approve = %d, want 200", got)
	}
	if !eventually(10*time.Second, func() bool { return !fileExists(t, w.dev, file) }) {
		t.Error("the file is still there after the approval")
	}

	followUp := w.waitForReply(t, room, "Follow-up:")
	if followUp.ThreadID != parent.ID {
		t.Errorf("the follow-up run answered in thread %q, want the thread of the wake %q", followUp.ThreadID, parent.ID)
	}
	for _, msg := range rc.Messages(room) {
		if msg.Username == "agent-hermes" && msg.ThreadID == "" {
			t.Errorf("agent-hermes posted in the room outside the thread: %q", msg.Text)
		}
	}
}
