package scrub

import (
	"context"
	"slices"
	"strings"
)

// With returns a Scrubber that masks everything s masks plus extra. A client
// uses it to add its own credential to the instance-wide Scrubber it was
// given, so that a client built with a Scrubber that lacks it still never
// sends it. A nil s gives New(extra).
func (s *Scrubber) With(extra ...string) *Scrubber {
	if s == nil {
		return New(extra)
	}
	add := slices.DeleteFunc(slices.Clone(extra), func(v string) bool { return slices.Contains(s.given, v) })
	if len(add) == 0 {
		return s
	}
	return New(append(slices.Clone(s.given), add...))
}

type allowKey struct{}

// minAllowed is the shortest value Allow lets through: a short value would
// shield its surroundings from too little to be worth it and from too much
// if it were a common word.
const minAllowed = 16

// Allow returns a context under which StringContext leaves these exact
// values as they are, although a pattern would mask them. It exists for
// credentials Switchboard itself mints for the person it sends them to (an
// approval link carries its signed token in "token=…"). Only code can put
// values into a context: a model or a chat message cannot widen what is let
// through. A value that contains a configured secret, or is shorter than 16
// bytes, is masked as usual. Values add up over nested calls.
func Allow(ctx context.Context, values ...string) context.Context {
	prev, _ := ctx.Value(allowKey{}).([]string)
	next := slices.Clone(prev)
	for _, v := range values {
		if len(v) >= minAllowed && !slices.Contains(next, v) {
			next = append(next, v)
		}
	}
	return context.WithValue(ctx, allowKey{}, next)
}

// StringContext is String for text leaving Switchboard: the values ctx
// allows (see Allow) are kept verbatim; the text around them is scrubbed as
// String does, piece by piece. Every client that sends text to a person
// calls it once, at the boundary.
func (s *Scrubber) StringContext(ctx context.Context, text string) string {
	allowed, _ := ctx.Value(allowKey{}).([]string)
	if len(allowed) == 0 {
		return s.String(text)
	}
	var spans []span
	for _, v := range allowed {
		if s.containsSecret(v) {
			continue
		}
		for from := 0; ; {
			i := strings.Index(text[from:], v)
			if i < 0 {
				break
			}
			spans = append(spans, span{from + i, from + i + len(v)})
			from += i + len(v)
		}
	}
	if len(spans) == 0 {
		return s.String(text)
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	b.Grow(len(text))
	last := 0
	for k := 0; k < len(spans); {
		start, end := spans[k].start, spans[k].end
		for k++; k < len(spans) && spans[k].start <= end; k++ {
			end = max(end, spans[k].end)
		}
		b.WriteString(s.String(text[last:start]))
		b.WriteString(text[start:end])
		last = end
	}
	b.WriteString(s.String(text[last:]))
	out := b.String()
	if s.containsSecret(out) {
		// A configured secret straddled the edge of an allowed value.
		return s.String(text)
	}
	return out
}
