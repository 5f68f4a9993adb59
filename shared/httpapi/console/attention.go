package console

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/safehtml"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/control"
)

// What the "Needs attention" page reads: index reads only, each bounded.
const (
	// attentionTasks is the most unfinished tasks read of each state
	// (open, open and reported by the watchdog, blocked), oldest first.
	attentionTasks = sb.MaxTaskPage
	// attentionMessages is the most agent messages analysed (newest
	// first) of the last attentionMessageDays days: two pages of the
	// all-pairs listing.
	attentionMessages    = 2 * sb.MaxMessagePage
	attentionMessageDays = 14
	// fizzleAfter is how long a hand-over waits for its result before it
	// counts as fizzled.
	fizzleAfter = 3 * 24 * time.Hour
	// attentionRunDays is how far back each agent's runs are read for the
	// chains that ended over their budget.
	attentionRunDays = 7
	// attentionListed caps every list on the page.
	attentionListed = 50
	// attentionCosted is the most over-budget chains whose spend is read
	// (one receipts query each).
	attentionCosted = 20
)

// TaskReader reads tasks (the dynamo Tasks view): the unfinished ones,
// and one by id.
type TaskReader interface {
	// Unfinished lists the tasks not done, at most limit of each state,
	// oldest first (index reads).
	Unfinished(ctx context.Context, limit int) ([]sb.Task, error)
	// Get returns a task; ENOTFOUND when there is none.
	Get(ctx context.Context, id string) (sb.Task, error)
}

type taskRow struct {
	sb.Task
	LastActivity time.Time
	LastBy       string
}

type budgetRow struct {
	Root   string
	Agents []string
	Runs   int // runs that ended on the budget
	Spent  *sb.ChainCost
	Last   time.Time
}

type attentionView struct {
	Now        time.Time
	Tasks      []taskRow
	TasksSetUp bool
	TasksCut   bool
	Paused     []Agent
	Control    bool
	OverBudget []budgetRow
	Failed     []msgView
	FailedAll  int
	Fizzled    []msgView
	Repeated   []repeatView
	// Coverage of the messages read.
	Analysed     int
	CoveredSince time.Time
	Complete     bool
}

type repeatView struct {
	sb.RepeatedQuestion
	FromName, ToName string
	Example          msgView // the newest of the repeats
}

// attention is the "Needs attention" page: where work stands still right
// now — unfinished tasks with their age and last activity, paused agents,
// chains that ran out of budget, and from the newest messages the asks that
// failed, the hand-overs that fizzled and the questions asked again.
func (c *Console) attention(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	now := c.o.Now()
	v := attentionView{Now: now, TasksSetUp: c.o.Tasks != nil, Control: c.o.Control != nil}
	if c.o.Tasks != nil {
		tasks, err := c.o.Tasks.Unfinished(ctx, attentionTasks)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		v.TasksCut = len(tasks) >= attentionTasks
		for _, t := range tasks {
			v.Tasks = append(v.Tasks, unfinishedRow(t))
		}
		// Blocked first, then the longest without activity.
		slices.SortStableFunc(v.Tasks, func(a, b taskRow) int {
			return cmp.Or(cmp.Compare(statusRank(a.Status), statusRank(b.Status)), a.LastActivity.Compare(b.LastActivity))
		})
	}
	all, err := c.runsOfAgents(ctx, c.o.Agents, now.Add(-attentionRunDays*24*time.Hour))
	if err != nil {
		c.fail(w, r, err)
		return
	}
	for i, a := range c.o.Agents {
		if c.o.Control != nil {
			paused, err := c.o.Control.Paused(ctx, a.ID)
			if err != nil {
				c.fail(w, r, err)
				return
			}
			if paused {
				v.Paused = append(v.Paused, a)
			}
		}
		v.OverBudget = addOverBudget(v.OverBudget, all[i], c.agentName)
	}
	slices.SortFunc(v.OverBudget, func(a, b budgetRow) int { return b.Last.Compare(a.Last) })
	for i := range v.OverBudget[:min(len(v.OverBudget), attentionCosted)] {
		cost, err := c.o.Reader.ChainCost(ctx, v.OverBudget[i].Root)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		v.OverBudget[i].Spent = &cost
	}
	msgs, complete, err := c.recentMessages(r, now)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	v.Analysed, v.Complete = len(msgs), complete
	if len(msgs) > 0 {
		v.CoveredSince = msgs[len(msgs)-1].OccurredAt
	}
	for _, m := range msgs {
		if m.Status != sb.MessageDelivered {
			v.FailedAll++
			if len(v.Failed) < attentionListed {
				v.Failed = append(v.Failed, c.msgRow(m))
			}
		}
	}
	for _, d := range sb.Delegations(msgs, now.Add(-fizzleAfter)) {
		if d.Outcome == sb.DelegationFizzled && len(v.Fizzled) < attentionListed {
			v.Fizzled = append(v.Fizzled, c.msgRow(d.Message))
		}
	}
	for _, g := range sb.RepeatedQuestions(msgs) {
		if len(v.Repeated) == attentionListed {
			break
		}
		v.Repeated = append(v.Repeated, repeatView{RepeatedQuestion: g, FromName: c.agentName(g.From), ToName: c.agentName(g.To),
			Example: c.msgRow(g.Messages[0])})
	}
	c.render(w, r, http.StatusOK, page{Title: "Needs attention", Nav: "attention", CSRF: s.csrf, Body: &v})
}

// recentMessages reads the newest attentionMessages messages of the last
// attentionMessageDays days (the all-pairs index, page by page); complete
// reports whether that is every message of the range.
func (c *Console) recentMessages(r *http.Request, now time.Time) ([]sb.AgentMessage, bool, error) {
	q := sb.MessageQuery{Since: now.Add(-attentionMessageDays * 24 * time.Hour), Until: now.Add(time.Minute), Limit: sb.MaxMessagePage}
	var out []sb.AgentMessage
	for {
		page, err := c.o.Reader.All(r.Context(), q)
		if err != nil {
			return nil, false, err
		}
		out = append(out, page.Messages...)
		if page.NextCursor == "" {
			return out, true, nil
		}
		if len(out) >= attentionMessages {
			return out[:attentionMessages], false, nil
		}
		q.Cursor = page.NextCursor
	}
}

// msgRow is a message as the attention page lists it, with its chain.
func (c *Console) msgRow(m sb.AgentMessage) msgView {
	return msgView{AgentMessage: m, FromName: c.agentName(m.From), ToName: c.agentName(m.To), ChainURL: chainURL(m.RootRunID)}
}

// unfinishedRow is a task with its last activity: its last comment, or
// its last change.
func unfinishedRow(t sb.Task) taskRow {
	row := taskRow{Task: t, LastActivity: t.UpdatedAt, LastBy: t.Creator}
	if t.Status == sb.TaskBlocked {
		row.LastBy = t.Assignee
	}
	if n := len(t.Comments); n > 0 && !t.Comments[n-1].At.Before(row.LastActivity) {
		row.LastActivity, row.LastBy = t.Comments[n-1].At, t.Comments[n-1].By
	}
	if row.LastActivity.IsZero() {
		row.LastActivity = t.CreatedAt
	}
	return row
}

func statusRank(s sb.TaskStatus) int {
	if s == sb.TaskBlocked {
		return 0
	}
	return 1
}

// addOverBudget adds the chains of runs that ended on their chain budget.
func addOverBudget(rows []budgetRow, runs []sb.Receipt, name func(string) string) []budgetRow {
	for _, rc := range runs {
		if rc.Outcome != control.ReasonChainBudget {
			continue
		}
		root := cmp.Or(rc.Run.RootRunID, rc.Run.RunID)
		i := slices.IndexFunc(rows, func(b budgetRow) bool { return b.Root == root })
		if i < 0 {
			if len(rows) == attentionListed {
				continue
			}
			rows = append(rows, budgetRow{Root: root})
			i = len(rows) - 1
		}
		b := &rows[i]
		b.Runs++
		if rc.StartedAt.After(b.Last) {
			b.Last = rc.StartedAt
		}
		if n := name(rc.AgentID); !slices.Contains(b.Agents, n) {
			b.Agents = append(b.Agents, n)
		}
	}
	return rows
}

// chainURL is the console page of a chain.
func chainURL(root string) safehtml.URL {
	return safehtml.Path("/console/chain", url.Values{"root": {root}})
}

// ago is how long before now t was, to the minute (or the hour after two
// days).
// taskCells opens t's table row and writes its cells up to the last
// activity, leaving that cell open: the task with its title, who handed it
// to whom, its status now (and blocker), its age and its last activity.
func taskCells(w *safehtml.Writer, t taskRow, now time.Time) {
	w.M("<tr")
	w.Attr("class", "task-"+string(t.Status))
	w.M("><td><span class=\"id\">")
	w.Text(t.ID)
	w.M("</span> ")
	text(w, t.Title)
	w.M("</td><td>")
	w.Texts(t.Creator, " → ", t.Assignee)
	w.M("</td><td><span")
	w.Attr("class", "badge status-"+string(t.Status))
	w.M(">")
	w.Text(string(t.Status))
	w.M("</span>")
	if t.Blocker != "" {
		w.M(" ")
		text(w, t.Blocker)
	}
	w.M("</td><td>")
	w.Text(ago(now, t.CreatedAt))
	w.M("</td><td>")
	w.Texts(ago(now, t.LastActivity), " by ", t.LastBy)
}

func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return "–"
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return itoa(int(d/time.Minute)) + " min ago"
	case d < 48*time.Hour:
		return itoa(int(d/time.Hour)) + " h " + itoa(int(d%time.Hour/time.Minute)) + " min ago"
	}
	return itoa(int(d/(24*time.Hour))) + " d " + itoa(int(d%(24*time.Hour)/time.Hour)) + " h ago"
}

func (v *attentionView) write(w *safehtml.Writer) {
	w.M("<h1>Needs attention</h1>\n<p class=\"hint\" id=\"bounds\">Index reads only: the unfinished tasks (the oldest ")
	w.Text(itoa(attentionTasks))
	w.M(" of each state), each agent's runs of the last ")
	w.Text(itoa(attentionRunDays))
	w.M(" days, and the newest ")
	w.Text(itoa(attentionMessages))
	w.M(" agent messages of the last ")
	w.Text(itoa(attentionMessageDays))
	w.M(" days")
	if v.Analysed > 0 {
		w.Texts(" (", itoa(v.Analysed), " read")
		if !v.Complete {
			w.Texts(", back to ", stamp(v.CoveredSince), "; older ones are not looked at")
		}
		w.M(")")
	}
	w.M(". A hand-over counts as fizzled after ")
	w.Text(itoa(int(fizzleAfter / time.Hour)))
	w.M(" hours without a result.</p>\n")

	w.M("<h2 id=\"tasks\">Open and blocked tasks</h2>\n")
	switch {
	case !v.TasksSetUp:
		w.M("<p class=\"empty\">The task board is not set up on this console.</p>\n")
	case len(v.Tasks) == 0:
		w.M("<p class=\"ok\">No task is open or blocked.</p>\n")
	default:
		if v.TasksCut {
			w.M("<p class=\"hint\">More tasks are unfinished than listed; these are the oldest.</p>\n")
		}
		w.M("<table class=\"tasks\"><thead><tr><th>Task</th><th>From → to</th><th>Status</th><th>Age</th><th>Last activity</th><th></th></tr></thead><tbody>\n")
		for _, t := range v.Tasks {
			taskCells(w, t, v.Now)
			w.M("</td><td><a")
			w.Href("href", chainURL(t.Run.RootRunID))
			w.M(">chain</a></td></tr>\n")
		}
		w.M("</tbody></table>\n")
	}

	w.M("<h2 id=\"paused\">Paused agents</h2>\n")
	switch {
	case !v.Control:
		w.M("<p class=\"empty\">Pausing is not set up on this console.</p>\n")
	case len(v.Paused) == 0:
		w.M("<p class=\"ok\">No agent is paused.</p>\n")
	default:
		w.M("<ul class=\"paused\">")
		for _, a := range v.Paused {
			w.M("<li>")
			w.Texts(a.Name, " (", a.ID, ") starts no runs; its wakes wait. ")
			w.M("<a class=\"control\"")
			w.Href("href", controlLink("resume", "agent", a.ID))
			w.M(">resume</a></li>")
		}
		w.M("</ul>\n")
	}

	w.M("<h2 id=\"budget\">Chains over budget</h2>\n")
	if len(v.OverBudget) == 0 {
		w.M("<p class=\"ok\">No run ended on its chain budget in the last ")
		w.Text(itoa(attentionRunDays))
		w.M(" days.</p>\n")
	} else {
		w.M("<table class=\"budget\"><thead><tr><th>Chain</th><th>Agents</th><th>Runs stopped</th><th>Spent</th><th>Last</th></tr></thead><tbody>\n")
		for _, b := range v.OverBudget {
			w.M("<tr><td><a")
			w.Href("href", chainURL(b.Root))
			w.M(">")
			w.Text(b.Root)
			w.M("</a></td><td>")
			for i, a := range b.Agents {
				if i > 0 {
					w.M(", ")
				}
				w.Text(a)
			}
			w.M("</td>")
			w.El("td", itoa(b.Runs))
			w.M("<td>")
			if b.Spent != nil {
				w.Text(usd(b.Spent.CostUSD))
			}
			w.M("</td>")
			w.El("td", ago(v.Now, b.Last))
			w.M("</tr>\n")
		}
		w.M("</tbody></table>\n")
	}

	w.M("<h2 id=\"failed\">Asks and hand-overs that failed, timed out or were refused</h2>\n")
	if v.FailedAll == 0 {
		w.M("<p class=\"ok\">None among the messages read.</p>\n")
	} else {
		if v.FailedAll > len(v.Failed) {
			w.M("<p class=\"hint\">")
			w.Texts(itoa(v.FailedAll), " in all; the newest ", itoa(len(v.Failed)), " are listed.")
			w.M("</p>\n")
		}
		writeMsgTable(w, v.Now, v.Failed, true)
	}

	w.M("<h2 id=\"fizzled\">Hand-overs that fizzled</h2>\n")
	if len(v.Fizzled) == 0 {
		w.M("<p class=\"ok\">None among the messages read.</p>\n")
	} else {
		writeMsgTable(w, v.Now, v.Fizzled, false)
	}

	w.M("<h2 id=\"repeated\">Questions asked again</h2>\n")
	if len(v.Repeated) == 0 {
		w.M("<p class=\"ok\">None among the messages read.</p>\n")
		return
	}
	w.M("<table class=\"repeated\"><thead><tr><th>From → to</th><th>Times</th><th>First · last</th><th>Question</th><th></th></tr></thead><tbody>\n")
	for _, g := range v.Repeated {
		w.M("<tr><td>")
		w.Texts(g.FromName, " → ", g.ToName)
		w.M("</td>")
		w.El("td", itoa(len(g.Messages)))
		w.M("<td>")
		w.Texts(stamp(g.First), " · ", ago(v.Now, g.Last))
		w.M("</td><td class=\"content\">")
		text(w, snip(g.Example.Content, 200))
		w.M("</td><td><a")
		w.Href("href", g.Example.ChainURL)
		w.M(">chain</a></td></tr>\n")
	}
	w.M("</tbody></table>\n")
}

// writeMsgTable lists messages with their chain links; withStatus adds
// each one's status and reason.
func writeMsgTable(w *safehtml.Writer, now time.Time, ms []msgView, withStatus bool) {
	w.M("<table class=\"msgs\"><thead><tr><th>When</th><th>From → to</th><th>Channel</th>")
	if withStatus {
		w.M("<th>Status</th>")
	}
	w.M("<th>Message</th><th></th></tr></thead><tbody>\n")
	for _, m := range ms {
		w.M("<tr>")
		w.El("td", ago(now, m.OccurredAt))
		w.M("<td>")
		w.Texts(m.FromName, " → ", m.ToName)
		w.M("</td><td><span")
		w.Attr("class", "badge ch-"+string(m.Channel))
		w.M(">")
		w.Text(string(m.Channel))
		w.M("</span>")
		if m.TaskID != "" {
			w.Texts(" ", m.TaskID)
		}
		w.M("</td>")
		if withStatus {
			w.M("<td><span class=\"badge warn\">")
			w.Text(string(m.Status))
			w.M("</span>")
			if m.Reason != "" {
				w.M(" ")
				text(w, m.Reason)
			}
			w.M("</td>")
		}
		w.M("<td class=\"content\">")
		text(w, snip(m.Content, 200))
		w.M("</td><td><a")
		w.Href("href", m.ChainURL)
		w.M(">chain</a></td></tr>\n")
	}
	w.M("</tbody></table>\n")
}

// snip shortens s to at most n characters.
func snip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
