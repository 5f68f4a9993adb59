package tests

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard-dev/switchboard/shared/platform/browsertest"
)

// The newcomer's first minutes, in the browser: open the sandbox, mention
// an agent with the "save a file" example, see the answer arrive and the
// file in Nextcloud; then ask for something that needs approval, find the
// request in the Telegram inbox with its buttons and a working link, and
// approve it.
func TestSandboxInTheBrowser(t *testing.T) {
	b := browsertest.New(t, 5*time.Minute)
	ctx := b.Context()
	s := startSandbox(t, exampleConfig)
	type C = chromedp.CSS
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.dev.base+"/dev/sandbox/"),
	)
	if err == nil {
		_, err = browsertest.Within(b, 30*time.Second, chromedp.Steps(
			chromedp.WaitVisible(C(`#rooms button.room.active[data-name="general"]`)),
			chromedp.Click(C(`#ex-file`)),
			chromedp.Click(C(`#send`)),
			chromedp.WaitVisible(C(`#messages .msg[data-user="agent-hermes"]`)),
			chromedp.WaitVisible(C(`#files a.file`)),
		))
	}
	if err != nil {
		t.Fatalf("chat: %v\nserver log:\n%s", err, s.dev.logs.String())
	}
	answer, err := browsertest.Within(b, 5*time.Second, chromedp.Text(C(`#messages .msg[data-user="agent-hermes"] .text`)))
	if err != nil {
		t.Fatal(err)
	}
	files, err := browsertest.Within(b, 5*time.Second, chromedp.Text(C(`#files`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answer, "Nextcloud.upload → ok") {
		t.Errorf("the agent's answer = %q, want the upload reported ok", answer)
	}
	if !strings.Contains(files, "/Switchboard/Hermes/note.md") {
		t.Errorf("Nextcloud panel = %q, want the note", files)
	}

	_, err = browsertest.Within(b, 30*time.Second, chromedp.Steps(
		chromedp.Click(C(`#ex-approval`)),
		chromedp.Click(C(`#send`)),
		chromedp.WaitVisible(C(`#inbox button.btn[data-data^="a:"]`)),
	))
	if err != nil {
		t.Fatalf("approval request: %v\nserver log:\n%s", err, s.dev.logs.String())
	}
	href, err := browsertest.Within(b, 5*time.Second, chromedp.AttributeValue(C(`#inbox a[href*="/approvals/"]`), "href"))
	if err != nil {
		t.Fatal(err)
	}
	link := href.Value
	_, err = browsertest.Within(b, 10*time.Second, chromedp.Click(C(`#inbox button.btn[data-data^="a:"]`)))
	if err == nil {
		err = browsertest.Until(b, 25*time.Second, `document.querySelector("#inbox").innerText.includes("(edited)")`)
	}
	if err != nil {
		t.Fatalf("approving: %v\nserver log:\n%s", err, s.dev.logs.String())
	}
	inbox, err := browsertest.Within(b, 5*time.Second, chromedp.Text(C(`#inbox`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(link, s.dev.base+"/approvals/") || !strings.Contains(link, "token=") || strings.Contains(link, "***") {
		t.Errorf("approval link = %q, want a signed link to this listener", link)
	}
	// The link works in the browser: it opens the confirmation page.
	if err := chromedp.Do(ctx, chromedp.Navigate(link)); err != nil {
		t.Fatal(err)
	}
	title, err := browsertest.Within(b, 5*time.Second, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if title == "" {
		t.Errorf("the approval link opened a page without a title")
	}
	t.Logf("approval page %q; inbox after approving:\n%s", title, inbox)

	sandboxOtherHalf(t, b, s)
}

// sandboxOtherHalf clicks the page's other Try buttons in #general — a
// delivery, Hermes asking Atlas, a task for Atlas — and checks what each
// shows; then a thread reply in the DM with Atlas sits under its parent;
// the console link and password open the conversation of the two agents.
func sandboxOtherHalf(t *testing.T, b *browsertest.Browser, s *sandbox) {
	type C = chromedp.CSS
	// until waits for a JavaScript condition on the page.
	until := func(what, cond string) {
		t.Helper()
		if err := browsertest.Until(b, 30*time.Second, cond); err != nil {
			t.Fatalf("%s: %v\nserver log:\n%s", what, err, s.dev.logs.String())
		}
	}
	send := func(button string) {
		t.Helper()
		if _, err := browsertest.Within(b, 10*time.Second, chromedp.Steps(chromedp.Click(C(button)), chromedp.Click(C(`#send`)))); err != nil {
			t.Fatalf("%s: %v", button, err)
		}
	}
	started := time.Now()
	b.Do("back to the sandbox", chromedp.Navigate(s.dev.base+"/dev/sandbox/"))
	until("the sandbox page", `!!document.querySelector('#rooms button.room.active[data-name="general"]')`)

	// The delivery: CSV → XLSX, shared with richard, its link posted.
	send(`#ex-deliver`)
	until("the delivery's link in #general", `[...document.querySelectorAll('#messages .msg[data-user="agent-hermes"] .text')].some(e =>
		e.innerText.startsWith("Q3 numbers for richard") && e.querySelector('a[href*="/f/"]'))`)
	until("the spreadsheet in the Nextcloud pane, shared", `(() => { const a = document.querySelector('#files a.file[data-path$="/reports/q3.xlsx"]');
		return !!a && !!a.nextElementSibling && a.nextElementSibling.innerText === "shared with richard"; })()`)
	link := browsertest.Eval[string](b, `[...document.querySelectorAll('#messages .msg[data-user="agent-hermes"] .text a[href*="/f/"]')].pop().href`)
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 2)
	_, _ = io.ReadFull(resp.Body, head)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(head) != "PK" {
		t.Errorf("the posted link %s opens %d %q, want the XLSX file", link, resp.StatusCode, head)
	}
	t.Logf("delivered document with a working link after %v", time.Since(started).Round(time.Millisecond))

	// ask_agent: Atlas's answer comes back in Hermes's reply.
	send(`#ex-ask`)
	until("Atlas's answer", `[...document.querySelectorAll('#messages .msg[data-user="agent-hermes"] .text')].some(e =>
		e.innerText.includes("ask_agent.ask → ok: Hello from Atlas! You said: How many trucks"))`)

	// The taskboard: Atlas, woken by the task, says it took it.
	send(`#ex-task`)
	until("Atlas taking the task", `[...document.querySelectorAll('#messages .msg[data-user="agent-atlas"] .text')].some(e =>
		e.innerText.includes("I took the task Count the trucks from Hermes"))`)

	// A thread reply sits under its parent (in the DM with Atlas, whose
	// rate limit is Atlas's own).
	b.Do("the DM with Atlas", chromedp.Click(C(`#rooms button.room[data-name="agent-atlas"]`)))
	until("the DM", `document.querySelector("#room-title").innerText === "@agent-atlas"`)
	b.Do("a first message", chromedp.SendKeys(C(`#text`), "first in the DM"), chromedp.Click(C(`#send`)))
	until("Atlas's answer in the DM", `[...document.querySelectorAll('#messages > .msg[data-user="agent-atlas"]')].length === 1`)
	b.Do("reply in thread", chromedp.Click(C(`#messages > .msg[data-user="richard"] button.reply`)),
		chromedp.SendKeys(C(`#text`), "in the thread"), chromedp.Click(C(`#send`)))
	until("the thread under its parent", `(() => { const p = document.querySelector('#messages > .msg[data-user="richard"]');
		return !!p && [...p.querySelectorAll(':scope > .replies > .msg[data-user="agent-atlas"] .text')].some(e => e.innerText.includes("in the thread")); })()`)

	// No emoji icons: a browser without an emoji font shows empty boxes.
	if emoji := browsertest.Eval[bool](b, `/[\u{1F300}-\u{1FAFF}\u{2600}-\u{27BF}]/u.test(document.body.innerText)`); emoji {
		t.Errorf("the page shows emoji:\n%s", b.Text("body"))
	}

	// The console: the page names its link and password; the pair view
	// shows what Hermes and Atlas said to each other.
	consoleURL := browsertest.Eval[string](b, `document.querySelector("#console-link").href`)
	password := b.Text(`#console-password`)
	b.Do("the console", chromedp.Navigate(consoleURL))
	b.Do("log in", chromedp.SendKeys(`input[name=password]`, password), chromedp.Submit(`#login`))
	if err := browsertest.Until(b, 20*time.Second, `!location.pathname.endsWith("/console/login")`); err != nil {
		t.Fatalf("the console password from the sandbox page did not log in: %v\n%s", err, b.Text("body"))
	}
	b.Do("the pair view", chromedp.Navigate(consoleURL))
	until("the pair view", `location.search.includes("a=hermes") && document.body.innerText.includes("How many trucks are on the road today?") &&
		document.body.innerText.includes("Count the trucks")`)
	t.Logf("console pair view after %v: %s", time.Since(started).Round(time.Millisecond), b.Location())
}
