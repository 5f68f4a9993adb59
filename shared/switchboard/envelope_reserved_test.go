package switchboard_test

import (
	"encoding/json"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Reserved keys in Data must not appear when the fixed field is empty.
func TestBugEnvelopeReservedDataKeysLeak(t *testing.T) {
	for _, env := range []sb.Envelope{
		sb.OK(map[string]any{"error": "smuggled"}),
		sb.OK(map[string]any{"needs_confirmation": true}),
		sb.OK(map[string]any{"http_status": "abc", "endpoint": "https://x"}),
	} {
		b, _ := json.Marshal(env)
		var back sb.Envelope
		_ = json.Unmarshal(b, &back)
		b2, _ := json.Marshal(back)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		for _, k := range []string{"error", "needs_confirmation", "http_status", "endpoint"} {
			if _, ok := m[k]; ok {
				t.Errorf("%#v marshals to %s: reserved key %q from Data leaks (round trip: %s)", env.Data, b, k, b2)
			}
		}
	}
}
