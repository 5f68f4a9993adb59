package console

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/platform/safehtml"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

// agentName is an agent's display name, or its id.
func (c *Console) agentName(id string) string {
	for _, a := range c.o.Agents {
		if a.ID == id && a.Name != "" {
			return a.Name
		}
	}
	return id
}

// --- conversations --------------------------------------------------------

type msgView struct {
	sb.AgentMessage
	Right    bool   // sent by agent A
	Day      string // set on the first message of a day: the separator
	FromName string
	ToName   string
	ChainURL safehtml.URL
	TaskURL  safehtml.URL
	TaskNow  sb.TaskStatus // the task's current status, when it was read
}

type agentCost struct {
	Agent
	SpentUSD float64
	Paused   bool // the operator paused it
	Control  bool // the console can pause and resume it
}

type convView struct {
	Agents   []Agent
	Channels []sb.Channel
	A, B     string
	AName    string
	BName    string
	All      bool
	From, To string
	Q        string
	Checked  map[sb.Channel]bool
	Messages []msgView
	OlderURL safehtml.URL
	Shown    bool // a conversation was asked for
	Costs    []agentCost
	Spends   []agentSpend // the last 30 days, per agent
	FirstDay time.Time    // the first of the 30 days
	Problem  string
}

// DefaultSearchRange is how far back a search without a start date looks:
// the search index is read within the time range, so a bound keeps every
// search's cost independent of how many messages the store holds.
const DefaultSearchRange = 30 * 24 * time.Hour

var allChannels = []sb.Channel{sb.ChannelAsk, sb.ChannelTask, sb.ChannelTaskComment, sb.ChannelTaskResult}

// conversations is the start page: pick agent A and B (or all of A's
// partners), a time range, channels and search words; the newest 200
// messages, "load older" for the next 200. Without a pick it shows each
// agent's cost today against its daily budget.
func (c *Console) conversations(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	qv := r.URL.Query()
	v := convView{Agents: c.o.Agents, Channels: allChannels, Checked: map[sb.Channel]bool{},
		A: qv.Get("a"), B: qv.Get("b"), From: qv.Get("from"), To: qv.Get("to"), Q: strings.TrimSpace(qv.Get("q"))}
	v.All = v.B == "" || v.B == "all"
	v.AName, v.BName = c.agentName(v.A), c.agentName(v.B)
	q := sb.MessageQuery{Limit: MaxPage, Cursor: qv.Get("cursor")}
	for _, ch := range qv["ch"] {
		if sb.Channel(ch).Valid() {
			q.Channels = append(q.Channels, sb.Channel(ch))
			v.Checked[sb.Channel(ch)] = true
		}
	}
	var err error
	if q.Since, err = day(v.From, 0); err != nil {
		v.Problem = "The start date must look like 2026-12-31."
	}
	if q.Until, err = day(v.To, 24*time.Hour); err != nil {
		v.Problem = "The end date must look like 2026-12-31."
	}
	if v.A == "" && v.Q == "" {
		c.agentCosts(w, r, s, &v)
		return
	}
	if v.Q != "" && v.From == "" && v.Problem == "" {
		// A search without a start date covers the last DefaultSearchRange
		// (whole days), shown in the form so that it can be widened.
		q.Since = c.o.Now().UTC().Truncate(24 * time.Hour).Add(-DefaultSearchRange)
		v.From = q.Since.Format("2006-01-02")
	}
	v.Shown = true
	var res sb.MessagePage
	if v.Problem == "" {
		switch {
		case v.Q != "":
			sq := sb.MessageSearch{Text: v.Q, Agent: v.A, MessageQuery: q}
			if !v.All {
				sq.Peer = v.B
			}
			res, err = c.o.Reader.Search(ctx, sq)
		case v.All:
			res, err = c.o.Reader.Agent(ctx, v.A, q)
		default:
			res, err = c.o.Reader.Pair(ctx, v.A, v.B, q)
		}
		if sb.ErrorCode(err) == sb.EINVALID {
			v.Problem, err = sb.ErrorMessage(err), nil
		}
		if err != nil {
			c.fail(w, r, err)
			return
		}
	}
	// The store answers newest first; a chat reads oldest first.
	msgs := slices.Clone(res.Messages)
	slices.Reverse(msgs)
	lastDay := ""
	for _, m := range msgs {
		mv := msgView{AgentMessage: m, Right: m.From == v.A, FromName: c.agentName(m.From), ToName: c.agentName(m.To),
			ChainURL: safehtml.Path("/console/chain", url.Values{"root": {m.RootRunID}})}
		if d := m.OccurredAt.UTC().Format("Monday, 2 January 2006"); d != lastDay {
			mv.Day, lastDay = d, d
		}
		if m.TaskID != "" {
			// Tasks have no page of their own yet: the link finds every
			// message that names the task.
			mv.TaskURL = safehtml.Path("/console/", url.Values{"q": {m.TaskID}})
		}
		v.Messages = append(v.Messages, mv)
	}
	if res.NextCursor != "" {
		older := r.URL.Query()
		older.Set("cursor", res.NextCursor)
		v.OlderURL = safehtml.Path("/console/", older)
	}
	c.render(w, r, http.StatusOK, page{Title: "Conversations", Nav: "conversations", CSRF: s.csrf, Body: &v})
}

// day parses a date (UTC) and adds offset; "" is the zero time.
func day(s string, offset time.Duration) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return time.Time{}, err
	}
	return t.Add(offset), nil
}

// agentCosts fills in each agent's spend since midnight UTC (the day the
// daily budget counts) and renders the start page.
func (c *Console) agentCosts(w http.ResponseWriter, r *http.Request, s *session, v *convView) {
	today := c.o.Now().UTC().Truncate(24 * time.Hour)
	v.FirstDay = today.AddDate(0, 0, 1-costDays)
	// One query per agent: its runs of the last 30 days give both today's
	// spend and the chart.
	all, err := c.runsOfAgents(r.Context(), c.o.Agents, v.FirstDay)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	for i, a := range c.o.Agents {
		runs := all[i]
		sp := agentSpend{Name: cmp.Or(a.Name, a.ID)}
		spent := 0.0
		for _, rc := range runs {
			d := int(rc.StartedAt.UTC().Sub(v.FirstDay) / (24 * time.Hour))
			if d < 0 || d >= costDays {
				continue
			}
			sp.Days[d] += rc.CostUSD
			sp.Total += rc.CostUSD
			if d == costDays-1 {
				spent += rc.CostUSD
			}
		}
		v.Spends = append(v.Spends, sp)
		row := agentCost{Agent: a, SpentUSD: spent, Control: c.o.Control != nil}
		if row.Control {
			if row.Paused, err = c.o.Control.Paused(r.Context(), a.ID); err != nil {
				c.fail(w, r, err)
				return
			}
		}
		v.Costs = append(v.Costs, row)
	}
	c.render(w, r, http.StatusOK, page{Title: "Conversations", Nav: "conversations", CSRF: s.csrf, Body: v})
}

// --- chain ----------------------------------------------------------------

type runView struct {
	sb.Receipt
	AgentName string
	Calls     []sb.AuditEntry
	Messages  []msgView
	// Unfinished are the tasks the run handed out that are still open or
	// blocked: the run "answered", its work goes on.
	Unfinished []sb.Task
}

type chainView struct {
	Root      string
	Now       time.Time
	Cost      sb.ChainCost
	Runs      []runView
	Unbilled  runView // calls and messages of runs without a receipt (still running, or crashed)
	HasOthers bool
	Control   bool // the console can stop the chain
	Tasks     []taskRow
	TasksCut  bool // the chain names more tasks than are looked up
	Timeline  timeline
}

// chainTasks is the most tasks of one chain whose current state the chain
// page reads (one GetItem each).
const chainTasks = 20

// chain shows one run chain end to end: every run with its cost, its tool
// calls (the audit entries) and the messages it sent, and the total.
func (c *Console) chain(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	root := r.URL.Query().Get("root")
	if root == "" {
		c.fail(w, r, sb.E("console.chain", sb.EINVALID, "Give a chain: /console/chain?root=<root run id>."))
		return
	}
	cost, err := c.o.Reader.ChainCost(ctx, root)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	audit, err := c.o.Reader.ByRoot(ctx, root)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	msgs, err := c.o.Reader.Chain(ctx, root, sb.MessageQuery{Limit: sb.MaxMessagePage, OldestFirst: true})
	if err != nil {
		c.fail(w, r, err)
		return
	}
	if cost.Runs == 0 && len(audit) == 0 && len(msgs.Messages) == 0 {
		c.fail(w, r, sb.E("console.chain", sb.ENOTFOUND, "No run chain has the root run id "+root+
			"; open a chain from Conversations, or use the rootRunId a run answered."))
		return
	}
	v := chainView{Root: root, Now: c.o.Now(), Cost: cost, Control: c.o.Control != nil}
	tasks, cut, err := c.tasksOf(r, msgs.Messages)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	v.TasksCut = cut
	for _, t := range tasks {
		v.Tasks = append(v.Tasks, unfinishedRow(t))
	}
	index := map[string]int{}
	for _, rc := range cost.Receipts {
		index[rc.Run.RunID] = len(v.Runs)
		rv := runView{Receipt: rc, AgentName: c.agentName(rc.AgentID)}
		for _, t := range tasks {
			if t.Run.RunID == rc.Run.RunID && t.Status != sb.TaskDone {
				rv.Unfinished = append(rv.Unfinished, t)
			}
		}
		v.Runs = append(v.Runs, rv)
	}
	runOf := func(runID string) *runView {
		if i, ok := index[runID]; ok {
			return &v.Runs[i]
		}
		v.HasOthers = true
		return &v.Unbilled
	}
	for _, e := range audit {
		rv := runOf(e.Run.RunID)
		// The audit masked the arguments when it wrote them; an entry
		// written before that (or by an older version) is masked here.
		e.Args = c.showArgs(json.RawMessage(e.Args))
		rv.Calls = append(rv.Calls, e)
	}
	status := map[string]sb.TaskStatus{}
	for _, t := range tasks {
		status[t.ID] = t.Status
	}
	for _, m := range msgs.Messages {
		rv := runOf(m.RunID)
		mv := msgView{AgentMessage: m, FromName: c.agentName(m.From), ToName: c.agentName(m.To), TaskNow: status[m.TaskID]}
		rv.Messages = append(rv.Messages, mv)
	}
	v.Timeline = c.chainTimeline(cost.Receipts, msgs.Messages)
	c.render(w, r, http.StatusOK, page{Title: "Chain " + root, Nav: "conversations", CSRF: s.csrf, Body: &v})
}

// tasksOf reads the current state of the tasks the messages name, at most
// chainTasks of them; cut reports that there were more. A task that is
// gone (deleted, or another instance's) is left out.
func (c *Console) tasksOf(r *http.Request, msgs []sb.AgentMessage) (tasks []sb.Task, cut bool, err error) {
	if c.o.Tasks == nil {
		return nil, false, nil
	}
	var ids []string
	for _, m := range msgs {
		if m.TaskID == "" || slices.Contains(ids, m.TaskID) {
			continue
		}
		if len(ids) == chainTasks {
			cut = true
			break
		}
		ids = append(ids, m.TaskID)
	}
	for _, id := range ids {
		t, err := c.o.Tasks.Get(r.Context(), id)
		if sb.ErrorCode(err) == sb.ENOTFOUND {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		tasks = append(tasks, t)
	}
	return tasks, cut, nil
}

// --- approvals ------------------------------------------------------------

type approvalView struct {
	sb.Approval
	AgentName  string
	ArgsText   string
	ApproveURL string
	DenyURL    string
	Left       string
}

type approvalsView struct {
	SetUp      bool
	Approvals  []approvalView
	Allowances []allowanceView
	CSRF       string
	Revoked    string // the allowance just revoked, to confirm it
}

type allowanceView struct {
	sb.Allowance
	AgentName, Where, Left string
}

// approvals lists what waits for a human, earliest expiry first, with the
// signed links to the confirmation page (the same page Telegram links to:
// the decision is a POST there, with the link's token).
func (c *Console) approvals(w http.ResponseWriter, r *http.Request, s *session) {
	v := approvalsView{SetUp: c.o.Approvals != nil, CSRF: s.csrf}
	if id := r.URL.Query().Get("revoked"); sb.ValidApprovalID(id) {
		v.Revoked = id
	}
	if c.o.Allowances != nil {
		list, err := c.o.Allowances.List(r.Context(), c.o.Now())
		if err != nil {
			c.fail(w, r, err)
			return
		}
		for _, a := range list {
			v.Allowances = append(v.Allowances, allowanceView{Allowance: a, AgentName: c.agentName(a.AgentID),
				Where: approvals.DescribeScope(a.Scope), Left: a.ExpiresAt.Sub(c.o.Now()).Round(time.Minute).String()})
		}
	}
	if c.o.Approvals != nil {
		open, err := c.o.Approvals.ListOpen(r.Context())
		if err != nil {
			c.fail(w, r, err)
			return
		}
		now := c.o.Now()
		for _, a := range open {
			av := approvalView{Approval: a, AgentName: c.agentName(a.AgentID), ArgsText: c.showArgs(a.Args),
				Left: a.ExpiresAt.Sub(now).Round(time.Minute).String()}
			if a.Status == sb.ApprovalPending && c.o.ApprovalLink != nil && a.ExpiresAt.After(now) {
				av.ApproveURL = c.o.ApprovalLink(a, "approve")
				av.DenyURL = c.o.ApprovalLink(a, "deny")
				// The tokens were minted for the operator reading this
				// page; the answer's scrubbing would mask them.
				httpapi.AllowInAnswer(r, linkToken(av.ApproveURL), linkToken(av.DenyURL))
			}
			v.Approvals = append(v.Approvals, av)
		}
	}
	c.render(w, r, http.StatusOK, page{Title: "Approvals", Nav: "approvals", CSRF: s.csrf, Body: &v})
}

// revokeAllowance ends one allowance (form field "revoke": its id) and
// audits it as revoked by the console; then the approvals page again.
func (c *Console) revokeAllowance(w http.ResponseWriter, r *http.Request, _ *session) {
	if c.o.Allowances == nil {
		c.fail(w, r, sb.E("console.revoke", sb.ENOTFOUND, "allowances are not set up on this instance"))
		return
	}
	id := r.PostFormValue("revoke")
	al, err := approvals.RevokeAllowance(r.Context(), c.o.Allowances, c.o.Audit, id, "console", c.o.Now())
	if err != nil && al.ID == "" {
		c.fail(w, r, err)
		return
	}
	if err != nil {
		c.o.Log.ErrorContext(r.Context(), "allowance revoked, audit entry missing", "allowanceId", al.ID, "err", err)
	}
	c.o.Log.InfoContext(r.Context(), "allowance revoked from the console", "allowanceId", al.ID, "agent", al.AgentID,
		"tool", al.Tool, "action", al.Action, "scope", al.Scope)
	http.Redirect(w, r, "/console/approvals?revoked="+url.QueryEscape(al.ID), http.StatusSeeOther)
}

// linkToken is the token parameter of a link.
func linkToken(link string) string {
	u, err := url.Parse(link)
	if err != nil {
		return ""
	}
	return u.Query().Get("token")
}

// showArgs is how the console shows tool-call arguments: as every other
// place shows them to people (approvals.ShowArgs), secrets masked before
// the page escapes them.
func (c *Console) showArgs(args json.RawMessage) string {
	return approvals.ShowArgs(c.o.Scrubber, args)
}

// --- health ---------------------------------------------------------------

type jobView struct {
	Job
	Run   *sb.JobRun
	Error bool
}

type rcHealth struct {
	Known    bool
	Failures int       `json:"failures"`
	Since    time.Time `json:"since"`
	Notified bool      `json:"notified"`
	Version  string    `json:"version"`
}

type healthView struct {
	Jobs   []jobView
	Errors []sb.JobRun
	RC     rcHealth
}

// health shows the last run of every scheduled job, Rocket.Chat's
// reachability as the health job last saw it, and the jobs whose last run
// failed.
func (c *Console) health(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	runs, err := c.o.Reader.LastRuns(ctx)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	v := healthView{}
	byName := map[string]sb.JobRun{}
	for _, run := range runs {
		byName[run.Job] = run
		if run.Outcome == "error" {
			v.Errors = append(v.Errors, run)
		}
	}
	slices.SortFunc(v.Errors, func(a, b sb.JobRun) int { return b.StartedAt.Compare(a.StartedAt) })
	for _, j := range c.o.Jobs {
		jv := jobView{Job: j}
		if run, ok := byName[j.Name]; ok {
			jv.Run, jv.Error = &run, run.Outcome == "error"
		}
		v.Jobs = append(v.Jobs, jv)
	}
	if c.o.Health != nil && c.o.HealthKey != "" {
		raw, found, err := c.o.Health.Get(ctx, c.o.HealthKey)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		if found && json.Unmarshal([]byte(raw), &v.RC) == nil {
			v.RC.Known = true
		}
	}
	c.render(w, r, http.StatusOK, page{Title: "Health", Nav: "health", CSRF: s.csrf, Body: &v})
}
