package console

import (
	"slices"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/safehtml"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// The chain's timeline and the landing page's cost chart are inline SVG
// drawn on the server (safehtml: every text escaped, every number a
// number), styled by app.css: no script, no library.

// Bounds of the chain timeline: a chain of more runs or messages shows its
// first ones (and says so).
const (
	timelineRuns     = 200
	timelineMessages = 400
)

// Drawing units of the timeline (the SVG scales to the page's width).
const (
	tlWidth  = 960.0
	tlLabel  = 130.0 // the agents' names on the left
	tlRight  = 70.0  // room for the last cost label
	tlLane   = 44.0
	tlTop    = 26.0
	tlBar    = 16.0
	tlMinBar = 4.0
)

type tlRun struct {
	Lane       int
	Start, End time.Time
	CostUSD    float64
	Title      string
	Bad        bool // it ended without an answer
}

type tlArrow struct {
	From, To int
	At       time.Time
	Channel  sb.Channel
	Response bool
	Bad      bool // not delivered
	Title    string
}

// timeline is one chain drawn: one lane per agent, its runs as bars with
// their cost, its asks and tasks as arrows from the sender's lane to the
// recipient's.
type timeline struct {
	Lanes      []string // agent names
	Runs       []tlRun
	Arrows     []tlArrow
	Start, End time.Time
	Cut        bool
	// The time axis, with long waits cut short: the times something
	// happened, sorted, and where each lies on the compressed axis
	// (seconds); breaks are the waits that were cut.
	times  []time.Time
	pos    []float64
	breaks []tlBreak
}

// tlBreak is a wait cut short on the time axis: it is drawn maxGap long.
type tlBreak struct {
	At   float64 // the middle of the cut wait, on the compressed axis
	Real time.Duration
}

// A wait between two events longer than this (or than the longest run,
// if that is longer) is drawn as this long, with a break mark saying how
// long it was: a chain that waited days for a task's result still shows
// its runs.
const tlMaxGap = 2 * time.Minute

// chainTimeline lays out a chain's receipts and messages.
func (c *Console) chainTimeline(receipts []sb.Receipt, msgs []sb.AgentMessage) timeline {
	var tl timeline
	var ids []string
	lane := func(agent string) int {
		if i := slices.Index(ids, agent); i >= 0 {
			return i
		}
		ids = append(ids, agent)
		tl.Lanes = append(tl.Lanes, c.agentName(agent))
		return len(ids) - 1
	}
	span := func(t time.Time) {
		if tl.Start.IsZero() || t.Before(tl.Start) {
			tl.Start = t
		}
		if t.After(tl.End) {
			tl.End = t
		}
	}
	for i, rc := range receipts {
		if i == timelineRuns {
			tl.Cut = true
			break
		}
		end := rc.StartedAt.Add(rc.Duration)
		r := tlRun{Lane: lane(rc.AgentID), Start: rc.StartedAt, End: end, CostUSD: rc.CostUSD, Bad: rc.Outcome != "answered",
			Title: c.agentName(rc.AgentID) + " · run " + rc.Run.RunID + " · " + rc.Outcome + " · " + usd(rc.CostUSD) + " · " + dur(rc.Duration)}
		tl.Runs = append(tl.Runs, r)
		span(rc.StartedAt)
		span(end)
	}
	for i, m := range msgs {
		if i == timelineMessages {
			tl.Cut = true
			break
		}
		title := c.agentName(m.From) + " → " + c.agentName(m.To) + " · " + string(m.Channel) + " · " + string(m.Status)
		if m.TaskID != "" {
			title += " · task " + m.TaskID
		}
		if m.Reason != "" {
			title += " · " + m.Reason
		}
		tl.Arrows = append(tl.Arrows, tlArrow{From: lane(m.From), To: lane(m.To), At: m.OccurredAt, Channel: m.Channel,
			Response: m.Direction == sb.DirectionResponse, Bad: m.Status != sb.MessageDelivered, Title: title})
		span(m.OccurredAt)
	}
	tl.axis()
	return tl
}

// axis places every event time on the compressed axis.
func (tl *timeline) axis() {
	maxGap := tlMaxGap
	for _, r := range tl.Runs {
		tl.times = append(tl.times, r.Start, r.End)
		maxGap = max(maxGap, r.End.Sub(r.Start))
	}
	for _, a := range tl.Arrows {
		tl.times = append(tl.times, a.At)
	}
	slices.SortFunc(tl.times, func(a, b time.Time) int { return a.Compare(b) })
	tl.times = slices.CompactFunc(tl.times, func(a, b time.Time) bool { return a.Equal(b) })
	tl.pos = make([]float64, len(tl.times))
	for i := 1; i < len(tl.times); i++ {
		gap := tl.times[i].Sub(tl.times[i-1])
		drawn := min(gap, maxGap)
		if gap > maxGap {
			tl.breaks = append(tl.breaks, tlBreak{At: tl.pos[i-1] + drawn.Seconds()/2, Real: gap})
		}
		tl.pos[i] = tl.pos[i-1] + drawn.Seconds()
	}
}

// x is where t lies on the time axis: t is one of the event times, or
// between two of them.
func (tl *timeline) x(t time.Time) float64 {
	if len(tl.pos) == 0 || tl.pos[len(tl.pos)-1] <= 0 {
		return tlLabel
	}
	i, found := slices.BinarySearchFunc(tl.times, t, func(a, b time.Time) int { return a.Compare(b) })
	var p float64
	switch {
	case found:
		p = tl.pos[i]
	case i == 0:
		p = 0
	case i == len(tl.times):
		p = tl.pos[len(tl.pos)-1]
	default:
		frac := float64(t.Sub(tl.times[i-1])) / float64(tl.times[i].Sub(tl.times[i-1]))
		p = tl.pos[i-1] + frac*(tl.pos[i]-tl.pos[i-1])
	}
	return tlLabel + tl.xs(p)
}

// xs is the width of s seconds of the compressed axis.
func (tl *timeline) xs(s float64) float64 {
	return s / tl.pos[len(tl.pos)-1] * (tlWidth - tlLabel - tlRight)
}

// waitText is a cut wait's length, roughly.
func waitText(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return itoa(int(d/(24*time.Hour))) + " d"
	case d >= 2*time.Hour:
		return itoa(int(d/time.Hour)) + " h"
	}
	return itoa(int(d/time.Minute)) + " min"
}

func laneY(i int) float64 { return tlTop + float64(i)*tlLane }

// laneClass colours an agent's lane (six colours, then again).
var laneClass = []string{"l0", "l1", "l2", "l3", "l4", "l5"}

func (tl *timeline) write(w *safehtml.Writer) {
	if len(tl.Lanes) == 0 {
		return
	}
	height := laneY(len(tl.Lanes)) + 22 // and a row for the waits' labels
	w.M("<figure class=\"timeline\" id=\"timeline\">\n<svg role=\"img\" aria-label=\"The chain's runs and messages over time\" xmlns=\"http://www.w3.org/2000/svg\"")
	w.Attr("viewBox", "0 0 960 "+itoa(int(height)))
	w.M(">\n<defs><marker id=\"arrowhead\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">" +
		"<path d=\"M0,0 L10,5 L0,10 z\" class=\"head\"/></marker></defs>\n")
	// The time axis: start and end.
	w.M("<text class=\"axis\" y=\"14\"")
	w.Num("x", tlLabel)
	w.M(">")
	w.Text(stamp(tl.Start))
	w.M("</text><text class=\"axis end\" y=\"14\"")
	w.Num("x", tlWidth-tlRight)
	w.M(">")
	w.Text(clock(tl.End) + " (" + dur(tl.End.Sub(tl.Start)) + ")")
	w.M("</text>\n")
	for i, name := range tl.Lanes {
		y := laneY(i)
		w.M("<g")
		w.Attr("class", "lane "+laneClass[i%len(laneClass)])
		w.M("><line class=\"track\"")
		w.Num("x1", tlLabel)
		w.Num("x2", tlWidth-tlRight)
		w.Num("y1", y+tlLane/2)
		w.Num("y2", y+tlLane/2)
		w.M("/><text class=\"name\" x=\"4\"")
		w.Num("y", y+tlLane/2+4)
		w.M(">")
		w.Text(snip(name, 18))
		w.M("</text></g>\n")
	}
	lastLabel := -100.0
	for _, b := range tl.breaks {
		x := tlLabel + tl.xs(b.At)
		w.M("<g class=\"break\"><line")
		w.Num("x1", x)
		w.Num("x2", x)
		w.Num("y1", tlTop)
		w.Num("y2", height-16)
		w.M("/>")
		if x-lastLabel >= 60 { // a label only where it has room
			lastLabel = x
			w.M("<text")
			w.Num("x", x)
			w.Num("y", height-4)
			w.M(">")
			w.Texts("⋯ ", waitText(b.Real), " ⋯")
			w.M("</text>")
		}
		w.M("<title>")
		w.Texts("a wait of ", dur(b.Real.Round(time.Second)), ", cut short")
		w.M("</title></g>\n")
	}
	for _, r := range tl.Runs {
		x0, x1 := tl.x(r.Start), tl.x(r.End)
		y := laneY(r.Lane) + (tlLane-tlBar)/2
		cls := "run " + laneClass[r.Lane%len(laneClass)]
		if r.Bad {
			cls += " bad"
		}
		w.M("<g")
		w.Attr("class", cls)
		w.M("><rect rx=\"3\"")
		w.Num("x", x0)
		w.Num("y", y)
		w.Num("width", max(tlMinBar, x1-x0))
		w.Num("height", tlBar)
		w.M("><title>")
		text(w, r.Title)
		w.M("</title></rect><text class=\"cost\"")
		w.Num("x", x0)
		w.Num("y", y-2)
		w.M(">")
		w.Text(usd(r.CostUSD))
		w.M("</text></g>\n")
	}
	for _, a := range tl.Arrows {
		x := tl.x(a.At)
		y0, y1 := laneY(a.From)+tlLane/2, laneY(a.To)+tlLane/2
		if a.From == a.To { // a message to oneself: a short loop down
			y1 = y0 + tlLane/2 - 2
		} else if y1 > y0 {
			y1 -= tlBar / 2
		} else {
			y1 += tlBar / 2
		}
		cls := "arrow ch-" + string(a.Channel)
		if a.Response {
			cls += " response"
		}
		if a.Bad {
			cls += " bad"
		}
		w.M("<line")
		w.Attr("class", cls)
		w.Num("x1", x)
		w.Num("x2", x)
		w.Num("y1", y0)
		w.Num("y2", y1)
		w.M(" marker-end=\"url(#arrowhead)\"><title>")
		text(w, a.Title)
		w.M("</title></line>\n")
	}
	w.M("</svg>\n<figcaption>One lane per agent: runs as bars with their cost, messages as arrows from sender to recipient " +
		"(<span class=\"key ask\">ask</span>, <span class=\"key task\">task</span>, <span class=\"key result\">comment or result</span>, " +
		"dashed: an answer, <span class=\"key bad\">red: not delivered</span>). Waits longer than the longest run (at least two minutes) are cut short, marked ⋯ with their length. Hover for details.")
	if tl.Cut {
		w.M(" The chain is longer than drawn: the first ")
		w.Texts(itoa(timelineRuns), " runs and ", itoa(timelineMessages), " messages are.")
	}
	w.M("</figcaption>\n</figure>\n")
}

// costDays is the span of the landing page's cost chart.
const costDays = 30

// agentSpend is one agent's cost over the last costDays days, per day
// (index 0 the oldest, costDays-1 today, UTC).
type agentSpend struct {
	Name  string
	Days  [costDays]float64
	Total float64
}

// writeCostChart draws each agent's cost of the last 30 days: a bar of its
// total and, beside it, its days as small columns.
func writeCostChart(w *safehtml.Writer, spends []agentSpend, firstDay time.Time) {
	if len(spends) == 0 {
		return
	}
	most, mostDay := 0.0, 0.0
	for _, s := range spends {
		most = max(most, s.Total)
		for _, d := range s.Days {
			mostDay = max(mostDay, d)
		}
	}
	const (
		rowH   = 26.0
		labelW = 130.0
		barW   = 360.0
		daysX  = 600.0
		dayW   = 10.0
	)
	height := rowH*float64(len(spends)) + 22
	w.M("<h2 id=\"cost30\">Cost per agent, last 30 days</h2>\n<figure class=\"costchart\">\n" +
		"<svg role=\"img\" aria-label=\"Cost per agent over the last 30 days\" xmlns=\"http://www.w3.org/2000/svg\"")
	w.Attr("viewBox", "0 0 960 "+itoa(int(height)))
	w.M(">\n<text class=\"axis\" y=\"12\"")
	w.Num("x", daysX)
	w.M(">")
	w.Texts("per day, ", firstDay.Format("2 Jan"), " – today")
	w.M("</text>\n")
	for i, s := range spends {
		y := 20 + rowH*float64(i)
		w.M("<g")
		w.Attr("class", "agent "+laneClass[i%len(laneClass)])
		w.M("><text class=\"name\" x=\"4\"")
		w.Num("y", y+14)
		w.M(">")
		w.Text(snip(s.Name, 18))
		w.M("</text><rect class=\"total\" rx=\"2\"")
		w.Num("x", labelW)
		w.Num("y", y+3)
		w.Num("width", max(1, scale(s.Total, most)*barW))
		w.M(" height=\"14\"><title>")
		w.Texts(s.Name, ": ", usd(s.Total), " in 30 days")
		w.M("</title></rect><text class=\"value\"")
		w.Num("x", labelW+max(1, scale(s.Total, most)*barW)+6)
		w.Num("y", y+14)
		w.M(">")
		w.Text(usd(s.Total))
		w.M("</text>\n")
		for d, v := range s.Days {
			h := scale(v, mostDay) * 18
			w.M("<rect class=\"day\"")
			w.Num("x", daysX+float64(d)*(dayW+2))
			w.Num("y", y+20-max(h, 0.5))
			w.Num("width", dayW)
			w.Num("height", max(h, 0.5))
			w.M("><title>")
			w.Texts(firstDay.AddDate(0, 0, d).Format("Mon 2 Jan"), ": ", usd(v))
			w.M("</title></rect>")
		}
		w.M("</g>\n")
	}
	w.M("</svg>\n</figure>\n")
}

// scale is v as a share of most (0 when most is 0).
func scale(v, most float64) float64 {
	if most <= 0 {
		return 0
	}
	return v / most
}
