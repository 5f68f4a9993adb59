// Package spancodec is the stored form of the span table's items: a batch
// of spans as gzipped JSON with short keys, typed attribute values, ids in
// hex and times in Unix nanoseconds. The table's writer (spantable) and its
// reader (the telemetry-export function, which links no DynamoDB client)
// share it.
package spancodec

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// PayloadAttr is the item attribute (binary) that holds the payload.
const PayloadAttr = "spans"

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
			return nil, fmt.Errorf("spancodec: encode span %s: %w", s.Name, err)
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
		return nil, fmt.Errorf("spancodec: payload is not gzip: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("spancodec: unzip payload: %w", err)
	}
	var ws []wireSpan
	if err := json.Unmarshal(raw, &ws); err != nil {
		return nil, fmt.Errorf("spancodec: payload is not a JSON array of spans: %w", err)
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
		return nil, fmt.Errorf("spancodec: gzip: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("spancodec: gzip: %w", err)
	}
	return z.Bytes(), nil
}

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
		return s, fmt.Errorf("spancodec: span %s: trace id: %w", w.Name, err)
	}
	if err := unhex(s.ID[:], w.ID); err != nil {
		return s, fmt.Errorf("spancodec: span %s: span id: %w", w.Name, err)
	}
	if w.Parent != "" {
		if err := unhex(s.Parent[:], w.Parent); err != nil {
			return s, fmt.Errorf("spancodec: span %s: parent id: %w", w.Name, err)
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
