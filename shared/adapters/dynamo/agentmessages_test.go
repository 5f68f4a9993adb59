package dynamo_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob/s3fake"
	"github.com/switchboard-dev/switchboard/shared/adapters/storetest"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// newMessages is an AgentMessages on fresh tables and a fresh bucket.
func newMessages(t testing.TB) (*dynamo.Store, *dynamo.AgentMessages) {
	t.Helper()
	c := dynamotest.Client(t)
	s := dynamo.New(c, dynamotest.FreshTables(t, c))
	return s, s.AgentMessages(s3fake.StoreFor(t, "messages"))
}

func TestAgentMessages(t *testing.T) {
	storetest.RunAgentMessages(t, func(t *testing.T) switchboard.AgentMessageStore {
		_, m := newMessages(t)
		return m
	})
}

func TestRecordAll(t *testing.T) {
	storetest.RunRecordAll(t, func(t *testing.T) (switchboard.AgentMessageStore, storetest.ReceiptsAndLeases) {
		s, m := newMessages(t)
		return m, s
	})
}

// TestRecordAllIsOneRequest: a question and an answer of a few words,
// their search rows, the run's receipt and the lease's release are one
// BatchWriteItem across the three tables; 30 messages of five words (180
// items) are eight.
func TestRecordAllIsOneRequest(t *testing.T) {
	s, m := newMessages(t)
	at := time.Now()
	msg := func(i int) switchboard.AgentMessage {
		return switchboard.AgentMessage{ID: fmt.Sprintf("m%02d", i), From: "bob", To: "alice", Channel: switchboard.ChannelAsk,
			Direction: switchboard.DirectionResponse, Status: switchboard.MessageDelivered, Content: "forty two trucks today, roughly",
			RunID: "run-bob", RootRunID: "root", OccurredAt: at.Add(time.Duration(i) * time.Millisecond)}
	}
	rec := switchboard.Receipt{Run: switchboard.RunContext{RunID: "run-bob", RootRunID: "root", AgentID: "bob"}, AgentID: "bob", StartedAt: at}
	question := msg(0)
	question.ID, question.From, question.To, question.Direction, question.Content = "q", "alice", "bob", switchboard.DirectionRequest, "how many trucks?"
	if ok, err := s.Acquire(t.Context(), "agent#bob", "h", at.Add(time.Minute)); err != nil || !ok {
		t.Fatalf("Acquire = %v, %v", ok, err)
	}
	if err := m.RecordAll(t.Context(), switchboard.MessageBatch{Messages: []switchboard.AgentMessage{question, msg(0)},
		Receipt: &rec, Release: "agent#bob"}); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().Ops["agentMessages.recordAll"].Calls; got != 1 {
		t.Errorf("RecordAll of a question, its answer, the receipt and the lease: %d requests, want 1", got)
	}
	var many []switchboard.AgentMessage
	for i := range 30 {
		many = append(many, msg(i+1))
	}
	if err := m.RecordAll(t.Context(), switchboard.MessageBatch{Messages: many}); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().Ops["agentMessages.recordAll"].Calls; got != 1+8 {
		t.Errorf("RecordAll of 180 items: %d requests, want 8 more", got-1)
	}
}

// scanAll reads every item of the agentmessages table (a test may scan).
func scanAll(t *testing.T, c *dynamodb.Client, table string) []map[string]types.AttributeValue {
	t.Helper()
	var items []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(c, &dynamodb.ScanInput{TableName: &table})
	for p.HasMorePages() {
		out, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		items = append(items, out.Items...)
	}
	return items
}

// TestAgentMessageRetentionStampsEveryRow: with a retention every row of a
// message (the message and each of its search rows) carries expiresAt =
// OccurredAt + retention; with 0 none does.
func TestAgentMessageRetentionStampsEveryRow(t *testing.T) {
	at := time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		retention time.Duration
		want      string // expiresAt, "" = absent
	}{
		{"30 days", 30 * 24 * time.Hour, strconv.FormatInt(at.Add(30*24*time.Hour).Unix(), 10)},
		{"forever", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dynamotest.Client(t)
			getenv := dynamotest.FreshTables(t, c)
			s := dynamo.New(c, getenv)
			s.AgentMessageRetention = tc.retention
			m := switchboard.AgentMessage{
				ID: "m1", From: "alice", To: "bob", Channel: switchboard.ChannelAsk,
				Direction: switchboard.DirectionRequest, Content: "where is the quarterly report draft",
				RunID: "r1", RootRunID: "r1", Status: switchboard.MessageTimeout, OccurredAt: at,
			}
			if err := s.AgentMessages(nil).Record(t.Context(), m); err != nil {
				t.Fatal(err)
			}
			table, _ := deploy.TableByID("agentmessages")
			items := scanAll(t, dynamotest.SDKClient(t), deploy.TableName(table, getenv))
			if want := 1 + len(switchboard.IndexTerms(m.Content)); len(items) != want {
				t.Fatalf("%d rows, want %d (message + one per word)", len(items), want)
			}
			for _, it := range items {
				got := ""
				if v, ok := it["expiresAt"].(*types.AttributeValueMemberN); ok {
					got = v.Value
				}
				if got != tc.want {
					t.Errorf("row %v: expiresAt %q, want %q", it["pk"], got, tc.want)
				}
			}
		})
	}
}

// TestAgentMessageRecordCost: one message is one PutItem plus one
// BatchWriteItem per 25 indexed words (of 60 distinct words the 40 that
// IndexTerms keeps: two), and a page of the pair view is one Query.
func TestAgentMessageRecordCost(t *testing.T) {
	s, msgs := newMessages(t)
	words := make([]string, 60)
	for i := range words {
		words[i] = fmt.Sprintf("word%02d", i)
	}
	m := switchboard.AgentMessage{
		ID: "m1", From: "alice", To: "bob", Channel: switchboard.ChannelTask,
		Direction: switchboard.DirectionRequest, Content: strings.Join(words, " "),
		RunID: "r1", RootRunID: "r1", Status: switchboard.MessageDelivered, OccurredAt: time.Now(),
	}
	if err := msgs.Record(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	st := s.Stats().Ops
	if got := st["agentMessages.record"].Calls; got != 1 {
		t.Errorf("PutItem calls %d, want 1", got)
	}
	if got, want := st["agentMessages.index"].Calls, int64(switchboard.MaxIndexedTerms+24)/25; got != want {
		t.Errorf("BatchWriteItem calls for 60 words %d, want %d", got, want)
	}
	if _, err := msgs.Pair(t.Context(), "bob", "alice", switchboard.MessageQuery{}); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().Ops["agentMessages.pair"].Calls; got != 1 {
		t.Errorf("pair view Query calls %d, want 1", got)
	}
	if _, err := msgs.Agent(t.Context(), "bob", switchboard.MessageQuery{}); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().Ops["agentMessages.agent"].Calls; got != 2 {
		t.Errorf("agent view Query calls %d, want 2 (byFrom, byTo)", got)
	}
}

// TestAgentMessagesSearchAcrossPages runs the contract with search rows read
// two per page, so that words span pages and both ways of intersecting run:
// reading every word to the end, and looking up candidates of a rare word
// in a common one.
func TestAgentMessagesSearchAcrossPages(t *testing.T) {
	dynamo.SetSearchFirstPage(t, 2)
	storetest.RunAgentMessages(t, func(t *testing.T) switchboard.AgentMessageStore {
		_, m := newMessages(t)
		return m
	})
}

// TestAgentMessagesSearchLooksUpRareWordCandidates: with four search rows
// per first page, "beta" (in 40 messages a second apart) does not end
// within its page and a rare word (one old message) does. The rare word
// drives; its candidate lies an hour beyond beta's first page, where
// reading beta on would cost far more than one lookup, so it is looked up,
// and beta is never read to the end.
func TestAgentMessagesSearchLooksUpRareWordCandidates(t *testing.T) {
	dynamo.SetSearchFirstPage(t, 4)
	s, msgs := newMessages(t)
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	add := func(id, content string, when time.Time) {
		t.Helper()
		m := switchboard.AgentMessage{
			ID: id, From: "alice", To: "bob", Channel: switchboard.ChannelAsk,
			Direction: switchboard.DirectionRequest, Content: content, RunID: "r", RootRunID: "r",
			Status: switchboard.MessageDelivered, OccurredAt: when,
		}
		if err := msgs.Record(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	add("old1", "rone beta", at)
	add("old2", "rtwo", at.Add(time.Second))
	for i := range 40 {
		add(fmt.Sprintf("b%02d", i), "beta", at.Add(time.Hour+time.Duration(i)*time.Second))
	}
	for _, tc := range []struct {
		text, want string
		calls      int64
	}{
		{"rone beta", "old1", 4}, // two first pages, one lookup, one message fetch
		{"rtwo beta", "", 3},     // two first pages, one lookup (not found)
		{"beta rone", "old1", 4}, // the order of the words does not matter
	} {
		before := s.Stats().Ops["agentMessages.search"].Calls
		p, err := msgs.Search(t.Context(), switchboard.MessageSearch{Text: tc.text})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(p.Messages); got != tc.want {
			t.Errorf("search %q: [%s], want [%s]", tc.text, got, tc.want)
		}
		if got := s.Stats().Ops["agentMessages.search"].Calls - before; got != tc.calls {
			t.Errorf("search %q: %d calls, want %d", tc.text, got, tc.calls)
		}
	}
}

// TestAgentMessagesSearchIsBoundedPerCall: two dense words that meet in
// few messages cannot fill a page within one call's budget of search rows;
// the call answers what it found with a cursor, and following the cursors
// finds every message with both words, newest first, each once.
func TestAgentMessagesSearchIsBoundedPerCall(t *testing.T) {
	dynamo.SetSearchBudget(t, 0.5) // about 37 search rows
	dynamo.SetSearchFirstPage(t, 10)
	s, msgs := newMessages(t)
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	var want []string
	for i := range 200 {
		content := "alpha"
		if i%2 == 1 {
			content = "gamma"
		}
		if i%40 == 0 {
			content = "alpha gamma"
			want = append([]string{fmt.Sprintf("m%03d", i)}, want...)
		}
		m := switchboard.AgentMessage{
			ID: fmt.Sprintf("m%03d", i), From: "alice", To: "bob", Channel: switchboard.ChannelAsk,
			Direction: switchboard.DirectionRequest, Content: content, RunID: "r", RootRunID: "r",
			Status: switchboard.MessageDelivered, OccurredAt: at.Add(time.Duration(i) * time.Second),
		}
		if err := msgs.Record(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	cursor, calls, pages := "", int64(0), 0
	for ; pages < 100; pages++ {
		before := s.Stats().Ops["agentMessages.search"].Calls
		p, err := msgs.Search(t.Context(), switchboard.MessageSearch{Text: "alpha gamma",
			MessageQuery: switchboard.MessageQuery{Limit: 10, Cursor: cursor}})
		if err != nil {
			t.Fatal(err)
		}
		calls = max(calls, s.Stats().Ops["agentMessages.search"].Calls-before)
		for _, m := range p.Messages {
			got = append(got, m.ID)
		}
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("all pages: [%s], want [%s]", strings.Join(got, ","), strings.Join(want, ","))
	}
	if pages < 2 {
		t.Errorf("one page: the budget did not bound the call")
	}
	if calls > 8 {
		t.Errorf("a call made %d requests; the budget should bound it", calls)
	}
}

func ids(ms []switchboard.AgentMessage) string {
	var s []string
	for _, m := range ms {
		s = append(s, m.ID)
	}
	return strings.Join(s, ",")
}

// The message and its search rows are written at once; while the search
// rows failed, Record fails even though the message is in, and the retry
// writes them and answers ECONFLICT (the message exists): the message is
// then found by its words.
func TestAgentMessageRecordRetryCompletesItsSearchRows(t *testing.T) {
	s, proxy := proxiedStore(t)
	msgs := s.AgentMessages(s3fake.StoreFor(t, "messages"))
	m := switchboard.AgentMessage{
		ID: "m1", From: "alice", To: "bob", Channel: switchboard.ChannelAsk,
		Direction: switchboard.DirectionRequest, Content: "how many trucks are on the road",
		RunID: "r1", RootRunID: "r1", Status: switchboard.MessageDelivered, OccurredAt: time.Now(),
	}
	proxy.SetThrottle(dynamotest.Throttle{Ops: []string{"BatchWriteItem"}, Next: dynamo.MaxAttempts})
	if err := msgs.Record(t.Context(), m); err == nil || switchboard.ErrorCode(err) == switchboard.ECONFLICT {
		t.Fatalf("Record with its search rows throttled = %v, want an error other than ECONFLICT", err)
	}
	if page, err := msgs.Pair(t.Context(), "alice", "bob", switchboard.MessageQuery{}); err != nil || len(page.Messages) != 1 {
		t.Fatalf("pair = %+v, %v; want the message written", page.Messages, err)
	}
	proxy.SetThrottle(dynamotest.Throttle{})
	if err := msgs.Record(t.Context(), m); switchboard.ErrorCode(err) != switchboard.ECONFLICT {
		t.Fatalf("retried Record = %v, want ECONFLICT", err)
	}
	page, err := msgs.Search(t.Context(), switchboard.MessageSearch{Text: "trucks road"})
	if err != nil || len(page.Messages) != 1 || page.Messages[0].ID != "m1" {
		t.Fatalf("search = %+v, %v; want m1", page.Messages, err)
	}
}

// TestAgentMessageIndexesCarryShortContentOnly: every index entry of a
// message carries its content up to IndexedContent bytes and no longer
// content, so that an entry is one write unit; the table keeps the body.
func TestAgentMessageIndexesCarryShortContentOnly(t *testing.T) {
	c := dynamotest.Client(t)
	getenv := dynamotest.FreshTables(t, c)
	s := dynamo.New(c, getenv)
	msgs := s.AgentMessages(nil)
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	short := strings.Repeat("s", dynamo.IndexedContent)
	long := strings.Repeat("l", dynamo.IndexedContent+1)
	for i, content := range []string{short, long} {
		m := switchboard.AgentMessage{
			ID: fmt.Sprintf("m%d", i), From: "alice", To: "bob", Channel: switchboard.ChannelAsk,
			Direction: switchboard.DirectionRequest, Content: content, RunID: "r", RootRunID: "root",
			Status: switchboard.MessageDelivered, OccurredAt: at.Add(time.Duration(i) * time.Minute),
		}
		if err := msgs.Record(t.Context(), m); err != nil {
			t.Fatal(err)
		}
	}
	table, _ := deploy.TableByID("agentmessages")
	name := deploy.TableName(table, getenv)
	for _, ix := range []struct{ name, key, value string }{
		{deploy.IndexByFrom, "fromAgent", "alice"}, {deploy.IndexByTo, "toAgent", "bob"},
		{deploy.IndexByRoot, "rootRunId", "root"}, {deploy.IndexByMonth, "month", "2026-03"},
	} {
		out, err := dynamotest.SDKClient(t).Query(t.Context(), &dynamodb.QueryInput{
			TableName: &name, IndexName: &ix.name, KeyConditionExpression: aws.String("#k = :v"),
			ExpressionAttributeNames:  map[string]string{"#k": ix.key},
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: ix.value}},
		})
		if err != nil {
			t.Fatalf("%s: %v", ix.name, err)
		}
		if len(out.Items) != 2 {
			t.Fatalf("%s: %d entries, want 2", ix.name, len(out.Items))
		}
		for _, it := range out.Items {
			content, _ := it["content"].(*types.AttributeValueMemberS)
			_, hasBody := it["body"]
			switch id := it["id"].(*types.AttributeValueMemberS).Value; {
			case id == "m0" && (content == nil || content.Value != short):
				t.Errorf("%s: the short message's entry lacks its content", ix.name)
			case id == "m1" && (content != nil || hasBody):
				t.Errorf("%s: the long message's entry carries its content", ix.name)
			}
		}
	}
}

// TestAgentMessagesReadFormerRows: rows written before the content split
// (all content in "content", search rows with "mpk") read as before in
// every view and in search.
func TestAgentMessagesReadFormerRows(t *testing.T) {
	c := dynamotest.Client(t)
	getenv := dynamotest.FreshTables(t, c)
	msgs := dynamo.New(c, getenv).AgentMessages(nil)
	table, _ := deploy.TableByID("agentmessages")
	name := deploy.TableName(table, getenv)
	content := "former layout " + strings.Repeat("lorem ", 300)
	sk := "2026-03-14T09:00:00.000000000Z#m1"
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	items := []map[string]types.AttributeValue{
		{"pk": s("pair#alice|bob"), "sk": s(sk), "fromAgent": s("alice"), "toAgent": s("bob"), "rootRunId": s("root"),
			"month": s("2026-03"), "id": s("m1"), "pairKey": s("alice|bob"), "channel": s("ask"), "direction": s("request"),
			"content": s(content), "contentBytes": &types.AttributeValueMemberN{Value: strconv.Itoa(len(content))},
			"runId": s("r1"), "status": s("delivered"), "occurredAt": s(sk[:30])},
	}
	for _, w := range switchboard.SearchTerms(content, 0) {
		items = append(items, map[string]types.AttributeValue{"pk": s("tok#" + w), "sk": s(sk),
			"mpk": s("pair#alice|bob"), "pair": s("alice|bob"), "ch": s("ask")})
	}
	for _, it := range items {
		if _, err := dynamotest.SDKClient(t).PutItem(t.Context(), &dynamodb.PutItemInput{TableName: &name, Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	for _, v := range []struct {
		name string
		list func() (switchboard.MessagePage, error)
	}{
		{"pair", func() (switchboard.MessagePage, error) {
			return msgs.Pair(t.Context(), "alice", "bob", switchboard.MessageQuery{})
		}},
		{"agent", func() (switchboard.MessagePage, error) {
			return msgs.Agent(t.Context(), "bob", switchboard.MessageQuery{})
		}},
		{"chain", func() (switchboard.MessagePage, error) {
			return msgs.Chain(t.Context(), "root", switchboard.MessageQuery{})
		}},
		{"all", func() (switchboard.MessagePage, error) {
			return msgs.All(t.Context(), switchboard.MessageQuery{Since: at, Until: at.Add(24 * time.Hour)})
		}},
		{"search", func() (switchboard.MessagePage, error) {
			return msgs.Search(t.Context(), switchboard.MessageSearch{Text: "former lorem"})
		}},
	} {
		p, err := v.list()
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if len(p.Messages) != 1 || p.Messages[0].Content != content || p.Messages[0].ID != "m1" {
			t.Errorf("%s: %d messages, want m1 with its content", v.name, len(p.Messages))
		}
	}
}
