package nctool

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/tools/toolargs/toolargstest"
)

// TestLimitsMatchDeclarations pins the constants the code and its messages
// use to the limits the argument structs declare (and so the schemas).
func TestLimitsMatchDeclarations(t *testing.T) {
	toolargstest.CheckPins(t, []toolargstest.Pin{
		toolargstest.Limit(listArgs{}, "depth", "maximum", MaxListDepth),
		toolargstest.Limit(listArgs{}, "limit", "maximum", MaxListLimit),
		toolargstest.Limit(searchArgs{}, "limit", "maximum", MaxSearchLimit),
		toolargstest.Limit(shareArgs{}, "expireDays", "maximum", MaxExpireDays),
		toolargstest.Limit(pathArgs{}, "path", "maxLength", MaxPathBytes),
	})
}
