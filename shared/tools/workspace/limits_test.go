package workspace

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

// TestLimitsMatchDeclarations pins the constants the code and its messages
// use to the limits the argument structs declare (and so the schemas).
func TestLimitsMatchDeclarations(t *testing.T) {
	pins := []struct {
		args      any
		name, key string
		want      int
	}{
		{readArgs{}, "maxBytes", "maximum", MaxReadBytes},
		{readArgs{}, "maxBytes", "default", DefaultReadBytes},
	}
	for _, p := range pins {
		if got, ok := toolargs.Limit(p.args, p.name, p.key); !ok || got != p.want {
			t.Errorf("%T %s %s = %d (declared %v), want %d", p.args, p.name, p.key, got, ok, p.want)
		}
	}
}
