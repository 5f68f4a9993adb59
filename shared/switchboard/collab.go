package switchboard

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// What the messages agents send each other tell about where their work
// sticks: delegations that never came back and questions asked again. The
// AgentCommAnalysis tool answers these to an agent and the console shows
// them to the operator; both read a bounded page of messages first.

// DelegationOutcome is what became of one task handed to another agent.
type DelegationOutcome string

const (
	DelegationResult  DelegationOutcome = "result"  // a delivered result came back
	DelegationBlocked DelegationOutcome = "blocked" // a delivered blocker came back, and no result
	DelegationFailed  DelegationOutcome = "failed"  // the hand-over or its result was refused, failed or timed out
	DelegationFizzled DelegationOutcome = "fizzled" // no result, and older than the fizzle cut-off
	DelegationOpen    DelegationOutcome = "open"    // no result yet, younger than the cut-off
)

// Delegation is one hand-over (a task request) and its outcome.
type Delegation struct {
	Message AgentMessage // the task request
	Outcome DelegationOutcome
}

// Delegations follows every task handed to another agent (channel task,
// request) in ms to its result (channel task_result with the same task
// id, or the same root run and pair when the task has no id): a delivered
// result is a result, a delivered blocker blocked (unless a result
// followed); a refused, failed or timed-out hand-over or result is failed;
// no result and sent before fizzledBefore is fizzled; younger ones are
// still open. Only results within ms count. The order is that of ms.
func Delegations(ms []AgentMessage, fizzledBefore time.Time) []Delegation {
	key := func(m AgentMessage) string {
		if m.TaskID != "" {
			return "task:" + m.TaskID
		}
		return "root:" + m.RootRunID + "|" + PairKey(m.From, m.To)
	}
	// What the results of each delegation said: a delivered "done" (or a
	// result row without a task status, as older rows are) is a result, a
	// delivered "blocked" a blocker; an undelivered result is a failed
	// attempt at one.
	type outcome struct{ done, blocked, failed bool }
	results := map[string]*outcome{}
	for _, m := range ms {
		if m.Channel != ChannelTaskResult {
			continue
		}
		o := results[key(m)]
		if o == nil {
			o = &outcome{}
			results[key(m)] = o
		}
		switch {
		case m.Status != MessageDelivered:
			o.failed = true
		case m.TaskStatus == TaskBlocked:
			o.blocked = true
		default:
			o.done = true
		}
	}
	var out []Delegation
	for _, m := range ms {
		if m.Channel != ChannelTask || m.Direction != DirectionRequest {
			continue
		}
		d := Delegation{Message: m, Outcome: DelegationOpen}
		o := results[key(m)]
		switch {
		case m.Status != MessageDelivered:
			d.Outcome = DelegationFailed
		case o != nil && o.done:
			d.Outcome = DelegationResult
		case o != nil && o.blocked:
			d.Outcome = DelegationBlocked
		case o != nil && o.failed:
			d.Outcome = DelegationFailed
		case m.OccurredAt.Before(fizzledBefore):
			d.Outcome = DelegationFizzled
		}
		out = append(out, d)
	}
	return out
}

// RepeatedQuestion is a request one agent sent another more than once with
// the same words.
type RepeatedQuestion struct {
	From, To    string
	Channel     Channel
	Messages    []AgentMessage // in the order of ms
	First, Last time.Time
}

// RepeatedQuestions finds the requests (ask or task) one agent sent
// another more than once with the same words (SearchTerms: case,
// punctuation, stop words and repeats of a word do not matter), most
// repeated first; groups with the same count keep the order of their
// first message in ms.
func RepeatedQuestions(ms []AgentMessage) []RepeatedQuestion {
	by := map[string]*RepeatedQuestion{}
	var order []string
	for _, m := range ms {
		if m.Direction != DirectionRequest || (m.Channel != ChannelAsk && m.Channel != ChannelTask) {
			continue
		}
		norm := strings.Join(SearchTerms(m.Content, MaxTermsPerMessage), " ")
		if norm == "" {
			continue
		}
		k := m.From + "\x00" + m.To + "\x00" + norm
		g := by[k]
		if g == nil {
			g = &RepeatedQuestion{From: m.From, To: m.To, First: m.OccurredAt, Last: m.OccurredAt, Channel: m.Channel}
			by[k] = g
			order = append(order, k)
		}
		g.Messages = append(g.Messages, m)
		if m.OccurredAt.Before(g.First) {
			g.First = m.OccurredAt
		}
		if m.OccurredAt.After(g.Last) {
			g.Last = m.OccurredAt
		}
	}
	var out []RepeatedQuestion
	for _, k := range order {
		if g := by[k]; len(g.Messages) > 1 {
			out = append(out, *g)
		}
	}
	slices.SortStableFunc(out, func(x, y RepeatedQuestion) int { return cmp.Compare(len(y.Messages), len(x.Messages)) })
	return out
}
