package rctool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Argument limits, in characters (JSON Schema maxLength counts code points).
const (
	maxRoomLen     = 256
	maxTextLen     = 5000 // Message_MaxAllowedSize default (GT §1.6)
	maxIDLen       = 64
	maxPathLen     = 600 // prefix plus workspace.MaxPathBytes
	maxFileNameLen = 255
	maxQueryLen    = 500
	maxEmojiLen    = 64
)

// decodeArgs decodes the call's args strictly into dst: one JSON object,
// only the fields of dst (exact case, DisallowUnknownFields), each of the
// right type, nothing after it. Errors are EINVALID and name the argument
// and what the action takes.
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
			want := "a string"
			if k := te.Type.Kind(); k >= reflect.Int && k <= reflect.Uint64 {
				want = "a whole number"
			}
			return sb.E(c.op, sb.EINVALID, fmt.Sprintf("argument %q must be %s, not a JSON %s", te.Field, want, te.Value))
		}
		return notObject
	}
	return nil
}

// decodeLoose reads what it can (for Condition, which must not fail).
func decodeLoose(raw json.RawMessage, dst any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	return json.Unmarshal(raw, dst)
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
// characters. It returns the value as given.
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
	if n := utf8.RuneCountInString(*v); n > max {
		return "", sb.E(c.op, sb.EINVALID, fmt.Sprintf("argument %q has %d characters; at most %d are allowed, so shorten it", name, n, max))
	}
	if !utf8.ValidString(*v) {
		return "", sb.E(c.op, sb.EINVALID, fmt.Sprintf("argument %q is not valid UTF-8", name))
	}
	return *v, nil
}

// id checks an id argument (message, thread, file): letters, digits, '-'
// and '_' only, as Rocket.Chat's Meteor ids and 24-hex upload ids are; a
// value with "/" or ".." would change which endpoint a path names.
func (c *invocation) id(name string, v *string, required bool) (string, error) {
	if v == nil && !required {
		return "", nil
	}
	s, err := c.text(name, v, maxIDLen)
	if err != nil {
		return "", err
	}
	s = strings.TrimSpace(s)
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return "", sb.E(c.op, sb.EINVALID, fmt.Sprintf(
				"argument %q is %s, which is not a Rocket.Chat id; copy the id from read_room or the wake message (letters and digits only)", name, quote(s)))
		}
	}
	return s, nil
}

// count checks an optional message count: 1 to MaxCount, default DefaultCount.
func (c *invocation) count(v *int) (int, error) {
	if v == nil {
		return DefaultCount, nil
	}
	if *v < 1 || *v > MaxCount {
		return 0, sb.E(c.op, sb.EINVALID, fmt.Sprintf("argument \"count\" is %d; give a number from 1 to %d, or leave it out for %d", *v, MaxCount, DefaultCount))
	}
	return *v, nil
}
