// Package toolargs is where a tool action's arguments are declared once: a
// Go struct whose tags give names, required fields, limits and
// descriptions. Schema derives the JSON Schema offered to models from it;
// Decode reads arguments that came from a model or a client into it — one
// JSON object, only the declared fields (exact case), each of the right
// type and within its limits — and every problem is an EINVALID error that
// names the argument and says what the action takes. The tools share it so
// that every tool answers bad input the same way.
package toolargs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Args checks the arguments of one action; Op names where for errors.
type Args struct {
	Op     string
	Action string
}

// Decode decodes raw strictly into dst (a pointer to a struct whose tags
// declare the arguments, see Schema) and enforces the declared limits:
// lengths, ranges and list sizes (enum and pattern are left to the action,
// which can say better what a valid value looks like). Presence of required arguments is left to
// the action, which knows the better hint. Empty or null raw is {}.
func (a Args) Decode(raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	takes := List(dst)
	notObject := sb.E(a.Op, sb.EINVALID, fmt.Sprintf("the arguments must be one JSON object; %s takes %s", a.Action, takes))
	var keys map[string]json.RawMessage
	if err := strictDecode(raw, &keys, false); err != nil || keys == nil {
		return notObject
	}
	known := fieldNames(dst)
	var unknown []string
	for k := range keys {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return sb.E(a.Op, sb.EINVALID, fmt.Sprintf("unknown argument %s; %s takes %s", Quote(unknown[0]), a.Action, takes))
	}
	if err := strictDecode(raw, dst, true); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return sb.E(a.Op, sb.EINVALID, fmt.Sprintf("argument %q must be %s, not a JSON %s", te.Field, kindName(te.Type), te.Value))
		}
		return notObject
	}
	return a.limits(dst)
}

// limits checks every given argument against its declared limits.
func (a Args) limits(dst any) error {
	v := reflect.ValueOf(dst).Elem()
	for _, f := range fields(v.Type()) {
		fv := v.Field(f.index)
		if fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				continue
			}
			fv = fv.Elem()
		}
		switch f.kind {
		case "string":
			s := fv.String()
			if !utf8.ValidString(s) {
				return sb.E(a.Op, sb.EINVALID, fmt.Sprintf("argument %q is not valid UTF-8", f.name))
			}
			if min, ok := f.limits["minLength"]; ok {
				switch n := utf8.RuneCountInString(s); {
				case n == 0 && f.required:
					return sb.E(a.Op, sb.EINVALID, fmt.Sprintf("argument %q is empty; give a value", f.name))
				case n == 0:
					return sb.E(a.Op, sb.EINVALID, fmt.Sprintf("argument %q is empty; give a value or leave it out", f.name))
				case n < min:
					return sb.E(a.Op, sb.EINVALID, fmt.Sprintf("argument %q has %d characters; at least %d are needed", f.name, n, min))
				}
			}
			if max, ok := f.limits["maxLength"]; ok {
				if n := utf8.RuneCountInString(s); n > max {
					return sb.E(a.Op, sb.EINVALID, fmt.Sprintf("argument %q has %d characters; at most %d are allowed, so shorten it", f.name, n, max))
				}
			}
		case "integer":
			n := int(fv.Int())
			lo, hasLo := f.limits["minimum"]
			hi, hasHi := f.limits["maximum"]
			if (hasLo && n < lo) || (hasHi && n > hi) {
				msg := fmt.Sprintf("argument %q is %d; give a number from %d to %d", f.name, n, lo, hi)
				switch {
				case !hasHi:
					msg = fmt.Sprintf("argument %q is %d; give a number of at least %d", f.name, n, lo)
				case !hasLo:
					msg = fmt.Sprintf("argument %q is %d; give a number of at most %d", f.name, n, hi)
				}
				if f.hasDef {
					msg += fmt.Sprintf(", or leave it out for %d", f.def)
				}
				return sb.E(a.Op, sb.EINVALID, msg)
			}
		case "array":
			if max, ok := f.limits["maxItems"]; ok && fv.Len() > max {
				return sb.E(a.Op, sb.EINVALID, fmt.Sprintf("argument %q has %d entries; at most %d are allowed", f.name, fv.Len(), max))
			}
		}
	}
	return nil
}

// Limit returns the limit key (maxLength, maximum, default, …) that args
// declares for argument name; tests use it to pin constants to the
// declaration.
func Limit(args any, name, key string) (int, bool) {
	for _, f := range fields(reflect.TypeOf(args)) {
		if f.name != name {
			continue
		}
		if key == "default" {
			return f.def, f.hasDef
		}
		n, ok := f.limits[key]
		return n, ok
	}
	return 0, false
}

// Text checks a required string argument: present and not blank (Decode
// already checked its length). It returns the value as given.
func (a Args) Text(name string, v *string) (string, error) {
	if v == nil {
		return "", sb.E(a.Op, sb.EINVALID, fmt.Sprintf("missing argument %q; %s needs it", name, a.Action))
	}
	if strings.TrimSpace(*v) == "" {
		return "", sb.E(a.Op, sb.EINVALID, fmt.Sprintf("argument %q is empty; give a value", name))
	}
	return *v, nil
}

// Optional returns an optional string argument; nil is "".
func (a Args) Optional(v *string) string {
	if v == nil {
		return ""
	}
	return *v
}

// List describes dst's arguments: required ones plain, optional ones with "?".
func List(dst any) string {
	t := reflect.TypeOf(dst).Elem()
	if t.NumField() == 0 {
		return "no arguments ({})"
	}
	var parts []string
	for _, f := range fields(t) {
		name := f.name
		if !f.required {
			name += "?"
		}
		parts = append(parts, name)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func kindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list of strings"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a string"
}

func strictDecode(raw []byte, dst any, disallowUnknown bool) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if disallowUnknown {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the arguments object")
	}
	return nil
}

func fieldNames(dst any) map[string]bool {
	out := map[string]bool{}
	for _, f := range fields(reflect.TypeOf(dst)) {
		out[f.name] = true
	}
	return out
}

// Quote renders untrusted text for a message: Go-quoted (control
// characters escaped) and cut to at most 80 bytes on a rune boundary, with
// "…" after the quotes when it was cut.
func Quote(s string) string {
	const max = 80
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}

// Refusal turns an error envelope a tool answered while checking a call
// (before staging) back into the error it stands for, keeping its code and
// its caller-safe message.
func Refusal(op string, env sb.Envelope) error {
	code, _ := env.Data["code"].(string)
	if code == "" {
		code = sb.EINVALID
	}
	return sb.E(op, code, env.Error)
}
