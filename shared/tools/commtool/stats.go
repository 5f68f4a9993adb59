package commtool

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// scope is what list_pairs and stats read: one pair, one agent, or all.
type scope struct {
	agent, a, b  string
	since, until time.Time
	channels     []sb.Channel
}

// analysedCap is MaxAnalysed; tests lower it to reach the cut with few messages.
var analysedCap = MaxAnalysed

// gather reads the scope's messages newest first, page by page, until the
// range ends or MaxAnalysed messages are read. coverage says which part of
// the range the answer describes.
func (c *invocation) gather(s scope) ([]sb.AgentMessage, map[string]any, error) {
	q := sb.MessageQuery{Since: s.since, Until: s.until, Channels: s.channels}
	var all []sb.AgentMessage
	pages := 0
	for {
		q.Limit = min(sb.MaxMessagePage, analysedCap-len(all))
		var page sb.MessagePage
		var err error
		switch {
		case s.a != "":
			page, err = c.t.messages.Pair(c.ctx, s.a, s.b, q)
		case s.agent != "":
			page, err = c.t.messages.Agent(c.ctx, s.agent, q)
		default:
			page, err = c.t.messages.All(c.ctx, q)
		}
		if err != nil {
			return nil, nil, err
		}
		pages++
		for _, m := range page.Messages {
			all = append(all, compact(m))
		}
		if page.NextCursor == "" || len(all) >= analysedCap || pages == maxPages {
			cov := map[string]any{
				"since": s.since.Format(time.RFC3339), "until": s.until.Format(time.RFC3339),
				"messages": len(all), "pages": pages, "complete": page.NextCursor == "",
			}
			if page.NextCursor != "" && len(all) > 0 {
				oldest := all[len(all)-1].OccurredAt.UTC().Format(time.RFC3339Nano)
				cov["coveredSince"] = oldest
				cov["note"] = fmt.Sprintf("the range holds more than %d messages; this answer covers the newest %d, from %s on; "+
					"narrow since/until or the scope for the rest", analysedCap, len(all), oldest)
			}
			return all, cov, nil
		}
		q.Cursor = page.NextCursor
	}
}

// maxPages bounds the store calls of one gather when a channel filter
// makes pages come back short.
const maxPages = 10

// compact keeps of a message's text only what the statistics use — the
// words of a question or hand-over, for finding repeats — so that the
// analysed messages stay small in memory however long they were.
func compact(m sb.AgentMessage) sb.AgentMessage {
	if m.Direction == sb.DirectionRequest && (m.Channel == sb.ChannelAsk || m.Channel == sb.ChannelTask) {
		m.Content = strings.Join(sb.SearchTerms(m.Content, sb.MaxTermsPerMessage), " ")
	} else {
		m.Content = ""
	}
	return m
}

// scopeOf reads the scope arguments shared by list_pairs and stats.
func (c *invocation) scopeOf(agent, a, b, channel, since, until *string) (scope, error) {
	var s scope
	var err error
	if s.agent, err = c.agentArg("agent", agent); err != nil {
		return s, err
	}
	if s.a, err = c.agentArg("a", a); err != nil {
		return s, err
	}
	if s.b, err = c.agentArg("b", b); err != nil {
		return s, err
	}
	switch {
	case (s.a == "") != (s.b == ""):
		return s, sb.E(c.args.Op, sb.EINVALID, "give both \"a\" and \"b\" for one pair, or neither")
	case s.a != "" && s.agent != "":
		return s, sb.E(c.args.Op, sb.EINVALID, "give either \"agent\" or the pair \"a\" and \"b\", not both")
	}
	if err := c.checkChannel(channel); err != nil {
		return s, err
	}
	s.channels = channels(channel)
	s.since, s.until, err = c.timeRange(since, until)
	return s, err
}

// pairStat is one pair's counts.
type pairStat struct {
	pair              string
	messages          int
	first, last       time.Time
	byChannel         map[string]int
	failed, timeout   int
	denied, delivered int
}

func (p *pairStat) add(m sb.AgentMessage) {
	p.messages++
	if p.first.IsZero() || m.OccurredAt.Before(p.first) {
		p.first = m.OccurredAt
	}
	if m.OccurredAt.After(p.last) {
		p.last = m.OccurredAt
	}
	p.byChannel[string(m.Channel)]++
	switch m.Status {
	case sb.MessageFailed:
		p.failed++
	case sb.MessageTimeout:
		p.timeout++
	case sb.MessageDenied:
		p.denied++
	default:
		p.delivered++
	}
}

// notOK is how many of the pair's messages failed, timed out or were denied.
func (p *pairStat) notOK() int { return p.failed + p.timeout + p.denied }

// pairStats counts messages per pair, most active first.
func pairStats(ms []sb.AgentMessage) []*pairStat {
	by := map[string]*pairStat{}
	for _, m := range ms {
		key := sb.PairKey(m.From, m.To)
		p := by[key]
		if p == nil {
			p = &pairStat{pair: key, byChannel: map[string]int{}}
			by[key] = p
		}
		p.add(m)
	}
	out := make([]*pairStat, 0, len(by))
	for _, p := range by {
		out = append(out, p)
	}
	slices.SortFunc(out, func(x, y *pairStat) int {
		return cmp.Or(cmp.Compare(y.messages, x.messages), cmp.Compare(x.pair, y.pair))
	})
	return out
}

// listPairs answers who talks with whom.
func (c *invocation) listPairs() (map[string]any, error) {
	var a listPairsArgs
	if err := c.decode(&a); err != nil {
		return nil, err
	}
	s, err := c.scopeOf(a.Agent, nil, nil, nil, a.Since, a.Until)
	if err != nil {
		return nil, err
	}
	ms, cov, err := c.gather(s)
	if err != nil {
		return nil, err
	}
	stats := pairStats(ms)
	pairs := []map[string]any{}
	for _, p := range stats[:min(len(stats), maxListed)] {
		x, y, _ := strings.Cut(p.pair, "|")
		pairs = append(pairs, map[string]any{
			"pair": p.pair, "a": x, "b": y, "messages": p.messages,
			"first": p.first.UTC().Format(time.RFC3339Nano), "last": p.last.UTC().Format(time.RFC3339Nano),
			"byChannel": p.byChannel, "failed": p.failed, "timeout": p.timeout, "denied": p.denied,
		})
	}
	out := map[string]any{"pairs": pairs, "pairCount": len(stats), "coverage": cov}
	if len(stats) > maxListed {
		out["pairsCut"] = fmt.Sprintf("%d pairs; the %d most active are listed", len(stats), maxListed)
	}
	return out, nil
}

// stats answers the five questions over the scope.
func (c *invocation) stats() (map[string]any, error) {
	var a statsArgs
	if err := c.decode(&a); err != nil {
		return nil, err
	}
	s, err := c.scopeOf(a.Agent, a.A, a.B, a.Channel, a.Since, a.Until)
	if err != nil {
		return nil, err
	}
	fizzle := time.Duration(intArg(a.FizzleDays, 7)) * 24 * time.Hour
	ms, cov, err := c.gather(s)
	if err != nil {
		return nil, err
	}
	costs, err := c.chainCosts(ms)
	if err != nil {
		return nil, err
	}
	deleg := delegations(ms, c.t.now().Add(-fizzle), intArg(a.FizzleDays, 7))
	if len(s.channels) > 0 {
		deleg["note"] = "with a channel filter only messages of that channel are read: hand-overs need task and their results task_result"
	}
	return map[string]any{
		"coverage":          cov,
		"delegations":       deleg,
		"depth":             depthStats(ms),
		"repeatedQuestions": repeatedQuestions(ms),
		"chainCost":         costs,
		"hotspots":          hotspots(ms),
	}, nil
}

// delegations counts the outcomes of the hand-overs in ms
// (sb.Delegations) and lists the first fizzled ones.
func delegations(ms []sb.AgentMessage, fizzledBefore time.Time, fizzleDays int) map[string]any {
	count := map[sb.DelegationOutcome]int{}
	var fizzledTasks []string
	all := sb.Delegations(ms, fizzledBefore)
	for _, d := range all {
		count[d.Outcome]++
		if d.Outcome == sb.DelegationFizzled && len(fizzledTasks) < maxListed {
			fizzledTasks = append(fizzledTasks, cmp.Or(d.Message.TaskID, d.Message.ID))
		}
	}
	withResult := count[sb.DelegationResult]
	out := map[string]any{"total": len(all), "withResult": withResult, "blocked": count[sb.DelegationBlocked],
		"failed": count[sb.DelegationFailed], "fizzled": count[sb.DelegationFizzled], "open": count[sb.DelegationOpen],
		"fizzleDays": fizzleDays, "resultRate": rate(withResult, len(all))}
	if len(fizzledTasks) > 0 {
		out["fizzledTasks"] = fizzledTasks
	}
	return out
}

// rate is part/total rounded to three places; 0 for an empty total.
func rate(part, total int) float64 {
	if total == 0 {
		return 0
	}
	return float64(int(float64(part)/float64(total)*1000+0.5)) / 1000
}

// chainStat is what the analysed messages tell about one chain.
type chainStat struct {
	root     string
	messages int
	failed   bool
	depth    int
}

// chains groups messages by root run: the depth of a chain is the number
// of hand-overs on its longest path — a request sent by the root run is
// depth 1, one sent by a run the root run started is depth 2 — found by
// following each sending run's ParentRunID; it failed when any of its
// messages failed, timed out or was denied.
func chains(ms []sb.AgentMessage) []*chainStat {
	parent := map[string]string{}
	for _, m := range ms {
		if m.ParentRunID != "" {
			parent[m.RunID] = m.ParentRunID
		}
	}
	hops := func(run, root string) int {
		n := 0
		for run != root && n <= len(parent) {
			p, ok := parent[run]
			if !ok {
				// The parent is not among the analysed messages: count the
				// one hop that is known.
				return n + 1
			}
			run, n = p, n+1
		}
		return n
	}
	by := map[string]*chainStat{}
	for _, m := range ms {
		ch := by[m.RootRunID]
		if ch == nil {
			ch = &chainStat{root: m.RootRunID}
			by[m.RootRunID] = ch
		}
		ch.messages++
		if m.Status != sb.MessageDelivered {
			ch.failed = true
		}
		d := hops(m.RunID, m.RootRunID)
		if m.Direction == sb.DirectionRequest {
			d++
		}
		ch.depth = max(ch.depth, d)
	}
	out := make([]*chainStat, 0, len(by))
	for _, ch := range by {
		out = append(out, ch)
	}
	slices.SortFunc(out, func(x, y *chainStat) int {
		return cmp.Or(cmp.Compare(y.messages, x.messages), cmp.Compare(x.root, y.root))
	})
	return out
}

// depthStats is the failure rate of chains per depth.
func depthStats(ms []sb.AgentMessage) []map[string]any {
	type row struct{ chains, failed int }
	by := map[int]*row{}
	for _, ch := range chains(ms) {
		r := by[ch.depth]
		if r == nil {
			r = &row{}
			by[ch.depth] = r
		}
		r.chains++
		if ch.failed {
			r.failed++
		}
	}
	depths := make([]int, 0, len(by))
	for d := range by {
		depths = append(depths, d)
	}
	slices.Sort(depths)
	out := []map[string]any{}
	for _, d := range depths {
		r := by[d]
		out = append(out, map[string]any{"depth": d, "chains": r.chains, "failed": r.failed, "failureRate": rate(r.failed, r.chains)})
	}
	return out
}

// repeatedQuestions lists the requests a pair repeats
// (sb.RepeatedQuestions): only ids and counts are answered.
func repeatedQuestions(ms []sb.AgentMessage) []map[string]any {
	groups := sb.RepeatedQuestions(ms)
	out := []map[string]any{}
	for _, g := range groups[:min(len(groups), maxListed)] {
		var ids []string
		for _, m := range g.Messages[:min(len(g.Messages), 10)] {
			ids = append(ids, m.ID)
		}
		out = append(out, map[string]any{"from": g.From, "to": g.To, "channel": string(g.Channel), "times": len(g.Messages),
			"first": g.First.UTC().Format(time.RFC3339Nano), "last": g.Last.UTC().Format(time.RFC3339Nano), "messageIds": ids})
	}
	return out
}

// chainCosts sums the receipts of the chains with the most analysed
// messages, at most MaxCostedChains (one index query each).
func (c *invocation) chainCosts(ms []sb.AgentMessage) (map[string]any, error) {
	all := chains(ms)
	var total, most float64
	per := []map[string]any{}
	for _, ch := range all[:min(len(all), MaxCostedChains)] {
		cost, err := c.t.receipts.ChainCost(c.ctx, ch.root)
		if err != nil {
			return nil, err
		}
		total += cost.CostUSD
		most = max(most, cost.CostUSD)
		per = append(per, map[string]any{"rootRunId": ch.root, "messages": ch.messages, "depth": ch.depth, "failed": ch.failed,
			"runs": cost.Runs, "tokensIn": cost.TokensIn, "tokensOut": cost.TokensOut, "costUsd": cost.CostUSD})
	}
	slices.SortStableFunc(per, func(x, y map[string]any) int {
		return cmp.Compare(y["costUsd"].(float64), x["costUsd"].(float64))
	})
	out := map[string]any{"chains": len(all), "costed": len(per), "totalUsd": total, "maxUsd": most, "perChain": per}
	if len(per) > 0 {
		out["averageUsd"] = total / float64(len(per))
	}
	if len(all) > len(per) {
		out["note"] = fmt.Sprintf("%d chains; the %d with the most messages are costed", len(all), len(per))
	}
	return out, nil
}

// hotspots lists the pairs whose messages fail, time out or are denied,
// most such messages first.
func hotspots(ms []sb.AgentMessage) []map[string]any {
	stats := pairStats(ms)
	slices.SortStableFunc(stats, func(x, y *pairStat) int { return cmp.Compare(y.notOK(), x.notOK()) })
	out := []map[string]any{}
	for _, p := range stats {
		if p.notOK() == 0 || len(out) == maxListed {
			break
		}
		out = append(out, map[string]any{"pair": p.pair, "messages": p.messages, "failed": p.failed,
			"timeout": p.timeout, "denied": p.denied, "notOkRate": rate(p.notOK(), p.messages)})
	}
	return out
}
