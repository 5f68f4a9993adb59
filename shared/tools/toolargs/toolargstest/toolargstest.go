// Package toolargstest pins the constants a tool's code and messages use
// to the limits its argument structs declare (and so the schemas models
// see), so that the two cannot drift. Tests only.
package toolargstest

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

// Pin says that argument Name of the struct Args declares Key (maximum,
// maxLength, default, …) as Want.
type Pin struct {
	Args      any
	Name, Key string
	Want      int
}

// Limit is the pin of limit key of argument name in args to want.
func Limit(args any, name, key string, want int) Pin {
	return Pin{Args: args, Name: name, Key: key, Want: want}
}

// CheckPins fails t for every pin the declaration does not match.
func CheckPins(t testing.TB, pins []Pin) {
	t.Helper()
	for _, p := range pins {
		if got, ok := toolargs.Limit(p.Args, p.Name, p.Key); !ok || got != p.Want {
			t.Errorf("%T %s %s = %d (declared %v), want %d", p.Args, p.Name, p.Key, got, ok, p.Want)
		}
	}
}
