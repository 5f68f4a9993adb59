package nctool

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

// Argument limits, in characters (JSON Schema maxLength counts code points).
const (
	maxPathArgLen = MaxPathBytes
	maxRefLen     = 600 // workspace prefix plus workspace.MaxPathBytes
	maxQueryLen   = 200
	maxNoteLen    = 1000
	maxNameLen    = 255
	maxWithLen    = 255
	maxPassLen    = 200
	maxIDLen      = 255
)

// decodeArgs decodes the call's args strictly into dst: one JSON object,
// only the fields of dst (exact case), each of the right type, nothing after
// it. Errors are EINVALID and name the argument and what the action takes.
func (c *invocation) decodeArgs(dst any) error {
	raw := bytes.TrimSpace(c.call.Args)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	takes := argList(dst)
	notObject := sb.E(c.op, sb.EINVALID, fmt.Sprintf("the arguments must be one JSON object; %s takes %s", c.call.Action, takes))
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
		return sb.E(c.op, sb.EINVALID, fmt.Sprintf("unknown argument %s; %s takes %s", quote(unknown[0]), c.call.Action, takes))
	}
	if err := strictDecode(raw, dst, true); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return sb.E(c.op, sb.EINVALID, fmt.Sprintf("argument %q must be %s, not a JSON %s", te.Field, kindName(te.Type), te.Value))
		}
		return notObject
	}
	return nil
}

func kindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list of strings"
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

// fieldNames lists the JSON names of dst's fields.
func fieldNames(dst any) map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeOf(dst).Elem()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[name] = true
	}
	return out
}

// argList describes dst's arguments: required ones plain, optional ones
// with "?" (a field tagged required:"true" is required).
func argList(dst any) string {
	t := reflect.TypeOf(dst).Elem()
	if t.NumField() == 0 {
		return "no arguments ({})"
	}
	var parts []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Tag.Get("required") != "true" {
			name += "?"
		}
		parts = append(parts, name)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// text checks a required string argument: present, not blank, at most max
// characters.
func (c *invocation) text(name string, v *string, max int) (string, error) {
	if v == nil {
		return "", sb.E(c.op, sb.EINVALID, fmt.Sprintf("missing argument %q; %s needs it", name, c.call.Action))
	}
	if strings.TrimSpace(*v) == "" {
		return "", sb.E(c.op, sb.EINVALID, fmt.Sprintf("argument %q is empty; give a value", name))
	}
	return c.optional(name, v, max)
}

// optional checks an optional string argument's length; nil is "".
func (c *invocation) optional(name string, v *string, max int) (string, error) {
	if v == nil {
		return "", nil
	}
	if !utf8.ValidString(*v) {
		return "", sb.E(c.op, sb.EINVALID, fmt.Sprintf("argument %q is not valid UTF-8", name))
	}
	if n := utf8.RuneCountInString(*v); n > max {
		return "", sb.E(c.op, sb.EINVALID, fmt.Sprintf("argument %q has %d characters; at most %d are allowed, so shorten it", name, n, max))
	}
	return *v, nil
}

// remote resolves a required Nextcloud path argument inside the root.
func (c *invocation) remote(name string, v *string) (string, error) {
	if v == nil {
		return "", sb.E(c.op, sb.EINVALID, fmt.Sprintf("missing argument %q; %s needs a path inside your Nextcloud folder, such as reports/q3.md", name, c.call.Action))
	}
	return c.scope.resolve(name, *v)
}

// remoteOr resolves an optional Nextcloud path argument; nil is the root.
func (c *invocation) remoteOr(name string, v *string) (string, error) {
	if v == nil {
		return c.scope.root, nil
	}
	return c.scope.resolve(name, *v)
}

// notRoot refuses an action on the agent's folder itself.
func (c *invocation) notRoot(name, abs, what string) error {
	if abs == c.scope.root {
		return sb.E(c.op, sb.EINVALID, fmt.Sprintf("%s names your Nextcloud folder itself; %s", name, what))
	}
	return nil
}

func boolOr(v *bool, def bool) bool {
	if v == nil {
		return def
	}
	return *v
}

// quote renders untrusted text for a message: Go-quoted, at most 80 bytes.
func quote(s string) string {
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
