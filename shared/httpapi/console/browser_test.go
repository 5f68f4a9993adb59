package console_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard-dev/switchboard/shared/platform/browsertest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// seedDemo fills the tables with what the screenshots and the browser test
// show: a long conversation of alice and bob with tasks and a search word,
// XSS plants, a chain with receipts and tool calls, a pending approval, job
// runs and the Rocket.Chat health state.
func seedDemo(e *env) {
	ctx := context.Background()
	lines := []string{
		"Could you pull the Q3 numbers from the shared folder?",
		"Sure — the invoice totals are in /reports/q3.xlsx, 14 rows.",
		"Please summarise them for Richard, two sentences.",
		"Done: revenue up 4 %, two invoices still open.",
	}
	for i := range 230 {
		from, to := "alice", "bob"
		if i%2 == 1 {
			from, to = to, from
		}
		at := start.Add(-time.Duration(230-i) * 37 * time.Minute)
		e.msg(from, to, at, lines[i%len(lines)]+" (#"+itoa(i)+")", func(m *sb.AgentMessage) {
			m.RunID, m.RootRunID = "run-"+from+"-1", "root-1"
			switch i % 8 {
			case 2:
				m.Channel, m.TaskID = sb.ChannelTask, "T-"+itoa(40+i/8)
			case 3:
				m.Channel, m.Direction, m.TaskID = sb.ChannelTaskResult, sb.DirectionResponse, "T-"+itoa(40+i/8)
			case 5:
				m.Channel, m.TaskID = sb.ChannelTaskComment, "T-"+itoa(40+i/8)
			case 1, 7:
				m.Direction = sb.DirectionResponse
			}
		})
	}
	for i, p := range plants {
		e.msg("bob", "alice", start.Add(-time.Duration(len(plants)-i)*time.Minute), p, func(m *sb.AgentMessage) { m.RunID, m.RootRunID = "run-bob-1", "root-1" })
	}
	e.msg("alice", "carol", start.Add(-3*time.Hour), "Carol, can you book the room for Thursday?", nil)
	for i, agent := range []string{"alice", "bob"} {
		run := sb.RunContext{RunID: "run-" + agent + "-1", RootRunID: "root-1", AgentID: agent}
		if i > 0 {
			run.ParentRunID = "run-alice-1"
		}
		must(e.t, e.store.Put(ctx, sb.Receipt{Run: run, AgentID: agent, Provider: "bedrock", Model: "eu.anthropic.claude-sonnet",
			StartedAt: start.Add(-time.Hour + time.Duration(i)*time.Minute), Duration: 8 * time.Second, TokensIn: 5200, TokensOut: 410,
			CostUSD: 0.0218 + float64(i)*0.01, Steps: 3, Outcome: "answered"}))
		must(e.t, e.store.Append(ctx, sb.AuditEntry{ID: "call-" + agent, At: start.Add(-time.Hour + time.Duration(i)*time.Minute), AgentID: agent, Run: run,
			Tool: "Nextcloud", Action: "read", Args: `{"path":"/reports/q3.xlsx"}`, Decision: sb.DecisionAuto, Outcome: "ok", Duration: 240 * time.Millisecond}))
	}
	e.pending("q3delete", "alice", "The old Q3 draft is superseded by the final report.", `{"path":"/reports/q3-draft.xlsx"}`)
	must(e.t, e.store.RecordRun(ctx, sb.JobRun{Job: "heartbeat", StartedAt: start.Add(-2 * time.Minute), Duration: 84 * time.Millisecond, Outcome: "ok", Detail: "4 tables and the bucket answer", Trigger: "schedule"}))
	must(e.t, e.store.RecordRun(ctx, sb.JobRun{Job: "rocketchat-health", StartedAt: start.Add(-4 * time.Minute), Duration: 120 * time.Millisecond, Outcome: "ok", Detail: "Rocket.Chat 7.4.0 answers", Trigger: "schedule"}))
	must(e.t, e.store.RecordRun(ctx, sb.JobRun{Job: "telegram-poll", StartedAt: start.Add(-3 * time.Minute), Duration: 300 * time.Millisecond, Outcome: "error", Detail: "telegram getUpdates: 409 Conflict: a webhook is set", Trigger: "schedule"}))
	must(e.t, e.store.KV().Put(ctx, "health#rocketchat", `{"failures":0,"notified":false,"version":"7.4.0"}`, time.Time{}))
	must(e.t, e.store.Put(ctx, sb.Receipt{Run: sb.RunContext{RunID: "r-today", RootRunID: "r-today"}, AgentID: "alice", StartedAt: start.Add(-30 * time.Minute), CostUSD: 0.84}))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestConsoleInChromium walks the console in a real headless Chromium:
// login (a wrong password first), a pair, load older, search, a chain, the
// approvals and health pages, a POST without its CSRF token, the planted
// markup staying inert, and the session running out. With
// SWITCHBOARD_SCREENSHOTS=docs it writes the screenshots in docs/console.md
// (the chain's is TestAttentionInChromium's).
func TestConsoleInChromium(t *testing.T) {
	b := browsertest.New(t, 2*time.Minute)
	e := newEnv(t, nil)
	seedDemo(e)
	base := e.baseURL
	waitFor := func(what, cond string) {
		t.Helper()
		if err := browsertest.Until(b, 30*time.Second, cond); err != nil { // 30 s: the machine may be busy
			t.Fatalf("waited in vain for %s (at %s): %v", what, b.Location(), err)
		}
	}
	count := func(sel string) int {
		return browsertest.Eval[int](b, "document.querySelectorAll("+quoteJS(sel)+").length")
	}

	// Log in: the console sends us to the form; a wrong password is refused.
	b.Do("open the console", chromedp.Navigate(base+"/console/"))
	if !strings.HasSuffix(b.Location(), "/console/login") {
		t.Fatalf("not sent to the login: %s", b.Location())
	}
	b.Screenshot("console-login.png")
	b.Do("wrong password", chromedp.SendKeys(`input[name=password]`, "not the password"), chromedp.Submit(`#login`))
	waitFor("the refusal", `document.querySelectorAll(".problem").length === 1`)
	if got := b.Text(".problem"); got != "Wrong password." {
		t.Errorf("refusal says %q", got)
	}
	b.Do("right password", chromedp.SendKeys(`input[name=password]`, password), chromedp.Submit(`#login`))
	waitFor("the start page", `location.pathname.endsWith("/console/") && document.querySelectorAll("table.costs").length === 1`)
	if got := b.Text("table.costs"); !strings.Contains(got, "$0.8618") {
		t.Errorf("cost today not shown: %q", got)
	}

	// Open the pair: picking the agents submits the form (app.js).
	pick := func(name, value string) {
		t.Helper()
		// app.js (deferred) submits on change only once the page is
		// parsed: a page still streaming its messages would ignore the pick.
		waitFor("the page to load", `document.readyState === "complete"`)
		browsertest.Eval[bool](b, `(() => { const s = document.querySelector("select[name=`+name+`]"); s.value = `+quoteJS(value)+
			`; s.dispatchEvent(new Event("change", {bubbles: true})); return true })()`)
	}
	pick("a", "alice")
	waitFor("alice's conversations", `location.href.includes("a=alice") && document.querySelectorAll("li.msg").length > 0`)
	pick("b", "bob")
	waitFor("alice and bob", `location.href.includes("b=bob") && document.querySelectorAll("li.msg").length > 0`)
	if n := count("li.msg"); n != 200 {
		t.Errorf("%d messages in the pair view, want the newest 200", n)
	}
	if count("li.msg.right") == 0 || count("li.msg.left") == 0 || count("li.day") == 0 || count("a.task") == 0 {
		t.Errorf("chat layout incomplete: right %d, left %d, day separators %d, task links %d",
			count("li.msg.right"), count("li.msg.left"), count("li.day"), count("a.task"))
	}
	b.Screenshot("console-conversation.png")

	// The planted markup is text: no dialog, no script, no image, no link.
	if d := b.Dialogs(); len(d) != 0 {
		t.Errorf("a planted script opened dialogs: %v", d)
	}
	if title := browsertest.Eval[string](b, "document.title"); strings.Contains(title, "pwned") {
		t.Errorf("a planted handler ran: title %q", title)
	}
	if n := count(".content img, .content script, .content a, .content [onerror]"); n != 0 {
		t.Errorf("%d elements were created from message content", n)
	}
	if got := b.Text("#messages"); !strings.Contains(got, "<script>alert('pwned')</script>") || !strings.Contains(got, "[U+202E]gnp.exe") {
		t.Errorf("the plants are not shown as plain text")
	}

	// Load older: the next 200 of the 234 in the pair are the oldest 34.
	b.Do("load older", chromedp.Click(`#load-older`))
	waitFor("the older page", `location.href.includes("cursor=") && document.querySelectorAll("li.msg").length > 0`)
	if n := count("li.msg"); n != 34 {
		t.Errorf("%d older messages, want 34", n)
	}

	// Search within the pair.
	b.Do("search", chromedp.Navigate(base+"/console/?a=alice&b=bob"))
	b.Do("type the words", chromedp.SendKeys(`input[name=q]`, "invoices open"), chromedp.Submit(`#filter`))
	waitFor("the results", `location.href.includes("q=invoices")`)
	if n := count("li.msg"); n == 0 || n > 60 {
		t.Errorf("%d search hits, want the messages with both words (58)", n)
	}

	// A click on a message opens its chain with costs.
	b.Do("open a chain", chromedp.Click(`li.msg .content`))
	waitFor("the chain", `location.href.includes("/console/chain?root=root-1")`)
	if got := b.Text("p.total"); !strings.Contains(got, "2 runs") || !strings.Contains(got, "$0.0536") {
		t.Errorf("chain total %q, want 2 runs and $0.0536", got)
	}
	if count("table.calls tr") < 2 {
		t.Errorf("no tool calls shown in the chain")
	}

	// The pending approval, with links to the signed confirmation page.
	b.Do("approvals", chromedp.Navigate(base+"/console/approvals"))
	if got := b.Text("#approval-q3delete h2"); got != "Alice wants Nextcloud.delete" {
		t.Errorf("approval heading %q", got)
	}
	href := browsertest.Eval[string](b, `document.querySelector("#approval-q3delete a.approve").href`)
	if !strings.HasPrefix(href, "https://approvals.example.org/approvals/q3delete?decision=approve&token=") || strings.Contains(href, "***") {
		t.Errorf("approve link %q", href)
	}
	b.Screenshot("console-approvals.png")

	b.Do("health", chromedp.Navigate(base+"/console/health"))
	if got := b.Text("ul.errors"); !strings.Contains(got, "telegram-poll") {
		t.Errorf("recent errors %q lack the failing job", got)
	}
	b.Screenshot("console-health.png")

	// A POST without its CSRF token is refused, and the session lives on.
	browsertest.Eval[bool](b, `(() => { const f = document.querySelector("form.logout"); f.querySelector("input[name=csrf]").remove(); f.submit(); return true })()`)
	waitFor("the refusal", `document.querySelectorAll("p.problem").length === 1`)
	if got := b.Text("p.problem"); !strings.Contains(got, "CSRF token missing or wrong") {
		t.Errorf("logout without a token: %q", got)
	}
	b.Do("still logged in", chromedp.Navigate(base+"/console/health"))
	if strings.HasSuffix(b.Location(), "/login") {
		t.Fatalf("a refused POST ended the session")
	}

	// The session runs out.
	e.clock.Add(12*time.Hour + time.Minute)
	b.Do("after 12 hours", chromedp.Navigate(base+"/console/approvals"))
	if !strings.HasSuffix(b.Location(), "/console/login") {
		t.Errorf("an expired session still opens pages: %s", b.Location())
	}
	if ex := b.Exceptions(); len(ex) != 0 {
		t.Errorf("uncaught JavaScript exceptions: %v", ex)
	}
	if d := b.Dialogs(); len(d) != 0 {
		t.Errorf("dialogs: %v", d)
	}
}

func quoteJS(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
