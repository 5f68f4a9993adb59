package browsertest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard-dev/switchboard/shared/platform/browsertest"
)

// TestBrowserSeesDialogsAndHonoursCSP: the harness records a dialog a page
// opens, and Chromium blocks an inline script under script-src 'self' (the
// console's policy), which is what the console's XSS test relies on.
func TestBrowserSeesDialogsAndHonoursCSP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/strict" {
			w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'")
		}
		fmt.Fprint(w, `<!doctype html><title>t</title><p id="p">x</p><script>document.title = "ran"; alert("hi")</script>`)
	}))
	defer srv.Close()
	b := browsertest.New(t, time.Minute)

	b.Do("open the strict page", chromedp.Navigate(srv.URL+"/strict"))
	if title := browsertest.Eval[string](b, "document.title"); title != "t" {
		t.Errorf("an inline script ran under script-src 'self': title %q", title)
	}
	if d := b.Dialogs(); len(d) != 0 {
		t.Errorf("dialogs on the strict page: %v", d)
	}

	b.Do("open the lax page", chromedp.Navigate(srv.URL+"/lax"))
	if title := browsertest.Eval[string](b, "document.title"); title != "ran" {
		t.Errorf("the inline script did not run without a policy: title %q", title)
	}
	if d := b.Dialogs(); !slices.Contains(d, "alert: hi") {
		t.Errorf("dialogs %v, want the alert recorded", d)
	}
}

// TestWithinEndsOnlyTheStep: a step that runs out of time fails with an
// error, and the browser still serves the next step.
func TestWithinEndsOnlyTheStep(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>t</title><p id="p">hello</p>`)
	}))
	defer srv.Close()
	b := browsertest.New(t, time.Minute)
	b.Do("open the page", chromedp.Navigate(srv.URL))

	if _, err := browsertest.Within(b, 300*time.Millisecond, chromedp.WaitVisible(chromedp.CSS("#missing"))); err == nil {
		t.Fatal("waiting for a missing element: no error, want the step's deadline")
	}
	got, err := browsertest.Within(b, 10*time.Second, chromedp.Text(chromedp.CSS("#p")))
	if err != nil || got != "hello" {
		t.Errorf("after a timed-out step: text %q, %v; want hello from a browser that still runs", got, err)
	}
}

// TestUntilWaitsAcrossNavigations: a page that reloads itself until a
// counter reaches 8 — every reload replaces the document a poll runs in —
// is waited for by Until; a plain chromedp poll fails on the first reload.
func TestUntilWaitsAcrossNavigations(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>t</title><body><script>
const n = Number(sessionStorage.n || 0) + 1; sessionStorage.n = n;
if (n < 8) setTimeout(() => location.reload(), 30);
</script></body>`)
	}))
	defer srv.Close()
	b := browsertest.New(t, time.Minute)

	b.Do("open the page", chromedp.Navigate(srv.URL))
	_, err := browsertest.Within(b, 10*time.Second, chromedp.Poll[chromedp.Void](`Number(sessionStorage.n) >= 8`))
	if err == nil {
		t.Log("the plain poll happened to survive the reloads (it usually does not)")
	}

	b.Do("open the page again", chromedp.Evaluate[chromedp.Void](`sessionStorage.clear()`), chromedp.Navigate(srv.URL))
	if err := browsertest.Until(b, 10*time.Second, `Number(sessionStorage.n) >= 8`); err != nil {
		t.Fatalf("Until across reloads: %v", err)
	}
	if err := browsertest.Until(b, 300*time.Millisecond, `false`); err == nil {
		t.Error("Until(false): no error, want its deadline")
	}
}
