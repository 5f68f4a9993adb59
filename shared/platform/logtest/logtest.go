// Package logtest captures what code under test logs: as records to count
// and inspect (New), or as text (Buffer). Safe for concurrent use. Tests
// only.
package logtest

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
)

// Record is one captured log record with its attributes flattened (group
// names are dropped).
type Record struct {
	Level slog.Level
	Msg   string
	Attrs map[string]any
}

// Records is what a logger from New wrote.
type Records struct {
	mu   sync.Mutex
	recs []Record
}

// New returns a logger that records every record at every level.
func New() (*slog.Logger, *Records) {
	r := &Records{}
	return slog.New(handler{r: r}), r
}

// All returns every record so far, oldest first.
func (r *Records) All() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Record(nil), r.recs...)
}

// Find returns the records with message msg.
func (r *Records) Find(msg string) []Record {
	var out []Record
	for _, x := range r.All() {
		if x.Msg == msg {
			out = append(out, x)
		}
	}
	return out
}

// Count is how many records have message msg.
func (r *Records) Count(msg string) int { return len(r.Find(msg)) }

type handler struct {
	r     *Records
	attrs []slog.Attr
}

func (h handler) Enabled(context.Context, slog.Level) bool { return true }

func (h handler) Handle(_ context.Context, rec slog.Record) error {
	x := Record{Level: rec.Level, Msg: rec.Message, Attrs: map[string]any{}}
	for _, a := range h.attrs {
		x.Attrs[a.Key] = a.Value.Any()
	}
	rec.Attrs(func(a slog.Attr) bool {
		x.Attrs[a.Key] = a.Value.Any()
		return true
	})
	h.r.mu.Lock()
	defer h.r.mu.Unlock()
	h.r.recs = append(h.r.recs, x)
	return nil
}

func (h handler) WithAttrs(as []slog.Attr) slog.Handler {
	return handler{r: h.r, attrs: append(append([]slog.Attr{}, h.attrs...), as...)}
}

func (h handler) WithGroup(string) slog.Handler { return h }

// Buffer is a bytes.Buffer that many goroutines may write to while a test
// reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
