package otel_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/switchboard-dev/switchboard/shared/adapters/otel"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	"github.com/switchboard-dev/switchboard/shared/platform/telemetry"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// collector is an OTLP/HTTP receiver on 127.0.0.1 that decodes every
// request with the collector's own pdata.
type collector struct {
	t       *testing.T
	mu      sync.Mutex
	spans   []ptrace.Span
	headers []http.Header
	bytes   int
}

func newCollector(t *testing.T) (*collector, *httptest.Server) {
	t.Helper()
	c := &collector{t: t}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("request %s %s (%s), want POST /v1/traces as protobuf", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
		}
		body, _ := io.ReadAll(r.Body)
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			t.Errorf("decode OTLP: %v", err)
		}
		c.mu.Lock()
		c.headers = append(c.headers, r.Header.Clone())
		c.bytes += len(body)
		rss := req.Traces().ResourceSpans()
		for i := range rss.Len() {
			if got := rss.At(i).Resource().Attributes().AsRaw()["service.name"]; got != "switchboard" {
				t.Errorf("service.name = %v, want switchboard", got)
			}
			sss := rss.At(i).ScopeSpans()
			for j := range sss.Len() {
				ss := sss.At(j).Spans()
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
	return c, srv
}

func (c *collector) byName(name string) ptrace.Span {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.spans {
		if s.Name() == name {
			return s
		}
	}
	c.t.Fatalf("no span %q among %d exported", name, len(c.spans))
	return ptrace.Span{}
}

const planted = "sk-planted-secret-0123456789"

func newRecorder(t *testing.T, endpoint string, capture bool, headers map[string]string) *telemetry.Recorder {
	t.Helper()
	exp, err := otel.New(otel.Config{Endpoint: endpoint, Headers: headers, Instance: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return telemetry.New(telemetry.Options{Exporter: exp, Scrubber: scrub.New([]string{planted}), CaptureContent: capture, FlushTimeout: time.Second})
}

func chainSpans(start time.Time) []sb.Span {
	root := "019a0000000000aaaaaaaaaaaa"
	trace := sb.ChainTrace(root)
	run := sb.RunSpan(root)
	return []sb.Span{
		{Trace: trace, ID: run, Name: "invoke_agent writer", Start: start, End: start.Add(3 * time.Second),
			Attrs: []sb.Attr{sb.StringAttr(sb.AttrOperation, sb.OpInvokeAgent), sb.StringAttr(sb.AttrConversationID, root),
				sb.IntAttr(sb.AttrInputTokens, 120), sb.FloatAttr(sb.AttrCost, 0.0042),
				sb.StringAttr(sb.AttrSystemInstructions, "You write. The key is "+planted)}},
		{Trace: trace, ID: sb.ChatSpan(root, 1), Parent: run, Name: "chat gpt-test", Kind: sb.SpanClient,
			Start: start.Add(time.Second), End: start.Add(2 * time.Second),
			Attrs:  []sb.Attr{sb.StringAttr(sb.AttrRequestModel, "gpt-test"), sb.StringAttr("note", "token="+planted)},
			Events: []sb.SpanEvent{{Name: "retry", Time: start.Add(1500 * time.Millisecond), Attrs: []sb.Attr{sb.IntAttr("attempt", 2)}}},
			Error:  "model said " + planted},
	}
}

func TestExportedSpansKeepIdsParentsAndAttributes(t *testing.T) {
	c, srv := newCollector(t)
	r := newRecorder(t, srv.URL, false, map[string]string{"Authorization": "Bearer xyz"})
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, s := range chainSpans(start) {
		r.Record(context.Background(), s)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	root := "019a0000000000aaaaaaaaaaaa"
	agent := c.byName("invoke_agent writer")
	chat := c.byName("chat gpt-test")
	if got, want := agent.TraceID().String(), sb.ChainTrace(root).String(); got != want {
		t.Errorf("trace id = %s, want %s (derived from the root run id)", got, want)
	}
	if got, want := chat.ParentSpanID(), agent.SpanID(); got != want {
		t.Errorf("chat parent = %s, want the invoke_agent span %s", got, want)
	}
	if !agent.ParentSpanID().IsEmpty() {
		t.Errorf("invoke_agent parent = %s, want none", agent.ParentSpanID())
	}
	if got := chat.Kind(); got != ptrace.SpanKindClient {
		t.Errorf("chat kind = %v, want client", got)
	}
	if got, want := agent.StartTimestamp().AsTime(), start; !got.Equal(want) {
		t.Errorf("start = %v, want %v", got, want)
	}
	attrs := agent.Attributes().AsRaw()
	if attrs[sb.AttrConversationID] != root || attrs[sb.AttrInputTokens] != int64(120) || attrs[sb.AttrCost] != 0.0042 {
		t.Errorf("invoke_agent attributes = %v", attrs)
	}
	if _, ok := attrs[sb.AttrSystemInstructions]; ok {
		t.Errorf("content exported without captureContent: %v", attrs)
	}
	if got := chat.Events().Len(); got != 1 || chat.Events().At(0).Name() != "retry" {
		t.Errorf("chat events = %d, want the retry", got)
	}
	if chat.Status().Code() != ptrace.StatusCodeError {
		t.Errorf("chat status = %v, want error", chat.Status().Code())
	}
	for _, s := range c.spans {
		raw := s.Name() + s.Status().Message()
		for k, v := range s.Attributes().AsRaw() {
			raw += k + "=" + toString(v)
		}
		if strings.Contains(raw, planted) {
			t.Errorf("span %s carries the planted secret: %s", s.Name(), raw)
		}
	}
	if got := c.headers[0].Get("Authorization"); got != "Bearer xyz" {
		t.Errorf("Authorization = %q, want the configured header", got)
	}
	if r.Dropped() != 0 || r.Exported() != 2 {
		t.Errorf("dropped %d exported %d, want 0 and 2", r.Dropped(), r.Exported())
	}
	t.Logf("2 spans: %d bytes of OTLP protobuf", c.bytes)
}

func TestContentOnlyWithCaptureScrubbedAndCapped(t *testing.T) {
	c, srv := newCollector(t)
	r := newRecorder(t, srv.URL, true, nil)
	start := time.Now()
	spans := chainSpans(start)
	long := strings.Repeat("x", 3*telemetry.MaxContent)
	spans[0].Attrs = append(spans[0].Attrs, sb.StringAttr(sb.AttrOutputMessages, long), sb.StringAttr("plain", long))
	for _, s := range spans {
		r.Record(context.Background(), s)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	attrs := c.byName("invoke_agent writer").Attributes().AsRaw()
	sys, _ := attrs[sb.AttrSystemInstructions].(string)
	if !strings.HasPrefix(sys, "You write.") || strings.Contains(sys, planted) || !strings.Contains(sys, scrub.Mask) {
		t.Errorf("system instructions = %q, want them with the secret masked", sys)
	}
	if got := len(attrs[sb.AttrOutputMessages].(string)); got > telemetry.MaxContent {
		t.Errorf("content is %d bytes, want at most %d", got, telemetry.MaxContent)
	}
	if got := len(attrs["plain"].(string)); got > telemetry.MaxValue {
		t.Errorf("a plain value is %d bytes, want at most %d", got, telemetry.MaxValue)
	}
}

func TestDeadCollectorCostsABoundedFlushAndCountsTheDrops(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	r := newRecorder(t, url, false, nil)
	for _, s := range chainSpans(time.Now()) {
		r.Record(context.Background(), s)
	}
	begun := time.Now()
	if err := r.Flush(context.Background()); err == nil {
		t.Fatal("flush to a dead collector succeeded")
	}
	if took := time.Since(begun); took > 5*time.Second {
		t.Errorf("flush took %v, want about the 1 s bound", took)
	}
	if got := r.Dropped(); got != 2 {
		t.Errorf("dropped = %d, want 2", got)
	}
}

func TestSlowCollectorIsCutAtTheFlushBound(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	exp, err := otel.New(otel.Config{Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	r := telemetry.New(telemetry.Options{Exporter: exp, FlushTimeout: 200 * time.Millisecond})
	r.Record(context.Background(), chainSpans(time.Now())[0])
	if err := r.Flush(context.Background()); err == nil {
		t.Fatal("flush to a collector that never answers succeeded")
	}
	if got := r.Dropped(); got != 1 {
		t.Errorf("dropped = %d, want 1", got)
	}
}

func TestNewRefusesAnEndpointThatIsNoURL(t *testing.T) {
	for _, ep := range []string{"", "127.0.0.1:4318", "grpc://x"} {
		if _, err := otel.New(otel.Config{Endpoint: ep}); err == nil {
			t.Errorf("New(%q) = nil error", ep)
		}
	}
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}
