package toolargs

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// An action's arguments are declared once, as a struct whose field tags say
// everything the JSON Schema offered to models says:
//
//	json:"name"       the argument's name (exact case)
//	required:"true"   the argument must be given
//	doc:"…"           its description (else Vocab.Docs[name])
//	schema:"k=v,…"    limits: minLength, maxLength (characters), minimum,
//	                  maximum, default, maxItems; enum=a|b|c (for a list: of
//	                  its items), enum=@name for a set known only at run time
//	                  (Vocab.Enums[name])
//	pattern:"…"       a regular expression a string must match
//
// Schema derives the schema from these tags and Decode enforces the same
// limits, so the executor's check and the tool's own check cannot drift.

// Vocab holds what a struct tag cannot: descriptions shared by many actions
// of one tool, and value sets computed at run time.
type Vocab struct {
	Docs  map[string]string
	Enums map[string][]string
}

// Schema returns the JSON Schema of args (a struct value or pointer): a
// closed object with one property per field.
func Schema(args any, v Vocab) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, f := range fields(reflect.TypeOf(args)) {
		props[f.name] = f.schema(v)
		if f.required {
			required = append(required, f.name)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

// field is one argument as its tags declare it.
type field struct {
	index    int
	name     string
	required bool
	doc      string
	pattern  string
	kind     string // string, integer, boolean, array (of strings)
	limits   map[string]int
	enum     string // raw enum value: a|b|c or @name
	hasDef   bool
	def      int
}

var fieldCache sync.Map // reflect.Type → []field

func fields(t reflect.Type) []field {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	fs := make([]field, 0, t.NumField())
	for i := range t.NumField() {
		fs = append(fs, parseField(t, i))
	}
	fieldCache.Store(t, fs)
	return fs
}

// parseField reads one field's tags; a malformed tag is a programming
// error and panics at the first Spec call (every tool test calls it).
func parseField(t reflect.Type, i int) field {
	sf := t.Field(i)
	name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
	f := field{index: i, name: name, required: sf.Tag.Get("required") == "true",
		doc: sf.Tag.Get("doc"), pattern: sf.Tag.Get("pattern"), limits: map[string]int{}}
	ft := sf.Type
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	switch ft.Kind() {
	case reflect.String:
		f.kind = "string"
	case reflect.Bool:
		f.kind = "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f.kind = "integer"
	case reflect.Slice:
		if ft.Elem().Kind() != reflect.String {
			panic(fmt.Sprintf("toolargs: %s.%s: only lists of strings are supported", t.Name(), sf.Name))
		}
		f.kind = "array"
	default:
		panic(fmt.Sprintf("toolargs: %s.%s: unsupported type %s", t.Name(), sf.Name, ft))
	}
	if name == "" {
		panic(fmt.Sprintf("toolargs: %s.%s has no json name", t.Name(), sf.Name))
	}
	tag := sf.Tag.Get("schema")
	if tag == "" {
		return f
	}
	for _, kv := range strings.Split(tag, ",") {
		k, val, ok := strings.Cut(kv, "=")
		if !ok {
			panic(fmt.Sprintf("toolargs: %s.%s: schema tag %q: want key=value", t.Name(), sf.Name, kv))
		}
		switch k {
		case "enum":
			f.enum = val
		case "minLength", "maxLength", "minimum", "maximum", "maxItems", "default":
			n, err := strconv.Atoi(val)
			if err != nil {
				panic(fmt.Sprintf("toolargs: %s.%s: %s=%q is not a whole number", t.Name(), sf.Name, k, val))
			}
			if k == "default" {
				f.hasDef, f.def = true, n
			} else {
				f.limits[k] = n
			}
		default:
			panic(fmt.Sprintf("toolargs: %s.%s: unknown schema key %q", t.Name(), sf.Name, k))
		}
	}
	return f
}

// enumValues resolves the enum declaration: strings, or whole numbers for
// an integer argument.
func (f field) enumValues(v Vocab) any {
	if f.enum == "" {
		return nil
	}
	var vals []string
	if name, ok := strings.CutPrefix(f.enum, "@"); ok {
		vals, ok = v.Enums[name]
		if !ok {
			panic(fmt.Sprintf("toolargs: argument %s: no enum %q in the tool's vocabulary", f.name, name))
		}
	} else {
		vals = strings.Split(f.enum, "|")
	}
	if f.kind != "integer" {
		return vals
	}
	ints := make([]int, len(vals))
	for i, s := range vals {
		n, err := strconv.Atoi(s)
		if err != nil {
			panic(fmt.Sprintf("toolargs: argument %s: enum value %q is not a whole number", f.name, s))
		}
		ints[i] = n
	}
	return ints
}

func (f field) schema(v Vocab) map[string]any {
	s := map[string]any{"type": f.kind}
	if f.doc != "" {
		s["description"] = f.doc
	} else if d, ok := v.Docs[f.name]; ok {
		s["description"] = d
	}
	for k, n := range f.limits {
		s[k] = n
	}
	if f.hasDef {
		s["default"] = f.def
	}
	if f.pattern != "" {
		s["pattern"] = f.pattern
	}
	enum := f.enumValues(v)
	if f.kind == "array" {
		items := map[string]any{"type": "string"}
		if enum != nil {
			items["enum"] = enum
		}
		s["items"] = items
	} else if enum != nil {
		s["enum"] = enum
	}
	return s
}
