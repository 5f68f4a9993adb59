package dynamo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/platform/clock"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

var _ switchboard.AgentMessageStore = (*AgentMessages)(nil)

// Layout of the agentmessages table (one table, two kinds of rows):
//
//	message  pk pair#<a|b>   sk <time>#<id>   fromAgent, toAgent, rootRunId, month (keys
//	                                          of byFrom, byTo, byRoot, byMonth) and the fields
//	search   pk tok#<word>   sk = its message's sk   pair, ch
//
// A message is one PutItem (Record; RecordAll puts it in a batch with its
// search rows); DynamoDB keeps the four indexes. Search rows carry none of
// the index key attributes, so they stay out of the indexes.
//
// The indexes project the fields a listing returns, but content only up
// to IndexedContent bytes ("content"); longer content is "body", kept in
// the table alone, so that an index entry stays one write unit whatever
// the message's length. A listing from an index reads such bodies from the
// table (BatchGetItem) for its page. Content over InlineContent is in the
// bucket ("contentRef"). Items written before the split have all their
// content in "content", which the indexes project: they read as before.
const (
	pairPrefix  = "pair#"
	tokenPrefix = "tok#"
	// InlineContent is the largest content kept in the item (bytes); longer
	// content goes to the blob store and the item keeps a pointer, so an
	// item stays under DynamoDB's 400 KB limit.
	InlineContent = 350 << 10
	// IndexedContent is the longest content the indexes carry: with the
	// other fields (about 300 bytes) an index entry stays under 1 KB, one
	// write unit.
	IndexedContent = 512
	// blobPrefix is where long content lives in the bucket, outside every
	// key a workspace path can resolve to (agents/…, shared/…).
	blobPrefix = "agentmessages/"
	// maxExamined bounds the rows one listing call reads when a channel
	// filter skips rows: the page then ends early with a cursor, so no call
	// reads a whole partition.
	maxExamined = 5000
)

// firstPage is how many search rows of each word a search reads before it
// knows which word is rarest (about 1 RCU). A variable so that tests can
// make every word span many pages.
var firstPage int32 = 100

// AgentMessages is the domain's AgentMessageStore on the agentmessages
// table, a view of its Store (same client, Stats and retention). Get it
// from Store.AgentMessages.
type AgentMessages struct {
	s     *Store
	blobs switchboard.BlobStore
}

// AgentMessages returns the message store; blobs holds content longer than
// InlineContent (nil: such content is refused with EINTERNAL).
func (s *Store) AgentMessages(blobs switchboard.BlobStore) *AgentMessages {
	return &AgentMessages{s: s, blobs: blobs}
}

// messageItem is one message row.
type messageItem struct {
	PK           string `dynamodbav:"pk"`
	SK           string `dynamodbav:"sk"`
	FromAgent    string `dynamodbav:"fromAgent"`
	ToAgent      string `dynamodbav:"toAgent"`
	RootRunID    string `dynamodbav:"rootRunId"`
	Month        string `dynamodbav:"month"` // "2006-01" of occurredAt: the byMonth key
	ID           string `dynamodbav:"id"`
	PairKey      string `dynamodbav:"pairKey"`
	Channel      string `dynamodbav:"channel"`
	Direction    string `dynamodbav:"direction"`
	Content      string `dynamodbav:"content,omitempty"`    // up to IndexedContent: the indexes carry it
	Body         string `dynamodbav:"body,omitempty"`       // longer content: in the table only
	ContentRef   string `dynamodbav:"contentRef,omitempty"` // blob key when content is not inline
	ContentBytes int    `dynamodbav:"contentBytes"`
	RunID        string `dynamodbav:"runId"`
	ParentRunID  string `dynamodbav:"parentRunId,omitempty"`
	TaskID       string `dynamodbav:"taskId,omitempty"`
	TaskStatus   string `dynamodbav:"taskStatus,omitempty"`
	Status       string `dynamodbav:"status"`
	Reason       string `dynamodbav:"reason,omitempty"`
	OccurredAt   string `dynamodbav:"occurredAt"`
	ExpiresAt    int64  `dynamodbav:"expiresAt,omitempty"`
}

// tokenItem is one search row: word → message (its pk is pair#<Pair>).
// Rows written before carry an mpk, the same pk; it is not read.
type tokenItem struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	Pair      string `dynamodbav:"pair"`
	Channel   string `dynamodbav:"ch"`
	ExpiresAt int64  `dynamodbav:"expiresAt,omitempty"`
}

// messageKey: partition per pair, sorted by time; the id makes it unique.
func messageKey(m switchboard.AgentMessage) (pk, sk string) {
	return pairPrefix + switchboard.PairKey(m.From, m.To), timeKey(m.OccurredAt) + keySep + m.ID
}

// blobKey is deterministic, so a retried Record rewrites the same object.
func blobKey(pk, sk string) string {
	sum := sha256.Sum256([]byte(pk + "\x00" + sk))
	return blobPrefix + hex.EncodeToString(sum[:])
}

// Record writes the search rows (idempotent puts, 25 per BatchWriteItem)
// and, at the same time, the message with attribute_not_exists(pk). Until
// both are written it answers the error of the one that failed, so a
// retried Record completes the message and its search rows, and a repeated
// one is ECONFLICT. Content over InlineContent goes to the blob store
// first.
func (a *AgentMessages) Record(ctx context.Context, m switchboard.AgentMessage) error {
	const op = "agentMessages.record"
	if err := m.Validate(); err != nil {
		return err
	}
	s := a.s
	it, tokens := toItems(m, s.AgentMessageRetention)
	if it.ContentRef != "" {
		if a.blobs == nil {
			return switchboard.E(op, switchboard.EINTERNAL, "no blob store for long agent message content; the operator must configure the bucket")
		}
		if err := a.blobs.Put(ctx, it.ContentRef, strings.NewReader(m.Content), int64(len(m.Content)), "text/plain; charset=utf-8"); err != nil {
			return fmt.Errorf("agent message %s content: %w", m.ID, err)
		}
	}
	var rows []map[string]ddb.AttributeValue
	for _, t := range tokens {
		av, err := ddb.MarshalMap(t)
		if err != nil {
			return switchboard.Wrap(op, switchboard.EINTERNAL, "search row could not be encoded", err)
		}
		rows = append(rows, av)
	}
	item, err := ddb.MarshalMap(it)
	if err != nil {
		return switchboard.Wrap(op, switchboard.EINTERNAL, "agent message could not be encoded", err)
	}
	var wg sync.WaitGroup
	var indexErr error
	wg.Go(func() { indexErr = s.batchPut(ctx, "agentMessages.index", s.agentMessages, rows) })
	err = s.put(ctx, op, s.agentMessages, item, condition{expr: "attribute_not_exists(pk)"})
	wg.Wait()
	if indexErr != nil && (err == nil || switchboard.ErrorCode(err) == switchboard.ECONFLICT) {
		return indexErr
	}
	return err
}

// RecordAll writes b's messages with their search rows, and its receipt,
// as unconditional puts in BatchWriteItem calls of 25 items across the
// tables (one call for a short question and answer with the run's receipt
// and the lease); content over InlineContent goes to the blob store first.
// The receipt goes in the first call, the lease's delete in the last. The
// items' keys come from the messages and the receipt, so a repeated call
// rewrites the same items.
func (a *AgentMessages) RecordAll(ctx context.Context, b switchboard.MessageBatch) error {
	const op = "agentMessages.recordAll"
	s := a.s
	ms, receipt := b.Messages, b.Receipt
	if b.Release != "" {
		if err := switchboard.CheckStateKey(op, "lease", b.Release); err != nil {
			return err
		}
	}
	var items []tableItem
	add := func(table string, v any, what string) error {
		av, err := ddb.MarshalMap(v)
		if err != nil {
			return switchboard.Wrap(op, switchboard.EINTERNAL, what+" could not be encoded", err)
		}
		items = append(items, tableItem{table: table, item: av})
		return nil
	}
	if receipt != nil {
		if receipt.AgentID == "" || receipt.Run.RunID == "" {
			return switchboard.E(op, switchboard.EINVALID, "a receipt needs an agent id and a run id")
		}
		if err := add(s.receipts, toReceiptItem(*receipt, s.ReceiptRetention), "receipt"); err != nil {
			return err
		}
	}
	var long []switchboard.AgentMessage
	for _, m := range ms {
		if err := m.Validate(); err != nil {
			return err
		}
		it, tokens := toItems(m, s.AgentMessageRetention)
		if it.ContentRef != "" {
			if a.blobs == nil {
				return switchboard.E(op, switchboard.EINTERNAL, "no blob store for long agent message content; the operator must configure the bucket")
			}
			long = append(long, m)
		}
		if err := add(s.agentMessages, it, "agent message"); err != nil {
			return err
		}
		for _, t := range tokens {
			if err := add(s.agentMessages, t, "search row"); err != nil {
				return err
			}
		}
	}
	for _, m := range long {
		pk, sk := messageKey(m)
		if err := a.blobs.Put(ctx, blobKey(pk, sk), strings.NewReader(m.Content), int64(len(m.Content)), "text/plain; charset=utf-8"); err != nil {
			return fmt.Errorf("agent message %s content: %w", m.ID, err)
		}
	}
	if b.Release != "" {
		items = append(items, tableItem{table: s.state, item: itemKey(leaseKey(b.Release)), delete: true})
	}
	return s.batchWrite(ctx, op, items)
}

// toItems is m's row and its search rows (one per word, see IndexTerms):
// content up to IndexedContent in "content", longer in "body", over
// InlineContent only a pointer (the caller puts the content there).
func toItems(m switchboard.AgentMessage, retention time.Duration) (messageItem, []tokenItem) {
	pk, sk := messageKey(m)
	exp := expiresAt(m.OccurredAt, retention)
	it := messageItem{
		PK: pk, SK: sk,
		FromAgent: m.From, ToAgent: m.To, RootRunID: m.RootRunID, Month: monthOf(sk),
		ID: m.ID, PairKey: switchboard.PairKey(m.From, m.To),
		Channel: string(m.Channel), Direction: string(m.Direction),
		Content: m.Content, ContentBytes: len(m.Content),
		RunID: m.RunID, ParentRunID: m.ParentRunID, TaskID: m.TaskID, TaskStatus: string(m.TaskStatus),
		Status: string(m.Status), Reason: m.Reason, OccurredAt: timeKey(m.OccurredAt), ExpiresAt: exp,
	}
	switch n := len(m.Content); {
	case n > InlineContent:
		it.ContentRef, it.Content = blobKey(pk, sk), ""
	case n > IndexedContent:
		it.Body, it.Content = m.Content, ""
	}
	var tokens []tokenItem
	for _, w := range switchboard.IndexTerms(m.Content) {
		tokens = append(tokens, tokenItem{PK: tokenPrefix + w, SK: sk, Pair: it.PairKey, Channel: it.Channel, ExpiresAt: exp})
	}
	return it, tokens
}

// Pair queries the pair's partition of the table itself.
func (a *AgentMessages) Pair(ctx context.Context, x, y string, q switchboard.MessageQuery) (switchboard.MessagePage, error) {
	if x == "" || y == "" {
		return switchboard.MessagePage{}, switchboard.E("agentMessages.pair", switchboard.EINVALID, "a pair needs two agent ids")
	}
	return a.list(ctx, "agentMessages.pair", q, "", attrPK, pairPrefix+switchboard.PairKey(x, y))
}

// Agent merges two index queries, byFrom and byTo, in sort-key order.
func (a *AgentMessages) Agent(ctx context.Context, agentID string, q switchboard.MessageQuery) (switchboard.MessagePage, error) {
	if agentID == "" {
		return switchboard.MessagePage{}, switchboard.E("agentMessages.agent", switchboard.EINVALID, "an agent id is needed")
	}
	return a.list(ctx, "agentMessages.agent", q,
		deploy.IndexByFrom, "fromAgent", agentID,
		deploy.IndexByTo, "toAgent", agentID)
}

// Chain queries the byRoot index.
func (a *AgentMessages) Chain(ctx context.Context, rootRunID string, q switchboard.MessageQuery) (switchboard.MessagePage, error) {
	if rootRunID == "" {
		return switchboard.MessagePage{}, switchboard.E("agentMessages.chain", switchboard.EINVALID, "a root run id is needed")
	}
	return a.list(ctx, "agentMessages.chain", q, deploy.IndexByRoot, "rootRunId", rootRunID)
}

// monthOf is the calendar month ("2006-01") of a sort key or time key.
func monthOf(key string) string { return key[:len("2006-01")] }

// All queries the byMonth index one month after the other, from the newest
// month of the range (or the oldest with OldestFirst); a page that ends in
// one month goes on in the next with the same cursor.
func (a *AgentMessages) All(ctx context.Context, q switchboard.MessageQuery) (switchboard.MessagePage, error) {
	const op = "agentMessages.all"
	if err := q.CheckRange(); err != nil {
		return switchboard.MessagePage{}, err
	}
	return a.listWith(ctx, op, q, func(lo, hi string, limit int32) []*stream {
		// Until is exclusive: its own month holds nothing when it is the
		// month's first instant, which costs one empty query at most.
		var ins []*ddb.QueryInput
		for m := monthOf(lo); m <= monthOf(hi); m = nextMonth(m) {
			ins = append(ins, keyQuery(a.s.agentMessages, deploy.IndexByMonth, "month", m, lo, hi, q.OldestFirst, limit))
		}
		if !q.OldestFirst {
			slices.Reverse(ins)
		}
		return []*stream{{s: a.s, op: op, in: ins[0], more: ins[1:]}}
	})
}

// nextMonth is the month after m ("2006-01").
func nextMonth(m string) string {
	t, err := time.Parse("2006-01", m)
	if err != nil {
		return "9999-99" // unreachable for keys this store wrote; ends the loop
	}
	return t.AddDate(0, 1, 0).Format("2006-01")
}

// bounds is the sort-key range of q after cursor: lo and hi are inclusive
// string bounds ("" = open). Until is exclusive because a bare time sorts
// before every "time#id" of that instant; the cursor row itself is inside
// the range and skipped by the caller.
func bounds(q switchboard.MessageQuery, cursor string) (lo, hi string) {
	if !q.Since.IsZero() {
		lo = timeKey(q.Since)
	}
	if !q.Until.IsZero() {
		hi = timeKey(q.Until)
	}
	if cursor != "" {
		if q.OldestFirst && cursor > lo {
			lo = cursor
		}
		if !q.OldestFirst && (hi == "" || cursor < hi) {
			hi = cursor
		}
	}
	return lo, hi
}

// keyQuery builds a Query on one partition (of the table or an index)
// within the sort-key range.
func keyQuery(table, index, pkName, pkValue string, lo, hi string, oldestFirst bool, pageSize int32) *ddb.QueryInput {
	expr := "#p = :p"
	vals := map[string]ddb.AttributeValue{":p": strAV(pkValue)}
	names := map[string]string{"#p": pkName}
	switch {
	case lo != "" && hi != "":
		expr += " AND #s BETWEEN :lo AND :hi"
	case lo != "":
		expr += " AND #s >= :lo"
	case hi != "":
		expr += " AND #s <= :hi"
	}
	if lo != "" {
		vals[":lo"] = strAV(lo)
	}
	if hi != "" {
		vals[":hi"] = strAV(hi)
	}
	if lo != "" || hi != "" {
		names["#s"] = attrSK
	}
	in := &ddb.QueryInput{
		TableName:                 &table,
		KeyConditionExpression:    &expr,
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: vals,
		ScanIndexForward:          aws.Bool(oldestFirst),
		Limit:                     aws.Int32(pageSize),
		ReturnConsumedCapacity:    ddb.ReturnConsumedCapacityTotal,
	}
	if index != "" {
		in.IndexName = &index
	}
	return in
}

// encodeCursor and decodeCursor make a sort key opaque to callers.
func encodeCursor(sk string) string { return base64.RawURLEncoding.EncodeToString([]byte(sk)) }

func decodeCursor(op, c string) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil && len(b) > len(timeLayout) && b[len(timeLayout)] == keySep[0] {
		if _, perr := time.Parse(timeLayout, string(b[:len(timeLayout)])); perr == nil {
			return string(b), nil
		}
	}
	return "", switchboard.E(op, switchboard.EINVALID, "cursor is not one this store handed out; start again without it")
}

// stream reads one Query page by page, then the queries in more, in order.
type stream struct {
	s    *Store
	op   string
	in   *ddb.QueryInput
	more []*ddb.QueryInput
	buf  []map[string]ddb.AttributeValue
	done bool
}

// head is the next item, fetching a page when needed; nil when exhausted.
func (st *stream) head(ctx context.Context) (map[string]ddb.AttributeValue, error) {
	for len(st.buf) == 0 && !st.done {
		out, err := st.s.c.Query(ctx, st.in)
		st.s.record(st.op, reads, queryCapacity(out), err)
		if err != nil {
			return nil, mapErr(st.op, *st.in.TableName, err)
		}
		st.buf = out.Items
		st.in.ExclusiveStartKey = out.LastEvaluatedKey
		if len(out.LastEvaluatedKey) == 0 {
			if st.done = len(st.more) == 0; !st.done {
				st.in, st.more = st.more[0], st.more[1:]
			}
		}
	}
	if len(st.buf) == 0 {
		return nil, nil
	}
	return st.buf[0], nil
}

func skOf(item map[string]ddb.AttributeValue) string {
	if v, ok := item[attrSK].(*ddb.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// list reads one page from one or more (index, key attribute, value)
// partitions, merged in sort-key order; a row in two of them (a message to
// oneself) counts once.
func (a *AgentMessages) list(ctx context.Context, op string, q switchboard.MessageQuery, parts ...string) (switchboard.MessagePage, error) {
	if err := q.Check(); err != nil {
		return switchboard.MessagePage{}, err
	}
	return a.listWith(ctx, op, q, func(lo, hi string, limit int32) []*stream {
		var streams []*stream
		for i := 0; i+3 <= len(parts); i += 3 {
			streams = append(streams, &stream{s: a.s, op: op,
				in: keyQuery(a.s.agentMessages, parts[i], parts[i+1], parts[i+2], lo, hi, q.OldestFirst, limit)})
		}
		return streams
	})
}

// listWith reads one page from the streams open builds for the sort-key
// range lo..hi ("" = open) and the per-query page size, merged in sort-key
// order. q is checked already.
func (a *AgentMessages) listWith(ctx context.Context, op string, q switchboard.MessageQuery,
	open func(lo, hi string, limit int32) []*stream) (switchboard.MessagePage, error) {
	cursor, err := decodeCursor(op, q.Cursor)
	if err != nil {
		return switchboard.MessagePage{}, err
	}
	limit := q.PageSize()
	lo, hi := bounds(q, cursor)
	streams := open(lo, hi, int32(limit+1))
	before := func(x, y string) bool { // x comes first in the page's order
		if q.OldestFirst {
			return x < y
		}
		return x > y
	}
	// next pops the first row over all streams, skipping the cursor row and
	// a duplicate of last; nil when all are exhausted.
	next := func(last string, pop bool) (map[string]ddb.AttributeValue, error) {
		for {
			var best *stream
			var bestSK string
			for _, st := range streams {
				h, err := st.head(ctx)
				if err != nil {
					return nil, err
				}
				if h != nil && (best == nil || before(skOf(h), bestSK)) {
					best, bestSK = st, skOf(h)
				}
			}
			if best == nil {
				return nil, nil
			}
			if bestSK == cursor || bestSK == last {
				best.buf = best.buf[1:]
				continue
			}
			h := best.buf[0]
			if pop {
				best.buf = best.buf[1:]
			}
			return h, nil
		}
	}
	var (
		page     switchboard.MessagePage
		items    []messageItem
		last     string
		examined int
	)
	page.Messages = []switchboard.AgentMessage{}
	for len(items) < limit {
		h, err := next(last, true)
		if err != nil {
			return switchboard.MessagePage{}, err
		}
		if h == nil {
			return a.finish(ctx, op, page, items, "")
		}
		last = skOf(h)
		var it messageItem
		if err := ddb.UnmarshalMap(h, &it); err != nil {
			return switchboard.MessagePage{}, switchboard.Wrap(op, switchboard.EINTERNAL,
				"a stored agent message could not be read; the operator can find details in the logs", err)
		}
		if q.Wants(switchboard.Channel(it.Channel)) {
			items = append(items, it)
		}
		if examined++; examined >= maxExamined && len(items) < limit {
			return a.finish(ctx, op, page, items, last)
		}
	}
	h, err := next(last, false)
	if err != nil {
		return switchboard.MessagePage{}, err
	}
	if h == nil {
		last = ""
	}
	return a.finish(ctx, op, page, items, last)
}

// finish converts items (fetching long content) and sets the cursor.
func (a *AgentMessages) finish(ctx context.Context, op string, page switchboard.MessagePage, items []messageItem, cursorSK string) (switchboard.MessagePage, error) {
	if err := a.readBodies(ctx, op, items); err != nil {
		return switchboard.MessagePage{}, err
	}
	for _, it := range items {
		m, err := a.fromItem(ctx, op, it)
		if err != nil {
			return switchboard.MessagePage{}, err
		}
		page.Messages = append(page.Messages, m)
	}
	if cursorSK != "" {
		page.NextCursor = encodeCursor(cursorSK)
	}
	return page, nil
}

// readBodies fills in the body of items read from an index, which does
// not carry it: one BatchGetItem per 100 such items, from the table.
func (a *AgentMessages) readBodies(ctx context.Context, op string, items []messageItem) error {
	var keys []map[string]ddb.AttributeValue
	at := map[string]int{}
	for i, it := range items {
		if it.Content == "" && it.Body == "" && it.ContentRef == "" && it.ContentBytes > 0 {
			keys = append(keys, itemKey(it.PK, it.SK))
			at[it.PK+"\x00"+it.SK] = i
		}
	}
	for len(keys) > 0 {
		n := min(len(keys), 100)
		err := a.s.batchGet(ctx, op, a.s.agentMessages, ddb.KeysAndAttributes{Keys: keys[:n],
			ProjectionExpression:     aws.String("#p, #s, body"),
			ExpressionAttributeNames: map[string]string{"#p": attrPK, "#s": attrSK}},
			func(av map[string]ddb.AttributeValue) error {
				var it messageItem
				if err := ddb.UnmarshalMap(av, &it); err != nil {
					return err
				}
				if i, ok := at[it.PK+"\x00"+it.SK]; ok {
					items[i].Body = it.Body
				}
				return nil
			})
		if err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// fromItem converts a row, reading content from the blob store when the
// row holds a pointer.
func (a *AgentMessages) fromItem(ctx context.Context, op string, it messageItem) (switchboard.AgentMessage, error) {
	at, err := time.Parse(timeLayout, it.OccurredAt)
	if err != nil {
		return switchboard.AgentMessage{}, switchboard.Wrap(op, switchboard.EINTERNAL,
			"a stored agent message could not be read; the operator can find details in the logs",
			fmt.Errorf("agent message %s/%s: occurredAt: %w", it.PK, it.SK, err))
	}
	content := it.Content
	if it.Body != "" {
		content = it.Body
	}
	if it.ContentRef != "" {
		if a.blobs == nil {
			return switchboard.AgentMessage{}, switchboard.E(op, switchboard.EINTERNAL,
				"no blob store for long agent message content; the operator must configure the bucket")
		}
		r, _, err := a.blobs.Get(ctx, it.ContentRef)
		if err != nil {
			return switchboard.AgentMessage{}, fmt.Errorf("agent message %s content: %w", it.ID, err)
		}
		var b bytes.Buffer
		_, err = io.Copy(&b, r)
		r.Close()
		if err != nil {
			return switchboard.AgentMessage{}, switchboard.Wrap(op, switchboard.EUNAVAILABLE,
				"long message content could not be read; try again in a moment", err)
		}
		content = b.String()
	}
	return switchboard.AgentMessage{
		ID: it.ID, PairKey: it.PairKey, From: it.FromAgent, To: it.ToAgent,
		Channel: switchboard.Channel(it.Channel), Direction: switchboard.Direction(it.Direction),
		Content: content, RunID: it.RunID, ParentRunID: it.ParentRunID, RootRunID: it.RootRunID,
		TaskID: it.TaskID, TaskStatus: switchboard.TaskStatus(it.TaskStatus),
		Status: switchboard.MessageStatus(it.Status), Reason: it.Reason, OccurredAt: at,
	}, nil
}

// Search reads the search rows of its words, starting from the rarest, and
// answers the newest (or oldest) messages that have every word, within the
// time range and scope; the page's messages come from the table with
// BatchGetItem.
//
// Every word's first page (firstPage rows) is read first: a word that ends
// within it is complete, and of the others the one whose first page spans
// the longest time is the rarest. That word drives: its rows, in page
// order, are the candidates, and each other word checks them — from rows
// read already, by reading on when that is cheaper, or by looking the
// candidates' rows up (0.5 RCU each) when the other word is much denser.
// So a search costs about what its page needs, not what its words' rows
// hold. One call spends about searchBudget RCU on rows and lookups (plus
// 0.5 per message of its page); when that is spent before the page is
// full, the page ends early with a cursor (a page may hold fewer than
// Limit messages and still have a NextCursor).
func (a *AgentMessages) Search(ctx context.Context, sq switchboard.MessageSearch) (switchboard.MessagePage, error) {
	const op = "agentMessages.search"
	terms, err := switchboard.QueryTerms(sq.Text)
	if err != nil {
		return switchboard.MessagePage{}, err
	}
	if err := sq.CheckScope(); err != nil {
		return switchboard.MessagePage{}, err
	}
	cursor, err := decodeCursor(op, sq.Cursor)
	if err != nil {
		return switchboard.MessagePage{}, err
	}
	lo, hi := bounds(sq.MessageQuery, cursor)
	sr := &searchRun{a: a, op: op, sq: sq, cursor: cursor}
	for _, w := range terms {
		in := keyQuery(a.s.agentMessages, "", attrPK, tokenPrefix+w, lo, hi, sq.OldestFirst, firstPage)
		in.ProjectionExpression = aws.String("#s, pair, ch")
		in.ExpressionAttributeNames["#s"] = attrSK
		p := &posting{word: w, st: &stream{s: a.s, op: op, in: in}, rows: map[string]string{}}
		sr.words = append(sr.words, p)
	}
	for _, p := range sr.words {
		if err := sr.readPage(ctx, p); err != nil {
			return switchboard.MessagePage{}, err
		}
	}
	// Rarest first: complete words by their rows, then by density.
	slices.SortStableFunc(sr.words, func(x, y *posting) int {
		switch {
		case x.st.done && y.st.done:
			return len(x.order) - len(y.order)
		case x.st.done:
			return -1
		case y.st.done:
			return 1
		}
		return cmpFloat(x.density(), y.density())
	})
	hits, next, err := sr.run(ctx)
	if err != nil {
		return switchboard.MessagePage{}, err
	}
	page, err := a.fetchPage(ctx, op, hits)
	if err != nil {
		return switchboard.MessagePage{}, err
	}
	if next != "" {
		page.NextCursor = encodeCursor(next)
	}
	return page, nil
}

// searchBudget is what one Search call may spend on search rows and
// lookups before it answers the hits so far with a cursor, in RCU as
// estimated from rows read (searchRowBytes each, 0.5 RCU per 4 KB) and
// lookups (0.5 each); a batch of candidates under way is finished, so a
// call may go over by one batch. A variable so that tests can shrink it.
var searchBudget = 10.0

const (
	// searchRowBytes is a search row's usual size (a word of 8 letters,
	// a ULID message id): for the estimates above.
	searchRowBytes = 110
	// searchBatch is how many candidates are checked at once: it bounds
	// the lookups of one batch (0.5 RCU each).
	searchBatch = 10
)

// searchRun is one Search call's state.
type searchRun struct {
	a       *AgentMessages
	op      string
	sq      switchboard.MessageSearch
	cursor  string
	words   []*posting // rarest first once the first pages are read
	rows    int        // search rows read so far
	lookups int        // candidates looked up so far
}

// spent is the RCU the call has spent on search rows and lookups, as
// estimated from their numbers.
func (sr *searchRun) spent() float64 {
	return float64(sr.rows)*searchRowBytes/8192 + 0.5*float64(sr.lookups)
}

// hit is a message that has every word: its sort key and pair.
type hit struct{ sk, pair string }

// run drives the rarest word's candidates through the other words until
// the page is full, the driver ends or the budget is spent. It answers the
// hits of the page and the sort key the next page starts after ("" when
// there is none).
func (sr *searchRun) run(ctx context.Context) ([]hit, string, error) {
	limit := sr.sq.PageSize()
	driver, others := sr.words[0], sr.words[1:]
	var hits []hit
	decided := "" // every candidate up to here is decided
	for next := 0; ; {
		if next == len(driver.order) {
			if driver.st.done {
				return hits, "", nil
			}
			if sr.spent() >= searchBudget {
				return hits, driver.last, nil
			}
			if err := sr.readPage(ctx, driver); err != nil {
				return nil, "", err
			}
			if next == len(driver.order) { // no candidate in it: all decided
				decided = driver.last
			}
			continue
		}
		if decided != "" && sr.spent() >= searchBudget {
			return hits, decided, nil
		}
		// A batch of candidates: what the page still needs, at most
		// searchBatch.
		n := min(len(driver.order)-next, max(limit+1-len(hits), 1), searchBatch)
		batch := driver.order[next : next+n]
		next += n
		alive := map[string]bool{}
		for _, sk := range batch {
			alive[sk] = true
		}
		for _, p := range others {
			if err := sr.check(ctx, p, batch, alive); err != nil {
				return nil, "", err
			}
		}
		for _, sk := range batch {
			if alive[sk] {
				hits = append(hits, hit{sk, driver.rows[sk]})
			}
		}
		decided = batch[len(batch)-1]
		if len(hits) > limit {
			return hits[:limit], hits[limit-1].sk, nil
		}
	}
}

// check drops the candidates in alive that p lacks: from p's rows where p
// was read past them, else by reading p on or by looking them up,
// whichever costs less.
func (sr *searchRun) check(ctx context.Context, p *posting, batch []string, alive map[string]bool) error {
	for {
		var beyond []string
		for _, sk := range batch {
			switch {
			case !alive[sk]:
			case p.covers(sk, sr.sq.OldestFirst):
				if _, ok := p.rows[sk]; !ok {
					delete(alive, sk)
				}
			default:
				beyond = append(beyond, sk)
			}
		}
		if len(beyond) == 0 {
			return nil
		}
		// Reading on to the farthest candidate costs about its rows'
		// bytes (0.5 RCU per 4 KB); a lookup 0.5 RCU each.
		far := beyond[len(beyond)-1]
		readRCU := p.density() * absSeconds(skTime(p.last), skTime(far)) * searchRowBytes / 8192
		if readRCU > 0.5*float64(len(beyond)) || sr.spent() >= searchBudget {
			found, err := sr.a.s.tokensExist(ctx, sr.op, sr.a.s.agentMessages, tokenPrefix+p.word, beyond)
			if err != nil {
				return err
			}
			sr.lookups += len(beyond)
			for _, sk := range beyond {
				if !found[sk] {
					delete(alive, sk)
				}
			}
			return nil
		}
		if err := sr.readPage(ctx, p); err != nil {
			return err
		}
	}
}

// readPage reads p's next page of search rows, counting them.
func (sr *searchRun) readPage(ctx context.Context, p *posting) error {
	h, err := p.st.head(ctx)
	if err != nil || h == nil {
		return err
	}
	for _, h := range p.st.buf {
		var t tokenItem
		if err := ddb.UnmarshalMap(h, &t); err != nil {
			return switchboard.Wrap(sr.op, switchboard.EINTERNAL,
				"a stored search row could not be read; the operator can find details in the logs", err)
		}
		if p.first == "" {
			p.first = t.SK
		}
		p.last = t.SK
		p.read++
		sr.rows++
		if t.SK != sr.cursor && sr.sq.InScope(t.Pair) && sr.sq.Wants(switchboard.Channel(t.Channel)) {
			p.rows[t.SK] = t.Pair
			p.order = append(p.order, t.SK)
		}
	}
	p.st.buf = nil
	// Later pages grow, so that a dense word is read in few round trips.
	if l := p.st.in.Limit; l != nil && *l < 800 {
		p.st.in.Limit = aws.Int32(*l * 2)
	}
	return nil
}

// posting is one word's search rows read so far: the ones in the search's
// scope and channels (rows: sk → pair, order: in page order), how many
// rows were read in all, and the first and last sort key read.
type posting struct {
	word        string
	st          *stream
	rows        map[string]string
	order       []string
	read        int
	first, last string
}

// covers reports whether sk lies within the rows read so far.
func (p *posting) covers(sk string, oldestFirst bool) bool {
	switch {
	case p.st.done:
		return true
	case p.last == "":
		return false
	case oldestFirst:
		return sk <= p.last
	}
	return sk >= p.last
}

// density is rows read per second of the time they span; a complete word
// is 0 (nothing left to read).
func (p *posting) density() float64 {
	if p.st.done {
		return 0
	}
	return float64(p.read) / max(absSeconds(skTime(p.first), skTime(p.last)), 1)
}

// skTime is the time of a sort key (time#id); zero when it has none.
func skTime(sk string) time.Time {
	t, _ := time.Parse(timeLayout, sk[:min(len(sk), len(timeLayout))])
	return t
}

func absSeconds(x, y time.Time) float64 {
	d := x.Sub(y).Seconds()
	if d < 0 {
		return -d
	}
	return d
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// fetchPage reads the hits' messages from the table, 100 per BatchGetItem,
// in the hits' order; a search row whose message write never happened is
// skipped.
func (a *AgentMessages) fetchPage(ctx context.Context, op string, hits []hit) (switchboard.MessagePage, error) {
	page := switchboard.MessagePage{Messages: []switchboard.AgentMessage{}}
	for len(hits) > 0 {
		batch := hits[:min(len(hits), 100)]
		hits = hits[len(batch):]
		keys := make([]map[string]ddb.AttributeValue, len(batch))
		for i, h := range batch {
			keys[i] = itemKey(pairPrefix+h.pair, h.sk)
		}
		items := map[string]messageItem{}
		err := a.s.batchGet(ctx, op, a.s.agentMessages, ddb.KeysAndAttributes{Keys: keys},
			func(av map[string]ddb.AttributeValue) error {
				var it messageItem
				if err := ddb.UnmarshalMap(av, &it); err != nil {
					return err
				}
				items[it.SK] = it
				return nil
			})
		if err != nil {
			return switchboard.MessagePage{}, err
		}
		for _, h := range batch {
			it, ok := items[h.sk]
			if !ok {
				continue
			}
			m, err := a.fromItem(ctx, op, it)
			if err != nil {
				return switchboard.MessagePage{}, err
			}
			page.Messages = append(page.Messages, m)
		}
	}
	return page, nil
}

// tokensExist looks up the search rows (pk, sk) for sks, 100 per
// BatchGetItem, and reports which exist.
func (s *Store) tokensExist(ctx context.Context, op, table, pk string, sks []string) (map[string]bool, error) {
	found := map[string]bool{}
	for len(sks) > 0 {
		n := min(len(sks), 100)
		keys := make([]map[string]ddb.AttributeValue, n)
		for i, sk := range sks[:n] {
			keys[i] = itemKey(pk, sk)
		}
		sks = sks[n:]
		err := s.batchGet(ctx, op, table, ddb.KeysAndAttributes{Keys: keys,
			ProjectionExpression: aws.String("#s"), ExpressionAttributeNames: map[string]string{"#s": attrSK}},
			func(av map[string]ddb.AttributeValue) error {
				found[skOf(av)] = true
				return nil
			})
		if err != nil {
			return nil, err
		}
	}
	return found, nil
}

// batchRetries bounds the rounds for unprocessed batch items (throttling).
const batchRetries = 8

// batchRounds runs round, one batch request, while pending reports items
// the server left unprocessed, with a short backoff between rounds; after
// batchRetries rounds it gives up with EUNAVAILABLE.
func batchRounds(ctx context.Context, op, table string, pending func() bool, round func() error) error {
	for try := 0; pending(); try++ {
		if try == batchRetries {
			return switchboard.E(op, switchboard.EUNAVAILABLE, "the database is busy; try again in a moment")
		}
		if try > 0 {
			if err := clock.Sleep(ctx, time.Duration(25<<try)*time.Millisecond); err != nil {
				return mapErr(op, table, err)
			}
		}
		if err := round(); err != nil {
			return err
		}
	}
	return nil
}

// batchPut writes items with BatchWriteItem, 25 per call, retrying the
// unprocessed ones with a short backoff.
func (s *Store) batchPut(ctx context.Context, op, table string, items []map[string]ddb.AttributeValue) error {
	all := make([]tableItem, len(items))
	for i, it := range items {
		all[i] = tableItem{table: table, item: it}
	}
	return s.batchWrite(ctx, op, all)
}

// tableItem is one put or delete of a batch, which may span tables.
type tableItem struct {
	table  string
	item   map[string]ddb.AttributeValue
	delete bool // item is a key to delete, not an item to put
}

// batchWrite puts items with BatchWriteItem, 25 per call whatever their
// tables, retrying the unprocessed ones with a short backoff.
func (s *Store) batchWrite(ctx context.Context, op string, items []tableItem) error {
	for len(items) > 0 {
		n := min(len(items), 25)
		pending := map[string][]ddb.WriteRequest{}
		for _, it := range items[:n] {
			w := ddb.WriteRequest{PutRequest: &ddb.PutRequest{Item: it.item}}
			if it.delete {
				w = ddb.WriteRequest{DeleteRequest: &ddb.DeleteRequest{Key: it.item}}
			}
			pending[it.table] = append(pending[it.table], w)
		}
		table := items[0].table // for the error of a missing table
		items = items[n:]
		err := batchRounds(ctx, op, table, func() bool { return len(pending) > 0 }, func() error {
			out, err := s.c.BatchWriteItem(ctx, &ddb.BatchWriteItemInput{
				RequestItems: pending, ReturnConsumedCapacity: ddb.ReturnConsumedCapacityTotal})
			var cc *ddb.ConsumedCapacity
			if out != nil {
				cc = sumCapacity(out.ConsumedCapacity)
				pending = out.UnprocessedItems
			}
			s.record(op, writes, cc, err)
			return mapErr(op, table, err)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// batchGet reads the keys of ka (at most 100) with BatchGetItem, handing
// each found item to each; missing items are skipped.
func (s *Store) batchGet(ctx context.Context, op, table string, ka ddb.KeysAndAttributes,
	each func(map[string]ddb.AttributeValue) error) error {
	pending := map[string]ddb.KeysAndAttributes{table: ka}
	return batchRounds(ctx, op, table, func() bool { return len(pending[table].Keys) > 0 }, func() error {
		out, err := s.c.BatchGetItem(ctx, &ddb.BatchGetItemInput{
			RequestItems: pending, ReturnConsumedCapacity: ddb.ReturnConsumedCapacityTotal})
		var cc *ddb.ConsumedCapacity
		if out != nil {
			cc = sumCapacity(out.ConsumedCapacity)
		}
		s.record(op, reads, cc, err)
		if err != nil {
			return mapErr(op, table, err)
		}
		for _, av := range out.Responses[table] {
			if err := each(av); err != nil {
				return switchboard.Wrap(op, switchboard.EINTERNAL,
					"a stored item could not be read; the operator can find details in the logs", err)
			}
		}
		pending = out.UnprocessedKeys
		return nil
	})
}

// sumCapacity folds a batch's per-table capacities into one.
func sumCapacity(ccs []ddb.ConsumedCapacity) *ddb.ConsumedCapacity {
	if len(ccs) == 0 {
		return nil
	}
	var total float64
	for _, c := range ccs {
		total += deref(c.CapacityUnits)
	}
	return &ddb.ConsumedCapacity{CapacityUnits: &total}
}
