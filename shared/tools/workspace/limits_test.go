package workspace

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/tools/toolargs/toolargstest"
)

// TestLimitsMatchDeclarations pins the constants the code and its messages
// use to the limits the argument structs declare (and so the schemas).
func TestLimitsMatchDeclarations(t *testing.T) {
	toolargstest.CheckPins(t, []toolargstest.Pin{
		toolargstest.Limit(readArgs{}, "maxBytes", "maximum", MaxReadBytes),
		toolargstest.Limit(readArgs{}, "maxBytes", "default", DefaultReadBytes),
	})
}
