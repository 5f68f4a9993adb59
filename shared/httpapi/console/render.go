package console

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/safehtml"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// The pages are written with safehtml rather than html/template: the
// template engine's reflection keeps every exported method of every type
// in the binary, which put the console's zip over the size limit. The
// writer escapes every value and takes markup only from constants.

// page is one console page: the frame (title, tabs, logout form) around a
// body.
type page struct {
	Title string
	Nav   string // the active tab
	CSRF  string // the logout form's token; "" on the login page
	Body  body
}

// body is a page's main part.
type body interface {
	write(w *safehtml.Writer)
}

// render writes a page with its frame.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, p page) {
	var b safehtml.Writer
	p.write(&b)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, b.String())
}

func (p page) write(w *safehtml.Writer) {
	w.M("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>")
	w.Text(p.Title)
	w.M(" · Switchboard console</title>\n" +
		"<link rel=\"stylesheet\" href=\"/console/app.css\">\n" +
		"<script src=\"/console/app.js\" defer></script>\n" +
		"</head>\n<body>\n<header>\n<strong class=\"brand\">Switchboard</strong>\n")
	if p.CSRF != "" {
		w.M("<nav>\n<a href=\"/console/\"")
		p.active("conversations", w)
		w.M(">Conversations</a>\n<a href=\"/console/attention\"")
		p.active("attention", w)
		w.M(">Needs attention</a>\n<a href=\"/console/approvals\"")
		p.active("approvals", w)
		w.M(">Approvals</a>\n<a href=\"/console/health\"")
		p.active("health", w)
		w.M(">Health</a>\n</nav>\n" +
			`<form method="post" action="/console/logout" class="logout"><input type="hidden" name="csrf"`)
		w.Attr("value", p.CSRF)
		w.M(`><button type="submit">Log out</button></form>`)
	}
	w.M("\n</header>\n<main>\n")
	if p.Body != nil {
		p.Body.write(w)
	}
	w.M("\n</main>\n</body>\n</html>\n")
}

// active marks the tab of the page.
func (p page) active(tab string, w *safehtml.Writer) {
	if p.Nav == tab {
		w.M(` class="active"`)
	}
}

// bidiControls are the characters that reorder text on screen; shown as
// themselves they could make a message read differently from what it
// says, so the console shows their code points instead.
var bidiControls = strings.NewReplacer(
	"\u202a", "[U+202A]", "\u202b", "[U+202B]", "\u202c", "[U+202C]", "\u202d", "[U+202D]", "\u202e", "[U+202E]",
	"\u2066", "[U+2066]", "\u2067", "[U+2067]", "\u2068", "[U+2068]", "\u2069", "[U+2069]",
	"\u200e", "[U+200E]", "\u200f", "[U+200F]", "\u061c", "[U+061C]",
)

// text writes what agents, tools and servers wrote: escaped, with the
// bidi controls neutralised.
func text(w *safehtml.Writer, s string) { w.Text(bidiControls.Replace(s)) }

func clock(t time.Time) string { return t.UTC().Format("15:04:05") }

func stamp(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func usd(v float64) string       { return fmt.Sprintf("$%.4f", v) }
func dur(d time.Duration) string { return d.Round(time.Millisecond).String() }
func itoa(n int) string          { return strconv.Itoa(n) }
func pct(spent, budget float64) int {
	if budget <= 0 {
		return 0
	}
	return min(100, int(spent/budget*100))
}

// --- login and errors -----------------------------------------------------

func (v loginView) write(w *safehtml.Writer) {
	w.M("<section class=\"login\">\n<h1>Log in</h1>\n")
	if v.Problem != "" {
		w.M(`<p class="problem" role="alert">`)
		w.Text(v.Problem)
		w.M("</p>\n")
	}
	w.M("<form method=\"post\" action=\"/console/login\" id=\"login\">\n<input type=\"hidden\" name=\"csrf\"")
	w.Attr("value", v.CSRF)
	w.M(">\n<label>Console password <input type=\"password\" name=\"password\" autocomplete=\"current-password\" autofocus required></label>\n" +
		"<button type=\"submit\">Log in</button>\n</form>\n</section>")
}

// errorView is the body of a refusal or failure page.
type errorView struct{ Title, Message string }

func (v errorView) write(w *safehtml.Writer) {
	w.El("h1", v.Title)
	w.M("\n<p class=\"problem\" role=\"alert\">")
	w.Text(v.Message)
	w.M("</p>\n<p><a href=\"/console/\">Back to the console</a></p>")
}

// --- conversations --------------------------------------------------------

func (v *convView) write(w *safehtml.Writer) {
	w.M("<form method=\"get\" action=\"/console/\" class=\"filter\" id=\"filter\">\n" +
		"<label>Agent A <select name=\"a\" class=\"autosubmit\">\n<option value=\"\">–</option>\n")
	v.agentOptions(w, v.A)
	w.M("</select></label>\n<label>Agent B <select name=\"b\" class=\"autosubmit\">\n<option value=\"all\">all partners</option>\n")
	v.agentOptions(w, v.B)
	w.M("</select></label>\n<label>From <input type=\"date\" name=\"from\"")
	w.Attr("value", v.From)
	w.M("></label>\n<label>To <input type=\"date\" name=\"to\"")
	w.Attr("value", v.To)
	w.M("></label>\n<fieldset class=\"channels\"><legend>Channels</legend>\n")
	for _, ch := range v.Channels {
		w.M(`<label><input type="checkbox" name="ch"`)
		w.Attr("value", string(ch))
		if v.Checked[ch] {
			w.M(" checked")
		}
		w.M("> ")
		w.Text(string(ch))
		w.M("</label>")
	}
	w.M("\n</fieldset>\n<label class=\"search\">Search <input type=\"search\" name=\"q\"")
	w.Attr("value", v.Q)
	w.M(" placeholder=\"words in the messages\"></label>\n<button type=\"submit\">Show</button>\n</form>\n")
	if v.Problem != "" {
		w.M(`<p class="problem" role="alert">`)
		w.Text(v.Problem)
		w.M("</p>\n")
	}
	if v.Shown {
		v.writeMessages(w)
	} else {
		v.writeCosts(w)
	}
}

func (v *convView) agentOptions(w *safehtml.Writer, selected string) {
	for _, a := range v.Agents {
		w.M("<option")
		w.Attr("value", a.ID)
		if a.ID == selected {
			w.M(" selected")
		}
		w.M(">")
		w.Texts(a.Name, " (", a.ID, ")")
		w.M("</option>")
	}
	w.M("\n")
}

func (v *convView) writeMessages(w *safehtml.Writer) {
	w.M("<h1>")
	switch {
	case v.A != "":
		w.Text(v.AName)
	default:
		w.M("All agents")
	}
	switch {
	case !v.All:
		w.Texts(" and ", v.BName)
	case v.A != "":
		w.M(" with all partners")
	}
	if v.Q != "" {
		w.Texts(" · “", v.Q, "”")
	}
	w.M("</h1>\n")
	if v.OlderURL != (safehtml.URL{}) {
		w.M(`<p class="older"><a`)
		w.Href("href", v.OlderURL)
		w.M(" id=\"load-older\">Load older</a></p>\n")
	}
	if len(v.Messages) == 0 {
		w.M("<p class=\"empty\">No messages.</p>\n")
	}
	w.M("<ol class=\"chat\" id=\"messages\">")
	for _, m := range v.Messages {
		if m.Day != "" {
			w.M(`<li class="day">`)
			w.El("span", m.Day)
			w.M("</li>")
		}
		side := "left"
		if m.Right {
			side = "right"
		}
		w.M("\n<li")
		w.Attr("class", "msg "+side+" status-"+string(m.Status))
		w.Href("data-href", m.ChainURL)
		w.M(">\n<div class=\"meta\"><span class=\"who\">")
		w.Texts(m.FromName, " → ", m.ToName)
		w.M("</span>\n<span")
		w.Attr("class", "badge ch-"+string(m.Channel))
		w.M(">")
		w.Text(string(m.Channel))
		w.M("</span>")
		if m.Direction == "response" {
			w.M(` <span class="badge">answer</span>`)
		}
		w.M("\n")
		if m.Status != "delivered" {
			w.M(`<span class="badge warn">`)
			w.Text(string(m.Status))
			w.M("</span>\n")
		}
		if m.TaskID != "" {
			w.M(`<a class="task"`)
			w.Href("href", m.TaskURL)
			w.M(">task ")
			w.Text(m.TaskID)
			w.M("</a>\n")
		}
		w.M("<time")
		w.Attr("datetime", stamp(m.OccurredAt))
		w.M(">")
		w.Text(clock(m.OccurredAt))
		w.M("</time>\n<a class=\"chainlink\"")
		w.Href("href", m.ChainURL)
		w.M(">chain</a></div>\n")
		if m.Reason != "" {
			w.M("<div class=\"reason\">")
			text(w, m.Reason)
			w.M("</div>")
		}
		w.M("<div class=\"content\">")
		text(w, m.Content)
		w.M("</div>\n</li>")
	}
	w.M("\n</ol>")
}

func (v *convView) writeCosts(w *safehtml.Writer) {
	w.M("<h1>Cost today</h1>\n<p class=\"hint\">Spent since midnight UTC against each agent's daily budget. Pick agent A above to read its conversations.</p>\n" +
		"<table class=\"costs\"><thead><tr><th>Agent</th><th>Spent today</th><th>Daily budget</th><th></th><th>State</th></tr></thead><tbody>\n")
	for _, a := range v.Costs {
		w.M("<tr><td><a")
		w.Href("href", safehtml.Path("/console/", url.Values{"a": {a.ID}}))
		w.M(">")
		w.Text(a.Name)
		w.M(`</a> <span class="id">`)
		w.Text(a.ID)
		w.M("</span></td>")
		w.El("td", usd(a.SpentUSD))
		w.M("\n<td>")
		if a.DailyBudgetUSD > 0 {
			w.Text(usd(a.DailyBudgetUSD))
		} else {
			w.M("no limit")
		}
		w.M("</td>\n<td>")
		if a.DailyBudgetUSD > 0 {
			p := itoa(pct(a.SpentUSD, a.DailyBudgetUSD))
			w.M(`<meter min="0" max="100"`)
			w.Attr("value", p)
			w.M(">")
			w.Texts(p, " %")
			w.M("</meter>")
		}
		w.M("</td>\n<td>")
		if a.Paused {
			w.M("paused ")
		}
		if a.Control {
			action := "pause"
			if a.Paused {
				action = "resume"
			}
			w.M("<a class=\"control\"")
			w.Href("href", controlLink(action, "agent", a.ID))
			w.M(">")
			w.Text(action)
			w.M("</a>")
		}
		w.M("</td></tr>")
	}
	w.M("\n</tbody></table>\n")
	writeCostChart(w, v.Spends, v.FirstDay)
	w.M("<p class=\"hint\"><a href=\"/console/attention\">Needs attention</a>: unfinished tasks, failed asks, fizzled hand-overs, repeated questions, chains over budget and paused agents.</p>")
}

// --- chain ----------------------------------------------------------------

func (v *chainView) write(w *safehtml.Writer) {
	w.M("<h1>Run chain <code>")
	w.Text(v.Root)
	w.M("</code></h1>\n<p class=\"total\">")
	w.Texts(itoa(v.Cost.Runs), " runs · ", itoa(v.Cost.TokensIn), " tokens in · ", itoa(v.Cost.TokensOut), " tokens out · total ")
	w.El("strong", usd(v.Cost.CostUSD))
	w.M("</p>\n")
	if v.Control {
		w.M("<p><a class=\"control\"")
		w.Href("href", controlLink("stop", "root", v.Root))
		w.M(">Stop this chain</a></p>\n")
	}
	v.Timeline.write(w)
	if len(v.Tasks) > 0 {
		w.M("<h2>Tasks</h2>\n<table class=\"tasks\"><thead><tr><th>Task</th><th>From → to</th><th>Status now</th><th>Age</th><th>Last activity</th></tr></thead><tbody>\n")
		for _, t := range v.Tasks {
			taskCells(w, t, v.Now)
			w.M("</td></tr>\n")
		}
		w.M("</tbody></table>\n")
		if v.TasksCut {
			w.M("<p class=\"hint\">The chain names more tasks; the first ones are shown.</p>\n")
		}
	}
	for i := range v.Runs {
		rv := &v.Runs[i]
		w.M("<section class=\"run\">\n<h2>")
		w.Text(rv.AgentName)
		w.M(` <span class="id">`)
		w.Text(rv.Run.RunID)
		w.M("</span></h2>\n<p class=\"runmeta\">started ")
		w.Texts(stamp(rv.StartedAt), " · ", dur(rv.Duration), " · ", rv.Model, " · ", itoa(rv.Steps), " steps · ",
			itoa(rv.TokensIn), "/", itoa(rv.TokensOut), " tokens · ")
		w.El("strong", usd(rv.CostUSD))
		w.M(" · <span class=\"outcome\">")
		w.Text(rv.Outcome)
		if rv.Reason != "" {
			w.Texts(" (", rv.Reason, ")")
		}
		for _, t := range rv.Unfinished {
			// The run ended; the task it handed out did not.
			w.M("; its task ")
			w.Text(t.ID)
			w.M(" is still <span")
			w.Attr("class", "badge status-"+string(t.Status))
			w.M(">")
			w.Text(string(t.Status))
			w.M("</span>")
		}
		w.M("</span></p>\n")
		rv.writeCalls(w)
		w.M("\n</section>\n")
	}
	if v.HasOthers {
		w.M("<section class=\"run\"><h2>Runs without a receipt (still running or ended without one)</h2>")
		v.Unbilled.writeCalls(w)
		w.M("</section>")
	}
}

// writeCalls writes a run's tool calls and the messages it sent.
func (rv *runView) writeCalls(w *safehtml.Writer) {
	if len(rv.Calls) > 0 {
		w.M("<table class=\"calls\"><thead><tr><th>Time</th><th>Tool call</th><th>Arguments</th><th>Decision</th><th>Outcome</th></tr></thead><tbody>\n")
		for _, e := range rv.Calls {
			w.M("<tr>")
			w.El("td", clock(e.At))
			w.M("<td>")
			w.Texts(e.Tool, ".", e.Action)
			w.M("</td><td><pre>")
			text(w, e.Args)
			w.M("</pre></td><td>")
			w.Text(string(e.Decision))
			if e.ApprovalID != "" {
				w.Texts(" · approval ", e.ApprovalID)
			}
			w.M("</td>\n<td>")
			w.Text(e.Outcome)
			if e.Error != "" {
				w.M(": ")
				text(w, e.Error)
			}
			w.Texts(" · ", dur(e.Duration))
			w.M("</td></tr>")
		}
		w.M("\n</tbody></table>")
	}
	if len(rv.Messages) > 0 {
		w.M("\n<ol class=\"chat\">")
		for _, m := range rv.Messages {
			w.M("<li")
			w.Attr("class", "msg left status-"+string(m.Status))
			w.M("><div class=\"meta\"><span class=\"who\">")
			w.Texts(m.FromName, " → ", m.ToName)
			w.M("</span> <span")
			w.Attr("class", "badge ch-"+string(m.Channel))
			w.M(">")
			w.Text(string(m.Channel))
			w.M("</span> ")
			if m.Direction == sb.DirectionResponse {
				w.M(`<span class="badge">answer</span> `)
			}
			w.M("<span")
			if m.Status == sb.MessageDelivered {
				w.Attr("class", "badge status")
			} else {
				w.Attr("class", "badge warn status")
			}
			w.M(">")
			w.Text(string(m.Status))
			w.M("</span> ")
			if m.TaskID != "" {
				w.M("<span class=\"task\">task ")
				w.Text(m.TaskID)
				if m.TaskNow != "" {
					w.M(" <span")
					w.Attr("class", "badge status-"+string(m.TaskNow))
					w.M(">now ")
					w.Text(string(m.TaskNow))
					w.M("</span>")
				}
				w.M("</span> ")
			}
			w.El("time", clock(m.OccurredAt))
			w.M("</div>")
			if m.Reason != "" {
				w.M("<div class=\"reason\">")
				text(w, m.Reason)
				w.M("</div>")
			}
			w.M("<div class=\"content\">")
			text(w, m.Content)
			w.M("</div></li>")
		}
		w.M("</ol>")
	}
}

// --- approvals ------------------------------------------------------------

func (v *approvalsView) write(w *safehtml.Writer) {
	w.M("<h1>Approvals waiting</h1>\n")
	if !v.SetUp {
		w.M("<p class=\"problem\">Approvals are not set up (instance.approvals.signingKey and instance.publicBaseUrl).</p>\n")
	}
	if len(v.Approvals) == 0 {
		w.M("<p class=\"empty\">Nothing waits for a decision.</p>\n")
	}
	for _, a := range v.Approvals {
		w.M("<section class=\"approval\"")
		w.Attr("id", "approval-"+a.ID)
		w.M(">\n<h2>")
		w.Text(a.AgentName)
		w.M(" wants <code>")
		w.Texts(a.Tool, ".", a.Action)
		w.M("</code></h2>\n<p class=\"why\">")
		if a.Reason != "" {
			text(w, a.Reason)
		} else {
			w.M("No reason given.")
		}
		w.M("</p>\n<pre class=\"args\">")
		text(w, a.ArgsText)
		w.M("</pre>\n<p class=\"runmeta\">asked ")
		w.Texts(stamp(a.CreatedAt), " · expires ", stamp(a.ExpiresAt), " (in ", a.Left, ") · ", string(a.Status), " · ")
		w.M("<a")
		w.Href("href", safehtml.Path("/console/chain", url.Values{"root": {a.Run.RootRunID}}))
		w.M(">chain</a></p>\n")
		if a.ApproveURL != "" {
			w.M(`<p class="decide"><a class="approve"`)
			w.Href("href", safehtml.Link(a.ApproveURL))
			w.M(` target="_blank" rel="noopener noreferrer">Approve…</a> <a class="deny"`)
			w.Href("href", safehtml.Link(a.DenyURL))
			w.M(" target=\"_blank\" rel=\"noopener noreferrer\">Deny…</a></p>\n")
		}
		w.M("</section>\n")
	}
	v.writeAllowances(w)
}

// writeAllowances lists the active allowances, each with a revoke form.
func (v *approvalsView) writeAllowances(w *safehtml.Writer) {
	w.M("<h1 id=\"allowances\">Allowances</h1>\n")
	if v.Revoked != "" {
		w.M("<p class=\"notice\">Allowance ")
		w.Text(v.Revoked)
		w.M(" is revoked: the next such call asks again.</p>\n")
	}
	if len(v.Allowances) == 0 {
		w.M("<p class=\"empty\">No allowance is active. An approver grants one with \u201cApprove, and allow\u201d on an approval page.</p>\n")
		return
	}
	w.M("<table class=\"allowances\">\n<tr><th>Agent</th><th>Action</th><th>Where</th><th>Granted by</th><th>Expires</th><th></th></tr>\n")
	for _, a := range v.Allowances {
		w.M("<tr")
		w.Attr("id", "allowance-"+a.ID)
		w.M("><td>")
		w.Text(a.AgentName)
		w.M("</td><td><code>")
		w.Texts(a.Tool, ".", a.Action)
		w.M("</code></td><td>")
		w.Text(a.Where)
		w.M("</td><td>")
		w.Texts(a.GrantedBy, " (approval ", a.ApprovalID, ") · ")
		w.M("<a")
		w.Href("href", safehtml.Path("/console/chain", url.Values{"root": {a.Run.RootRunID}}))
		w.M(">chain</a></td><td>")
		w.Texts(stamp(a.ExpiresAt), " (in ", a.Left, ")")
		w.M("</td><td><form method=\"post\" action=\"/console/approvals\"><input type=\"hidden\" name=\"csrf\"")
		w.Attr("value", v.CSRF)
		w.M("><input type=\"hidden\" name=\"revoke\"")
		w.Attr("value", a.ID)
		w.M("><button type=\"submit\">Revoke</button></form></td></tr>\n")
	}
	w.M("</table>\n")
}

// --- health ---------------------------------------------------------------

func (v *healthView) write(w *safehtml.Writer) {
	w.M("<h1>Health</h1>\n<h2>Rocket.Chat</h2>\n")
	switch {
	case !v.RC.Known:
		w.M(`<p class="empty">The health job has not run yet.</p>`)
	case v.RC.Failures == 0:
		w.M(`<p class="ok">reachable`)
		if v.RC.Version != "" {
			w.Texts(" (version ", v.RC.Version, ")")
		}
		w.M("</p>")
	default:
		w.M(`<p class="problem">unreachable: `)
		w.Texts(itoa(v.RC.Failures), " failed checks in a row since ", stamp(v.RC.Since))
		if v.RC.Notified {
			w.M("; the human was told")
		}
		w.M("</p>")
	}
	w.M("\n<h2>Scheduled jobs</h2>\n" +
		"<table class=\"jobs\"><thead><tr><th>Job</th><th>Schedule</th><th>Last run</th><th>Took</th><th>Outcome</th><th>Detail</th></tr></thead><tbody>\n")
	for _, j := range v.Jobs {
		w.M("<tr")
		if j.Error {
			w.M(` class="error"`)
		}
		w.M("><td")
		w.Attr("title", j.Description)
		w.M(">")
		w.Text(j.Name)
		w.M("</td>")
		w.El("td", j.Schedule)
		w.M("\n")
		if j.Run != nil {
			w.El("td", stamp(j.Run.StartedAt))
			w.El("td", dur(j.Run.Duration))
			w.El("td", j.Run.Outcome)
			w.M("<td>")
			text(w, j.Run.Detail)
			w.M("</td>")
		} else {
			w.M(`<td colspan="4">never ran</td>`)
		}
		w.M("</tr>")
	}
	w.M("\n</tbody></table>\n<h2>Recent errors</h2>\n")
	if len(v.Errors) == 0 {
		w.M("<p class=\"ok\">No job's last run failed.</p>\n")
	}
	w.M(`<ul class="errors">`)
	for _, e := range v.Errors {
		w.M("<li>")
		w.El("strong", e.Job)
		w.Texts(" at ", stamp(e.StartedAt), ": ")
		text(w, e.Detail)
		w.M("</li>")
	}
	w.M("</ul>")
}
