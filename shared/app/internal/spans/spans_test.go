package spans

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/telemetry"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// exporter keeps what it is given; block makes it wait for the deadline.
type exporter struct {
	mu    sync.Mutex
	got   []sb.Span
	block bool
}

func (e *exporter) ExportSpans(ctx context.Context, spans []sb.Span) error {
	if e.block {
		<-ctx.Done()
		return ctx.Err()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, spans...)
	return nil
}

func recorder(e *exporter) *telemetry.Recorder {
	return telemetry.New(telemetry.Options{Exporter: e, FlushTimeout: FlushBound})
}

// The spans an invocation records are written before it returns.
func TestAfterFlushesWhatTheInvocationRecorded(t *testing.T) {
	e := &exporter{}
	rec := recorder(e)
	h := After(func(ctx context.Context, name string) (string, error) {
		rec.Record(ctx, sb.Span{Name: name})
		return "done", nil
	}, rec)
	out, err := h(context.Background(), "wake writer")
	if out != "done" || err != nil {
		t.Fatalf("= %q, %v", out, err)
	}
	if len(e.got) != 1 || e.got[0].Name != "wake writer" {
		t.Errorf("exported %+v, want the one span", e.got)
	}
}

// A span table that does not answer costs the invocation at most the
// flush bound; the spans are dropped and counted, the result stands.
func TestAfterIsBoundedWhenTheTableHangs(t *testing.T) {
	rec := recorder(&exporter{block: true})
	h, err := Handler(func(ctx context.Context, _ json.RawMessage) (any, error) {
		rec.Record(ctx, sb.Span{Name: "chat"})
		return "ok", nil
	}, rec)
	if err != nil {
		t.Fatal(err)
	}
	begun := time.Now()
	out, err := h.(func(context.Context, json.RawMessage) (any, error))(context.Background(), nil)
	if took := time.Since(begun); took > FlushBound+time.Second {
		t.Errorf("invocation took %v, want about the %v bound", took, FlushBound)
	}
	if out != "ok" || err != nil {
		t.Errorf("= %v, %v; want the handler's own result", out, err)
	}
	if rec.Dropped() != 1 {
		t.Errorf("dropped %d, want 1", rec.Dropped())
	}
}

func TestHandlerRefusesAShapeItCannotWrap(t *testing.T) {
	if _, err := Handler(func() {}, recorder(&exporter{})); err == nil {
		t.Error("no error for an unknown handler shape")
	}
	if h, err := Handler(42, nil); h != 42 || err != nil {
		t.Errorf("without a recorder = %v, %v; want the handler as it is", h, err)
	}
}
