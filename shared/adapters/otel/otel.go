// Package otel exports Switchboard's spans over OTLP/HTTP with the
// OpenTelemetry Go SDK's exporter (otlptracehttp): Exporter implements
// sb.SpanExporter, turning each finished sb.Span (its ids derived from the
// chain's run ids, its times as recorded) into the SDK's read-only span and
// sending the batch to <endpoint>/v1/traces with the configured headers.
// It links the SDK and its protobuf and gRPC packages (about 3 MiB of a
// zip), so only the processes that export link it; see docs/telemetry.md.
package otel

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// ScopeName is the instrumentation scope of every span.
const ScopeName = "github.com/switchboard-dev/switchboard"

// Config says where the spans go.
type Config struct {
	// Endpoint is the OTLP/HTTP base URL (instance.telemetry.otlp.endpoint),
	// e.g. http://127.0.0.1:4318 or https://cloud.langfuse.com/api/public/otel;
	// the spans go to its /v1/traces.
	Endpoint string
	// Headers go with every export (resolved secret references: an
	// Authorization header, an API key).
	Headers map[string]string
	// ServiceName is the resource's service.name (default "switchboard");
	// Instance, when set, becomes switchboard.instance.
	ServiceName string
	Instance    string
	// HTTPClient, when set, sends the requests.
	HTTPClient *http.Client
}

// Exporter sends spans to an OTLP/HTTP collector.
type Exporter struct {
	exp   *otlptrace.Exporter
	res   *resource.Resource
	scope instrumentation.Scope
}

var _ sb.SpanExporter = (*Exporter)(nil)

// New returns an Exporter for c; it connects on the first export.
func New(c Config) (*Exporter, error) {
	if c.Endpoint == "" {
		return nil, fmt.Errorf("otel: no endpoint")
	}
	if !strings.HasPrefix(c.Endpoint, "http://") && !strings.HasPrefix(c.Endpoint, "https://") {
		return nil, fmt.Errorf("otel: endpoint %q is not an http:// or https:// URL", c.Endpoint)
	}
	opts := []otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(strings.TrimSuffix(c.Endpoint, "/") + "/v1/traces"),
		// The caller bounds every export by its context; the exporter's own
		// retries stay within it.
	}
	if len(c.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(c.Headers))
	}
	if c.HTTPClient != nil {
		opts = append(opts, otlptracehttp.WithHTTPClient(c.HTTPClient))
	}
	exp, err := otlptracehttp.New(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("otel: exporter for %s: %w", c.Endpoint, err)
	}
	name := c.ServiceName
	if name == "" {
		name = "switchboard"
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", name)}
	if c.Instance != "" {
		attrs = append(attrs, attribute.String("switchboard.instance", c.Instance))
	}
	return &Exporter{exp: exp, res: resource.NewSchemaless(attrs...), scope: instrumentation.Scope{Name: ScopeName}}, nil
}

// ExportSpans implements sb.SpanExporter.
func (e *Exporter) ExportSpans(ctx context.Context, spans []sb.Span) error {
	ro := make([]sdktrace.ReadOnlySpan, len(spans))
	for i, s := range spans {
		ro[i] = e.toStub(s).Snapshot()
	}
	if err := e.exp.ExportSpans(ctx, ro); err != nil {
		return fmt.Errorf("otel: export %d spans: %w", len(spans), err)
	}
	return nil
}

// Shutdown closes the exporter's connections.
func (e *Exporter) Shutdown(ctx context.Context) error { return e.exp.Shutdown(ctx) }

// toStub is the SDK's form of s.
func (e *Exporter) toStub(s sb.Span) tracetest.SpanStub {
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID(s.Trace), SpanID: trace.SpanID(s.ID), TraceFlags: trace.FlagsSampled})
	var parent trace.SpanContext
	if !s.Parent.IsZero() {
		parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID(s.Trace), SpanID: trace.SpanID(s.Parent), TraceFlags: trace.FlagsSampled})
	}
	stub := tracetest.SpanStub{
		Name: s.Name, SpanContext: sc, Parent: parent, SpanKind: toKind(s.Kind),
		StartTime: s.Start, EndTime: s.End, Attributes: toAttrs(s.Attrs),
		Resource: e.res, InstrumentationScope: e.scope,
	}
	for _, ev := range s.Events {
		stub.Events = append(stub.Events, sdktrace.Event{Name: ev.Name, Time: ev.Time, Attributes: toAttrs(ev.Attrs)})
	}
	if s.Error != "" {
		stub.Status = sdktrace.Status{Code: codes.Error, Description: s.Error}
	}
	return stub
}

func toKind(k string) trace.SpanKind {
	if k == sb.SpanClient {
		return trace.SpanKindClient
	}
	return trace.SpanKindInternal
}

func toAttrs(in []sb.Attr) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(in))
	for _, a := range in {
		switch v := a.Value.(type) {
		case string:
			out = append(out, attribute.String(a.Key, v))
		case int64:
			out = append(out, attribute.Int64(a.Key, v))
		case float64:
			out = append(out, attribute.Float64(a.Key, v))
		case bool:
			out = append(out, attribute.Bool(a.Key, v))
		}
	}
	return out
}
