package config

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// withTelemetry is the test base config with an instance.telemetry block.
func withTelemetry(block string) string {
	return strings.Replace(base, "  model:", block+"  model:", 1)
}

func TestTelemetryHeadersAreSecretReferences(t *testing.T) {
	t.Setenv("SB_TEST_OTLP_AUTH", "Basic c2VjcmV0LXZhbHVl")
	c, err := Parse(context.Background(), "t.yaml", []byte(withTelemetry(`  telemetry:
    captureContent: true
    otlp:
      endpoint: http://127.0.0.1:4318
      headers:
        Authorization: env:SB_TEST_OTLP_AUTH
`)), EnvResolver{})
	if err != nil {
		t.Fatal(err)
	}
	tel := c.Instance.Telemetry
	if !tel.Enabled() || !tel.CaptureContent || tel.OTLP.Headers["Authorization"] != "Basic c2VjcmV0LXZhbHVl" {
		t.Errorf("telemetry = %+v, want the endpoint, content on and the header resolved", tel)
	}
	if !slices.Contains(c.Secrets(), "Basic c2VjcmV0LXZhbHVl") {
		t.Errorf("Secrets() = %q, want the header value (the scrubber masks it)", c.Secrets())
	}
}

func TestTelemetryRefusesAnInlineHeaderForAWSAndABadEndpoint(t *testing.T) {
	_, err := parse(context.Background(), "t.yaml", []byte(withTelemetry(`  telemetry:
    otlp:
      endpoint: 127.0.0.1:4318
      headers:
        "bad header": x
        Authorization: Bearer-inline-value
`)), nil, ForAWS)
	if err == nil {
		t.Fatal("want problems")
	}
	for _, want := range []string{`instance.telemetry.otlp.endpoint`, `instance.telemetry.otlp.headers["Authorization"]`, `is an inline secret value`, `"bad header" is not an HTTP header name`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
