// Package workspace is the agents' file workspace in the bucket: it turns the
// workspace paths agents write (personal:reports/q3.md, shared:x/y.csv, or a
// bare path for personal) into bucket keys, refusing every path that could
// leave the agent's view, and offers the Workspace tool (write, read,
// list, delete) over any switchboard.BlobStore.
//
// Layout in the bucket:
//
//	agents/<agentID>/personal/<path>   personal:<path> (or just <path>)
//	shared/<path>                      shared:<path>, visible to every agent
package workspace

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

// Path prefixes agents write; a path without one is personal.
const (
	PrefixPersonal = "personal:"
	PrefixShared   = "shared:"
)

// Limits on a path after its prefix, in bytes.
const (
	MaxPathBytes    = 512
	MaxSegmentBytes = 255
	MaxAgentIDBytes = 64
)

const (
	keyAgents = "agents/"
	keyShared = "shared/"
	opResolve = "workspace.resolve"
)

var agentSlug = regexp.MustCompile(`^[a-z0-9-]+$`)

// Resolve maps a workspace path of agentID to its bucket key:
// personal:reports/q3.md → agents/<agentID>/personal/reports/q3.md,
// shared:x/y.csv → shared/x/y.csv, and a path without prefix is personal.
//
// It returns EINVALID, with a message that says what is wrong and what to do,
// for: an agentID that is not a slug [a-z0-9-] of at most 64 bytes; an empty
// path; invalid UTF-8; control characters (NUL, newline, tab, DEL, U+0080–U+009F), line
// separators and bidirectional-override characters (they disguise file
// endings in chat); a colon anywhere after the prefix, so an unknown prefix
// such as "Personal:" or "C:" is refused rather than taken as a name; a
// backslash; a percent-escape such as %2e or %2F (nothing is ever decoded, and
// consumers that do decode — WebDAV, URLs — must not see a different path than
// we checked); an absolute path; a trailing slash; "." and ".." segments;
// empty segments ("a//b" is refused, not normalised, so that every file has
// exactly one path and DisplayRef(Resolve(p)) == p); a segment with leading or
// trailing white space; a segment over MaxSegmentBytes or a path over
// MaxPathBytes.
func Resolve(agentID, ref string) (key string, err error) {
	scope, p, err := parse(agentID, ref, false)
	if err != nil {
		return "", err
	}
	return scopeRoot(agentID, scope) + p, nil
}

// ResolvePrefix maps a folder of agentID's workspace to a key prefix ending
// in "/": "personal:" → agents/<agentID>/personal/, "shared:reports" and
// "shared:reports/" → shared/reports/, "" → the personal root. It applies the
// rules of Resolve except that the path may be empty and may end in one "/".
// Use it for listings and for download targets where only the folder is the
// agent's choice.
func ResolvePrefix(agentID, ref string) (prefix string, err error) {
	scope, p, err := parse(agentID, ref, true)
	if err != nil {
		return "", err
	}
	if p == "" {
		return scopeRoot(agentID, scope), nil
	}
	return scopeRoot(agentID, scope) + p + "/", nil
}

// DisplayRef maps a bucket key back to the path agentID uses for it:
// personal:<path> or shared:<path>. It returns "" for keys outside the
// agent's view (another agent's files, system keys) and for keys no valid
// path names, so that Resolve(agentID, DisplayRef(agentID, key)) == key
// whenever DisplayRef is not empty.
func DisplayRef(agentID, key string) string {
	return display(agentID, key, Resolve)
}

// displayPrefix is DisplayRef for a key prefix ending in "/" (or a scope
// root): agents/<agentID>/personal/ → "personal:", shared/a/ → "shared:a/".
func displayPrefix(agentID, prefix string) string {
	return display(agentID, prefix, ResolvePrefix)
}

// display maps key (a bucket key or a key prefix) to the ref agentID uses
// for it, "" unless resolve (Resolve or ResolvePrefix) maps that ref back
// to key exactly.
func display(agentID, key string, resolve func(agentID, ref string) (string, error)) string {
	if !validAgentID(agentID) {
		return ""
	}
	var ref string
	if rest, ok := strings.CutPrefix(key, scopeRoot(agentID, PrefixPersonal)); ok {
		ref = PrefixPersonal + rest
	} else if rest, ok := strings.CutPrefix(key, keyShared); ok {
		ref = PrefixShared + rest
	} else {
		return ""
	}
	if k, err := resolve(agentID, ref); err != nil || k != key {
		return ""
	}
	return ref
}

func scopeRoot(agentID, scope string) string {
	if scope == PrefixShared {
		return keyShared
	}
	return keyAgents + agentID + "/personal/"
}

func validAgentID(id string) bool {
	return len(id) <= MaxAgentIDBytes && agentSlug.MatchString(id)
}

// parse splits ref into its scope (PrefixPersonal or PrefixShared) and the
// checked path after it. dir allows an empty path and one trailing "/",
// which it removes.
func parse(agentID, ref string, dir bool) (scope, p string, err error) {
	if !validAgentID(agentID) {
		return "", "", sb.E(opResolve, sb.EINVALID, fmt.Sprintf(
			"agent id %s is not a slug of lower-case letters, digits and '-' (at most %d bytes); fix the agent's id in the configuration",
			quote(agentID), MaxAgentIDBytes))
	}
	bad := func(format string, a ...any) (string, string, error) {
		return "", "", sb.E(opResolve, sb.EINVALID, fmt.Sprintf(format, a...))
	}
	if !utf8.ValidString(ref) {
		return bad("the path %s is not valid UTF-8; write the file name in plain text", quote(ref))
	}
	scope, p = PrefixPersonal, ref
	if rest, ok := strings.CutPrefix(ref, PrefixPersonal); ok {
		p = rest
	} else if rest, ok := strings.CutPrefix(ref, PrefixShared); ok {
		scope, p = PrefixShared, rest
	}
	example := scope + "notes/todo.md"

	if p == "" && !dir {
		if ref == "" {
			return bad("the path is empty; give a workspace path such as %s", example)
		}
		return bad("the path %s names no file; give a path such as %s", quote(ref), example)
	}
	for _, r := range p {
		if r == ':' {
			if i := strings.IndexByte(ref, ':'); i >= 0 && scope == PrefixPersonal && ref == p && !strings.ContainsAny(ref[:i], "/") {
				return bad("the path %s starts with the unknown prefix %s; use personal: (or no prefix) for your own files and shared: for files every agent sees",
					quote(ref), quote(ref[:i+1]))
			}
			return bad("the path %s contains a colon; a colon may only end the prefix personal: or shared:, so rename the file without it", quote(ref))
		}
		if unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp) || IsBidiControl(r) {
			return bad("the path %s contains the invisible or control character %U; remove it", quote(ref), r)
		}
	}
	if strings.ContainsRune(p, '\\') {
		return bad("the path %s contains a backslash; use / to separate folders, as in %s", quote(ref), example)
	}
	if i := PercentEscape(p); i >= 0 {
		return bad("the path %s contains the percent-escape %s; escapes are not decoded, so write the character itself or rename the file",
			quote(ref), quote(p[i:i+3]))
	}
	if strings.HasPrefix(p, "/") {
		return bad("the path %s is absolute; paths start inside the workspace, as in %s", quote(ref), example)
	}
	if len(p) > MaxPathBytes {
		return bad("the path is %d bytes long after its prefix; at most %d are allowed, so shorten it", len(p), MaxPathBytes)
	}
	if dir {
		p = strings.TrimSuffix(p, "/")
		if p == "" {
			return scope, "", nil
		}
	} else if strings.HasSuffix(p, "/") {
		return bad("the path %s ends with /, so it names a folder; give a file path such as %s", quote(ref), example)
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch {
		case seg == "":
			return bad("the path %s has an empty folder name (//); write each / once", quote(ref))
		case seg == "..":
			return bad("the path %s contains ..; paths cannot climb out of a folder, so write the full path from %s down", quote(ref), scope)
		case seg == ".":
			return bad("the path %s contains a . folder; write the path without it", quote(ref))
		case len(seg) > MaxSegmentBytes:
			return bad("the name %s in the path is %d bytes long; at most %d are allowed, so shorten it", quote(seg), len(seg), MaxSegmentBytes)
		case strings.TrimFunc(seg, unicode.IsSpace) != seg:
			return bad("the name %s in the path starts or ends with a space; remove the space", quote(seg))
		}
	}
	return scope, p, nil
}

// PercentEscape returns the index of the first %XX (two hex digits) in s,
// or -1. "100%.md" and "50%off" are names, not escapes.
func PercentEscape(s string) int {
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '%' && isHex(s[i+1]) && isHex(s[i+2]) {
			return i
		}
	}
	return -1
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// IsBidiControl reports the characters that reorder text on screen
// ("report\u202Efdp.exe" shows as "reportexe.pdf").
func IsBidiControl(r rune) bool {
	switch {
	case r == '\u061C', r == '\u200E', r == '\u200F':
		return true
	case '\u202A' <= r && r <= '\u202E', '\u2066' <= r && r <= '\u2069':
		return true
	}
	return false
}

// quote renders untrusted text for a message (toolargs.Quote).
func quote(s string) string { return toolargs.Quote(s) }
