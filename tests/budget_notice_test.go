package tests

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
)

// The attack run's unanswered DM, replayed on switchboard dev: once an
// agent's daily budget is spent, the human's next DMs got no reply and no
// notice (the notice was once a day, and other wakes had used it up). Now
// every refused message is answered with the budget notice, once each,
// however often Rocket.Chat delivers it.
func TestBudgetRefusedMessagesAreEachToldE2E(t *testing.T) {
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0)
	rc.SetWebhookToken(rcWebhookToken)
	rc.AddUser("richard", "user")
	agentID, agentToken := rc.AddUser("agent-hermes", "bot", "user")
	dm := rc.AddDM("richard", "agent-hermes")
	config := fmt.Sprintf(`instance:
  name: e2e-budget-dm
  toolApiToken: env:E2E_TOOL_TOKEN
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}", inputPer1M: 10000, outputPer1M: 10000}
  rocketchat:
    baseUrl: %s
    webhookTokens: [%s]
  approvals: {signingKey: env:E2E_SIGNING_KEY}
  dev: {scheduler: false, workers: 2}
agents:
  - id: hermes
    name: Hermes
    dailyBudgetUsd: 0.5
    tools:
      RocketChat:
        userId: %s
        authToken: %s
        username: agent-hermes
        allowedRooms: [richard]
`, rc.URL, rcWebhookToken, agentID, agentToken)
	path := filepath.Join(t.TempDir(), "budget-dm.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	w := &rcWorld{rc: rc, dev: startDevConfig(t, path), dm: dm, agentID: agentID}

	// One answer at $0.01 a token spends more than the $0.50.
	first, _ := rc.Post("richard", dm, "expensive question", rcfake.PostOptions{})
	if st, body := w.deliver(t, first); st != http.StatusOK {
		t.Fatalf("webhook = %d %s", st, body)
	}
	w.waitForReply(t, dm, "): expensive question")

	const notice = "used up today's budget"
	var refused []rcfake.Message
	for _, text := range []string{"second question", "third question", "fourth question"} {
		m, _ := rc.Post("richard", dm, text, rcfake.PostOptions{})
		refused = append(refused, m)
		for range 2 { // Rocket.Chat's retry of the same delivery
			if st, body := w.deliver(t, m); st != http.StatusOK {
				t.Fatalf("webhook of %q = %d %s", text, st, body)
			}
		}
	}
	// A DM is answered at its top level (no thread): one notice per
	// refused message, none for a redelivery.
	told := func() int {
		n := 0
		for _, m := range rc.Messages(dm) {
			if m.Username == "agent-hermes" && strings.Contains(m.Text, notice) {
				n++
			}
		}
		return n
	}
	if !eventually(20*time.Second, func() bool { return told() >= len(refused) }) {
		t.Fatalf("%d budget notices, want one for each of the %d refused messages; DM: %+v", told(), len(refused), rc.Messages(dm))
	}
	w.dev.settled()
	if n := told(); n != len(refused) {
		t.Errorf("%d budget notices for %d refused messages delivered twice each, want one each", n, len(refused))
	}
	for _, m := range rc.Messages(dm) {
		if m.Username == "agent-hermes" && strings.Contains(m.Text, "heard:") && !strings.Contains(m.Text, "expensive question") {
			t.Errorf("over budget, the agent still answered %q", m.Text)
		}
	}
}
