package spantable_test

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/spantable"
	"github.com/switchboard-dev/switchboard/shared/adapters/spantable/spancodec"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// table is a fresh span table on the test DynamoDB.
func table(t *testing.T) (*ddb.Client, string) {
	t.Helper()
	c := dynamotest.Client(t)
	getenv := dynamotest.FreshTables(t, c)
	tb, _ := deploy.TableByID("spans")
	return c, deploy.TableName(tb, getenv)
}

// clock is a fake clock that moves by step at every reading.
type clock struct {
	t    time.Time
	step time.Duration
}

func (c *clock) Now() time.Time { c.t = c.t.Add(c.step); return c.t }

func span(name string, parent bool) sb.Span {
	s := sb.Span{Trace: sb.ChainTrace("run-1"), ID: sb.RunSpan(name), Name: "invoke_agent " + name, Kind: sb.SpanClient,
		Start: time.Unix(0, 1_700_000_000_123_456_789), End: time.Unix(0, 1_700_000_001_000_000_001),
		Attrs: []sb.Attr{sb.StringAttr(sb.AttrAgentID, "writer"), sb.IntAttr(sb.AttrInputTokens, 42),
			sb.FloatAttr(sb.AttrCost, 0.0125), sb.BoolAttr("switchboard.flag", true)},
		Events: []sb.SpanEvent{{Name: "retry", Time: time.Unix(0, 1_700_000_000_500_000_000), Attrs: []sb.Attr{sb.IntAttr("attempt", 1)}}},
		Error:  "the model did not answer"}
	if parent {
		s.Parent = sb.RunSpan("parent")
	}
	return s
}

// Spans written by the exporter come back from the reader, in order, with
// every field (ids, kinds, times to the nanosecond, typed attributes,
// events, the error); the item carries a TTL a day ahead.
func TestExportedSpansComeBackInOrder(t *testing.T) {
	c, name := table(t)
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), step: time.Millisecond}
	r := spantable.NewReader(c, name, clk.Now)
	e := &spantable.Exporter{Client: c, Table: name, Now: clk.Now}
	first := []sb.Span{span("a", false), span("b", true)}
	second := []sb.Span{span("c", true)}
	if err := e.ExportSpans(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := e.ExportSpans(ctx, second); err != nil {
		t.Fatal(err)
	}
	items, err := r.Next(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 {
		t.Fatalf("read %d items, want 2 (one per batch)", len(items))
	}
	for i, want := range [][]sb.Span{first, second} {
		got, err := spancodec.Decode(items[i].Payload)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("item %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	// Nothing new: nothing read again.
	if again, err := r.Next(ctx, 10); err != nil || len(again) != 0 {
		t.Errorf("second read: %d items, %v; want none", len(again), err)
	}
	out, err := dynamotest.SDKClient(t).Scan(ctx, &dynamodb.ScanInput{TableName: &name})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range out.Items {
		ttl, _ := it[spantable.TTLAttr].(*types.AttributeValueMemberN)
		secs, _ := strconv.ParseInt(ttl.Value, 10, 64)
		if d := time.Unix(secs, 0).Sub(clk.t); d < 23*time.Hour || d > 25*time.Hour {
			t.Errorf("item expires %v after writing, want a day", d)
		}
	}
}

// A reader reads only what was written after it started, and follows the
// writes across midnight (a partition per day).
func TestReaderStartsNowAndCrossesMidnight(t *testing.T) {
	c, name := table(t)
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 3, 1, 23, 59, 58, 0, time.UTC), step: 0}
	e := &spantable.Exporter{Client: c, Table: name, Now: clk.Now}
	if err := e.ExportSpans(ctx, []sb.Span{span("before", false)}); err != nil {
		t.Fatal(err)
	}
	clk.t = clk.t.Add(time.Second)
	r := spantable.NewReader(c, name, clk.Now)
	clk.t = clk.t.Add(500 * time.Millisecond)
	if err := e.ExportSpans(ctx, []sb.Span{span("late", false)}); err != nil {
		t.Fatal(err)
	}
	clk.t = clk.t.Add(time.Second) // the next day
	if err := e.ExportSpans(ctx, []sb.Span{span("next-day", false)}); err != nil {
		t.Fatal(err)
	}
	items, err := r.Next(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range items {
		spans, err := spancodec.Decode(it.Payload)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range spans {
			names = append(names, s.Name)
		}
	}
	if want := []string{"invoke_agent late", "invoke_agent next-day"}; !reflect.DeepEqual(names, want) {
		t.Errorf("read %v, want %v", names, want)
	}
}

// A batch too big for one item (DynamoDB's 400 KB) is split into items
// under MaxItemJSON of JSON each; all its spans come back, in order.
func TestBigBatchIsSplit(t *testing.T) {
	c, name := table(t)
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), step: time.Microsecond}
	r := spantable.NewReader(c, name, clk.Now)
	e := &spantable.Exporter{Client: c, Table: name, Now: clk.Now}
	var batch []sb.Span
	for i := range 60 { // 60 × 8 KiB of content: about 490 KB of JSON
		s := span("s"+strconv.Itoa(i), true)
		s.Attrs = append(s.Attrs, sb.StringAttr(sb.AttrInputMessages, strings.Repeat(strconv.Itoa(i%10), 8<<10)))
		batch = append(batch, s)
	}
	if err := e.ExportSpans(ctx, batch); err != nil {
		t.Fatal(err)
	}
	items, err := r.Next(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 {
		t.Errorf("%d items, want 2", len(items))
	}
	var got []sb.Span
	for _, it := range items {
		spans, err := spancodec.Decode(it.Payload)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, spans...)
	}
	if !reflect.DeepEqual(got, batch) {
		t.Errorf("got %d spans back, want the %d of the batch in order", len(got), len(batch))
	}
}

func TestEncodeKeepsEachChunkUnderTheLimit(t *testing.T) {
	spans := []sb.Span{span("a", false), span("b", true), span("c", true)}
	one, err := spancodec.Encode(spans[:1], 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		maxJSON int
		want    []int // spans per chunk
	}{
		{"all fit", 1 << 20, []int{3}},
		{"one per chunk", 10, []int{1, 1, 1}},
		{"none", 1 << 20, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := spans
			if tc.want == nil {
				in = nil
			}
			chunks, err := spancodec.Encode(in, tc.maxJSON)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, c := range chunks {
				got = append(got, c.Spans)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("chunks of %v spans, want %v", got, tc.want)
			}
		})
	}
	t.Logf("one span without content: %d bytes of payload", len(one[0].Payload))
}

func TestDecodeRefusesWhatIsNotSpans(t *testing.T) {
	if _, err := spancodec.Decode([]byte("not gzip")); err == nil || !strings.Contains(err.Error(), "not gzip") {
		t.Errorf("Decode(junk) = %v, want a not-gzip error", err)
	}
}

// BenchmarkExportARunsSpans is the flush at the end of an agent-worker
// invocation: one item with a run's spans (an invoke_agent, two chats, a
// tool call) into the span table on dynalite.
func BenchmarkExportARunsSpans(b *testing.B) {
	c := dynamotest.Client(b)
	getenv := dynamotest.FreshTables(b, c)
	tb, _ := deploy.TableByID("spans")
	e := &spantable.Exporter{Client: c, Table: deploy.TableName(tb, getenv)}
	batch := []sb.Span{span("run", false), span("chat1", true), span("chat2", true), span("tool", true)}
	ctx := context.Background()
	for b.Loop() {
		if err := e.ExportSpans(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
}
