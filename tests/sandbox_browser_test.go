package tests

import (
	"context"
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
	_, err = browsertest.Within(b, 30*time.Second, chromedp.Steps(
		chromedp.Click(C(`#inbox button.btn[data-data^="a:"]`)),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Poll[chromedp.Void](`document.querySelector("#inbox").innerText.includes("(edited)")`,
				chromedp.WithPollingTimeout(25*time.Second))(ctx, tg)
			return err
		}),
	))
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
}
