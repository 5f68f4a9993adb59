package tests

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
)

// A person mentions Hermes in Rocket.Chat; Hermes (scripted) asks Atlas
// through ask_agent, which runs on the local Step Functions runtime with
// the real handlers; Atlas answers; Hermes's reply in the room carries
// Atlas's answer, and the chain view shows both runs with their costs.
func TestAskAgentEndToEnd(t *testing.T) {
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0)
	rc.SetWebhookToken(rcWebhookToken)
	rc.AddUser("richard", "user")
	hermesID, hermesToken := rc.AddUser("agent-hermes", "bot", "user")
	room := rc.AddChannel("finanz-team", "richard", "agent-hermes")

	config := fmt.Sprintf(`instance:
  name: e2e-ask
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}", inputPer1M: 3, outputPer1M: 15}
  rocketchat:
    baseUrl: %s
    webhookTokens: [%s]
  askAgent: {timeoutSeconds: 30, maxSteps: 3}
  dev: {scheduler: false, workers: 2}
agents:
  - id: hermes
    name: Hermes
    tools:
      ask_agent: {agents: [atlas]}
      RocketChat:
        userId: %s
        authToken: %s
        username: agent-hermes
        allowedRooms: [finanz-team]
  - id: atlas
    name: Atlas
    tools:
      Workspace: {}
`, rc.URL, rcWebhookToken, hermesID, hermesToken)
	path := filepath.Join(t.TempDir(), "ask.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	w := &rcWorld{rc: rc, dev: startDevConfig(t, path), room: room, agentID: hermesID}

	m, err := rc.Post("richard", room, "@agent-hermes please ask Atlas\n"+
		`call ask_agent.ask {"agent":"atlas","question":"how many trucks are on the road?"}`, rcfake.PostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if status, body := w.deliver(t, m); status != http.StatusOK {
		t.Fatalf("webhook = %d %s", status, body)
	}
	reply := w.waitForReply(t, room, "ask_agent.ask →")
	if !strings.Contains(reply.Text, "ask_agent.ask → ok: Atlas heard: how many trucks are on the road?") {
		t.Fatalf("Hermes's reply %q does not carry Atlas's answer", reply.Text)
	}

	// The answering run logs its ids; its root is Hermes's run.
	ids := regexp.MustCompile(`"msg":"ask_agent: answered".*?"parentRunId":"([0-9a-f]+)","rootRunId":"([0-9a-f]+)"`).
		FindStringSubmatch(w.dev.logs.String())
	if ids == nil {
		t.Fatalf("no ask_agent answer in the log:\n%s", w.dev.logs.String())
	}
	parent, root := ids[1], ids[2]
	var chain map[string]any
	if !eventually(5*time.Second, func() bool {
		_, _, chain = w.dev.do("GET", "/dev/chains/"+root, "", nil)
		cost, _ := chain["cost"].(map[string]any)
		return cost["runs"] == float64(2)
	}) {
		t.Fatalf("chain %s = %v, want Hermes's and Atlas's runs", root, chain)
	}
	cost := chain["cost"].(map[string]any)
	receipts, _ := cost["receipts"].([]any)
	agents := map[string]bool{}
	for _, x := range receipts {
		r, _ := x.(map[string]any)
		run, _ := r["run"].(map[string]any)
		agents[str(r["agentId"])] = true
		if c, _ := r["costUsd"].(float64); c <= 0 {
			t.Errorf("receipt %v has no cost", r)
		}
		if str(r["agentId"]) == "atlas" && str(run["parentRunId"]) != parent {
			t.Errorf("Atlas's run %v, want Hermes's run %s as its parent", run, parent)
		}
	}
	if !agents["hermes"] || !agents["atlas"] || cost["costUsd"].(float64) <= 0 {
		t.Errorf("chain cost %v, want both agents' runs and a total", cost)
	}
	audit, _ := chain["audit"].([]any)
	var asked bool
	for _, x := range audit {
		e, _ := x.(map[string]any)
		asked = asked || (e["tool"] == "ask_agent" && e["action"] == "ask" && e["outcome"] == "ok")
	}
	if !asked {
		t.Errorf("the chain's audit %v lacks Hermes's ask_agent.ask", audit)
	}
}
