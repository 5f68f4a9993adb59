package telemetryexportfn_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/switchboard-dev/switchboard/shared/adapters/otel"
	"github.com/switchboard-dev/switchboard/shared/app/telemetryexportfn"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// sample is the real-shaped stream batch of events/telemetry-export: one
// INSERT of an item with two spans (an invoke_agent and its chat), one
// REMOVE (the TTL's).
const sample = "../../../events/telemetry-export/span-batch.json"

// collector is an OTLP/HTTP receiver on 127.0.0.1 that decodes every
// request with the collector's own pdata.
type collector struct {
	mu    sync.Mutex
	spans []ptrace.Span
}

func newCollector(t *testing.T) (*collector, string) {
	t.Helper()
	c := &collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			t.Errorf("decode OTLP: %v", err)
		}
		c.mu.Lock()
		rss := req.Traces().ResourceSpans()
		for i := range rss.Len() {
			for j := range rss.At(i).ScopeSpans().Len() {
				ss := rss.At(i).ScopeSpans().At(j).Spans()
				for k := range ss.Len() {
					c.spans = append(c.spans, ss.At(k))
				}
			}
		}
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
		_, _ = w.Write(resp)
	}))
	t.Cleanup(srv.Close)
	return c, srv.URL
}

func handler(t *testing.T, endpoint string) *telemetryexportfn.Handler {
	t.Helper()
	exp, err := otel.New(otel.Config{Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return &telemetryexportfn.Handler{Exporter: exp, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// invoke runs raw through the Lambda runtime's own decode path.
func invoke(t *testing.T, h *telemetryexportfn.Handler, raw []byte) events.DynamoDBEventResponse {
	t.Helper()
	out, err := lambda.NewHandler(h.Handle).Invoke(context.Background(), raw)
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	var resp events.DynamoDBEventResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("response %s: %v", out, err)
	}
	return resp
}

func readSample(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// The stream's INSERT becomes an OTLP export of its spans, ids and parent
// kept; the REMOVE is ignored; nothing is reported failed.
func TestStreamBatchIsExported(t *testing.T) {
	c, url := newCollector(t)
	h := handler(t, url)
	resp := invoke(t, h, readSample(t))
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("failures %v, want none", resp.BatchItemFailures)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.spans) != 2 {
		t.Fatalf("collector got %d spans, want the item's 2", len(c.spans))
	}
	run, chat := c.spans[0], c.spans[1]
	if run.Name() != "invoke_agent hermes" || chat.Name() != "chat gpt-4o-mini" {
		t.Errorf("names %q, %q", run.Name(), chat.Name())
	}
	if got, want := [16]byte(run.TraceID()), [16]byte(sb.ChainTrace("r-01HZX3")); got != want {
		t.Errorf("trace %x, want %x", got, want)
	}
	if got, want := [8]byte(chat.ParentSpanID()), [8]byte(sb.RunSpan("r-01HZX3")); got != want || [8]byte(run.SpanID()) != want {
		t.Errorf("chat's parent %x, run's id %x, want both %x", got, run.SpanID(), want)
	}
	if chat.Kind() != ptrace.SpanKindClient {
		t.Errorf("chat kind %v, want client", chat.Kind())
	}
	if got := chat.Attributes().AsRaw()[sb.AttrInputTokens]; got != int64(812) {
		t.Errorf("input tokens %#v, want 812", got)
	}
	if h.NotExported.Load() != 0 || h.Unreadable.Load() != 0 {
		t.Errorf("counted %d not exported, %d unreadable; want none", h.NotExported.Load(), h.Unreadable.Load())
	}
}

// A collector that is down: the first INSERT is reported as the batch's
// failure (the stream hands it again), its spans are counted, and the
// invocation ends within the export bound.
func TestCollectorDownReportsTheItemForARetry(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	h := handler(t, url)
	begun := time.Now()
	resp := invoke(t, h, readSample(t))
	if took := time.Since(begun); took > telemetryexportfn.ExportTimeout+time.Second {
		t.Errorf("invocation took %v, want at most about the %v export bound", took, telemetryexportfn.ExportTimeout)
	}
	want := []events.DynamoDBBatchItemFailure{{ItemIdentifier: "4421584500000000017450439091"}}
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0] != want[0] {
		t.Errorf("failures %v, want %v", resp.BatchItemFailures, want)
	}
	if got := h.NotExported.Load(); got != 2 {
		t.Errorf("not exported %d, want the item's 2 spans", got)
	}
}

// An item that is not spans is skipped and counted (a retry would not
// change it); the batch goes on and fails nothing.
func TestUnreadableItemIsSkipped(t *testing.T) {
	c, url := newCollector(t)
	h := handler(t, url)
	var ev map[string]any
	if err := json.Unmarshal(readSample(t), &ev); err != nil {
		t.Fatal(err)
	}
	first := ev["Records"].([]any)[0].(map[string]any)
	img := first["dynamodb"].(map[string]any)["NewImage"].(map[string]any)
	img["spans"] = map[string]any{"B": "bm90IGd6aXA="} // "not gzip"
	raw, _ := json.Marshal(ev)
	resp := invoke(t, h, raw)
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("failures %v, want none", resp.BatchItemFailures)
	}
	if h.Unreadable.Load() != 1 {
		t.Errorf("unreadable %d, want 1", h.Unreadable.Load())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.spans) != 0 {
		t.Errorf("collector got %d spans, want none", len(c.spans))
	}
}

// Without instance.telemetry.otlp there is no exporter: items are
// acknowledged and dropped.
func TestNoEndpointSkipsEverything(t *testing.T) {
	h := &telemetryexportfn.Handler{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if resp := invoke(t, h, readSample(t)); len(resp.BatchItemFailures) != 0 {
		t.Errorf("failures %v, want none", resp.BatchItemFailures)
	}
}
