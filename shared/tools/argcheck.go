package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The executor checks arguments against the schema an action declares
// (toolargs.Schema generates it from the action's argument struct). It
// implements the part of JSON Schema those declarations use — type,
// properties, required, additionalProperties, items, enum, pattern,
// minLength/maxLength (characters), minimum/maximum, minItems/maxItems —
// with the same meaning as the standard; a schema that uses any other
// keyword does not compile, so no declared limit is ever silently skipped.
// (A general JSON Schema library would cost every function that runs tools
// several milliseconds of cold start and a fifth of a megabyte; the tests
// compare this check with one, call by call.)

// node is one compiled (sub)schema.
type node struct {
	typ        string // "" is any type
	props      map[string]*node
	required   []string
	closed     bool // additionalProperties: false
	items      *node
	enum       []any // strings, json.Number, bools
	pattern    *regexp.Regexp
	minLen     int // -1: none
	maxLen     int
	minimum    *big.Rat
	maximum    *big.Rat
	minItems   int
	maxItems   int
	allowNames string // for "unknown argument" hints
}

// annotations are keywords that do not constrain a value.
var annotations = map[string]bool{"description": true, "default": true, "title": true, "examples": true, "$schema": true}

func compile(name string, params map[string]any) (*node, error) {
	// Through JSON, so that the compiled schema is exactly what GET /tools
	// and the models see ([]string and []any alike, numbers as numbers).
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("tools: schema of %s: %w", name, err)
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("tools: schema of %s: %w", name, err)
	}
	n, err := compileNode(doc, "")
	if err != nil {
		return nil, fmt.Errorf("tools: schema of %s: %w", name, err)
	}
	return n, nil
}

func compileNode(doc any, at string) (*node, error) {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("at %s: a schema must be an object", loc(at))
	}
	n := &node{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		bad := fmt.Errorf("at %s: %s has a value of the wrong kind", loc(at), k)
		switch k {
		case "type":
			s, ok := v.(string)
			switch s {
			case "object", "array", "string", "integer", "number", "boolean", "null":
			default:
				ok = false
			}
			if !ok {
				return nil, fmt.Errorf("at %s: type must be one of object, array, string, integer, number, boolean, null", loc(at))
			}
			n.typ = s
		case "properties":
			pm, ok := v.(map[string]any)
			if !ok {
				return nil, bad
			}
			n.props = map[string]*node{}
			for p, ps := range pm {
				c, err := compileNode(ps, at+"/"+p)
				if err != nil {
					return nil, err
				}
				n.props[p] = c
			}
		case "required":
			l, ok := v.([]any)
			if !ok {
				return nil, bad
			}
			for _, e := range l {
				s, ok := e.(string)
				if !ok {
					return nil, bad
				}
				n.required = append(n.required, s)
			}
		case "additionalProperties":
			b, ok := v.(bool)
			if !ok {
				return nil, fmt.Errorf("at %s: additionalProperties must be true or false", loc(at))
			}
			n.closed = !b
		case "items":
			c, err := compileNode(v, at+"/items")
			if err != nil {
				return nil, err
			}
			n.items = c
		case "enum":
			l, ok := v.([]any)
			if !ok || len(l) == 0 {
				return nil, bad
			}
			for _, e := range l {
				switch e.(type) {
				case string, json.Number, bool:
				default:
					return nil, fmt.Errorf("at %s: enum values must be strings, numbers or booleans", loc(at))
				}
			}
			n.enum = l
		case "pattern":
			s, ok := v.(string)
			if !ok {
				return nil, bad
			}
			re, err := regexp.Compile(s)
			if err != nil {
				return nil, fmt.Errorf("at %s: pattern: %w", loc(at), err)
			}
			n.pattern = re
		case "minLength", "maxLength", "minItems", "maxItems":
			i, err := count(v)
			if err != nil {
				return nil, fmt.Errorf("at %s: %s %w", loc(at), k, err)
			}
			*map[string]*int{"minLength": &n.minLen, "maxLength": &n.maxLen, "minItems": &n.minItems, "maxItems": &n.maxItems}[k] = i
		case "minimum", "maximum":
			num, ok := v.(json.Number)
			if !ok {
				return nil, bad
			}
			r, ok := new(big.Rat).SetString(num.String())
			if !ok {
				return nil, bad
			}
			if k == "minimum" {
				n.minimum = r
			} else {
				n.maximum = r
			}
		default:
			if !annotations[k] {
				return nil, fmt.Errorf("at %s: keyword %q is not supported by the argument check", loc(at), k)
			}
		}
	}
	names := make([]string, 0, len(n.props))
	for p := range n.props {
		names = append(names, p)
	}
	sort.Strings(names)
	n.allowNames = strings.Join(names, ", ")
	return n, nil
}

func count(v any) (int, error) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, errors.New("must be a number")
	}
	i, err := strconv.Atoi(num.String())
	if err != nil || i < 0 {
		return 0, errors.New("must be a whole number of at least 0")
	}
	return i, nil
}

// parseArgs reads the arguments as one JSON value (numbers kept exact);
// blank is {}. It fails on anything that is not exactly one JSON value.
func parseArgs(raw []byte) (any, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
}

// check appends one line per problem with v, each naming where it is and
// what to send instead.
func (n *node) check(v any, at string, out *[]string) {
	add := func(format string, a ...any) { *out = append(*out, "at "+loc(at)+": "+fmt.Sprintf(format, a...)) }
	if n.typ != "" && !hasType(v, n.typ) {
		got := kind(v)
		if got == "integer" {
			got = "number" // 42 where a string belongs is just a number
		}
		add("got %s, want %s", got, n.typ)
		return
	}
	if n.enum != nil && !inEnum(v, n.enum) {
		add("%s is not allowed; use one of: %s", show(v), enumList(n.enum))
	}
	switch v := v.(type) {
	case string:
		chars := utf8.RuneCountInString(v)
		if n.minLen >= 0 && chars < n.minLen {
			if chars == 0 {
				add("is empty; give a value")
			} else {
				add("has %d characters; at least %d are needed", chars, n.minLen)
			}
		}
		if n.maxLen >= 0 && chars > n.maxLen {
			add("has %d characters; at most %d are allowed, so shorten it", chars, n.maxLen)
		}
		if n.pattern != nil && !n.pattern.MatchString(v) {
			add("%s does not match the pattern %s", show(v), n.pattern)
		}
	case json.Number:
		r, ok := new(big.Rat).SetString(v.String())
		if !ok {
			break
		}
		if n.minimum != nil && r.Cmp(n.minimum) < 0 {
			add("%s is less than the minimum %s", v, n.minimum.RatString())
		}
		if n.maximum != nil && r.Cmp(n.maximum) > 0 {
			add("%s is more than the maximum %s", v, n.maximum.RatString())
		}
	case []any:
		if n.minItems >= 0 && len(v) < n.minItems {
			add("has %d entries; at least %d are needed", len(v), n.minItems)
		}
		if n.maxItems >= 0 && len(v) > n.maxItems {
			add("has %d entries; at most %d are allowed", len(v), n.maxItems)
		}
		if n.items != nil {
			for i, e := range v {
				n.items.check(e, at+"/"+strconv.Itoa(i), out)
			}
		}
	case map[string]any:
		for _, r := range n.required {
			if _, ok := v[r]; !ok {
				add("missing required argument %q", r)
			}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p, ok := n.props[k]
			switch {
			case ok:
				p.check(v[k], at+"/"+escape(k), out)
			case n.closed && n.allowNames == "":
				add("unknown argument %s; this action takes no arguments, send {}", quote(k))
			case n.closed:
				add("unknown argument %s; the arguments are: %s", quote(k), n.allowNames)
			}
		}
	}
}

func loc(at string) string {
	if at == "" {
		return "/"
	}
	return at
}

// escape writes a property name as a JSON Pointer token.
func escape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

func hasType(v any, typ string) bool {
	switch typ {
	case "integer":
		n, ok := v.(json.Number)
		return ok && isInteger(n)
	case "number":
		_, ok := v.(json.Number)
		return ok
	}
	return kind(v) == typ
}

// isInteger is true for a number without a fractional part (1.0 and 1e2
// are integers, as JSON Schema has it).
func isInteger(n json.Number) bool {
	if _, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
		return true
	}
	r, ok := new(big.Rat).SetString(n.String())
	return ok && r.IsInt()
}

func kind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if isInteger(v) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func inEnum(v any, enum []any) bool {
	for _, e := range enum {
		switch e := e.(type) {
		case json.Number:
			if n, ok := v.(json.Number); ok {
				a, okA := new(big.Rat).SetString(e.String())
				b, okB := new(big.Rat).SetString(n.String())
				if okA && okB && a.Cmp(b) == 0 {
					return true
				}
			}
		default:
			if e == v {
				return true
			}
		}
	}
	return false
}

func enumList(enum []any) string {
	parts := make([]string, 0, len(enum))
	for _, e := range enum {
		parts = append(parts, show(e))
	}
	return strings.Join(parts, ", ")
}

// show renders a value the model sent for a message, at most 80 bytes.
func show(v any) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return "null"
	}
	return "a JSON " + kind(v)
}

func quote(s string) string {
	if len(s) > 80 {
		cut := 80
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strconv.Quote(s)
}
