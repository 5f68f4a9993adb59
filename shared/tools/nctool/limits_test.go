package nctool

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/tools/toolargs/toolargstest"
)

// TestLimitsMatchDeclarations pins the constants the code and its messages
// use to the limits the argument structs declare (and so the schemas).
func TestLimitsMatchDeclarations(t *testing.T) {
	toolargstest.CheckPins(t, []toolargstest.Pin{
		{listArgs{}, "depth", "maximum", MaxListDepth},
		{listArgs{}, "limit", "maximum", MaxListLimit},
		{searchArgs{}, "limit", "maximum", MaxSearchLimit},
		{shareArgs{}, "expireDays", "maximum", MaxExpireDays},
		{pathArgs{}, "path", "maxLength", MaxPathBytes},
	})
}
