package rctool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
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

// decodeLoose reads what it can (for Condition, which must not fail).
func decodeLoose(raw json.RawMessage, dst any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	return json.Unmarshal(raw, dst)
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

// args checks this call's arguments (shared/tools/toolargs).
func (c *invocation) args() toolargs.Args { return toolargs.Args{Op: c.op, Action: c.call.Action} }

// decodeArgs decodes the call's args strictly into dst (toolargs.Decode).
func (c *invocation) decodeArgs(dst any) error { return c.args().Decode(c.call.Args, dst) }

// text checks a required string argument (toolargs.Text).
func (c *invocation) text(name string, v *string, max int) (string, error) {
	return c.args().Text(name, v, max)
}

// optional checks an optional string argument (toolargs.Optional).
func (c *invocation) optional(name string, v *string, max int) (string, error) {
	return c.args().Optional(name, v, max)
}
