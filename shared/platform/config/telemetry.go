package config

import (
	"fmt"
	"slices"
)

// Telemetry configures the export of every chain as an OpenTelemetry trace
// (docs/telemetry.md). Without OTLP.Endpoint nothing is recorded.
type Telemetry struct {
	// CaptureContent puts prompts, answers, tool arguments and results on
	// the spans, scrubbed and capped. Default false: counts, names and
	// outcomes only.
	CaptureContent bool `yaml:"captureContent"`
	OTLP           OTLP `yaml:"otlp"`
}

// OTLP is where the spans go over OTLP/HTTP.
type OTLP struct {
	// Endpoint is the collector's OTLP/HTTP base URL; the spans go to its
	// /v1/traces (http://127.0.0.1:4318 for a local Jaeger,
	// https://cloud.langfuse.com/api/public/otel for Langfuse).
	Endpoint string `yaml:"endpoint"`
	// Headers are sent with every export; each value is a secret
	// reference (an Authorization header, an API key).
	Headers map[string]string `yaml:"headers"`
}

// Enabled reports whether spans are recorded and exported.
func (t Telemetry) Enabled() bool { return t.OTLP.Endpoint != "" }

func validateTelemetry(ps *problems, t Telemetry) {
	checkURL(ps, "instance.telemetry.otlp.endpoint", t.OTLP.Endpoint, false,
		"the collector's OTLP/HTTP base URL, e.g. http://127.0.0.1:4318 (the spans go to its /v1/traces)")
	if len(t.OTLP.Headers) > 0 && t.OTLP.Endpoint == "" {
		ps.at("instance.telemetry.otlp.headers", "are set but there is no endpoint to send them to", "set instance.telemetry.otlp.endpoint, or remove the headers")
	}
	names := make([]string, 0, len(t.OTLP.Headers))
	for k := range t.OTLP.Headers {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !validHeaderName(k) {
			ps.at(mapPath("instance.telemetry.otlp.headers", k), fmt.Sprintf("%q is not an HTTP header name", shorten(k)), "use letters, digits and -, e.g. Authorization or x-honeycomb-team")
		}
	}
}

// validHeaderName: letters, digits, "-" and "_" (what collectors' keys use).
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if r > 127 || !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
