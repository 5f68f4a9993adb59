package rctool

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/tools/toolargs/toolargstest"
)

// TestLimitsMatchDeclarations pins the constants the code and its messages
// use to the limits the argument structs declare (and so the schemas).
func TestLimitsMatchDeclarations(t *testing.T) {
	toolargstest.CheckPins(t, []toolargstest.Pin{
		{readRoomArgs{}, "count", "maximum", MaxCount},
		{readRoomArgs{}, "count", "default", DefaultCount},
		{searchArgs{}, "count", "maximum", MaxCount},
		{searchArgs{}, "count", "default", DefaultCount},
	})
}
