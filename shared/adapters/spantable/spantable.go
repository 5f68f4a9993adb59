// Package spantable keeps finished spans in the span table (deploy table
// "spans") on their way to an OpenTelemetry backend: Exporter implements
// sb.SpanExporter by writing one batch of spans as one item (gzipped JSON,
// a TTL of a day), whose stream feeds the telemetry-export function in AWS;
// Reader reads the new items in order, which is that stream's stand-in in
// switchboard dev. The spans arrive scrubbed and capped (the Recorder did
// that); this package only stores and reads them. Standard library and the
// DynamoDB client only: every function that records spans links it.
package spantable

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Item attributes. An item is pk "spans#<UTC day>", sk "<UTC time, ns>#<random>"
// (so a day's items sort by the time they were written), PayloadAttr the
// gzipped JSON array of the spans, CountAttr how many, and TTLAttr (epoch
// seconds) when DynamoDB deletes it.
const (
	TableID     = "spans" // the table's ID in the deploy catalogue
	PayloadAttr = "spans"
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
	Client *dynamodb.Client
	Table  string
	TTL    time.Duration    // DefaultTTL when zero
	Now    func() time.Time // time.Now when nil
}

var _ sb.SpanExporter = (*Exporter)(nil)

// ExportSpans implements sb.SpanExporter: one PutItem per MaxItemJSON of
// spans (one for any batch of an ordinary run), within ctx's deadline.
func (e *Exporter) ExportSpans(ctx context.Context, spans []sb.Span) error {
	chunks, err := Encode(spans, MaxItemJSON)
	if err != nil {
		return err
	}
	ttl := e.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	for _, c := range chunks {
		now := e.now()
		item := map[string]types.AttributeValue{
			"pk":        &types.AttributeValueMemberS{Value: dayKey(now)},
			"sk":        &types.AttributeValueMemberS{Value: sortKey(now)},
			PayloadAttr: &types.AttributeValueMemberB{Value: c.Payload},
			CountAttr:   &types.AttributeValueMemberN{Value: strconv.Itoa(c.Spans)},
			TTLAttr:     &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(ttl).Unix(), 10)},
		}
		if _, err := e.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: &e.Table, Item: item}); err != nil {
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

// Chunk is the payload of one item: gzipped JSON of Spans spans.
type Chunk struct {
	Payload []byte
	Spans   int
}

// Encode splits spans into payloads whose JSON is at most maxJSON bytes
// each (a single span longer than that gets a payload of its own).
func Encode(spans []sb.Span, maxJSON int) ([]Chunk, error) {
	var out []Chunk
	var buf bytes.Buffer
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		buf.WriteByte(']')
		z, err := gzipped(buf.Bytes())
		if err != nil {
			return err
		}
		out = append(out, Chunk{Payload: z, Spans: n})
		buf.Reset()
		n = 0
		return nil
	}
	for _, s := range spans {
		b, err := json.Marshal(toWire(s))
		if err != nil {
			return nil, fmt.Errorf("spantable: encode span %s: %w", s.Name, err)
		}
		if n > 0 && buf.Len()+1+len(b)+1 > maxJSON {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		if n == 0 {
			buf.WriteByte('[')
		} else {
			buf.WriteByte(',')
		}
		buf.Write(b)
		n++
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// Decode is the spans of one item's payload.
func Decode(payload []byte) ([]sb.Span, error) {
	zr, err := gzip.NewReader(bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("spantable: payload is not gzip: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("spantable: unzip payload: %w", err)
	}
	var ws []wireSpan
	if err := json.Unmarshal(raw, &ws); err != nil {
		return nil, fmt.Errorf("spantable: payload is not a JSON array of spans: %w", err)
	}
	out := make([]sb.Span, 0, len(ws))
	for _, w := range ws {
		s, err := fromWire(w)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func gzipped(b []byte) ([]byte, error) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(b); err != nil {
		return nil, fmt.Errorf("spantable: gzip: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("spantable: gzip: %w", err)
	}
	return z.Bytes(), nil
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
	Client *dynamodb.Client
	Table  string
	Now    func() time.Time // time.Now when nil
	last   string           // sort key of the last item read
}

// NewReader reads the items written from now on.
func NewReader(c *dynamodb.Client, table string, now func() time.Time) *Reader {
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
	var start map[string]types.AttributeValue
	for len(out) < limit {
		res, err := r.Client.Query(ctx, &dynamodb.QueryInput{
			TableName:              &r.Table,
			KeyConditionExpression: strPtr("pk = :pk AND sk > :last"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk": &types.AttributeValueMemberS{Value: pk}, ":last": &types.AttributeValueMemberS{Value: r.last},
			},
			Limit:             int32Ptr(int32(limit - len(out))),
			ExclusiveStartKey: start,
			ConsistentRead:    boolPtr(true),
		})
		if err != nil {
			return out, fmt.Errorf("spantable: read %s of %s: %w", pk, r.Table, err)
		}
		for _, it := range res.Items {
			sk, _ := it["sk"].(*types.AttributeValueMemberS)
			p, _ := it[PayloadAttr].(*types.AttributeValueMemberB)
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

// The stored form of a span: short keys (an item is billed per KB), ids in
// hex, times in Unix nanoseconds, each attribute with its value's type.
type wireSpan struct {
	Trace  string      `json:"t"`
	ID     string      `json:"i"`
	Parent string      `json:"p,omitempty"`
	Name   string      `json:"n"`
	Kind   string      `json:"k,omitempty"`
	Start  int64       `json:"s"`
	End    int64       `json:"e"`
	Attrs  []wireAttr  `json:"a,omitempty"`
	Events []wireEvent `json:"v,omitempty"`
	Error  string      `json:"x,omitempty"`
}

type wireEvent struct {
	Name  string     `json:"n"`
	Time  int64      `json:"t"`
	Attrs []wireAttr `json:"a,omitempty"`
}

type wireAttr struct {
	Key   string   `json:"k"`
	Str   *string  `json:"s,omitempty"`
	Int   *int64   `json:"i,omitempty"`
	Float *float64 `json:"f,omitempty"`
	Bool  *bool    `json:"b,omitempty"`
}

func toWire(s sb.Span) wireSpan {
	w := wireSpan{Trace: s.Trace.String(), ID: s.ID.String(), Name: s.Name, Kind: s.Kind,
		Start: s.Start.UnixNano(), End: s.End.UnixNano(), Attrs: toWireAttrs(s.Attrs), Error: s.Error}
	if !s.Parent.IsZero() {
		w.Parent = s.Parent.String()
	}
	for _, e := range s.Events {
		w.Events = append(w.Events, wireEvent{Name: e.Name, Time: e.Time.UnixNano(), Attrs: toWireAttrs(e.Attrs)})
	}
	return w
}

func toWireAttrs(in []sb.Attr) []wireAttr {
	var out []wireAttr
	for _, a := range in {
		w := wireAttr{Key: a.Key}
		switch v := a.Value.(type) {
		case string:
			w.Str = &v
		case int64:
			w.Int = &v
		case float64:
			w.Float = &v
		case bool:
			w.Bool = &v
		default:
			continue // not a type the constructors make
		}
		out = append(out, w)
	}
	return out
}

func fromWire(w wireSpan) (sb.Span, error) {
	s := sb.Span{Name: w.Name, Kind: w.Kind, Start: time.Unix(0, w.Start), End: time.Unix(0, w.End),
		Attrs: fromWireAttrs(w.Attrs), Error: w.Error}
	if err := unhex(s.Trace[:], w.Trace); err != nil {
		return s, fmt.Errorf("spantable: span %s: trace id: %w", w.Name, err)
	}
	if err := unhex(s.ID[:], w.ID); err != nil {
		return s, fmt.Errorf("spantable: span %s: span id: %w", w.Name, err)
	}
	if w.Parent != "" {
		if err := unhex(s.Parent[:], w.Parent); err != nil {
			return s, fmt.Errorf("spantable: span %s: parent id: %w", w.Name, err)
		}
	}
	for _, e := range w.Events {
		s.Events = append(s.Events, sb.SpanEvent{Name: e.Name, Time: time.Unix(0, e.Time), Attrs: fromWireAttrs(e.Attrs)})
	}
	return s, nil
}

func fromWireAttrs(in []wireAttr) []sb.Attr {
	var out []sb.Attr
	for _, w := range in {
		switch {
		case w.Str != nil:
			out = append(out, sb.StringAttr(w.Key, *w.Str))
		case w.Int != nil:
			out = append(out, sb.Attr{Key: w.Key, Value: *w.Int})
		case w.Float != nil:
			out = append(out, sb.FloatAttr(w.Key, *w.Float))
		case w.Bool != nil:
			out = append(out, sb.BoolAttr(w.Key, *w.Bool))
		}
	}
	return out
}

func unhex(dst []byte, s string) error {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(dst) {
		return fmt.Errorf("%q is not %d bytes of hex", s, len(dst))
	}
	copy(dst, b)
	return nil
}
