package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/platform/waittest"
)

// outageWorld is `switchboard dev` on a DynamoDB endpoint of the test's
// choosing (a dedicated dynalite it can stop, or a fault proxy), with a
// fake Rocket.Chat and a fake Telegram wired to agent hermes.
type outageWorld struct {
	rc   *rcfake.Server
	tg   *tgfake.Server
	dev  *devServer
	room string
}

// wakeTimingEnv gives `switchboard dev` run timing in seconds and the local
// pool's retries within a second (Lambda's are one and two minutes), so that
// a wake that fails under a fault comes again while the test watches.
var wakeTimingEnv = []string{"SWITCHBOARD_RUN_TIMEOUT=5s", "SWITCHBOARD_AGENT_WAIT=20s",
	"SWITCHBOARD_WAKE_RETRY_DELAYS=300ms,600ms"}

// startOutageWorld starts the world; extraEnv goes to `switchboard dev`.
func startOutageWorld(t testing.TB, dynamoEndpoint string, workers, maxWakes int, extraEnv ...string) *outageWorld {
	t.Helper()
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0)
	rc.SetWebhookToken(rcWebhookToken)
	rc.AddUser("richard", "user")
	agentID, agentToken := rc.AddUser("agent-hermes", "bot", "user")
	w := &outageWorld{rc: rc}
	w.room = rc.AddChannel("finanz-team", "richard", "agent-hermes")
	tg := tgfake.New()
	t.Cleanup(tg.Close)
	tg.AddUser(tgfake.User{ID: tgChat, FirstName: "Richard", Username: "richard"})
	w.tg = tg

	config := fmt.Sprintf(`instance:
  name: e2e-outage
  toolApiToken: env:E2E_TOOL_TOKEN
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
  approvals: {signingKey: env:E2E_SIGNING_KEY}
  staging: {Workspace.delete: approve}
  dev: {scheduler: false, workers: %d}
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
        maxWakesPerRoomPerHour: %d
`, rc.URL, rcWebhookToken, tg.URL, tgfake.DefaultToken, tgChat, tgChat, tgSecret, workers, agentID, agentToken, maxWakes)
	path := filepath.Join(t.TempDir(), "outage.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	w.dev = startDevConfig(t, path, append([]string{"AWS_ENDPOINT_URL_DYNAMODB=" + dynamoEndpoint}, extraEnv...)...)
	return w
}

// timed is one request's answer and how long it took.
type timed struct {
	status  int
	body    string
	elapsed time.Duration
}

var patientClient = &http.Client{Timeout: 3 * time.Minute} // longer than any budget

func (w *outageWorld) post(t testing.TB, path string, header map[string]string, body []byte) timed {
	t.Helper()
	req, err := http.NewRequest("POST", w.dev.base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := patientClient.Do(req)
	if err != nil {
		t.Errorf("POST %s: %v", path, err)
		return timed{elapsed: time.Since(start)}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return timed{status: resp.StatusCode, body: string(raw), elapsed: time.Since(start)}
}

// webhook delivers m like Rocket.Chat's outgoing webhook.
func (w *outageWorld) webhook(t testing.TB, m rcfake.Message) timed {
	return w.post(t, "/hooks/rocketchat", nil, w.rc.OutgoingWebhookPayload(m))
}

// telegramUpdate delivers a text message from the allowed chat like
// Telegram's webhook.
func (w *outageWorld) telegramUpdate(t testing.TB, id int64, text string) timed {
	u := map[string]any{"update_id": id, "message": map[string]any{
		"message_id": id, "date": time.Now().Unix(), "text": text,
		"from": map[string]any{"id": tgChat, "is_bot": false, "first_name": "Richard", "username": "richard"},
		"chat": map[string]any{"id": tgChat, "type": "private", "first_name": "Richard", "username": "richard"}}}
	raw, _ := json.Marshal(u)
	return w.post(t, "/hooks/telegram", map[string]string{telegram.SecretTokenHeader: tgSecret}, raw)
}

func (w *outageWorld) invoke(t testing.TB, tool, action string, args any) timed {
	raw, _ := json.Marshal(map[string]any{"agent": "hermes", "tool": tool, "action": action, "args": args})
	return w.post(t, "/tools/invoke", map[string]string{"Authorization": "Bearer " + toolToken}, raw)
}

// replies counts hermes's posts in the room that contain text.
func (w *outageWorld) replies(text string) int {
	n := 0
	for _, m := range w.rc.Messages(w.room) {
		if m.Username == "agent-hermes" && strings.Contains(m.Text, text) {
			n++
		}
	}
	return n
}

func (w *outageWorld) telegramReplies(text string) int {
	n := 0
	for _, m := range w.tg.Messages(tgChat) {
		if strings.Contains(m.Text, text) {
			n++
		}
	}
	return n
}

// eventually polls cond for up to d: what it waits for is done by the
// switchboard dev child process, seen through its API or a fake it calls.
// A wait on one fake's requests is the fake's Until.
func eventually(d time.Duration, cond func() bool) bool { return waittest.PollFor(d, cond) }

// slack is what the test allows beyond a budget for scheduling on a busy
// machine; the point is "answers at the budget", not "hangs for minutes".
const slack = 1500 * time.Millisecond

// TestHungDynamoDBEveryRouteAnswersWithinItsBudget stops dynalite (SIGSTOP:
// connections are accepted, nothing answers, like a hung database) and
// checks that the Rocket.Chat webhook, the Telegram webhook and the tool
// API answer 503 with a body that says what happens next, each within its
// budget, and /healthz 503; then resumes dynalite and checks that all of
// it works again.
func TestHungDynamoDBEveryRouteAnswersWithinItsBudget(t *testing.T) {
	ddb := dynamotest.StartDedicated(t)
	w := startOutageWorld(t, ddb.Endpoint, 2, 3600)
	if r := w.invoke(t, "Workspace", "write", map[string]any{"path": "doomed.txt", "content": "delete me later"}); r.status != 200 {
		t.Fatalf("write before the outage = %d %s", r.status, r.body)
	}

	if err := syscall.Kill(ddb.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(ddb.PID, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume) // runs before the dev server is stopped

	during, err := w.rc.Post("richard", w.room, "@agent-hermes sent during the outage", rcfake.PostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rcAns, tgAns, toolAns, health timed
	var wg sync.WaitGroup
	wg.Add(4)
	go func() { defer wg.Done(); rcAns = w.webhook(t, during) }()
	go func() { defer wg.Done(); tgAns = w.telegramUpdate(t, 7001, "sent on Telegram during the outage") }()
	go func() {
		defer wg.Done()
		toolAns = w.invoke(t, "Workspace", "delete", map[string]any{"path": "doomed.txt"})
	}()
	go func() {
		defer wg.Done()
		start := time.Now()
		resp, err := patientClient.Get(w.dev.base + "/healthz")
		if err != nil {
			t.Errorf("healthz: %v", err)
			return
		}
		resp.Body.Close()
		health = timed{status: resp.StatusCode, elapsed: time.Since(start)}
	}()
	wg.Wait()

	checks := []struct {
		route    string
		got      timed
		wantBody string
	}{
		{"POST /hooks/rocketchat", rcAns, "Rocket.Chat will retry"},
		{"POST /hooks/telegram", tgAns, "Telegram will resend"},
		{"POST /tools/invoke", toolAns, "try again"},
		{"GET /healthz", health, ""},
	}
	for _, c := range checks {
		budget := httpapi.BudgetFor(c.route).Limit
		t.Logf("%s during the hang: %d after %v (budget %v) %s", c.route, c.got.status, c.got.elapsed.Round(time.Millisecond), budget, strings.TrimSpace(c.got.body))
		if c.got.status != http.StatusServiceUnavailable {
			t.Errorf("%s = %d %s, want 503", c.route, c.got.status, c.got.body)
		}
		if !strings.Contains(c.got.body, c.wantBody) {
			t.Errorf("%s body = %s, want it to say %q", c.route, c.got.body, c.wantBody)
		}
		if c.got.elapsed > budget+slack {
			t.Errorf("%s answered after %v, budget %v", c.route, c.got.elapsed, budget)
		}
	}
	// The store gives up after its own deadline, well before the long
	// budgets of the Telegram webhook and the tool API.
	for _, c := range checks[1:3] {
		if limit := 2*dynamo.OperationTimeout + slack; c.got.elapsed > limit {
			t.Errorf("%s answered after %v; the DynamoDB calls under it should give up within %v", c.route, c.got.elapsed, limit)
		}
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(toolAns.body), &env); err != nil || env["status"] != "error" || env["code"] != "unavailable" {
		t.Errorf("tool answer = %s, want an error envelope with code unavailable", toolAns.body)
	}

	resume()
	if !eventually(30*time.Second, func() bool {
		resp, err := http.Get(w.dev.base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}) {
		t.Fatal("/healthz not 200 again after dynalite resumed")
	}

	// Everything works again.
	after, _ := w.rc.Post("richard", w.room, "@agent-hermes sent after the outage", rcfake.PostOptions{})
	if r := w.webhook(t, after); r.status != 200 {
		t.Errorf("webhook after the outage = %d %s", r.status, r.body)
	}
	if !eventually(20*time.Second, func() bool { return w.replies("sent after the outage") == 1 }) {
		t.Errorf("no reply to the message sent after the outage")
	}
	if r := w.telegramUpdate(t, 7002, "sent on Telegram after the outage"); r.status != 200 {
		t.Errorf("telegram after the outage = %d %s", r.status, r.body)
	}
	if !eventually(20*time.Second, func() bool { return w.telegramReplies("sent on Telegram after the outage") == 1 }) {
		t.Errorf("no Telegram reply to the update sent after the outage")
	}
	if r := w.invoke(t, "Workspace", "delete", map[string]any{"path": "doomed.txt"}); r.status != http.StatusAccepted {
		t.Errorf("staged delete after the outage = %d %s, want 202 pending_approval", r.status, r.body)
	}

	// The senders retry what got a 503. Nothing may be doubled. Whether
	// the retry gets through depends on whether the claim written while
	// the database hung is recoverable (see the report); log what happens.
	retryRC := w.webhook(t, during)
	retryTG := w.telegramUpdate(t, 7001, "sent on Telegram during the outage")
	eventually(5*time.Second, func() bool {
		return w.replies("sent during the outage") > 0 && w.telegramReplies("sent on Telegram during the outage") > 0
	})
	w.dev.idle()
	rcN, tgN := w.replies("sent during the outage"), w.telegramReplies("sent on Telegram during the outage")
	t.Logf("retries after the outage: webhook %d, telegram %d; replies to the outage messages: Rocket.Chat %d, Telegram %d",
		retryRC.status, retryTG.status, rcN, tgN)
	if rcN > 1 || tgN > 1 {
		t.Errorf("outage messages answered %d (Rocket.Chat) and %d (Telegram) times, want at most once", rcN, tgN)
	}
}
