// Package spantable keeps finished spans in the span table (deploy table
// "spans") on their way to an OpenTelemetry backend: Exporter implements
// sb.SpanExporter by writing one batch of spans as one item (gzipped JSON,
// a TTL of a day), whose stream feeds the telemetry-export function in AWS;
// Reader reads the new items in order, which is that stream's stand-in in
// switchboard dev. The spans arrive scrubbed and capped (the Recorder did
// that); this package only stores and reads them, in the form spancodec
// defines. Standard library and the DynamoDB client (ddb) only: every function
// that records spans links it.
package spantable

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/adapters/spantable/spancodec"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Item attributes. An item is pk "spans#<UTC day>", sk "<UTC time, ns>#<random>"
// (so a day's items sort by the time they were written), PayloadAttr the
// gzipped JSON array of the spans, CountAttr how many, and TTLAttr (epoch
// seconds) when DynamoDB deletes it.
const (
	TableID     = "spans" // the table's ID in the deploy catalogue
	PayloadAttr = spancodec.PayloadAttr
	CountAttr   = "n"
	TTLAttr     = "expiresAt"
)

// MaxItemJSON bounds the JSON of one item's spans, before gzip: DynamoDB
// takes items up to 400 KB, and the keys and the rest need a little room.
// A batch whose JSON is longer is written as several items.
const MaxItemJSON = 350_000

// DefaultTTL is how long an item stays in the table when no one reads it
// (the collector was down and the stream gave up): a day.
const DefaultTTL = 24 * time.Hour

// Exporter writes batches of spans to the span table.
type Exporter struct {
	Client *ddb.Client
	Table  string
	TTL    time.Duration    // DefaultTTL when zero
	Now    func() time.Time // time.Now when nil
}

var _ sb.SpanExporter = (*Exporter)(nil)

// ExportSpans implements sb.SpanExporter: one PutItem per MaxItemJSON of
// spans (one for any batch of an ordinary run), within ctx's deadline.
func (e *Exporter) ExportSpans(ctx context.Context, spans []sb.Span) error {
	chunks, err := spancodec.Encode(spans, MaxItemJSON)
	if err != nil {
		return err
	}
	ttl := e.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	for _, c := range chunks {
		now := e.now()
		item := map[string]ddb.AttributeValue{
			"pk":        &ddb.AttributeValueMemberS{Value: dayKey(now)},
			"sk":        &ddb.AttributeValueMemberS{Value: sortKey(now)},
			PayloadAttr: &ddb.AttributeValueMemberB{Value: c.Payload},
			CountAttr:   &ddb.AttributeValueMemberN{Value: strconv.Itoa(c.Spans)},
			TTLAttr:     &ddb.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(ttl).Unix(), 10)},
		}
		if _, err := e.Client.PutItem(ctx, &ddb.PutItemInput{TableName: &e.Table, Item: item}); err != nil {
			return fmt.Errorf("spantable: write %d spans to %s: %w", c.Spans, e.Table, err)
		}
	}
	return nil
}

func (e *Exporter) now() time.Time {
	if e.Now != nil {
		return e.Now().UTC()
	}
	return time.Now().UTC()
}

// Keys. The sort key's time is fixed-width, so text order is time order.
const sortTime = "20060102T150405.000000000Z"

func dayKey(t time.Time) string { return "spans#" + t.Format("2006-01-02") }

func sortKey(t time.Time) string {
	var r [4]byte
	_, _ = rand.Read(r[:]) // crypto/rand does not fail on Linux
	return t.Format(sortTime) + "#" + hex.EncodeToString(r[:])
}

// Item is one stored batch: its sort key and payload.
type Item struct {
	SortKey string
	Payload []byte
}

// Reader reads the items written after a point, in order: the dev runtime's
// stand-in for the table's stream. One Reader is used by one goroutine.
type Reader struct {
	Client *ddb.Client
	Table  string
	Now    func() time.Time // time.Now when nil
	last   string           // sort key of the last item read
}

// NewReader reads the items written from now on.
func NewReader(c *ddb.Client, table string, now func() time.Time) *Reader {
	r := &Reader{Client: c, Table: table, Now: now}
	r.last = r.now().Format(sortTime)
	return r
}

// Next returns at most limit items written after the last one it returned
// (after its creation at first), oldest first: a Query of the last item's
// day from its sort key on, then of every later day up to today.
func (r *Reader) Next(ctx context.Context, limit int) ([]Item, error) {
	var out []Item
	day, err := time.Parse(sortTime[:8], r.last[:8])
	if err != nil {
		return nil, fmt.Errorf("spantable: sort key %q: %w", r.last, err)
	}
	today := r.now()
	for ; !day.After(today) && len(out) < limit; day = day.AddDate(0, 0, 1) {
		items, err := r.query(ctx, dayKey(day), limit-len(out))
		if err != nil {
			return out, err
		}
		out = append(out, items...)
	}
	return out, nil
}

func (r *Reader) query(ctx context.Context, pk string, limit int) ([]Item, error) {
	var out []Item
	var start map[string]ddb.AttributeValue
	for len(out) < limit {
		res, err := r.Client.Query(ctx, &ddb.QueryInput{
			TableName:              &r.Table,
			KeyConditionExpression: strPtr("pk = :pk AND sk > :last"),
			ExpressionAttributeValues: map[string]ddb.AttributeValue{
				":pk": &ddb.AttributeValueMemberS{Value: pk}, ":last": &ddb.AttributeValueMemberS{Value: r.last},
			},
			Limit:             int32Ptr(int32(limit - len(out))),
			ExclusiveStartKey: start,
			ConsistentRead:    boolPtr(true),
		})
		if err != nil {
			return out, fmt.Errorf("spantable: read %s of %s: %w", pk, r.Table, err)
		}
		for _, it := range res.Items {
			sk, _ := it["sk"].(*ddb.AttributeValueMemberS)
			p, _ := it[PayloadAttr].(*ddb.AttributeValueMemberB)
			if sk == nil || p == nil {
				return out, errors.New("spantable: an item in " + r.Table + " has no sk or payload; the table holds spans only")
			}
			out = append(out, Item{SortKey: sk.Value, Payload: p.Value})
			r.last = sk.Value
		}
		if res.LastEvaluatedKey == nil {
			break
		}
		start = res.LastEvaluatedKey
	}
	return out, nil
}

func (r *Reader) now() time.Time {
	if r.Now != nil {
		return r.Now().UTC()
	}
	return time.Now().UTC()
}

func strPtr(s string) *string { return &s }
func int32Ptr(n int32) *int32 { return &n }
func boolPtr(b bool) *bool    { return &b }
