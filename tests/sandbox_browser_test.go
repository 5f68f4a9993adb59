package tests

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser starts a headless Chromium for one test; it skips the test when
// none is installed.
func browser(t *testing.T) context.Context {
	t.Helper()
	bin := os.Getenv("CHROMIUM")
	if bin == "" {
		bin = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(bin); err != nil {
		t.Skipf("no Chromium at %s (set CHROMIUM): the browser test needs one", bin)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	// The first run starts the browser; it must not carry a timeout (the
	// timeout would end the browser), later steps do.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx
}

// within runs one step with a time limit.
func within[T any](ctx context.Context, d time.Duration, a chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return chromedp.Run(ctx, a)
}

// The newcomer's first minutes, in the browser: open the sandbox, mention
// an agent with the "save a file" example, see the answer arrive and the
// file in Nextcloud; then ask for something that needs approval, find the
// request in the Telegram inbox with its buttons and a working link, and
// approve it.
func TestSandboxInTheBrowser(t *testing.T) {
	ctx := browser(t)
	s := startSandbox(t, exampleConfig)
	type C = chromedp.CSS
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.dev.base+"/dev/sandbox/"),
	)
	if err == nil {
		_, err = within(ctx, 30*time.Second, chromedp.Steps(
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
	answer, err := within(ctx, 5*time.Second, chromedp.Text(C(`#messages .msg[data-user="agent-hermes"] .text`)))
	if err != nil {
		t.Fatal(err)
	}
	files, err := within(ctx, 5*time.Second, chromedp.Text(C(`#files`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answer, "Nextcloud.upload → ok") {
		t.Errorf("the agent's answer = %q, want the upload reported ok", answer)
	}
	if !strings.Contains(files, "/Switchboard/Hermes/note.md") {
		t.Errorf("Nextcloud panel = %q, want the note", files)
	}

	_, err = within(ctx, 30*time.Second, chromedp.Steps(
		chromedp.Click(C(`#ex-approval`)),
		chromedp.Click(C(`#send`)),
		chromedp.WaitVisible(C(`#inbox button.btn[data-data^="a:"]`)),
	))
	if err != nil {
		t.Fatalf("approval request: %v\nserver log:\n%s", err, s.dev.logs.String())
	}
	href, err := within(ctx, 5*time.Second, chromedp.AttributeValue(C(`#inbox a[href*="/approvals/"]`), "href"))
	if err != nil {
		t.Fatal(err)
	}
	link := href.Value
	_, err = within(ctx, 30*time.Second, chromedp.Steps(
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
	inbox, err := within(ctx, 5*time.Second, chromedp.Text(C(`#inbox`)))
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
	title, err := within(ctx, 5*time.Second, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if title == "" {
		t.Errorf("the approval link opened a page without a title")
	}
	t.Logf("approval page %q; inbox after approving:\n%s", title, inbox)
}
