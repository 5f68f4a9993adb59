package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/collabora/cofake"
	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
)

// A person asks Hermes (scripted) in Rocket.Chat for the Q3 numbers;
// Hermes calls Documents.deliver, which answers at once with the execution
// id. The document pipeline runs on the local Step Functions runtime with
// the real handlers: the CSV becomes an XLSX through Collabora, lands in
// Hermes's reports folder, is shared with richard, the link is posted in
// the room, and
// Hermes is woken in a follow-up run of its own run that answers in the
// room. GET /dev/executions/{id} shows each step with its attempts.
func TestDocumentsDeliverEndToEnd(t *testing.T) {
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0)
	rc.SetWebhookToken(rcWebhookToken)
	rc.AddUser("richard", "user")
	hermesID, hermesToken := rc.AddUser("agent-hermes", "bot", "user")
	room := rc.AddChannel("finanz-team", "richard", "agent-hermes")
	nc := ncfake.Start(t, ncfake.Options{User: "switchboard", Password: "app-pass-e2e-1234"})
	nc.AddUser("richard")
	co := cofake.New(cofake.Options{})
	t.Cleanup(co.Close)

	config := fmt.Sprintf(`instance:
  name: e2e-docs
  toolApiToken: env:E2E_TOOL_TOKEN
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}"}
  rocketchat:
    baseUrl: %s
    webhookTokens: [%s]
  dev: {scheduler: false, workers: 2}
agents:
  - id: hermes
    name: Hermes
    tools:
      Workspace: {}
      RocketChat:
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
        collaboraUrl: %s
`, rc.URL, rcWebhookToken, hermesID, hermesToken, nc.URL, co.URL)
	path := filepath.Join(t.TempDir(), "docs.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	w := &rcWorld{rc: rc, dev: startDevConfig(t, path), room: room, agentID: hermesID}
	if _, m := w.dev.invoke("hermes", "Workspace", "write", map[string]any{"path": "personal:q3.csv", "content": "region,revenue\nnorth,10\n"}); m["status"] != "ok" {
		t.Fatalf("workspace write = %v", m)
	}

	m, err := rc.Post("richard", room, "@agent-hermes please send richard the Q3 numbers\n"+
		`call Documents.deliver {"localPath":"personal:q3.csv","format":"xlsx","share":{"with":"richard"},"room":"finanz-team","message":"Q3 numbers for richard"}`,
		rcfake.PostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if status, body := w.deliver(t, m); status != http.StatusOK {
		t.Fatalf("webhook = %d %s", status, body)
	}
	w.waitForReply(t, room, "Documents.deliver → ok")

	var link string
	if !eventually(15*time.Second, func() bool {
		for _, m := range rc.Messages(room) {
			if m.Username == "agent-hermes" && strings.HasPrefix(m.Text, "Q3 numbers for richard\n") {
				link = m.Text
			}
		}
		return link != ""
	}) || !strings.Contains(link, "/f/") {
		t.Fatalf("the pipeline posted %q, want the message and the file's link; room: %+v", link, rc.Messages(room))
	}
	if got, err := nc.File("/Switchboard/Hermes/reports/q3.xlsx"); err != nil || len(got) == 0 {
		t.Errorf("reports/q3.xlsx on the server = %d bytes, %v", len(got), err)
	}
	if n := nc.Shares(); n != 1 {
		t.Errorf("%d shares, want 1", n)
	}
	followUp := w.waitForReply(t, room, "Hermes heard: Document delivery")
	id := regexp.MustCompile(`Document delivery (doc-hermes-[0-9a-f]+) finished`).FindStringSubmatch(followUp.Text)
	if id == nil || !strings.Contains(followUp.Text, "uploaded to /reports/q3.xlsx") {
		t.Fatalf("follow-up %q, want the execution and what was done", followUp.Text)
	}

	var x map[string]any
	if !eventually(5*time.Second, func() bool {
		_, _, x = w.dev.do("GET", "/dev/executions/"+id[1], "", nil)
		return x["status"] == "SUCCEEDED"
	}) {
		t.Fatalf("GET /dev/executions/%s = %v, want SUCCEEDED", id[1], x)
	}
	steps, _ := x["steps"].([]any)
	var names []string
	for _, s := range steps {
		st, _ := s.(map[string]any)
		if st["type"] == "Task" {
			names = append(names, fmt.Sprintf("%s:%v:%s", st["name"], st["attempts"], st["outcome"]))
		}
	}
	if got := strings.Join(names, " "); got != "Convert:1:succeeded Upload:1:succeeded Share:1:succeeded Post:1:succeeded Finish:1:succeeded" {
		t.Errorf("execution steps %q", got)
	}
	if _, _, missing := w.dev.do("GET", "/dev/executions/doc-nobody-00", "", nil); missing["error"] == nil {
		t.Errorf("an unknown execution answered %v, want an error", missing)
	}
}

// A delivery with a public link waits for the human: the approval request
// reaches Telegram with its links, approving by link resumes the waiting
// execution (the deciding route sends the task token's result), and the
// public link is posted in the room.
func TestDocumentsPublicLinkApprovedByLinkEndToEnd(t *testing.T) {
	pw := startPublicLinkWorld(t, "e2e-docs-public")
	d, tg, rc, nc, room := pw.dev, pw.tg, pw.rc, pw.nc, pw.room
	run := pw.deliver(t)
	if !strings.Contains(str(run["answer"]), "Documents.deliver → ok") {
		t.Fatalf("run answer = %v, want the delivery started", run["answer"])
	}

	var links map[string]string
	if !eventually(10*time.Second, func() bool {
		for _, m := range tg.Messages(tgChat) {
			if strings.Contains(m.Text, "Nextcloud.share") {
				links = map[string]string{}
				for _, l := range linkRE.FindAllStringSubmatch(m.Text, -1) {
					links[l[2]] = l[1]
				}
			}
		}
		return links["approve"] != ""
	}) {
		t.Fatalf("no approval request for the public link on Telegram: %+v\n%s", tg.Messages(tgChat), d.logs.String())
	}
	if nc.Shares() != 0 {
		t.Fatal("the link was made before anyone approved it")
	}
	if got := postDecision(t, links["approve"], "approve", nil); got != http.StatusOK {
		t.Fatalf("approve = %d", got)
	}
	var posted string
	if !eventually(15*time.Second, func() bool {
		for _, m := range rc.Messages(room) {
			if strings.HasPrefix(m.Text, "Q3 for everyone\n") {
				posted = m.Text
			}
		}
		return posted != ""
	}) || !strings.Contains(posted, "/s/") {
		t.Fatalf("posted %q, want the public link; log:\n%s", posted, d.logs.String())
	}
	if nc.Shares() != 1 {
		t.Errorf("%d shares, want the one public link", nc.Shares())
	}

	// The chain view shows the delivery's execution with its steps.
	root := str(run["run"].(map[string]any)["rootRunId"])
	var steps []string
	if !eventually(5*time.Second, func() bool {
		_, _, chain := d.do("GET", "/dev/chains/"+root, "", nil)
		xs, _ := chain["executions"].([]any)
		if len(xs) != 1 {
			return false
		}
		x, _ := xs[0].(map[string]any)
		steps = nil
		for _, s := range x["steps"].([]any) {
			st, _ := s.(map[string]any)
			if st["type"] == "Task" {
				steps = append(steps, fmt.Sprintf("%s:%v", st["name"], st["outcome"]))
			}
		}
		return x["status"] == "SUCCEEDED"
	}) {
		t.Fatalf("chain %s shows no succeeded execution", root)
	}
	if got := strings.Join(steps, " "); got != "Upload:succeeded AwaitApproval:succeeded Share:succeeded Post:succeeded Finish:succeeded" {
		t.Errorf("chain execution steps %q", got)
	}
}

// Through the config file and the real wiring: deliveries that can only
// fail are refused by Documents.deliver itself, before any execution
// starts, with the error envelope at once (status error, what was wrong
// and what to do). The chain's audit shows no started delivery among them
// and the human's DM stays empty; one delivery that does start and fails
// (a Nextcloud user only Nextcloud can refuse) shows that both would have
// been seen: one started delivery, one DM.
func TestDocumentsHostileDeliveriesRefusedBeforeStartEndToEnd(t *testing.T) {
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0)
	rc.AddUser("richard", "user")
	hermesID, hermesToken := rc.AddUser("agent-hermes", "bot", "user")
	rc.AddChannel("finanz-team", "richard", "agent-hermes")
	rc.AddChannel("vorstand", "richard", "agent-hermes") // exists, not in allowedRooms
	dm := rc.AddDM("richard", "agent-hermes")
	nc := ncfake.Start(t, ncfake.Options{User: "switchboard", Password: "app-pass-e2e-1234"})
	nc.AddUser("richard")
	config := fmt.Sprintf(`instance:
  name: e2e-docs-hostile
  toolApiToken: env:E2E_TOOL_TOKEN
  channels: [RocketChat]
  human: {rocketchatUsername: richard}
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}"}
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
	path := filepath.Join(t.TempDir(), "docs-hostile.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDevConfig(t, path)
	if _, m := d.invoke("hermes", "Workspace", "write", map[string]any{"path": "personal:q3.csv", "content": "region,revenue\nnorth,10\n"}); m["status"] != "ok" {
		t.Fatalf("workspace write = %v", m)
	}
	// run makes one agent run (the scripted model issues every "call" line
	// at once, as a hijacked model would) and returns its calls' answers
	// and its root run id.
	run := func(calls []string) ([]map[string]any, string) {
		t.Helper()
		status, _, res := d.do("POST", "/dev/agents/hermes/run", "", map[string]any{"message": strings.Join(calls, "\n")})
		if status != http.StatusOK {
			t.Fatalf("run: HTTP %d %v", status, res)
		}
		var out []map[string]any
		for _, c := range res["calls"].([]any) {
			out = append(out, c.(map[string]any)["envelope"].(map[string]any))
		}
		return out, str(res["run"].(map[string]any)["rootRunId"])
	}
	deliver := func(args map[string]any) string {
		t.Helper()
		raw, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		return "call Documents.deliver " + string(raw)
	}
	// chain counts a chain's Documents.deliver calls that started and that
	// were refused, and its executions.
	chain := func(root string) (started, refused, executions int) {
		t.Helper()
		_, _, c := d.do("GET", "/dev/chains/"+root, "", nil)
		for _, e := range c["audit"].([]any) {
			e, _ := e.(map[string]any)
			if e["tool"] != "Documents" || strings.Contains(str(e["args"]), `"step":"finish"`) {
				continue
			}
			switch e["outcome"] {
			case "ok":
				started++
			case "rejected", "error":
				refused++
			}
		}
		xs, _ := c["executions"].([]any)
		return started, refused, len(xs)
	}
	q3 := "personal:q3.csv"
	hostile := []struct {
		name string
		args map[string]any
		want string
	}{
		{"localPath climbs out", map[string]any{"localPath": "personal:../other/q3.csv"}, "contains .."},
		{"localPath is absolute", map[string]any{"localPath": "/etc/passwd"}, "absolute"},
		{"localPath has a drive letter", map[string]any{"localPath": `C:\q3.csv`}, "unknown prefix"},
		{"localPath is missing", map[string]any{"localPath": "personal:nope.csv"}, `no file "personal:nope.csv"`},
		{"localPath is blank", map[string]any{"localPath": "  "}, "localPath"},
		{"localPath is too long", map[string]any{"localPath": "personal:" + strings.Repeat("a", 700)}, "at most 600"},
		{"localPath is a number", map[string]any{"localPath": 7}, "want string"},
		{"folder climbs out", map[string]any{"localPath": q3, "folder": "../../Admin"}, "inside your Nextcloud folder"},
		{"folder is escaped", map[string]any{"localPath": q3, "folder": "%2e%2e/Admin"}, "percent-escape"},
		{"folder has a NUL", map[string]any{"localPath": q3, "folder": "reports\x00x"}, "control character"},
		{"shared reports the agent lacks", map[string]any{"localPath": q3, "folder": "shared-reports:"}, "shared reports folder"},
		{"room unknown", map[string]any{"localPath": q3, "room": "#nowhere"}, "allowedRooms"},
		{"room not allowed", map[string]any{"localPath": q3, "room": "vorstand"}, "allowedRooms"},
		{"room blank", map[string]any{"localPath": q3, "room": " "}, "room is blank"},
		{"public link not allowed", map[string]any{"localPath": q3, "share": map[string]any{"publicLink": true}}, "allowPublicShares"},
		{"pdf without collaboraUrl", map[string]any{"localPath": q3, "format": "pdf"}, "collaboraUrl"},
		{"format unknown", map[string]any{"localPath": q3, "format": "exe"}, "format"},
		{"share user and link", map[string]any{"localPath": q3, "share": map[string]any{"with": "richard", "publicLink": true}}, "not both"},
		{"share to nobody", map[string]any{"localPath": q3, "share": map[string]any{}}, "share needs"},
		{"share as a string", map[string]any{"localPath": q3, "share": "richard"}, "want object"},
		{"share with an unknown key", map[string]any{"localPath": q3, "share": map[string]any{"with": "richard", "as": "owner"}}, `unknown argument "as"`},
		{"password on a user share", map[string]any{"localPath": q3, "share": map[string]any{"with": "richard", "password": "Kr4ken-Tide-77"}}, "public links only"},
		{"message too long", map[string]any{"localPath": q3, "message": strings.Repeat("m", 4001)}, "at most 4000"},
	}
	var calls []string
	for _, h := range hostile {
		calls = append(calls, deliver(h.args))
	}
	answers, root := run(calls)
	if len(answers) != len(hostile) {
		t.Fatalf("the run made %d calls, want %d", len(answers), len(hostile))
	}
	for i, h := range hostile {
		m := answers[i]
		if m["status"] != "error" || !strings.Contains(str(m["error"]), h.want) || m["executionId"] != nil {
			t.Errorf("%s: answered %v, want status error naming %q and no execution", h.name, m, h.want)
		}
	}
	if started, refused, xs := chain(root); started != 0 || refused != len(hostile) || xs != 0 {
		t.Errorf("the attack run's chain: %d deliveries started, %d refused, %d executions; want 0, %d, 0", started, refused, xs, len(hostile))
	}

	// The control: it starts, and fails at the share.
	answers, controlRoot := run([]string{deliver(map[string]any{"localPath": q3, "share": map[string]any{"with": "nobody-here"}})})
	id := str(answers[0]["executionId"])
	if answers[0]["status"] != "ok" || id == "" {
		t.Fatalf("control delivery answered %v, want it started", answers[0])
	}
	failed := func() bool {
		for _, msg := range rc.Messages(dm) {
			if strings.Contains(msg.Text, id) && strings.Contains(msg.Text, "failed at step share") {
				return true
			}
		}
		return false
	}
	if !eventually(15*time.Second, failed) {
		t.Fatalf("the human was not told the control delivery failed; DM: %+v", rc.Messages(dm))
	}
	if msgs := rc.Messages(dm); len(msgs) != 1 {
		t.Errorf("the human's DM holds %d messages, want 1 (the control's): %+v", len(msgs), msgs)
	}
	if started, _, _ := chain(controlRoot); started != 1 {
		t.Errorf("the control's chain shows %d started deliveries, want 1", started)
	}
	t.Logf("%d hostile deliveries refused before any start; the control started and told the human once", len(hostile))
}

// publicLinkWorld is switchboard dev with Hermes, who may deliver documents
// with public links (which wait for the approver on Telegram), into the
// Rocket.Chat room finanz-team; Workspace holds personal:q3.csv.
type publicLinkWorld struct {
	dev  *devServer
	tg   *tgfake.Server
	rc   *rcfake.Server
	nc   *ncfake.Server
	room string
}

// startPublicLinkWorld starts it as instance name, with extra env for dev.
func startPublicLinkWorld(t *testing.T, name string, env ...string) *publicLinkWorld {
	t.Helper()
	w := &publicLinkWorld{tg: tgfake.New(), rc: rcfake.New()}
	t.Cleanup(w.tg.Close)
	t.Cleanup(w.rc.Close)
	w.tg.AddUser(tgfake.User{ID: tgApprover, FirstName: "Richard", Username: "richard"})
	w.rc.SetRateLimit(0, 0)
	hermesID, hermesToken := w.rc.AddUser("agent-hermes", "bot", "user")
	w.room = w.rc.AddChannel("finanz-team", "agent-hermes")
	w.nc = ncfake.Start(t, ncfake.Options{User: "switchboard", Password: "app-pass-e2e-1234"})
	w.nc.SetPublicLinks(true)
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
        allowPublicShares: true
`, name, w.tg.URL, tgfake.DefaultToken, tgChat, tgChat, tgSecret, tgApprover, w.rc.URL, hermesID, hermesToken, w.nc.URL)
	path := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	w.dev = startDevConfig(t, path, env...)
	if _, m := w.dev.invoke("hermes", "Workspace", "write", map[string]any{"path": "personal:q3.csv", "content": "region,revenue\nnorth,10\n"}); m["status"] != "ok" {
		t.Fatalf("workspace write = %v", m)
	}
	return w
}

// deliver has Hermes's run deliver q3.csv with a public link; the run's answer.
func (w *publicLinkWorld) deliver(t *testing.T) map[string]any {
	t.Helper()
	_, _, run := w.dev.do("POST", "/dev/agents/hermes/run", "", map[string]any{
		"message": `call Documents.deliver {"localPath":"personal:q3.csv","share":{"publicLink":true},"message":"Q3 for everyone"}`})
	return run
}
