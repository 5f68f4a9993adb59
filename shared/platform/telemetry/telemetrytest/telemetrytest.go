// Package telemetrytest keeps recorded spans in memory, for tests of the
// code that records them. Tests only.
package telemetrytest

import (
	"context"
	"slices"
	"sync"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Spans implements sb.Telemetry in memory, recording every span as given.
type Spans struct {
	Content bool // CapturesContent
	mu      sync.Mutex
	spans   []sb.Span
}

var _ sb.Telemetry = (*Spans)(nil)

// Record implements sb.Telemetry.
func (s *Spans) Record(_ context.Context, span sb.Span) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spans = append(s.spans, span)
}

// CapturesContent implements sb.Telemetry.
func (s *Spans) CapturesContent() bool { return s.Content }

// All returns the spans recorded so far, in order.
func (s *Spans) All() []sb.Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.spans)
}

// Named returns the recorded spans called name.
func (s *Spans) Named(name string) []sb.Span {
	var out []sb.Span
	for _, sp := range s.All() {
		if sp.Name == name {
			out = append(out, sp)
		}
	}
	return out
}

// Attr is the value of key on span, nil when absent.
func Attr(span sb.Span, key string) any {
	for _, a := range span.Attrs {
		if a.Key == key {
			return a.Value
		}
	}
	return nil
}
