package commtool

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

// ToolName is the name models, the config block and POST /tools/invoke use.
const ToolName = "AgentCommAnalysis"

// Bounds of the work and of the text one call answers.
const (
	// MaxAnalysed is the most messages list_pairs and stats read per call
	// (five pages of the store's largest page).
	MaxAnalysed = 5000
	// MaxCostedChains is the most chains stats asks the receipts about.
	MaxCostedChains = 20
	// DefaultRange is the time range when since is not given.
	DefaultRange = 30 * 24 * time.Hour
	// MaxRawRunes caps one message's text in raw answers; MaxRawTotal the
	// text of one whole answer (about 4,000 tokens).
	MaxRawRunes = 2000
	MaxRawTotal = 16000
	// MaxSnippetRunes caps one search hit's snippet.
	MaxSnippetRunes = 300
	// maxListed caps the rows of each list in list_pairs and stats.
	maxListed = 50
	// maxChainMessages is the most messages chain lists.
	maxChainMessages = 200
	// maxChainRuns caps the runs (receipts) chain lists.
	maxChainRuns = 100
)

// Receipts is the read half of the receipt store the tool needs.
type Receipts interface {
	ChainCost(ctx context.Context, rootRunID string) (sb.ChainCost, error)
}

// Audit is the read half of the audit store the tool needs.
type Audit interface {
	ByRoot(ctx context.Context, rootRunID string) ([]sb.AuditEntry, error)
}

// Tool is the AgentCommAnalysis tool. It is safe for concurrent use.
type Tool struct {
	messages sb.AgentMessageReader
	receipts Receipts
	audit    Audit
	permits  func(agentID string) bool
	now      func() time.Time
	log      *slog.Logger
}

var _ sb.Tool = (*Tool)(nil)

// New builds the tool on readers only. permits tells whether an agent has
// the AgentCommAnalysis block (the executor checks it too; the tool checks
// again so that it never answers an agent without one).
func New(messages sb.AgentMessageReader, receipts Receipts, audit Audit, permits func(agentID string) bool) *Tool {
	return &Tool{messages: messages, receipts: receipts, audit: audit, permits: permits, now: time.Now, log: slog.Default()}
}

// SetClock replaces the clock of default time ranges and fizzle ages (tests).
func (t *Tool) SetClock(now func() time.Time) { t.now = now }

// SetLogger replaces the logger (default slog.Default()).
func (t *Tool) SetLogger(l *slog.Logger) { t.log = l }

// The arguments of every action (see toolargs).
type (
	listPairsArgs struct {
		Agent *string `json:"agent" schema:"minLength=1,maxLength=128" doc:"only the pairs this agent is part of"`
		Since *string `json:"since" schema:"minLength=1,maxLength=40"`
		Until *string `json:"until" schema:"minLength=1,maxLength=40"`
	}
	statsArgs struct {
		Agent      *string `json:"agent" schema:"minLength=1,maxLength=128" doc:"only messages this agent sent or received"`
		A          *string `json:"a" schema:"minLength=1,maxLength=128" doc:"with b: only the pair a and b"`
		B          *string `json:"b" schema:"minLength=1,maxLength=128" doc:"with a: only the pair a and b"`
		Channel    *string `json:"channel" schema:"enum=ask|task|task_comment|task_result" doc:"only this channel"`
		Since      *string `json:"since" schema:"minLength=1,maxLength=40"`
		Until      *string `json:"until" schema:"minLength=1,maxLength=40"`
		FizzleDays *int    `json:"fizzleDays" schema:"minimum=1,maximum=90,default=7" doc:"a delegation with no result after this many days has fizzled (default 7)"`
	}
	readArgs struct {
		A      *string `json:"a" required:"true" schema:"minLength=1,maxLength=128" doc:"one agent of the pair"`
		B      *string `json:"b" required:"true" schema:"minLength=1,maxLength=128" doc:"the other agent of the pair"`
		Raw    *bool   `json:"raw" doc:"also answer the messages' text, capped and marked untrusted (default false: metadata only)"`
		Cursor *string `json:"cursor" schema:"minLength=1,maxLength=200" doc:"nextCursor of the previous page (older messages)"`
		Limit  *int    `json:"limit" schema:"minimum=1,maximum=50,default=20" doc:"messages per page, 1 to 50 (default 20)"`
		Since  *string `json:"since" schema:"minLength=1,maxLength=40"`
		Until  *string `json:"until" schema:"minLength=1,maxLength=40"`
	}
	chainArgs struct {
		RootRunID *string `json:"rootRunId" required:"true" schema:"minLength=1,maxLength=512" doc:"the chain's root run id (rootRunId of any of its messages)"`
		Raw       *bool   `json:"raw" doc:"also answer the messages' text, capped and marked untrusted (default false)"`
	}
	searchArgs struct {
		Query   *string `json:"query" required:"true" schema:"minLength=1,maxLength=200" doc:"words that must all occur (whole words, case-insensitive, at most 8)"`
		Agent   *string `json:"agent" schema:"minLength=1,maxLength=128" doc:"only messages this agent sent or received"`
		Peer    *string `json:"peer" schema:"minLength=1,maxLength=128" doc:"with agent: only the pair agent and peer"`
		Channel *string `json:"channel" schema:"enum=ask|task|task_comment|task_result" doc:"only this channel"`
		Cursor  *string `json:"cursor" schema:"minLength=1,maxLength=200" doc:"nextCursor of the previous page"`
		Limit   *int    `json:"limit" schema:"minimum=1,maximum=50,default=10" doc:"hits per page, 1 to 50 (default 10)"`
		Since   *string `json:"since" schema:"minLength=1,maxLength=40"`
		Until   *string `json:"until" schema:"minLength=1,maxLength=40"`
	}
)

var vocab = toolargs.Vocab{Docs: map[string]string{
	"since": "start of the time range, inclusive (RFC 3339, e.g. 2026-03-01T00:00:00Z); default 30 days before until",
	"until": "end of the time range, exclusive (RFC 3339); default now",
}}

// Spec describes the actions; each schema comes from its argument struct.
func (t *Tool) Spec() sb.ToolSpec {
	action := func(name, desc string, args any) sb.ActionSpec {
		return sb.ActionSpec{Name: name, Description: desc, Parameters: toolargs.Schema(args, vocab)}
	}
	return sb.ToolSpec{
		Name: ToolName,
		Description: "Read-only analysis of the messages agents send each other (questions, tasks, comments, results): " +
			"who talks with whom, where delegations fizzle or fail, what chains cost. Answers metrics; message text only " +
			"with raw: true, capped, inside <untrusted_content>. Ranges over many messages are cut at 5,000 and say so.",
		Actions: []sb.ActionSpec{
			action("list_pairs", "Who talks with whom: per pair the number of messages, first and last message, by channel and failures; "+
				"most active pairs first. The start for everything else.", listPairsArgs{}),
			action("stats", "Metrics over a time range (optionally one agent, one pair a+b, one channel): delegations (task) that "+
				"ended in a result, failed or fizzled; chain depth against failure rate; pairs that repeat the same question; "+
				"cost per chain from the run receipts; pairs where messages fail, time out or are denied. No message text.", statsArgs{}),
			action("read_conversation", "The conversation of two agents, newest first, paged with cursor: metadata per message; "+
				"with raw: true also the text (each message cut at 2,000 characters, the page at 16,000).", readArgs{}),
			action("chain", "One run chain end to end: its messages oldest first, its runs with cost, tokens and outcome, "+
				"its tool calls per run, and the total cost.", chainArgs{}),
			action("search", "Find messages containing all words of query, newest first, within since..until (default the "+
				"last 30 days): metadata and a short snippet per hit (inside <untrusted_content>). A page may hold fewer hits "+
				"than limit and still have a nextCursor: follow it until there is none.", searchArgs{}),
		},
	}
}

// actions maps action names to their handlers.
var actions = map[string]func(*invocation) (map[string]any, error){
	"list_pairs":        (*invocation).listPairs,
	"stats":             (*invocation).stats,
	"read_conversation": (*invocation).readConversation,
	"chain":             (*invocation).chain,
	"search":            (*invocation).search,
}

// invocation is one call in flight.
type invocation struct {
	t    *Tool
	ctx  context.Context
	call sb.ToolCall
	args toolargs.Args
}

// Invoke runs one action and always answers with an envelope.
func (t *Tool) Invoke(ctx context.Context, call sb.ToolCall) (env sb.Envelope) {
	op := "commtool." + call.Action
	defer func() {
		if r := recover(); r != nil {
			env = toolargs.Panicked(ctx, t.log, "commtool", call, r, op, ToolName+"."+call.Action)
		}
	}()
	run, ok := actions[call.Action]
	if !ok {
		return sb.FailErr(toolargs.UnknownAction("commtool", ToolName, call.Action, t.Spec().ActionNames()))
	}
	if t.permits == nil || !t.permits(call.AgentID) {
		return sb.FailErr(toolargs.NotConfigured(op, call.AgentID, ToolName))
	}
	c := &invocation{t: t, ctx: ctx, call: call, args: toolargs.Args{Op: op, Action: call.Action}}
	data, err := run(c)
	if err != nil {
		if sb.ErrorCode(err) == sb.EINTERNAL {
			t.log.ErrorContext(ctx, "agent message analysis failed", "err", err, "action", call.Action,
				"agent", call.AgentID, "runId", call.Run.RunID)
		}
		return sb.FailErr(err)
	}
	return sb.OK(data)
}

// decode reads the call's arguments into dst.
func (c *invocation) decode(dst any) error { return c.args.Decode(c.call.Args, dst) }

// timeRange reads since and until: until defaults to now, since to
// DefaultRange before until; the range may span at most 366 days.
func (c *invocation) timeRange(since, until *string) (time.Time, time.Time, error) {
	parse := func(name string, v *string) (time.Time, error) {
		if v == nil {
			return time.Time{}, nil
		}
		at, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(*v))
		if err != nil {
			return time.Time{}, sb.E(c.args.Op, sb.EINVALID, fmt.Sprintf(
				"argument %q is %s, which is not an RFC 3339 time; write it like 2026-03-01T00:00:00Z", name, toolargs.Quote(*v)))
		}
		return at.UTC(), nil
	}
	s, err := parse("since", since)
	if err != nil {
		return s, s, err
	}
	u, err := parse("until", until)
	if err != nil {
		return u, u, err
	}
	if u.IsZero() {
		u = c.t.now().UTC()
	}
	if s.IsZero() {
		s = u.Add(-DefaultRange)
	}
	switch {
	case !s.Before(u):
		return s, u, sb.E(c.args.Op, sb.EINVALID, "since must be before until")
	case u.Sub(s) > sb.MaxAllRange:
		return s, u, sb.E(c.args.Op, sb.EINVALID, "the time range covers at most 366 days; narrow since and until")
	}
	return s, u, nil
}

// channels turns the optional channel argument into a filter.
func channels(v *string) []sb.Channel {
	if v == nil {
		return nil
	}
	return []sb.Channel{sb.Channel(*v)}
}

// checkChannel refuses a channel outside the four (Decode leaves enums to
// the action).
func (c *invocation) checkChannel(v *string) error {
	if v != nil && !sb.Channel(*v).Valid() {
		return sb.E(c.args.Op, sb.EINVALID, fmt.Sprintf(
			"argument \"channel\" is %s; use ask, task, task_comment or task_result", toolargs.Quote(*v)))
	}
	return nil
}

// intArg is an optional integer with its default.
func intArg(v *int, def int) int {
	if v == nil {
		return def
	}
	return *v
}

// agentArg trims an optional agent id; "|" is refused (the pair separator).
func (c *invocation) agentArg(name string, v *string) (string, error) {
	if v == nil {
		return "", nil
	}
	s := strings.TrimSpace(*v)
	if s == "" || strings.Contains(s, "|") {
		return "", sb.E(c.args.Op, sb.EINVALID, fmt.Sprintf("argument %q must be an agent id (not empty, no |)", name))
	}
	return s, nil
}

// messageMeta is what metrics answers show of a message: no text.
func messageMeta(m sb.AgentMessage) map[string]any {
	meta := map[string]any{
		"id": m.ID, "at": m.OccurredAt.UTC().Format(time.RFC3339Nano), "from": m.From, "to": m.To,
		"channel": string(m.Channel), "direction": string(m.Direction), "status": string(m.Status),
		"chars": len([]rune(m.Content)), "runId": m.RunID, "rootRunId": m.RootRunID,
	}
	if m.ParentRunID != "" {
		meta["parentRunId"] = m.ParentRunID
	}
	if m.TaskID != "" {
		meta["taskId"] = m.TaskID
	}
	return meta
}

func metas(ms []sb.AgentMessage) []map[string]any {
	out := make([]map[string]any, len(ms))
	for i, m := range ms {
		out[i] = messageMeta(m)
	}
	return out
}
