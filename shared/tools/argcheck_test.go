package tools_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs/toolargstest"
)

// librarySchema compiles an action's schema with a full JSON Schema
// implementation (which also checks it against the draft's meta-schema).
func librarySchema(t *testing.T, name string, params map[string]any) *jsonschema.Schema {
	t.Helper()
	s, err := toolargstest.CompileSchema(name, params, (*jsonschema.Compiler).AssertFormat)
	if err != nil {
		t.Fatalf("%s: not a valid JSON Schema: %v", name, err)
	}
	return s
}

// libraryAccepts is the library's verdict; ok=false when args are not JSON.
func libraryAccepts(s *jsonschema.Schema, args string) (accepted, ok bool) {
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
	if err != nil {
		return false, false
	}
	return s.Validate(inst) == nil, true
}

// TestProductSchemasAreJSONSchema: every schema GET /tools offers is valid
// JSON Schema (the library checks it against the meta-schema), and the
// executor's own check compiles it.
func TestProductSchemasAreJSONSchema(t *testing.T) {
	for _, spec := range productExecutor(t).Specs("") {
		for _, a := range spec.Actions {
			name := spec.Name + "." + a.Name
			librarySchema(t, name, a.Parameters)
			if _, _, err := tools.CheckArgs(name, a.Parameters, []byte("{}")); err != nil {
				t.Errorf("%s: the executor's check does not compile it: %v", name, err)
			}
		}
	}
}

// TestArgCheckAgreesWithJSONSchema: for every product action, over a table
// of valid and invalid argument sets derived from its schema (plus the
// shapes every action must refuse), the executor's check accepts exactly
// the calls the JSON Schema library accepts — so checking without the
// library loses no check and adds none.
func TestArgCheckAgreesWithJSONSchema(t *testing.T) {
	for _, spec := range productExecutor(t).Specs("") {
		for _, a := range spec.Actions {
			name := spec.Name + "." + a.Name
			t.Run(name, func(t *testing.T) {
				lib := librarySchema(t, name, a.Parameters)
				cases := argCases(t, a.Parameters)
				accepted, rejected := 0, 0
				for _, c := range cases {
					want, isJSON := libraryAccepts(lib, c)
					problems, parsed, err := tools.CheckArgs(name, a.Parameters, []byte(c))
					if err != nil {
						t.Fatal(err)
					}
					got := parsed && len(problems) == 0
					switch {
					case parsed != isJSON:
						t.Errorf("args %.200s: parsed as JSON = %v, the library says %v", c, parsed, isJSON)
					case got != want:
						t.Errorf("args %.200s: accepted = %v (problems %q), the library says %v", c, got, problems, want)
					case !got && len(problems) == 0 && parsed:
						t.Errorf("args %.200s: rejected without a reason", c)
					}
					if want {
						accepted++
					} else {
						rejected++
					}
				}
				if accepted == 0 || rejected == 0 {
					t.Errorf("%d cases, %d accepted and %d rejected: the table needs both", len(cases), accepted, rejected)
				}
			})
		}
	}
}

// argCases builds argument sets for a closed object schema: a valid base
// (every required argument), the base with every argument, and for each
// argument, values at and past each of its limits, of other types, and
// left out; then the shapes that are never arguments.
func argCases(t *testing.T, params map[string]any) []string {
	t.Helper()
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	raw, _ := json.Marshal(params)
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(schema.Properties))
	for n := range schema.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	base := map[string]any{}
	for _, n := range schema.Required {
		base[n] = validValue(t, n, schema.Properties[n])
	}
	full := map[string]any{}
	for _, n := range names {
		full[n] = validValue(t, n, schema.Properties[n])
	}
	var cases []string
	enc := func(m map[string]any) string {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	with := func(m map[string]any, k string, v any) map[string]any {
		out := map[string]any{}
		for kk, vv := range m {
			out[kk] = vv
		}
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	cases = append(cases, enc(base), enc(full), enc(with(full, "runId", "forged")), enc(with(base, "Path", "x")))
	for _, n := range names {
		cases = append(cases, enc(with(base, n, nil)))
		for _, v := range variants(schema.Properties[n]) {
			cases = append(cases, enc(with(base, n, v)), enc(with(full, n, v)))
		}
	}
	cases = append(cases, "", " ", "{}", "null", "[]", `"x"`, "1", "true", "{", `{"a":1} {}`, `{} x`, `{"a":}`)
	return cases
}

// jsonNull stands for an explicit null (nil in with() means "left out").
type jsonNull struct{}

func (jsonNull) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// validValue returns a value the property's schema accepts.
func validValue(t *testing.T, name string, p map[string]any) any {
	t.Helper()
	switch p["type"] {
	case "boolean":
		return true
	case "integer":
		if d, ok := p["default"]; ok {
			return d
		}
		if m, ok := p["minimum"]; ok {
			return m
		}
		return 1
	case "array":
		return []any{}
	}
	if e, ok := p["enum"].([]any); ok {
		return e[0]
	}
	min := 1
	if m, ok := p["minLength"].(float64); ok && int(m) > 1 {
		min = int(m)
	}
	for _, c := range []string{"a", "abc", "x.md", "docs/x.md", "thumbsup", ":thumbsup:", "2026-01-02"} {
		c = c + strings.Repeat("a", max(0, min-len(c)))
		if pat, ok := p["pattern"].(string); ok && !regexp.MustCompile(pat).MatchString(c) {
			continue
		}
		return c
	}
	t.Fatalf("no valid value for %s (%v): add a candidate", name, p)
	return nil
}

// variants are values around the property's limits and of other types.
func variants(p map[string]any) []any {
	out := []any{jsonNull{}, true, 0, -1, 1.5, 1.0e0, "x", "", " ", []any{}, []any{"a"}, []any{1}, map[string]any{}}
	num := func(k string) (int, bool) {
		f, ok := p[k].(float64)
		return int(f), ok
	}
	for _, k := range []string{"minLength", "maxLength"} {
		if n, ok := num(k); ok {
			for _, m := range []int{n - 1, n, n + 1} {
				if m >= 0 {
					out = append(out, strings.Repeat("a", m), strings.Repeat("ä", m), strings.Repeat("😀", m))
				}
			}
		}
	}
	for _, k := range []string{"minimum", "maximum"} {
		if n, ok := num(k); ok {
			out = append(out, n-1, n, n+1, json.Number(fmt.Sprintf("%d.0", n)), json.Number(fmt.Sprintf("%d.5", n)), json.Number(fmt.Sprintf("%de0", n)))
		}
	}
	out = append(out, json.Number("1e400"), json.Number("-0"), json.Number("100000000000000000000000"))
	if n, ok := num("maxItems"); ok {
		for _, m := range []int{n, n + 1} {
			l := make([]any, m)
			for i := range l {
				l[i] = fmt.Sprintf("v%d", i)
			}
			out = append(out, l)
		}
	}
	if e, ok := p["enum"].([]any); ok {
		out = append(out, e...)
		out = append(out, fmt.Sprint(e[0])+"x", strings.ToUpper(fmt.Sprint(e[0])))
	}
	if items, ok := p["items"].(map[string]any); ok {
		if e, ok := items["enum"].([]any); ok {
			out = append(out, e, []any{e[0], "nope"}, []any{e[0], e[0]})
		}
	}
	if _, ok := p["pattern"]; ok {
		out = append(out, "thumbsup", ":thumbsup:", "thumbs up", "<b>", "a/b", "a_b-C9", "::", ":a", "a\n", "ä")
	}
	return out
}

// TestArgCheckMessages: each problem names where it is and what to send.
func TestArgCheckMessages(t *testing.T) {
	params := map[string]any{"type": "object", "additionalProperties": false, "required": []string{"text"},
		"properties": map[string]any{
			"text":  map[string]any{"type": "string", "minLength": 2, "maxLength": 5},
			"count": map[string]any{"type": "integer", "minimum": 1, "maximum": 100},
			"mode":  map[string]any{"type": "string", "enum": []string{"fast", "slow"}},
			"emoji": map[string]any{"type": "string", "pattern": "^[a-z]+$"},
			"tags":  map[string]any{"type": "array", "maxItems": 2, "items": map[string]any{"type": "string", "enum": []string{"a", "b"}}},
		}}
	tests := []struct {
		args string
		want []string // the problems, in order
	}{
		{`{"text":"hi"}`, nil},
		{`{}`, []string{`at /: missing required argument "text"`}},
		{`{"text":42}`, []string{"at /text: got number, want string"}},
		{`{"text":""}`, []string{"at /text: is empty; give a value"}},
		{`{"text":"h"}`, []string{"at /text: has 1 characters; at least 2 are needed"}},
		{`{"text":"äöüäöü"}`, []string{"at /text: has 6 characters; at most 5 are allowed, so shorten it"}},
		{`{"text":"hi","count":0}`, []string{"at /count: 0 is less than the minimum 1"}},
		{`{"text":"hi","count":101}`, []string{"at /count: 101 is more than the maximum 100"}},
		{`{"text":"hi","count":1.5}`, []string{"at /count: got number, want integer"}},
		{`{"text":"hi","count":2.0}`, nil},
		{`{"text":"hi","mode":"quick"}`, []string{`at /mode: "quick" is not allowed; use one of: "fast", "slow"`}},
		{`{"text":"hi","emoji":"<b>"}`, []string{`at /emoji: "<b>" does not match the pattern ^[a-z]+$`}},
		{`{"text":"hi","tags":["a","c","b"]}`, []string{"at /tags: has 3 entries; at most 2 are allowed", `at /tags/1: "c" is not allowed; use one of: "a", "b"`}},
		{`{"text":"hi","runId":"forged"}`, []string{`at /: unknown argument "runId"; the arguments are: count, emoji, mode, tags, text`}},
		{`null`, []string{"at /: got null, want object"}},
		{`{"text":1,"count":"x"}`, []string{"at /count: got string, want integer", "at /text: got number, want string"}},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			got, parsed, err := tools.CheckArgs("T.a", params, []byte(tt.args))
			if err != nil || !parsed {
				t.Fatalf("CheckArgs: parsed=%v err=%v", parsed, err)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("problems = %q, want %q", got, tt.want)
			}
		})
	}
	if got, _, _ := tools.CheckArgs("T.b", map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{}}, []byte(`{"x":1}`)); len(got) != 1 || got[0] != `at /: unknown argument "x"; this action takes no arguments, send {}` {
		t.Errorf("no-argument action: problems = %q", got)
	}
}
