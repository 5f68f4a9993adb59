package scrub

import (
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
)

// NewHandler wraps inner so that every record is scrubbed before inner sees
// it: the message, every attribute value (inside groups too, after resolving
// LogValuers), error values, and attributes added with WithAttrs. Values of
// secret-looking keys (IsSecretKey, or any key inside a group with such a
// name) become Mask, except booleans and empty strings. Non-string values
// are rendered first — errors with Error, json.Marshalers and plain structs
// and maps as scrubbed JSON, TextMarshalers and Stringers as scrubbed text —
// so nothing reaches inner unscrubbed. Wrap the root handler: attributes an
// inner handler already holds are not seen.
func NewHandler(inner slog.Handler, s *Scrubber) slog.Handler {
	return &handler{inner: inner, s: s}
}

type handler struct {
	inner  slog.Handler
	s      *Scrubber
	secret bool // inside a group whose name looks secret
}

func (h *handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	clean := slog.NewRecord(r.Time, r.Level, h.s.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		clean.AddAttrs(h.attr(a, h.secret))
		return true
	})
	return h.inner.Handle(ctx, clean)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a, h.secret)
	}
	return &handler{inner: h.inner.WithAttrs(clean), s: h.s, secret: h.secret}
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &handler{inner: h.inner.WithGroup(name), s: h.s, secret: h.secret || IsSecretKey(name)}
}

func (h *handler) attr(a slog.Attr, secret bool) slog.Attr {
	secret = secret || IsSecretKey(a.Key)
	return slog.Attr{Key: h.s.String(a.Key), Value: h.value(a.Value, secret)}
}

func (h *handler) value(v slog.Value, secret bool) slog.Value {
	v = v.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if secret && v.String() != "" {
			return slog.StringValue(Mask)
		}
		return slog.StringValue(h.s.String(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		clean := make([]slog.Attr, len(attrs))
		for i, a := range attrs {
			clean[i] = h.attr(a, secret)
		}
		return slog.GroupValue(clean...)
	case slog.KindInt64, slog.KindUint64, slog.KindFloat64:
		if secret {
			return slog.StringValue(Mask)
		}
		return v
	case slog.KindAny:
		return h.any(v.Any(), secret)
	default: // bool, duration, time: nothing secret fits in them
		return v
	}
}

func (h *handler) any(x any, secret bool) slog.Value {
	if x == nil {
		return slog.AnyValue(nil)
	}
	if rv := reflect.ValueOf(x); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return slog.AnyValue(nil)
	}
	if b, ok := x.(bool); ok {
		return slog.BoolValue(b)
	}
	if secret {
		return slog.StringValue(Mask)
	}
	switch t := x.(type) {
	case error:
		return slog.StringValue(h.s.String(t.Error()))
	case json.RawMessage:
		return slog.AnyValue(scrubbedJSON(h.s.JSON(t)))
	case []byte:
		return slog.StringValue(h.s.String(string(t)))
	case json.Marshaler:
		b, err := t.MarshalJSON()
		if err != nil {
			return slog.StringValue(h.s.String(fmt.Sprintf("!ERROR:%v", err)))
		}
		return jsonValue(h.s.JSON(b))
	case encoding.TextMarshaler:
		b, err := t.MarshalText()
		if err != nil {
			return slog.StringValue(h.s.String(fmt.Sprintf("!ERROR:%v", err)))
		}
		return slog.StringValue(h.s.String(string(b)))
	case fmt.Stringer:
		return slog.StringValue(h.s.String(t.String()))
	}
	b, err := json.Marshal(x)
	if err != nil {
		return slog.StringValue(h.s.String(fmt.Sprintf("%+v", x)))
	}
	return jsonValue(h.s.JSON(b))
}

// jsonValue turns scrubbed JSON back into a slog value: a JSON string
// becomes a string, anything else stays JSON.
func jsonValue(b []byte) slog.Value {
	var s string
	if len(b) > 0 && b[0] == '"' && json.Unmarshal(b, &s) == nil {
		return slog.StringValue(s)
	}
	return slog.AnyValue(scrubbedJSON(b))
}

// scrubbedJSON is already-scrubbed JSON: slog's JSON handler embeds it as is,
// its text handler prints it as text.
type scrubbedJSON []byte

func (j scrubbedJSON) MarshalJSON() ([]byte, error) { return j, nil }
func (j scrubbedJSON) MarshalText() ([]byte, error) { return j, nil }
