package commtool

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// readConversation pages one pair's messages, newest first.
func (c *invocation) readConversation() (map[string]any, error) {
	var a readArgs
	if err := c.decode(&a); err != nil {
		return nil, err
	}
	x, err := c.requiredAgent("a", a.A)
	if err != nil {
		return nil, err
	}
	y, err := c.requiredAgent("b", a.B)
	if err != nil {
		return nil, err
	}
	q := sb.MessageQuery{Limit: intArg(a.Limit, 20), Cursor: c.args.Optional(a.Cursor)}
	if a.Since != nil || a.Until != nil {
		if q.Since, q.Until, err = c.timeRange(a.Since, a.Until); err != nil {
			return nil, err
		}
	}
	page, err := c.t.messages.Pair(c.ctx, x, y, q)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"pair": sb.PairKey(x, y), "messages": metas(page.Messages), "count": len(page.Messages)}
	if page.NextCursor != "" {
		out["nextCursor"] = page.NextCursor
	}
	if a.Raw != nil && *a.Raw {
		text, cut := renderRaw(page.Messages)
		out["content"] = untrusted.Frame("agentmessages:"+sb.PairKey(x, y), text)
		out["contentCut"] = cut
	}
	return out, nil
}

// requiredAgent is a required agent id argument.
func (c *invocation) requiredAgent(name string, v *string) (string, error) {
	if v == nil {
		return "", sb.E(c.args.Op, sb.EINVALID, fmt.Sprintf("missing argument %q; %s needs it", name, c.call.Action))
	}
	return c.agentArg(name, v)
}

// chain shows one run chain: messages oldest first, runs with costs from
// the receipts, tool calls per run from the audit.
func (c *invocation) chain() (map[string]any, error) {
	var a chainArgs
	if err := c.decode(&a); err != nil {
		return nil, err
	}
	root, err := c.args.Text("rootRunId", a.RootRunID)
	if err != nil {
		return nil, err
	}
	root = strings.TrimSpace(root)
	page, err := c.t.messages.Chain(c.ctx, root, sb.MessageQuery{OldestFirst: true, Limit: maxChainMessages})
	if err != nil {
		return nil, err
	}
	cost, err := c.t.receipts.ChainCost(c.ctx, root)
	if err != nil {
		return nil, err
	}
	entries, err := c.t.audit.ByRoot(c.ctx, root)
	if err != nil {
		return nil, err
	}
	type calls struct{ total, failed int }
	perRun := map[string]*calls{}
	for _, e := range entries {
		k := perRun[e.Run.RunID]
		if k == nil {
			k = &calls{}
			perRun[e.Run.RunID] = k
		}
		k.total++
		if e.Outcome != sb.OutcomeOK {
			k.failed++
		}
	}
	runs := []map[string]any{}
	seen := map[string]bool{}
	for _, r := range cost.Receipts {
		if len(runs) == maxChainRuns {
			break
		}
		seen[r.Run.RunID] = true
		run := map[string]any{
			"runId": r.Run.RunID, "agent": r.AgentID, "startedAt": r.StartedAt.UTC().Format(time.RFC3339Nano),
			"durationMs": r.Duration.Milliseconds(), "outcome": r.Outcome, "steps": r.Steps,
			"tokensIn": r.TokensIn, "tokensOut": r.TokensOut, "costUsd": r.CostUSD,
			"toolCalls": 0, "toolCallsNotOk": 0,
		}
		if r.Run.ParentRunID != "" {
			run["parentRunId"] = r.Run.ParentRunID
		}
		if r.Reason != "" {
			run["reason"] = r.Reason
		}
		if k := perRun[r.Run.RunID]; k != nil {
			run["toolCalls"], run["toolCallsNotOk"] = k.total, k.failed
		}
		runs = append(runs, run)
	}
	// Runs that made tool calls but wrote no receipt (still running, or
	// cut short) are shown too: the chain is not over, or lost its cost.
	var unreceipted []string
	for id := range perRun {
		if !seen[id] {
			unreceipted = append(unreceipted, id)
		}
	}
	slices.Sort(unreceipted)
	out := map[string]any{
		"rootRunId": root,
		"messages":  metas(page.Messages),
		"runs":      runs,
		"total": map[string]any{
			"runs": cost.Runs, "messages": len(page.Messages), "toolCalls": len(entries),
			"tokensIn": cost.TokensIn, "tokensOut": cost.TokensOut, "costUsd": cost.CostUSD,
		},
		"messagesComplete": page.NextCursor == "",
	}
	if len(unreceipted) > 0 {
		out["runsWithoutReceipt"] = unreceipted
	}
	if len(cost.Receipts) > maxChainRuns {
		out["runsCut"] = fmt.Sprintf("%d runs; the first %d are listed, the totals count all", len(cost.Receipts), maxChainRuns)
	}
	if a.Raw != nil && *a.Raw {
		text, cut := renderRaw(page.Messages)
		out["content"] = untrusted.Frame("agentmessages:chain "+root, text)
		out["contentCut"] = cut
	}
	return out, nil
}

// search runs the store's word search and answers snippets, framed.
func (c *invocation) search() (map[string]any, error) {
	var a searchArgs
	if err := c.decode(&a); err != nil {
		return nil, err
	}
	text, err := c.args.Text("query", a.Query)
	if err != nil {
		return nil, err
	}
	if err := c.checkChannel(a.Channel); err != nil {
		return nil, err
	}
	agent, err := c.agentArg("agent", a.Agent)
	if err != nil {
		return nil, err
	}
	peer, err := c.agentArg("peer", a.Peer)
	if err != nil {
		return nil, err
	}
	if peer != "" && agent == "" {
		return nil, sb.E(c.args.Op, sb.EINVALID, "argument \"peer\" needs \"agent\": give both to search one pair")
	}
	s := sb.MessageSearch{Text: text, Agent: agent, Peer: peer, MessageQuery: sb.MessageQuery{
		Limit: intArg(a.Limit, 10), Cursor: c.args.Optional(a.Cursor), Channels: channels(a.Channel)}}
	// Like every action, search covers DefaultRange unless since says
	// otherwise: the word index is read within the range, so its cost does
	// not grow with the store.
	if s.Since, s.Until, err = c.timeRange(a.Since, a.Until); err != nil {
		return nil, err
	}
	page, err := c.t.messages.Search(c.ctx, s)
	if err != nil {
		return nil, err
	}
	terms := sb.SearchTerms(text, 0)
	var b strings.Builder
	for i, m := range page.Messages {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(header(m))
		writeIndented(&b, snippet(m.Content, terms, MaxSnippetRunes))
	}
	out := map[string]any{"query": text, "messages": metas(page.Messages), "count": len(page.Messages),
		"snippets": untrusted.Frame("agentmessages:search", b.String())}
	if page.NextCursor != "" {
		out["nextCursor"] = page.NextCursor
	}
	return out, nil
}

// header is a message's first line in raw text and snippets: what the
// metadata says, so the text can be read on its own.
func header(m sb.AgentMessage) string {
	return fmt.Sprintf("[%s] %s → %s (%s %s, %s, messageId %s):",
		m.OccurredAt.UTC().Format("2006-01-02 15:04:05Z"), m.From, m.To, m.Channel, m.Direction, m.Status, m.ID)
}

// writeIndented writes text with every line prefixed "  | ", so that no
// line of a message can pass for a header.
func writeIndented(b *strings.Builder, text string) {
	for _, line := range strings.Split(text, "\n") {
		b.WriteString("\n  | ")
		b.WriteString(line)
	}
}

// renderRaw renders messages with their text, each cut at MaxRawRunes and
// all together at MaxRawTotal; cut reports whether anything was left out.
func renderRaw(ms []sb.AgentMessage) (text string, cut bool) {
	var b strings.Builder
	budget := MaxRawTotal
	for i, m := range ms {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(header(m))
		n := utf8.RuneCountInString(m.Content)
		switch {
		case budget == 0:
			cut = true
			writeIndented(&b, fmt.Sprintf("… (%d characters left out: this answer's text limit of %d characters is reached; "+
				"read on with a smaller limit or the cursor)", n, MaxRawTotal))
			continue
		case n > min(MaxRawRunes, budget):
			cut = true
			keep := min(MaxRawRunes, budget)
			writeIndented(&b, string([]rune(m.Content)[:keep])+fmt.Sprintf(" … (cut at %d of %d characters)", keep, n))
			budget -= keep
		default:
			writeIndented(&b, m.Content)
			budget -= n
		}
	}
	return b.String(), cut
}

// snippet is up to limit runes of content around the first query word it
// finds (case-insensitive), with "…" where it was cut.
func snippet(content string, terms []string, limit int) string {
	rs := []rune(content)
	if len(rs) <= limit {
		return content
	}
	at := 0
	lower := strings.ToLower(content)
	for _, w := range terms {
		if i := strings.Index(lower, w); i >= 0 {
			// strings.ToLower can change byte lengths; count runes of the
			// original up to the same rune position.
			at = utf8.RuneCountInString(lower[:i])
			break
		}
	}
	start := max(0, min(at-limit/3, len(rs)-limit))
	s := string(rs[start : start+limit])
	if start > 0 {
		s = "…" + s
	}
	if start+limit < len(rs) {
		s += "…"
	}
	return s
}
