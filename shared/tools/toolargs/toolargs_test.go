package toolargs_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

type exampleArgs struct {
	Room  *string  `json:"room" required:"true" schema:"minLength=1,maxLength=5"`
	Count *int     `json:"count" schema:"minimum=1,maximum=10,default=3" doc:"how many"`
	ID    *string  `json:"id" schema:"maxLength=8" pattern:"^[a-z]+$"`
	Kind  *int     `json:"kind" schema:"enum=0|1|3"`
	Mode  string   `json:"mode" schema:"enum=read|edit"`
	Tags  []string `json:"tags" schema:"maxItems=2,enum=@tags"`
	Force *bool    `json:"force"`
}

func TestSchema(t *testing.T) {
	got := toolargs.Schema(exampleArgs{}, toolargs.Vocab{
		Docs:  map[string]string{"room": "the room", "count": "ignored: the doc tag wins"},
		Enums: map[string][]string{"tags": {"a", "b"}},
	})
	want := map[string]any{
		"type": "object", "additionalProperties": false,
		"required": []string{"room"},
		"properties": map[string]any{
			"room":  map[string]any{"type": "string", "minLength": 1, "maxLength": 5, "description": "the room"},
			"count": map[string]any{"type": "integer", "minimum": 1, "maximum": 10, "default": 3, "description": "how many"},
			"id":    map[string]any{"type": "string", "maxLength": 8, "pattern": "^[a-z]+$"},
			"kind":  map[string]any{"type": "integer", "enum": []int{0, 1, 3}},
			"mode":  map[string]any{"type": "string", "enum": []string{"read", "edit"}},
			"tags":  map[string]any{"type": "array", "maxItems": 2, "items": map[string]any{"type": "string", "enum": []string{"a", "b"}}},
			"force": map[string]any{"type": "boolean"},
		},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("Schema =\n%s\nwant\n%s", g, w)
	}
	if got := toolargs.Schema(struct{}{}, toolargs.Vocab{}); !reflect.DeepEqual(got["required"], []string{}) {
		t.Errorf("no arguments: required = %#v, want an empty list (some models refuse null)", got["required"])
	}
}

func TestDecodeEnforcesDeclaredLimits(t *testing.T) {
	a := toolargs.Args{Op: "demo.act", Action: "act"}
	tests := []struct {
		name, args string
		wantErr    string // "" for success
	}{
		{"within every limit", `{"room":"ab","count":10,"id":"abc","tags":["a","b"]}`, ""},
		{"length counts characters, not bytes", `{"room":"äöüßé"}`, ""},
		{"empty required string", `{"room":""}`, `argument "room" is empty; give a value`},
		{"string over maxLength", `{"room":"abcdef"}`, `argument "room" has 6 characters; at most 5 are allowed`},
		{"integer over maximum names the default", `{"count":11}`, `argument "count" is 11; give a number from 1 to 10, or leave it out for 3`},
		{"integer under minimum", `{"count":0}`, `argument "count" is 0; give a number from 1 to 10`},
		{"too many items", `{"tags":["a","b","a"]}`, `argument "tags" has 3 entries; at most 2 are allowed`},
		{"unknown argument lists what the action takes", `{"rooms":"x"}`, `unknown argument "rooms"; act takes {room, count?, id?, kind?, mode?, tags?, force?}`},
		{"wrong type", `{"count":"3"}`, `argument "count" must be a whole number, not a JSON string`},
		{"missing required is left to the action", `{}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dst exampleArgs
			err := a.Decode(json.RawMessage(tt.args), &dst)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Decode(%s) = %v, want nil", tt.args, err)
				}
				return
			}
			if err == nil || !strings.Contains(sb.ErrorMessage(err), tt.wantErr) || sb.ErrorCode(err) != sb.EINVALID {
				t.Errorf("Decode(%s) = %v, want EINVALID containing %q", tt.args, err, tt.wantErr)
			}
		})
	}
}

func TestLimit(t *testing.T) {
	if n, ok := toolargs.Limit(exampleArgs{}, "count", "maximum"); !ok || n != 10 {
		t.Errorf("count maximum = %d, %v; want 10, true", n, ok)
	}
	if n, ok := toolargs.Limit(&exampleArgs{}, "count", "default"); !ok || n != 3 {
		t.Errorf("count default = %d, %v; want 3, true", n, ok)
	}
	if _, ok := toolargs.Limit(exampleArgs{}, "room", "maximum"); ok {
		t.Errorf("room has no maximum, Limit found one")
	}
}

// TestBadTagsPanic: a malformed declaration is a programming error that
// the first Spec call (every tool's tests make one) reports.
func TestBadTagsPanic(t *testing.T) {
	tests := []struct {
		name string
		args any
	}{
		{"limit not a number", struct {
			A *string `json:"a" schema:"maxLength=ten"`
		}{}},
		{"unknown key", struct {
			A *string `json:"a" schema:"maxlength=10"`
		}{}},
		{"no key=value", struct {
			A *string `json:"a" schema:"maxLength"`
		}{}},
		{"run-time enum missing", struct {
			A *string `json:"a" schema:"enum=@nope"`
		}{}},
		{"no json name", struct {
			A *string `schema:"maxLength=1"`
		}{}},
		{"unsupported type", struct {
			A *float64 `json:"a"`
		}{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Schema did not panic")
				}
			}()
			toolargs.Schema(tt.args, toolargs.Vocab{})
		})
	}
}

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"name", `"name"`},
		{"a\nb", `"a\nb"`},
		{strings.Repeat("x", 80), `"` + strings.Repeat("x", 80) + `"`},
		{strings.Repeat("x", 81), `"` + strings.Repeat("x", 80) + `"…`},
		// A cut never splits a rune: 79 bytes, then a two-byte ü.
		{strings.Repeat("x", 79) + "üü", `"` + strings.Repeat("x", 79) + `"…`},
	}
	for _, tt := range tests {
		if got := toolargs.Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
