// Package telemetry keeps a process's spans on their way to an
// OpenTelemetry backend. Recorder (sb.Telemetry) masks every attribute,
// name, event and error with the instance scrubber, drops content unless
// instance.telemetry.captureContent is on, caps long values, and queues a
// bounded number of spans that an exporter (sb.SpanExporter) sends in
// batches, off the path of whoever recorded them. A span that does not fit
// the queue, or whose export fails or outlasts the flush bound, is dropped
// and counted (Dropped): telemetry never holds up or fails a run.
package telemetry

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Caps on what one span may carry, in bytes, after masking.
const (
	MaxContent = 8 << 10 // a content attribute (a conversation, a tool result)
	MaxValue   = 1 << 10 // any other string
	MaxName    = 128     // a span or event name
)

// Options configures a Recorder.
type Options struct {
	Exporter       sb.SpanExporter
	Scrubber       *scrub.Scrubber // nil masks the well-known patterns only
	CaptureContent bool
	// QueueSize bounds the spans waiting for export (default 2048); a span
	// recorded while it is full is dropped.
	QueueSize int
	// BatchSize is how many spans one export sends at most (default 256).
	BatchSize int
	// FlushTimeout bounds one export (default 2 s): a slow or dead
	// collector costs at most this per batch.
	FlushTimeout time.Duration
	// Interval, when set, exports what is queued this often, and as soon
	// as a batch is full, from a goroutine of the Recorder's own (a
	// long-lived process: switchboard dev, the export function). Zero:
	// only Flush exports (a Lambda flushes at the end of its invocation,
	// since it is frozen in between).
	Interval time.Duration
	Log      *slog.Logger
}

// Recorder implements sb.Telemetry on an exporter.
type Recorder struct {
	o         Options
	mu        sync.Mutex
	queue     []sb.Span
	exporting sync.Mutex // one export at a time
	dropped   atomic.Uint64
	exported  atomic.Uint64
	full      chan struct{}
	stop      chan struct{}
	done      chan struct{}
}

var _ sb.Telemetry = (*Recorder)(nil)

// New returns a Recorder; with o.Interval set it exports in the
// background until Close.
func New(o Options) *Recorder {
	if o.QueueSize <= 0 {
		o.QueueSize = 2048
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 256
	}
	if o.FlushTimeout <= 0 {
		o.FlushTimeout = 2 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	r := &Recorder{o: o, full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if o.Interval > 0 {
		go r.loop()
	} else {
		close(r.done)
	}
	return r
}

// CapturesContent implements sb.Telemetry.
func (r *Recorder) CapturesContent() bool { return r.o.CaptureContent }

// Record implements sb.Telemetry: it cleans s and queues it, or drops it
// when the queue is full.
func (r *Recorder) Record(_ context.Context, s sb.Span) {
	s = r.clean(s)
	r.mu.Lock()
	if len(r.queue) >= r.o.QueueSize {
		r.mu.Unlock()
		r.dropped.Add(1)
		return
	}
	r.queue = append(r.queue, s)
	n := len(r.queue)
	r.mu.Unlock()
	if n >= r.o.BatchSize {
		select {
		case r.full <- struct{}{}:
		default:
		}
	}
}

// Flush exports everything queued, each batch within FlushTimeout (and
// ctx). Spans of a failed batch are dropped and counted; Flush returns the
// last such error.
func (r *Recorder) Flush(ctx context.Context) error {
	r.exporting.Lock()
	defer r.exporting.Unlock()
	var last error
	for {
		r.mu.Lock()
		n := min(len(r.queue), r.o.BatchSize)
		batch := r.queue[:n:n]
		r.queue = r.queue[n:]
		r.mu.Unlock()
		if n == 0 {
			return last
		}
		// The caller's cancellation does not cut an export short (a run's
		// context ends with the run), its deadline does.
		deadline := time.Now().Add(r.o.FlushTimeout)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		bctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		err := r.o.Exporter.ExportSpans(bctx, batch)
		cancel()
		if err != nil {
			r.dropped.Add(uint64(n))
			r.o.Log.WarnContext(ctx, "telemetry: spans dropped, the collector did not take them", "spans", n, "droppedTotal", r.dropped.Load(), "err", err)
			last = err
			continue
		}
		r.exported.Add(uint64(n))
	}
}

// Dropped counts the spans lost so far: queue full, export failed or timed
// out.
func (r *Recorder) Dropped() uint64 { return r.dropped.Load() }

// Exported counts the spans the exporter took.
func (r *Recorder) Exported() uint64 { return r.exported.Load() }

// Close stops the background export and flushes what is left.
func (r *Recorder) Close(ctx context.Context) error {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	<-r.done
	return r.Flush(ctx)
}

func (r *Recorder) loop() {
	defer close(r.done)
	t := time.NewTicker(r.o.Interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		case <-r.full:
		}
		_ = r.Flush(context.Background())
	}
}

// clean masks every text of s, drops content unless captured and caps
// what is long.
func (r *Recorder) clean(s sb.Span) sb.Span {
	s.Name = scrub.Cap(r.o.Scrubber.String(s.Name), MaxName)
	s.Error = scrub.Cap(r.o.Scrubber.String(s.Error), MaxValue)
	s.Attrs = r.attrs(s.Attrs)
	events := make([]sb.SpanEvent, len(s.Events))
	for i, e := range s.Events {
		events[i] = sb.SpanEvent{Name: scrub.Cap(r.o.Scrubber.String(e.Name), MaxName), Time: e.Time, Attrs: r.attrs(e.Attrs)}
	}
	s.Events = events
	return s
}

func (r *Recorder) attrs(in []sb.Attr) []sb.Attr {
	out := make([]sb.Attr, 0, len(in))
	for _, a := range in {
		content := sb.IsContentKey(a.Key)
		if content && !r.o.CaptureContent {
			continue
		}
		switch v := a.Value.(type) {
		case string:
			limit := MaxValue
			if content {
				limit = MaxContent
			}
			a.Value = scrub.Cap(r.o.Scrubber.String(v), limit)
		case int64, float64, bool:
		default:
			continue // not a type the constructors make
		}
		out = append(out, a)
	}
	return out
}
