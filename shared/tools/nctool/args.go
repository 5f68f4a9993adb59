package nctool

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
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

// args checks this call's arguments (shared/tools/toolargs).
func (c *invocation) args() toolargs.Args { return toolargs.Args{Op: c.op, Action: c.call.Action} }

// decodeArgs decodes the call's args strictly into dst and checks the
// limits its tags declare (toolargs.Decode).
func (c *invocation) decodeArgs(dst any) error { return c.args().Decode(c.call.Args, dst) }

// text checks a required string argument (toolargs.Text).
func (c *invocation) text(name string, v *string) (string, error) { return c.args().Text(name, v) }

// optional returns an optional string argument; nil is "".
func (c *invocation) optional(v *string) string { return c.args().Optional(v) }
