package tests

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// deliverQ3 is the sandbox page's "deliver a spreadsheet" example.
const deliverQ3 = "@agent-hermes deliver the Q3 numbers to me as a spreadsheet\n" +
	`call Workspace.write {"path":"q3.csv","content":"region,revenue\nnorth,10\nsouth,12\n"}` + "\n" +
	`call Documents.deliver {"localPath":"q3.csv","format":"xlsx","share":{"with":"richard"},"message":"Q3 numbers for richard"}`

type sbFile struct {
	Path       string
	Dir        bool
	Link       string
	SharedWith []string
}

func (s *sandbox) files() []sbFile {
	var out struct{ Files []sbFile }
	s.get("nextcloud", &out)
	return out.Files
}

// noRedirects is a client that shows a redirect instead of following it.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// With the example config a delivery runs end to end in the sandbox: the
// CSV is converted to XLSX by the Collabora fake, uploaded, shared with the
// person (a user of the sandbox Nextcloud), and its link is posted in
// #general (the sandbox's defaultRoom); the link opens the file.
func TestSandboxDeliversASpreadsheet(t *testing.T) {
	s := startSandbox(t, exampleConfig)
	general := s.room("general")
	s.write(general, map[string]any{"text": deliverQ3})
	s.reply(general, "agent-hermes", "Documents.deliver → ok")
	// The post is the message with the link (Hermes's answer above quotes
	// the request, message included).
	posted := waitFor(t, s.dev, "the delivery's post", func() []sbMessage { return s.messages(general) }, func(ms []sbMessage) bool {
		for _, m := range ms {
			if m.User == "agent-hermes" && strings.HasPrefix(m.Text, "Q3 numbers for richard\n") {
				return true
			}
		}
		return false
	})
	var post string
	for _, m := range posted {
		if m.User == "agent-hermes" && strings.HasPrefix(m.Text, "Q3 numbers for richard\n") {
			post = m.Text
		}
	}
	link := regexp.MustCompile(`^Q3 numbers for richard\n(http://127\.0\.0\.1:\d+/f/\d+)$`).FindStringSubmatch(post)
	if link == nil {
		t.Fatalf("the delivery posted %q, want the message and the file's link", post)
	}
	finished := s.reply(general, "agent-hermes", "finished")
	if !strings.Contains(finished.Text, "converted to q3.xlsx") || !strings.Contains(finished.Text, "link posted in the room") {
		t.Errorf("the follow-up says %q, want the conversion and the posted link", finished.Text)
	}

	resp, err := http.Get(link[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), "PK") ||
		!strings.Contains(resp.Header.Get("Content-Disposition"), "q3.xlsx") {
		t.Errorf("GET %s = %d %q (%s), want the XLSX file", link[1], resp.StatusCode, resp.Header.Get("Content-Disposition"), body[:min(len(body), 40)])
	}
	var xlsx *sbFile
	for _, f := range s.files() {
		if f.Path == "/Switchboard/Hermes/reports/q3.xlsx" {
			xlsx = &f
		}
	}
	if xlsx == nil || xlsx.Link != link[1] || len(xlsx.SharedWith) != 1 || xlsx.SharedWith[0] != "richard" {
		t.Errorf("the Nextcloud pane shows %+v, want q3.xlsx with the posted link, shared with richard", xlsx)
	}
	// A link to a file that is not there says so.
	resp, err = http.Get(link[1][:strings.LastIndex(link[1], "/")+1] + "999999")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a link to no file = %d, want 404", resp.StatusCode)
	}
}

// A delivery that fails after it started (a share with someone the sandbox
// Nextcloud does not know) reaches the person once: the router's notice,
// not also the follow-up run's answer in the room.
func TestSandboxDeliveryFailureIsToldOnce(t *testing.T) {
	s := startSandbox(t, exampleConfig)
	general := s.room("general")
	s.write(general, map[string]any{"text": "@agent-hermes deliver to nobody\n" +
		`call Workspace.write {"path":"q3.csv","content":"a,b\n1,2\n"}` + "\n" +
		`call Documents.deliver {"localPath":"q3.csv","share":{"with":"nobody"}}`})
	s.reply(general, "agent-hermes", "Documents.deliver → ok")
	dm := s.room("agent-hermes")
	s.reply(dm, "agent-hermes", "failed at step share")
	s.dev.idle() // the follow-up run has answered (or not) by now

	told := 0
	for _, rid := range []string{general, dm, s.room("agent-atlas")} {
		for _, m := range s.messages(rid) {
			if strings.Contains(m.Text, "failed at step share") {
				told++
			}
		}
	}
	var tg struct{ Messages []sbTelegram }
	s.get("telegram", &tg)
	for _, m := range tg.Messages {
		if strings.Contains(m.Text, "failed at step share") {
			told++
		}
	}
	if told != 1 {
		t.Errorf("the failure reached the person %d times, want once\nserver log:\n%s", told, s.dev.logs.String())
	}
}

// Room links that Switchboard writes into messages (the fallback's "could
// not be posted in …", approvals) open the room on the sandbox page; the
// page names the console with its password.
func TestSandboxRoomLinksAndConsole(t *testing.T) {
	s := startSandbox(t, exampleConfig)
	var st struct {
		RocketChat string
		Console    struct{ URL, Pair, Password string }
	}
	s.get("state", &st)
	dm := s.room("agent-hermes")
	for path, want := range map[string]string{
		"/direct/" + dm:          "#room=" + dm,
		"/channel/general?msg=x": "#" + url.Values{"room": {"general"}, "msg": {"x"}}.Encode(),
	} {
		resp, err := noRedirects.Get(st.RocketChat + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || loc != s.dev.base+"/dev/sandbox/"+want {
			t.Errorf("GET %s = %d → %q, want a redirect to the sandbox page %s", path, resp.StatusCode, loc, want)
		}
	}
	if st.Console.URL != s.dev.base+"/console/" || st.Console.Pair != s.dev.base+"/console/?a=hermes&b=atlas" || len(st.Console.Password) < 12 {
		t.Errorf("console = %+v, want the console on this listener, the pair view and a password", st.Console)
	}
	if !strings.Contains(s.dev.logs.String(), "password "+st.Console.Password) {
		t.Errorf("the dev log does not print the console password:\n%s", s.dev.logs.String())
	}
}

// The page's ask_agent and taskboard examples: Hermes asks Atlas and shows
// Atlas's answer; Hermes hands Atlas a task and Atlas, woken by it, says so
// in #general. The console's pair view (with the sandbox's password) shows
// both conversations.
func TestSandboxAskAndTaskOnTheConsole(t *testing.T) {
	s := startSandbox(t, exampleConfig)
	general := s.room("general")
	s.write(general, map[string]any{"text": "@agent-hermes ask Atlas how many trucks are on the road\n" +
		`call ask_agent.ask {"agent":"atlas","question":"How many trucks are on the road today?"}`})
	s.reply(general, "agent-hermes", "ask_agent.ask → ok: Hello from Atlas! You said: How many trucks are on the road today?")
	s.write(general, map[string]any{"text": "@agent-hermes hand Atlas a task\n" +
		`call Taskboard.task_create {"assignee":"atlas","title":"Count the trucks","description":"Count the trucks on the road.\ncall RocketChat.send_message {\"room\":\"general\",\"text\":\"Atlas here: I took the task Count the trucks from Hermes.\"}"}`})
	s.reply(general, "agent-hermes", "Taskboard.task_create → ok")
	s.reply(general, "agent-atlas", "Atlas here: I took the task Count the trucks from Hermes.")

	var st struct {
		Console struct{ Pair, Password string }
	}
	s.get("state", &st)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	res, err := c.Get(s.dev.base + "/console/login")
	if err != nil {
		t.Fatal(err)
	}
	form, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(string(form))
	if m == nil {
		t.Fatalf("no console login form (%d):\n%s", res.StatusCode, form)
	}
	res, err = c.PostForm(s.dev.base+"/console/login", url.Values{"csrf": {m[1]}, "password": {st.Console.Password}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	res, err = c.Get(st.Console.Pair)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	text := html.UnescapeString(string(page))
	for _, want := range []string{"How many trucks are on the road today?", "Hello from Atlas!", "Count the trucks"} {
		if res.StatusCode != http.StatusOK || !strings.Contains(text, want) {
			t.Errorf("the console's pair view (%d) lacks %q", res.StatusCode, want)
		}
	}
}
