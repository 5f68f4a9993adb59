package switchboard

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Channel is the way an agent-to-agent message travelled.
type Channel string

const (
	ChannelAsk         Channel = "ask"          // a short question and its answer (ask_agent)
	ChannelTask        Channel = "task"         // a task handed to another agent
	ChannelTaskComment Channel = "task_comment" // a comment on a task, either way
	ChannelTaskResult  Channel = "task_result"  // a task's result or blocker, back to its creator
)

// Valid reports whether c is one of the four channels.
func (c Channel) Valid() bool {
	return c == ChannelAsk || c == ChannelTask || c == ChannelTaskComment || c == ChannelTaskResult
}

// Direction says whether a message asks or answers.
type Direction string

const (
	DirectionRequest  Direction = "request"
	DirectionResponse Direction = "response"
)

// Valid reports whether d is request or response.
func (d Direction) Valid() bool { return d == DirectionRequest || d == DirectionResponse }

// MessageStatus is what became of a message. Refused and timed-out messages
// are recorded too: for finding where collaboration sticks they say more
// than the delivered ones.
type MessageStatus string

const (
	MessageDelivered MessageStatus = "delivered"
	MessageFailed    MessageStatus = "failed"
	MessageTimeout   MessageStatus = "timeout"
	MessageDenied    MessageStatus = "denied"
)

// Valid reports whether s is one of the four statuses.
func (s MessageStatus) Valid() bool {
	return s == MessageDelivered || s == MessageFailed || s == MessageTimeout || s == MessageDenied
}

// MaxMessageContent bounds one message's content (16 MiB): far beyond any
// model answer, small enough to hold in memory while it is indexed.
const MaxMessageContent = 16 << 20

// AgentMessage is one message that crossed the boundary between two agents,
// as the core saw it. Each direction is its own message (a question and its
// answer are two), and a message to several agents is one message per
// recipient, so every message belongs to exactly one pair.
type AgentMessage struct {
	// ID identifies the message; unique per message (fan-out rows get one
	// each). NewID makes a sortable one.
	ID string `json:"id"`
	// PairKey is the two agent ids sorted and joined by "|"; stores set it
	// from From and To, so callers may leave it empty.
	PairKey   string    `json:"pairKey"`
	From      string    `json:"from"`
	To        string    `json:"to"`
	Channel   Channel   `json:"channel"`
	Direction Direction `json:"direction"`
	// Content is the whole message, scrubbed of secrets before it reaches
	// a store (ScrubbingMessages does that); it is not shortened.
	Content     string `json:"content"`
	RunID       string `json:"runId"`
	ParentRunID string `json:"parentRunId,omitempty"`
	RootRunID   string `json:"rootRunId"`
	TaskID      string `json:"taskId,omitempty"`
	// TaskStatus is what a task_result row reports: done (a result) or
	// blocked (a blocker), so that an analysis can tell them apart.
	TaskStatus TaskStatus    `json:"taskStatus,omitempty"`
	Status     MessageStatus `json:"status"`
	// Reason says why a message was not delivered (denied, timeout,
	// failed), when the content is the message itself.
	Reason     string    `json:"reason,omitempty"`
	OccurredAt time.Time `json:"occurredAt"`
}

// PairKey is the order-free key of a conversation: "a|b" with a <= b, so A→B
// and B→A land in the same pair.
func PairKey(a, b string) string {
	if b < a {
		a, b = b, a
	}
	return a + "|" + b
}

// maxMessageField bounds ids and agent names (they are key parts).
const maxMessageField = 512

// Validate checks m as a store accepts it: EINVALID naming the first field
// that is missing or wrong. Agent ids may not contain "|" (the pair
// separator). A message to oneself is allowed, so that a refused
// self-question can be recorded.
func (m AgentMessage) Validate() error {
	const op = "agentMessages.validate"
	bad := func(msg string) error { return E(op, EINVALID, msg) }
	for _, f := range []struct{ name, v string }{
		{"id", m.ID}, {"from", m.From}, {"to", m.To}, {"runId", m.RunID}, {"rootRunId", m.RootRunID},
	} {
		if f.v == "" {
			return bad("an agent message needs " + f.name)
		}
	}
	for _, f := range []struct{ name, v string }{
		{"id", m.ID}, {"from", m.From}, {"to", m.To}, {"runId", m.RunID}, {"rootRunId", m.RootRunID},
		{"parentRunId", m.ParentRunID}, {"taskId", m.TaskID},
	} {
		if len(f.v) > maxMessageField {
			return bad(f.name + " is longer than 512 bytes")
		}
	}
	switch {
	case strings.Contains(m.From, "|") || strings.Contains(m.To, "|"):
		return bad("agent ids in a message may not contain |")
	case m.PairKey != "" && m.PairKey != PairKey(m.From, m.To):
		return bad("pairKey must be the sorted pair of from and to, or empty")
	case !m.Channel.Valid():
		return bad("channel must be ask, task, task_comment or task_result")
	case !m.Direction.Valid():
		return bad("direction must be request or response")
	case !m.Status.Valid():
		return bad("status must be delivered, failed, timeout or denied")
	case m.OccurredAt.IsZero():
		return bad("an agent message needs occurredAt")
	case len(m.Content) > MaxMessageContent:
		return bad("content is longer than 16 MiB")
	case !utf8.ValidString(m.Content):
		return bad("content must be UTF-8 text")
	case m.TaskStatus != "" && (m.Channel != ChannelTaskResult || m.TaskStatus == TaskOpen || !m.TaskStatus.Valid()):
		return bad("taskStatus is done or blocked, and only on a task_result")
	case len(m.Reason) > maxMessageReason || !utf8.ValidString(m.Reason):
		return bad("reason must be UTF-8 text of at most 4,000 bytes")
	}
	return nil
}

// maxMessageReason bounds AgentMessage.Reason (a refusal or error text).
const maxMessageReason = 4000

// Paging limits of message queries.
const (
	DefaultMessagePage = 200
	MaxMessagePage     = 1000
)

// MessageQuery narrows and pages a message listing. The zero value is the
// newest DefaultMessagePage messages of all channels.
type MessageQuery struct {
	// Since (inclusive) and Until (exclusive) bound OccurredAt; zero = open.
	Since, Until time.Time
	// Channels keeps only these channels; empty = all.
	Channels []Channel
	// Limit is the page size, 1..MaxMessagePage; 0 = DefaultMessagePage.
	Limit int
	// Cursor continues after the last message of a previous page (its
	// NextCursor); it is opaque and only valid with the same query.
	Cursor string
	// OldestFirst turns the default order (newest first) around.
	OldestFirst bool
}

// Check is EINVALID for a bad limit, channel or time range.
func (q MessageQuery) Check() error {
	const op = "agentMessages.query"
	if q.Limit < 0 || q.Limit > MaxMessagePage {
		return E(op, EINVALID, "limit must be 1 to 1000 (0 = 200)")
	}
	for _, c := range q.Channels {
		if !c.Valid() {
			return E(op, EINVALID, "channel must be ask, task, task_comment or task_result")
		}
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return E(op, EINVALID, "since must be before until")
	}
	return nil
}

// MaxAllRange is the longest time range All lists over.
const MaxAllRange = 366 * 24 * time.Hour

// CheckRange is Check plus what All needs: both ends of the time range,
// at most MaxAllRange apart.
func (q MessageQuery) CheckRange() error {
	if err := q.Check(); err != nil {
		return err
	}
	switch {
	case q.Since.IsZero() || q.Until.IsZero():
		return E("agentMessages.all", EINVALID, "listing all pairs needs since and until")
	case q.Until.Sub(q.Since) > MaxAllRange:
		return E("agentMessages.all", EINVALID, "listing all pairs covers at most 366 days; narrow the time range")
	}
	return nil
}

// PageSize is Limit with the default applied.
func (q MessageQuery) PageSize() int {
	if q.Limit == 0 {
		return DefaultMessagePage
	}
	return q.Limit
}

// Wants reports whether c passes the channel filter.
func (q MessageQuery) Wants(c Channel) bool {
	if len(q.Channels) == 0 {
		return true
	}
	for _, w := range q.Channels {
		if w == c {
			return true
		}
	}
	return false
}

// MessagePage is one page of messages; NextCursor is "" on the last page.
// A page may hold fewer than Limit messages and still have a NextCursor
// (when a channel filter skipped many rows); keep paging until it is "".
type MessagePage struct {
	Messages   []AgentMessage `json:"messages"`
	NextCursor string         `json:"nextCursor,omitempty"`
}

// MessageSearch is a full-text search: messages containing every word of
// Text (whole words, case-insensitive), optionally only those of Agent, or
// of the pair Agent|Peer, within the query's time range and channels.
type MessageSearch struct {
	Text  string
	Agent string // "" = all agents
	Peer  string // with Agent: only the pair Agent|Peer
	MessageQuery
}

// AgentMessageLog records agent-to-agent messages. Only the core holds one
// (never a tool: an agent must not be able to colour its own record); tools
// that read messages get an AgentMessageReader.
type AgentMessageLog interface {
	// Record stores m (PairKey is derived from From and To). EINVALID when
	// m fails Validate; ECONFLICT when a message with m's ID at m's time in
	// m's pair exists already (a retried write never doubles a message);
	// EUNAVAILABLE when the store is temporarily unreachable.
	Record(ctx context.Context, m AgentMessage) error
	// RecordAll stores b's messages, and with them b's receipt and the
	// release of b's lease when given: in as few requests as the store
	// allows (DynamoDB: one BatchWriteItem for up to 25 items, across
	// tables, the messages' search rows included; the lease's delete goes
	// last). No write is conditional, so each item must be the same on
	// every attempt (a message's ID and OccurredAt derived from what is
	// retried, not drawn anew): an item written again overwrites itself
	// and a repeat is success, never ECONFLICT. EINVALID when a message
	// fails Validate, the receipt has no agent or run id or the lease key
	// is bad (then nothing is written); EUNAVAILABLE when the store is
	// temporarily unreachable (some items may be in; the same call again
	// completes them).
	RecordAll(ctx context.Context, b MessageBatch) error
}

// MessageBatch is what one RecordAll writes together.
type MessageBatch struct {
	Messages []AgentMessage
	// Receipt is the receipt of the run that gave the messages, or nil.
	Receipt *Receipt
	// Release is a lease (Leases) the caller holds and gives back with
	// the messages, or "". The delete takes no condition (a batch cannot
	// carry one), so the caller must hold the lease until well after the
	// call can have ended: a lease of another holder would go too.
	Release string
}

// AgentMessageReader lists and searches recorded messages. Listings are
// index reads, never a scan of all messages.
type AgentMessageReader interface {
	// Pair lists the conversation of a and b (either direction). EINVALID
	// for an empty agent id or a bad query or cursor. An unknown pair is an
	// empty page, not an error.
	Pair(ctx context.Context, a, b string, q MessageQuery) (MessagePage, error)
	// Agent lists every message agentID sent or received, with all
	// partners. EINVALID as for Pair.
	Agent(ctx context.Context, agentID string, q MessageQuery) (MessagePage, error)
	// Chain lists the messages of one run chain (RootRunID). EINVALID as
	// for Pair.
	Chain(ctx context.Context, rootRunID string, q MessageQuery) (MessagePage, error)
	// Search finds messages containing every word of s.Text (see
	// SearchTerms), newest first unless OldestFirst. A store may bound
	// what one call reads: the page then holds fewer than Limit messages
	// and a NextCursor to go on from. EINVALID when Text has no searchable
	// word, Peer is set without Agent, or the query is bad.
	Search(ctx context.Context, s MessageSearch) (MessagePage, error)
	// All lists the messages of every pair within q's time range, which
	// needs Since and Until at most MaxAllRange apart (a listing over all
	// pairs must be bounded); EINVALID otherwise, or as for Pair.
	All(ctx context.Context, q MessageQuery) (MessagePage, error)
}

// AgentMessageStore is both halves; adapters implement it.
type AgentMessageStore interface {
	AgentMessageLog
	AgentMessageReader
}

// ScrubbingMessages is the core's way to record: it scrubs Content and
// Reason (and nothing else: ids and names are not secrets) before the log sees it.
type ScrubbingMessages struct {
	Log   AgentMessageLog
	Scrub func(string) string
}

// Record scrubs m.Content and records m.
func (s ScrubbingMessages) Record(ctx context.Context, m AgentMessage) error {
	if s.Scrub != nil {
		m.Content, m.Reason = s.Scrub(m.Content), s.Scrub(m.Reason)
	}
	return s.Log.Record(ctx, m)
}

// RecordAll scrubs each message's Content and Reason and records them
// with the rest of b (a receipt holds no message text).
func (s ScrubbingMessages) RecordAll(ctx context.Context, b MessageBatch) error {
	if s.Scrub != nil {
		b.Messages = slices.Clone(b.Messages)
		for i := range b.Messages {
			b.Messages[i].Content, b.Messages[i].Reason = s.Scrub(b.Messages[i].Content), s.Scrub(b.Messages[i].Reason)
		}
	}
	return s.Log.RecordAll(ctx, b)
}

// Search term limits: words shorter than MinTermLength or longer than
// MaxTermLength are not indexed; a message indexes at most MaxIndexedTerms
// distinct words (its longest, see IndexTerms), which bounds its search
// rows, one write each. MaxTermsPerMessage bounds SearchTerms where a
// caller compares texts by their words.
const (
	MinTermLength      = 2
	MaxTermLength      = 64
	MaxIndexedTerms    = 40
	MaxTermsPerMessage = 500
	maxQueryTerms      = 8
)

// stopWords are too common to narrow a search (English and German function
// words); leaving them out keeps the busiest index partitions small and
// saves a search row each.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about above after again against all also am an and any are as at be
		because been before being below between both but by can could did do does doing down during each few
		for from further had has have having he her here hers him his how i if in into is it its just me more
		most my no nor not now of off on once only or other our out over own same she should so some such than
		that the their them then there these they this those through to too under until up very was we were
		what when where which while who whom why will with would you your yours don doesn didn isn wasn aren
		aber alle allem allen aller alles als andere anderen auch auf aus bei bis bist da damit dann das dass
		dein deine dem den der des dessen dich die dies diese diesem diesen dieser dieses dir doch dort du durch
		ein eine einem einen einer eines er es etwas euch euer eure für gegen gewesen habe haben hat hatte hatten
		hier hin ich ihm ihn ihnen ihr ihre ihrem ihren ihrer im indem ins ist jede jedem jeden jeder jedes jetzt
		kann kein keine können könnte mein meine mich mir mit muss nach nicht nichts noch nun nur ob oder ohne
		sehr sein seine sich sie sind soll sollte sondern über um und uns unser unter viel vom von vor war waren
		weil welche wenn wer werden wie wieder wir wird wo zu zum zur zwischen`) {
		stopWords[w] = true
	}
}

// SearchTerms splits text into the distinct words a search matches:
// letters and digits in runs, lower-cased, 2 to 64 bytes long, stop words
// left out, in order of first appearance, at most limit (0 = no limit).
// Stores split queries with it and index messages with IndexTerms, its
// capped form, so both agree.
func SearchTerms(text string, limit int) []string {
	terms, _ := splitTerms(text, limit)
	return terms
}

// splitTerms is SearchTerms and whether text had a word that was left out
// only for being a stop word.
func splitTerms(text string, limit int) (terms []string, stopped bool) {
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		w = strings.ToLower(w)
		if len(w) < MinTermLength || len(w) > MaxTermLength || seen[w] {
			continue
		}
		if stopWords[w] {
			stopped = true
			continue
		}
		seen[w] = true
		terms = append(terms, w)
		if limit > 0 && len(terms) == limit {
			break
		}
	}
	return terms, stopped
}

// IndexTerms are the words a store indexes for a message of text: its
// SearchTerms, and of a text with more than MaxIndexedTerms of them the
// MaxIndexedTerms longest (the first of equally long ones), in order of
// first appearance. Long words are the rarer ones, so a search for a word
// of a long message finds it unless the message has 40 longer words; the
// shorter ones of such a message are not searchable.
func IndexTerms(text string) []string {
	terms := SearchTerms(text, 0)
	if len(terms) <= MaxIndexedTerms {
		return terms
	}
	byLength := make([]int, len(terms))
	for i := range byLength {
		byLength[i] = i
	}
	slices.SortStableFunc(byLength, func(x, y int) int { return len(terms[y]) - len(terms[x]) })
	keep := byLength[:MaxIndexedTerms]
	slices.Sort(keep)
	out := make([]string, len(keep))
	for i, k := range keep {
		out[i] = terms[k]
	}
	return out
}

// QueryTerms is SearchTerms for a search text: EINVALID when it has no
// searchable word or more than eight.
func QueryTerms(text string) ([]string, error) {
	const op = "agentMessages.search"
	terms, stopped := splitTerms(text, 0)
	switch {
	case len(terms) == 0 && stopped:
		what := "these words are"
		if t := strings.TrimSpace(text); len(t) <= 60 {
			what = fmt.Sprintf("%q is", t)
		}
		return nil, E(op, EINVALID, what+" too common to search for; add a rarer word")
	case len(terms) == 0:
		return nil, E(op, EINVALID, "search needs at least one word of two or more letters or digits")
	case len(terms) > maxQueryTerms:
		return nil, E(op, EINVALID, "search takes at most 8 words")
	}
	return terms, nil
}

// CheckScope is EINVALID when s.Peer is set without s.Agent.
func (s MessageSearch) CheckScope() error {
	if s.Peer != "" && s.Agent == "" {
		return E("agentMessages.search", EINVALID, "peer needs agent")
	}
	return s.MessageQuery.Check()
}

// InScope reports whether a message of pair is within s's agent/peer scope.
func (s MessageSearch) InScope(pair string) bool {
	switch {
	case s.Agent == "":
		return true
	case s.Peer != "":
		return pair == PairKey(s.Agent, s.Peer)
	}
	a, b, _ := strings.Cut(pair, "|")
	return a == s.Agent || b == s.Agent
}
