// Package browsertest runs a real headless Chromium for tests and drives it
// with chromedp: New starts one browser per test with the flags that keep
// it off the network (no background traffic, no component updates, no
// QUIC) and a throw-away profile, and records what a page must never do
// unasked (JavaScript dialogs, uncaught exceptions), so that a test can
// prove that planted markup stayed inert.
//
// A test skips when no Chromium is installed, unless
// SWITCHBOARD_REQUIRE_BROWSER is set (CI sets it, so that a missing browser
// fails there instead of passing silently). SWITCHBOARD_CHROMIUM names the
// binary when it is not chromium, chromium-browser or google-chrome on the
// PATH.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Env vars.
const (
	EnvRequire  = "SWITCHBOARD_REQUIRE_BROWSER" // set: a missing browser fails the test
	EnvChromium = "SWITCHBOARD_CHROMIUM"        // the browser binary
	// EnvScreenshots names a directory; when set, Screenshot writes PNGs
	// there (docs/ in the repository), otherwise it does nothing.
	EnvScreenshots = "SWITCHBOARD_SCREENSHOTS"
)

// Browser is one headless Chromium with one tab.
type Browser struct {
	t   testing.TB
	ctx context.Context

	mu         sync.Mutex
	dialogs    []string
	exceptions []string
}

// Path finds the browser binary, or "".
func Path() string {
	if p := os.Getenv(EnvChromium); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// New starts a browser for t; it is closed when t ends. timeout bounds
// everything the test does with it.
func New(t testing.TB, timeout time.Duration) *Browser {
	t.Helper()
	bin := Path()
	if bin == "" {
		if os.Getenv(EnvRequire) != "" {
			t.Fatalf("browsertest: no Chromium found and %s is set; install it (apt-get install chromium) or set %s", EnvRequire, EnvChromium)
		}
		t.Skipf("browsertest: no Chromium found (apt-get install chromium); set %s to fail instead", EnvRequire)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.WindowSize(1280, 900),
	}
	base, cancelTimeout := context.WithTimeout(context.Background(), timeout)
	actx, cancelAlloc := chromedp.NewExecAllocator(base, opts...)
	ctx, cancelCtx := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
		cancelTimeout()
	})
	b := &Browser{t: t, ctx: ctx}
	if err := chromedp.Listen(ctx, b.observe); err != nil {
		t.Fatalf("browsertest: start %s: %v", bin, err)
	}
	return b
}

// observe records dialogs (and dismisses them, or the page would stall)
// and uncaught exceptions.
func (b *Browser) observe(ev any) {
	switch ev := ev.(type) {
	case *page.EventJavascriptDialogOpening:
		b.mu.Lock()
		b.dialogs = append(b.dialogs, string(ev.Type)+": "+ev.Message)
		b.mu.Unlock()
		go func() {
			_, _ = chromedp.Call(b.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}()
	case *runtime.EventExceptionThrown:
		text := ev.ExceptionDetails.Text
		if ex := ev.ExceptionDetails.Exception; ex != nil && ex.Description != "" {
			text += " " + ex.Description
		}
		b.mu.Lock()
		b.exceptions = append(b.exceptions, text)
		b.mu.Unlock()
	}
}

// Context is the chromedp context of the tab, for chromedp.Do and Run.
func (b *Browser) Context() context.Context { return b.ctx }

// Do runs actions and fails the test on an error.
func (b *Browser) Do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("browser: %s: %v", what, err)
	}
}

// Within runs one action with its own time limit and returns its error,
// for a test that adds detail of its own (a server log) to a failure. The
// limit ends only the action: the browser runs on (New started it without
// one), so later steps still work after a step timed out.
func Within[T any](b *Browser, d time.Duration, a chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, d)
	defer cancel()
	return chromedp.Run(ctx, a)
}

// Eval evaluates a JavaScript expression and returns its value.
func Eval[T any](b *Browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("browser: evaluate %s: %v", expr, err)
	}
	return v
}

// Location is the tab's URL.
func (b *Browser) Location() string {
	b.t.Helper()
	u, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.t.Fatalf("browser: location: %v", err)
	}
	return u
}

// Text is the visible text of the first element matching sel.
func (b *Browser) Text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(sel))
	if err != nil {
		b.t.Fatalf("browser: text of %s: %v", sel, err)
	}
	return s
}

// Dialogs are the JavaScript dialogs pages opened so far.
func (b *Browser) Dialogs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.dialogs...)
}

// Exceptions are the uncaught JavaScript exceptions so far.
func (b *Browser) Exceptions() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.exceptions...)
}

// Screenshot writes a PNG of the visible part of the page (1280×900) named
// name (e.g. "console-chain.png") into the directory EnvScreenshots names;
// without it, it does nothing.
func (b *Browser) Screenshot(name string) {
	b.t.Helper()
	dir := os.Getenv(EnvScreenshots)
	if dir == "" {
		return
	}
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("browser: screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		b.t.Fatalf("browser: %v", fmt.Errorf("write screenshot: %w", err))
	}
}

// Until waits up to d for the JavaScript condition cond to be true on the
// page. A condition evaluated while the page navigates (a link, a form's
// redirect, a reload) can land in a document that is already gone — the
// browser answers "Cannot find context with specified id" or "Execution
// context was destroyed"; Until then asks again in the new document
// instead of failing, so a test can wait across a navigation.
func Until(b *Browser, d time.Duration, cond string) error {
	ctx, cancel := context.WithTimeout(b.ctx, d)
	defer cancel()
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond))
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: not true within %v (%w)", cond, d, err)
		}
		if !navigatedAway(err) {
			return err
		}
		// The document went away mid-evaluation (chromedp's poll does not
		// survive a navigation): wait for the next one and ask again.
		_, _ = chromedp.Run(ctx, chromedp.WaitReady("body"))
	}
}

// navigatedAway tells the errors of an evaluation whose document was
// replaced while it ran.
func navigatedAway(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Cannot find context with specified id") ||
		strings.Contains(s, "Execution context was destroyed") ||
		strings.Contains(s, "Inspected target navigated or closed")
}
