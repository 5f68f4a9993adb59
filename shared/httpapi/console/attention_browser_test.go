package console_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard-dev/switchboard/shared/platform/browsertest"
)

// TestAttentionInChromium walks from the start page (its 30-day cost
// chart drawn) to Needs attention, and from a stalled task there to its
// chain, whose timeline Chromium lays out: three lanes as wide as the
// page, the runs' bars and the messages' arrows, a hover title on each,
// under the console's CSP and without a script error. With
// SWITCHBOARD_SCREENSHOTS=docs it writes console-costs.png,
// console-attention.png and console-chain.png.
func TestAttentionInChromium(t *testing.T) {
	b := browsertest.New(t, 2*time.Minute)
	e := newStallEnv(t)
	seedStalls(e)
	base := e.baseURL
	count := func(sel string) int {
		return browsertest.Eval[int](b, "document.querySelectorAll("+quoteJS(sel)+").length")
	}
	waitFor := func(what, cond string) {
		t.Helper()
		if err := browsertest.Until(b, 30*time.Second, cond); err != nil { // 30 s: the machine may be busy
			t.Fatalf("waited in vain for %s (at %s): %v", what, b.Location(), err)
		}
	}

	b.Do("open the console", chromedp.Navigate(base+"/console/login"))
	b.Do("log in", chromedp.SendKeys(`input[name=password]`, password), chromedp.Submit(`#login`))
	waitFor("the start page", `location.pathname.endsWith("/console/") && document.querySelectorAll("table.costs").length === 1`)
	if n := count("figure.costchart svg rect.total"); n != 3 {
		t.Errorf("%d cost bars on the start page, want 3", n)
	}
	if w := browsertest.Eval[float64](b, `document.querySelector("figure.costchart svg").getBoundingClientRect().width`); w < 600 {
		t.Errorf("the cost chart is %v px wide; want it to fill the page", w)
	}
	b.Screenshot("console-costs.png")

	b.Do("needs attention", chromedp.Click(`header nav a[href="/console/attention"]`))
	waitFor("the attention page", `location.pathname.endsWith("/console/attention") && document.querySelectorAll("table.tasks").length === 1`)
	if got := b.Text("table.tasks tbody tr:first-child"); !strings.Contains(got, "T-8") || !strings.Contains(got, "blocked") {
		t.Errorf("first unfinished task %q, want the blocked T-8", got)
	}
	for sel, want := range map[string]string{
		"#bounds":                    "Index reads only",
		"ul.paused":                  "Carol",
		"table.budget":               "root-budget",
		"table.repeated":             "Where is the signed contract?",
		"h2#fizzled + table.msgs":    "T-7",
		"h2#failed + table.msgs":     "carol did not answer within 120 s",
		"header nav a.active":        "Needs attention",
		"table.tasks tr.task-open":   "2 d 0 h ago by bob",
		"table.budget tbody tr td a": "root-budget",
	} {
		if got := b.Text(sel); !strings.Contains(got, want) {
			t.Errorf("%s reads %q, want %q in it", sel, got, want)
		}
	}
	b.Screenshot("console-attention.png")

	b.Do("open T-7's chain", chromedp.Click(`table.tasks tr.task-open a`))
	waitFor("the chain", `location.href.includes("/console/chain?root=root-stall") && document.querySelectorAll("#timeline svg").length === 1`)
	if n := count("#timeline g.lane"); n != 3 {
		t.Errorf("%d lanes, want 3", n)
	}
	if n := count("#timeline g.run rect"); n != 3 {
		t.Errorf("%d run bars, want 3", n)
	}
	if n := count("#timeline line.arrow"); n != 13 {
		t.Errorf("%d arrows, want 13", n)
	}
	if n := count("#timeline line.arrow.bad"); n != 2 {
		t.Errorf("%d red arrows, want the timed-out and the refused ask", n)
	}
	if w := browsertest.Eval[float64](b, `document.querySelector("#timeline svg").getBoundingClientRect().width`); w < 600 {
		t.Errorf("the timeline is %v px wide; want it to fill the page", w)
	}
	// Every bar is drawn inside the picture, and says what it is.
	if bad := browsertest.Eval[int](b, `(() => { const s = document.querySelector("#timeline svg").getBoundingClientRect();
		return [...document.querySelectorAll("#timeline g.run rect")].filter(r => { const b = r.getBoundingClientRect();
			return b.width < 2 || b.left < s.left || b.right > s.right + 1 || !r.querySelector("title") }).length })()`); bad != 0 {
		t.Errorf("%d run bars are outside the timeline, invisible or without a title", bad)
	}
	if got := b.Text(".run .outcome"); !strings.Contains(got, "its task T-7 is still open") {
		t.Errorf("Alice's run reads %q; want it to say T-7 is still open", got)
	}
	b.Screenshot("console-chain.png")
	if ex := b.Exceptions(); len(ex) != 0 {
		t.Errorf("uncaught JavaScript exceptions: %v", ex)
	}
}
