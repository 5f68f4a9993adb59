// Package toolargstest pins the constants a tool's code and messages use
// to the limits its argument structs declare (and so the schemas models
// see), so that the two cannot drift, and compiles the schemas with a full
// JSON Schema implementation (which no function links). Tests only.
package toolargstest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

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

// CompileSchema compiles an action's parameters schema with a full JSON
// Schema implementation, which also checks it against the draft's
// meta-schema; opts adjust the compiler first (e.g. AssertFormat).
func CompileSchema(name string, params map[string]any, opts ...func(*jsonschema.Compiler)) (*jsonschema.Schema, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	for _, o := range opts {
		o(c)
	}
	url := "mem:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}
