package rctool

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/tools/toolargs/toolargstest"
)

// TestLimitsMatchDeclarations pins the constants the code and its messages
// use to the limits the argument structs declare (and so the schemas).
func TestLimitsMatchDeclarations(t *testing.T) {
	toolargstest.CheckPins(t, []toolargstest.Pin{
		toolargstest.Limit(readRoomArgs{}, "count", "maximum", MaxCount),
		toolargstest.Limit(readRoomArgs{}, "count", "default", DefaultCount),
		toolargstest.Limit(searchArgs{}, "count", "maximum", MaxCount),
		toolargstest.Limit(searchArgs{}, "count", "default", DefaultCount),
	})
}
