// Package telemetryexportfn builds the telemetry-export function: the span
// table's stream brings the items the other functions wrote
// (shared/adapters/spantable), and each item's spans go to the OTLP
// collector of instance.telemetry.otlp through shared/adapters/otel. It is
// the one function that links the OpenTelemetry SDK (docs/telemetry.md);
// it builds no core, only the config, the scrubbing logger and the
// exporter. switchboard dev hands the items it reads from its own span
// table to the same Export.
package telemetryexportfn

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/switchboard-dev/switchboard/shared/adapters/awsconfig"
	"github.com/switchboard-dev/switchboard/shared/adapters/otel"
	"github.com/switchboard-dev/switchboard/shared/adapters/secrets"
	"github.com/switchboard-dev/switchboard/shared/adapters/spantable/spancodec"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// ExportTimeout bounds the export of one item's spans: a slow or dead
// collector costs at most this per item.
const ExportTimeout = 2 * time.Second

// Build loads the config (secret references in the OTLP headers resolved
// as everywhere) and serves the span table's stream.
func Build(ctx context.Context, getenv func(string) string) (any, error) {
	awsCfg, err := awsconfig.FromEnvironment(ctx)
	if err != nil {
		return nil, fmt.Errorf("telemetry-export: %w", err)
	}
	path := getenv(deploy.EnvConfig)
	if path == "" {
		path = deploy.ConfigFileName
	}
	cfg, err := swcfg.Load(ctx, path, swcfg.Chain{SecretsManager: secrets.NewResolver(secrets.NewClient(awsCfg))})
	if err != nil {
		return nil, err
	}
	log := slog.New(scrub.NewHandler(slog.NewJSONHandler(os.Stderr, nil), scrub.New(cfg.Secrets()))).
		With("instance", cfg.Instance.Name)
	exp, err := NewExporter(cfg)
	if err != nil {
		return nil, err
	}
	h := &Handler{Exporter: exp, Log: log}
	return h.Handle, nil
}

// NewExporter is the OTLP exporter of instance.telemetry.otlp, or nil
// without an endpoint (then nothing records spans either).
func NewExporter(cfg *swcfg.Config) (sb.SpanExporter, error) {
	tc := cfg.Instance.Telemetry
	if !tc.Enabled() {
		return nil, nil
	}
	return otel.New(otel.Config{Endpoint: tc.OTLP.Endpoint, Headers: tc.OTLP.Headers, Instance: cfg.Instance.Name})
}

// Export sends the spans of one span-table item to exp, within
// ExportTimeout. It returns how many spans the item holds; an error means
// the collector did not take them (or the payload is not spans, which
// Decode says).
func Export(ctx context.Context, exp sb.SpanExporter, payload []byte) (int, error) {
	spans, err := spancodec.Decode(payload)
	if err != nil {
		return 0, err
	}
	if len(spans) == 0 {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(ctx, ExportTimeout)
	defer cancel()
	return len(spans), exp.ExportSpans(ctx, spans)
}

// Handler serves the span table's stream.
type Handler struct {
	Exporter sb.SpanExporter // nil: telemetry is off; every item is skipped
	Log      *slog.Logger
	// NotExported counts the spans of items the collector did not take
	// (each attempt of a retried item counts again), Unreadable those of
	// items that are not spans.
	NotExported, Unreadable atomic.Uint64
}

// Handle exports each new item's spans, in stream order. At the first item
// the collector does not take it stops and reports that record as the
// batch's failure: the stream hands it and the ones after it again
// (deploy.SpanStream's retries), then skips them, and their items stay in
// the table until the TTL deletes them. An item that is not spans is
// logged and skipped, as a retry would not change it; removals (the TTL's)
// are ignored.
func (h *Handler) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var resp events.DynamoDBEventResponse
	for _, rec := range ev.Records {
		if rec.EventName != string(events.DynamoDBOperationTypeInsert) {
			continue
		}
		if h.Exporter == nil {
			continue
		}
		payload, ok := rec.Change.NewImage[spancodec.PayloadAttr]
		if !ok || payload.DataType() != events.DataTypeBinary {
			h.Log.WarnContext(ctx, "telemetry-export: a span table item without its binary spans attribute; skipped",
				"attribute", spancodec.PayloadAttr, "sequenceNumber", rec.Change.SequenceNumber)
			continue
		}
		n, err := Export(ctx, h.Exporter, payload.Binary())
		if n == 0 && err != nil {
			h.Log.WarnContext(ctx, "telemetry-export: an item of the span table is not spans; skipped",
				"sequenceNumber", rec.Change.SequenceNumber, "err", err)
			h.Unreadable.Add(1)
			continue
		}
		if err != nil {
			total := h.NotExported.Add(uint64(n))
			h.Log.WarnContext(ctx, "telemetry: spans not exported, the collector did not take them; the stream retries the item",
				"spans", n, "notExportedTotal", total, "sequenceNumber", rec.Change.SequenceNumber, "err", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: rec.Change.SequenceNumber})
			return resp, nil
		}
	}
	return resp, nil
}
