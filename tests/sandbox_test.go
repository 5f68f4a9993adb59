package tests

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/platform/waittest"
)

// The example config: what a newcomer runs with `make dev`.
const exampleConfig = "../switchboard.example.yaml"

// sandbox drives the /dev/sandbox/ API of a running `switchboard dev` the
// way the sandbox page does.
type sandbox struct {
	t   *testing.T
	dev *devServer
}

type sbMessage struct {
	ID    string `json:"id"`
	User  string `json:"user"`
	Text  string `json:"text"`
	TMID  string `json:"tmid"`
	Files []struct {
		ID, Name string
		Size     int
	} `json:"files"`
}

type sbTelegram struct {
	ID      int64  `json:"id"`
	FromBot bool   `json:"fromBot"`
	Text    string `json:"text"`
	Edited  bool   `json:"edited"`
	Buttons [][]struct {
		Text         string `json:"text"`
		URL          string `json:"url"`
		CallbackData string `json:"callback_data"`
	} `json:"buttons"`
}

func (s *sandbox) get(path string, v any) int {
	s.t.Helper()
	resp, err := http.Get(s.dev.base + "/dev/sandbox/api/" + path)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			s.t.Fatalf("GET %s: %v", path, err)
		}
	}
	return resp.StatusCode
}

func (s *sandbox) post(path string, body any) (int, map[string]any) {
	s.t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(s.dev.base+"/dev/sandbox/api/"+path, "application/json", bytes.NewReader(b))
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// room returns the id of the person's room called name (a DM: the agent's
// username).
func (s *sandbox) room(name string) string {
	s.t.Helper()
	var st struct {
		Rooms []struct{ ID, Name string }
	}
	s.get("state", &st)
	for _, r := range st.Rooms {
		if r.Name == name {
			return r.ID
		}
	}
	s.t.Fatalf("no sandbox room %q in %+v", name, st.Rooms)
	return ""
}

func (s *sandbox) write(rid string, body map[string]any) string {
	s.t.Helper()
	status, m := s.post("rooms/"+rid+"/messages", body)
	if status != http.StatusCreated || str(m["webhook"]) != "" {
		s.t.Fatalf("posting %v: %d %v", body, status, m)
	}
	return str(m["id"])
}

// waitFor polls until cond holds for what fetch returns: the sandbox
// lives in the switchboard dev child process, which sends no event.
func waitFor[T any](t *testing.T, d *devServer, what string, fetch func() T, cond func(T) bool) T {
	t.Helper()
	var v T
	if !waittest.PollFor(20*time.Second, func() bool { v = fetch(); return cond(v) }) {
		t.Fatalf("timed out waiting for %s; last: %+v\nserver log:\n%s", what, v, d.logs.String())
	}
	return v
}

func (s *sandbox) messages(rid string) []sbMessage {
	var out struct{ Messages []sbMessage }
	s.get("rooms/"+rid+"/messages", &out)
	return out.Messages
}

// reply waits for a message by user in rid that contains want.
func (s *sandbox) reply(rid, user, want string) sbMessage {
	s.t.Helper()
	msgs := waitFor(s.t, s.dev, user+" answering "+want, func() []sbMessage { return s.messages(rid) }, func(ms []sbMessage) bool {
		for _, m := range ms {
			if m.User == user && strings.Contains(m.Text, want) {
				return true
			}
		}
		return false
	})
	for _, m := range msgs {
		if m.User == user && strings.Contains(m.Text, want) {
			return m
		}
	}
	return sbMessage{}
}

func startSandbox(t *testing.T, config string, extraEnv ...string) *sandbox {
	t.Helper()
	return &sandbox{t: t, dev: startDevConfig(t, config, extraEnv...)}
}

const saveNote = "@agent-hermes please save a note\n" +
	`call Workspace.write {"path":"note.md","content":"# Note from the sandbox"}` + "\n" +
	`call Nextcloud.upload {"localPath":"note.md","remotePath":"note.md"}`

// With the example config, a person mentions an agent in the sandbox
// chat; the message reaches Switchboard through the outgoing webhook, the
// agent answers in the room and the file lands in the sandbox Nextcloud.
func TestSandboxMentionAnswersAndSavesAFile(t *testing.T) {
	s := startSandbox(t, exampleConfig)
	general := s.room("general")
	s.write(general, map[string]any{"text": saveNote})
	s.reply(general, "agent-hermes", "Nextcloud.upload → ok")

	var files struct {
		Files []struct {
			Path string
			Dir  bool
		}
	}
	s.get("nextcloud", &files)
	found := false
	for _, f := range files.Files {
		found = found || (f.Path == "/Switchboard/Hermes/note.md" && !f.Dir)
	}
	if !found {
		t.Fatalf("the note is not in the sandbox Nextcloud: %+v", files.Files)
	}
	resp, err := http.Get(s.dev.base + "/dev/sandbox/api/nextcloud/file?path=" + url.QueryEscape("/Switchboard/Hermes/note.md"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "# Note from the sandbox" {
		t.Errorf("the file reads %q", body)
	}
}

// A DM needs no mention; a thread reply is answered in its thread; a file
// the person attaches reaches the agent's wake message.
func TestSandboxDMThreadAndUpload(t *testing.T) {
	s := startSandbox(t, exampleConfig)
	dm := s.room("agent-atlas")
	first := s.write(dm, map[string]any{"text": "hello Atlas"})
	s.reply(dm, "agent-atlas", "hello Atlas")

	s.write(dm, map[string]any{"text": "and in the thread", "tmid": first})
	if r := s.reply(dm, "agent-atlas", "and in the thread"); r.TMID != first {
		t.Errorf("the thread reply was answered in %q, want the thread %q", r.TMID, first)
	}

	s.write(dm, map[string]any{"text": "here are the numbers",
		"file": map[string]any{"name": "q3.csv", "type": "text/csv", "data": base64.StdEncoding.EncodeToString([]byte("a,b\n1,2\n"))}})
	s.reply(dm, "agent-atlas", "q3.csv")
	var mine *sbMessage
	for _, m := range s.messages(dm) {
		if m.Text == "here are the numbers" {
			mine = &m
		}
	}
	if mine == nil || len(mine.Files) != 1 || mine.Files[0].Name != "q3.csv" {
		t.Fatalf("the person's upload is not shown with its file: %+v", mine)
	}
}

// An action that needs approval reaches the sandbox Telegram chat with its
// buttons and links; pressing Approve runs it and the message shows the
// outcome.
func TestSandboxApprovalInTelegram(t *testing.T) {
	s := startSandbox(t, exampleConfig)
	general := s.room("general")
	s.write(general, map[string]any{"text": "@agent-hermes send me the note\n" +
		`call Workspace.write {"path":"note.md","content":"x"}` + "\n" +
		`call RocketChat.send_file {"room":"richard","localPath":"note.md"}`})
	s.reply(general, "agent-hermes", "RocketChat.send_file → pending_approval")

	fetch := func() []sbTelegram {
		var out struct{ Messages []sbTelegram }
		s.get("telegram", &out)
		return out.Messages
	}
	msgs := waitFor(t, s.dev, "an approval request in Telegram", fetch, func(ms []sbTelegram) bool {
		return len(ms) > 0 && len(ms[len(ms)-1].Buttons) > 0
	})
	req := msgs[len(msgs)-1]
	var approve string
	for _, row := range req.Buttons {
		for _, b := range row {
			if strings.HasPrefix(b.CallbackData, "a:") {
				approve = b.CallbackData
			}
		}
	}
	if approve == "" || !strings.Contains(req.Text, s.dev.base+"/approvals/") {
		t.Fatalf("approval request without an Approve button or a link to this listener: %+v", req)
	}
	// The link opens the confirmation page on the dev listener.
	link := req.Text[strings.Index(req.Text, s.dev.base+"/approvals/"):]
	link = strings.Fields(link)[0]
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s = %d, want the confirmation page", link, resp.StatusCode)
	}

	if status, m := s.post("telegram/press", map[string]any{"messageId": req.ID, "data": approve}); status != http.StatusAccepted {
		t.Fatalf("press: %d %v", status, m)
	}
	waitFor(t, s.dev, "the request edited with its outcome", fetch, func(ms []sbTelegram) bool {
		for _, m := range ms {
			if m.ID == req.ID && m.Edited {
				return true
			}
		}
		return false
	})
	dm := s.room("agent-hermes")
	waitFor(t, s.dev, "the approved file in the DM", func() []sbMessage { return s.messages(dm) }, func(ms []sbMessage) bool {
		for _, m := range ms {
			if m.User == "agent-hermes" && len(m.Files) == 1 && m.Files[0].Name == "note.md" {
				return true
			}
		}
		return false
	})
	// The person writes to the bot; the agent named answers in the chat.
	if status, m := s.post("telegram/messages", map[string]any{"text": "/hermes how are the numbers?"}); status != http.StatusAccepted {
		t.Fatalf("telegram message: %d %v", status, m)
	}
	waitFor(t, s.dev, "Hermes answering in Telegram", fetch, func(ms []sbTelegram) bool {
		for _, m := range ms {
			if m.FromBot && strings.Contains(m.Text, "how are the numbers?") && strings.Contains(m.Text, "Hermes") {
				return true
			}
		}
		return false
	})
	// A button that is gone cannot be pressed again.
	if status, _ := s.post("telegram/press", map[string]any{"messageId": req.ID, "data": "a:nope"}); status != http.StatusConflict {
		t.Errorf("pressing a button the message does not have = %d, want 409", status)
	}
}

// Message ids of the sandbox Rocket.Chat differ from run to run: the wake
// claims live on in DynamoDB (make dev keeps dynalite's data), and a
// repeated id would make the agent ignore the first message after a
// restart as already answered.
func TestSandboxAnswersAfterARestart(t *testing.T) {
	prefix := fmt.Sprintf("e2erestart%d-", time.Now().UnixNano())
	for run := 1; run <= 2; run++ {
		s := startSandbox(t, exampleConfig, "SWITCHBOARD_TABLE_PREFIX="+prefix)
		general := s.room("general")
		s.write(general, map[string]any{"text": fmt.Sprintf("@agent-hermes run %d", run)})
		s.reply(general, "agent-hermes", fmt.Sprintf("run %d", run))
		stopDev(t, s.dev)
	}
}

// A config that names a real server for a part turns that part of the
// sandbox off; the other parts stay.
func TestSandboxPartOffForARealServer(t *testing.T) {
	rc := rcfake.New() // stands in for "a real Rocket.Chat"
	t.Cleanup(rc.Close)
	uid, token := rc.AddUser("agent-hermes", "bot", "user")
	cfg := fmt.Sprintf(`instance:
  name: sandbox-part
  toolApiToken: env:E2E_TOOL_TOKEN
  model: {provider: scripted}
  rocketchat: {baseUrl: %s, webhookTokens: [tok]}
  approvals: {signingKey: env:E2E_SIGNING_KEY}
  dev: {scheduler: false, sandbox: true}
agents:
  - id: hermes
    tools:
      Workspace: {}
      RocketChat: {userId: %s, authToken: %s, username: agent-hermes}
`, rc.URL, uid, token)
	path := filepath.Join(t.TempDir(), "real-rc.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startSandbox(t, path)
	var st struct {
		Parts map[string]bool
	}
	s.get("state", &st)
	if st.Parts["rocketchat"] || !st.Parts["telegram"] || !st.Parts["nextcloud"] {
		t.Errorf("parts = %v, want Rocket.Chat off (the config names one), Telegram and Nextcloud on", st.Parts)
	}
	if status := s.get("rooms/GENERAL/messages", nil); status != http.StatusNotFound {
		t.Errorf("sandbox chat with a real Rocket.Chat configured = %d, want 404", status)
	}
}

// stopDev ends d as Ctrl-C does and waits for it; the cleanup of
// startDevConfig then finds it ended.
func stopDev(t *testing.T, d *devServer) {
	t.Helper()
	_ = d.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-d.done:
		d.done <- err
		if err != nil {
			t.Fatalf("switchboard dev ended with %v after Ctrl-C, want exit status 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("switchboard dev did not stop within 15 s of Ctrl-C")
	}
}
