package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
)

// Through the real wiring (config file → tools function → the pipeline's
// steps → the local Step Functions runtime): Nextcloud's share limit
// refuses the delivery's share with a bare 429, as Nextcloud 34 does, and
// the machine waits instance.documents.shareLimitWaitSeconds (1 s here;
// the default of 60 would outlast the test) in its Wait state. The human
// hears of the wait once, by DM; once the window frees a slot (the fake
// Nextcloud's clock moves on) the share goes through and the link is posted.
func TestDocumentsShareLimitWaitFromConfigEndToEnd(t *testing.T) {
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0)
	rc.AddUser("richard", "user")
	hermesID, hermesToken := rc.AddUser("agent-hermes", "bot", "user")
	room := rc.AddChannel("finanz-team", "richard", "agent-hermes")
	dm := rc.AddDM("richard", "agent-hermes")
	clock := clocktest.New(time.Now())
	nc := ncfake.Start(t, ncfake.Options{User: "switchboard", Password: "app-pass-e2e-1234", Now: clock.Now})
	nc.AddUser("richard", "anna")
	nc.SetShareRateLimit(1, 10*time.Minute)

	config := fmt.Sprintf(`instance:
  name: e2e-docs-limit
  toolApiToken: env:E2E_TOOL_TOKEN
  channels: [RocketChat]
  human: {rocketchatUsername: richard}
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}"}
  documents: {shareLimitWaitSeconds: 1}
  dev: {scheduler: false, workers: 2}
agents:
  - id: hermes
    name: Hermes
    tools:
      Workspace: {}
      RocketChat:
        baseUrl: %s
        userId: %s
        authToken: %s
        username: agent-hermes
        allowedRooms: [finanz-team]
        defaultRoom: finanz-team
      Nextcloud:
        baseUrl: %s
        username: switchboard
        appPassword: app-pass-e2e-1234
        rootPath: /Switchboard/Hermes
`, rc.URL, hermesID, hermesToken, nc.URL)
	path := filepath.Join(t.TempDir(), "docs-limit.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDevConfig(t, path)
	if _, m := d.invoke("hermes", "Workspace", "write", map[string]any{"path": "personal:q3.csv", "content": "region,revenue\nnorth,10\n"}); m["status"] != "ok" {
		t.Fatalf("workspace write = %v", m)
	}
	// Another share takes the window's one slot.
	if _, m := d.invoke("hermes", "Nextcloud", "mkdir", map[string]any{"path": "other"}); m["status"] != "ok" {
		t.Fatalf("mkdir = %v", m)
	}
	if _, m := d.invoke("hermes", "Nextcloud", "share", map[string]any{"path": "other", "shareWith": "anna"}); m["status"] != "ok" {
		t.Fatalf("share of other = %v", m)
	}

	_, _, run := d.do("POST", "/dev/agents/hermes/run", "", map[string]any{
		"message": `call Documents.deliver {"localPath":"personal:q3.csv","share":{"with":"richard"},"message":"Q3 for richard"}`})
	if !strings.Contains(str(run["answer"]), "Documents.deliver → ok") {
		t.Fatalf("run answer = %v, want the delivery started", run["answer"])
	}
	waiting := func() []string {
		var out []string
		for _, m := range rc.Messages(dm) {
			if strings.Contains(m.Text, "waits for Nextcloud's share limit") {
				out = append(out, m.Text)
			}
		}
		return out
	}
	if !eventually(15*time.Second, func() bool { return len(waiting()) > 0 }) {
		t.Fatalf("the human was not told that the share waits; DM: %+v\n%s", rc.Messages(dm), d.logs.String())
	}
	if got := waiting()[0]; !strings.Contains(got, "/reports/q3.csv is uploaded") || !strings.Contains(got, "with richard") ||
		!strings.Contains(got, "tried again in 1 s, and for up to 11 s in all") {
		t.Errorf("notice %q, want what waits and the configured schedule (1 s first, 11 s in all)", got)
	}
	clock.Add(10*time.Minute + time.Second) // the other share leaves the window

	var posted string
	if !eventually(20*time.Second, func() bool {
		for _, m := range rc.Messages(room) {
			if strings.HasPrefix(m.Text, "Q3 for richard\n") {
				posted = m.Text
			}
		}
		return posted != ""
	}) {
		t.Fatalf("nothing posted after the window freed; room: %+v\n%s", rc.Messages(room), d.logs.String())
	}
	if !strings.Contains(posted, "/f/") || nc.Shares() != 2 {
		t.Errorf("posted %q with %d shares, want the file's link and the delivery's share", posted, nc.Shares())
	}
	if n := len(waiting()); n != 1 {
		t.Errorf("the human was told %d times that the share waits, want once", n)
	}

	root := str(run["run"].(map[string]any)["rootRunId"])
	var steps []string
	if !eventually(10*time.Second, func() bool {
		_, _, chain := d.do("GET", "/dev/chains/"+root, "", nil)
		xs, _ := chain["executions"].([]any)
		if len(xs) != 1 {
			return false
		}
		x, _ := xs[0].(map[string]any)
		steps = nil
		for _, s := range x["steps"].([]any) {
			st, _ := s.(map[string]any)
			steps = append(steps, fmt.Sprintf("%s:%v", st["name"], st["outcome"]))
		}
		return x["status"] == "SUCCEEDED"
	}) {
		t.Fatalf("chain %s shows no succeeded execution; steps %v", root, steps)
	}
	got := strings.Join(steps, " ")
	if !strings.Contains(got, "Share:succeeded ShareRateLimited:succeeded RateLimitWait:succeeded Share:succeeded") {
		t.Errorf("execution steps %q, want a share, the machine's wait, and the share again", got)
	}
}
