package nctool

import (
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
)

// Limits on a path argument, in bytes. Nextcloud stores paths up to 4000
// characters (oc_filecache.path); names up to 255 bytes (most file systems).
const (
	MaxPathBytes    = 1024
	MaxSegmentBytes = 255
)

// scope is an agent's validated rootPath: every path argument resolves
// inside it. "/" would be the whole account; it is allowed only when the
// operator configures it so.
type scope struct {
	root string // clean, absolute, no trailing slash except for "/"
	// shared is the shared reports folder (clean, absolute) when the agent
	// has one: paths written SharedReportsPrefix+"…" resolve inside it.
	shared string
}

// SharedReportsPrefix marks a path in the shared reports folder, a folder
// of the account outside the agent's own that the people see (the
// agent's tools.Nextcloud.sharedReportsPath): "shared-reports:q3.xlsx".
const SharedReportsPrefix = "shared-reports:"

// withShared adds the shared reports folder; "" leaves the scope as it is.
// It goes through the root's checks.
func (s scope) withShared(sharedPath string) (scope, error) {
	if strings.TrimSpace(sharedPath) == "" {
		return s, nil
	}
	sh, err := newScope(sharedPath)
	if err != nil {
		return scope{}, sb.E("nctool.root", sb.EINVALID, "the agent's Nextcloud sharedReportsPath is not a plain absolute folder; ask the operator to fix tools.Nextcloud.sharedReportsPath")
	}
	if sh.root == "/" {
		return scope{}, sb.E("nctool.root", sb.EINVALID, "the agent's Nextcloud sharedReportsPath may not be the whole account; ask the operator to name a folder")
	}
	s.shared = sh.root
	return s, nil
}

// newScope validates rootPath. It is configuration, not model input, but it
// goes through the same checks: a root that Nextcloud or a URL could read
// differently from us would make every later check meaningless.
func newScope(rootPath string) (scope, error) {
	const op = "nctool.root"
	if strings.TrimSpace(rootPath) == "" {
		return scope{}, sb.E(op, sb.EINVALID,
			"this agent's Nextcloud rootPath is not set, so the tool has no folder to work in; ask the operator to set tools.Nextcloud.rootPath (for example /Switchboard/Hermes)")
	}
	if msg := checkChars(rootPath); msg != "" {
		return scope{}, sb.E(op, sb.EINVALID, "the agent's Nextcloud rootPath "+msg+"; ask the operator to fix tools.Nextcloud.rootPath")
	}
	for seg := range strings.SplitSeq(rootPath, "/") {
		if seg == ".." || seg == "." {
			return scope{}, sb.E(op, sb.EINVALID, "the agent's Nextcloud rootPath contains . or .. segments; ask the operator to write it as a plain absolute path such as /Switchboard/Hermes")
		}
	}
	return scope{root: path.Clean("/" + rootPath)}, nil
}

// resolve maps a path argument to the absolute path in the account. The
// argument is read relative to the root whether or not it starts with "/"
// ("/" and "" are the root itself; "reports/q3.md" and "/reports/q3.md" are
// the same file). It refuses, with EINVALID and a message that says what to
// write instead: invalid UTF-8; control characters (NUL, newline, DEL, U+0080–U+009F),
// line separators and bidirectional overrides; backslashes; percent-escapes
// (nothing is decoded here, and the client escapes every segment, so "%2F"
// would be a literal name to Nextcloud but a separator to anything that
// decodes once more — refusing all of them keeps one reading); paths or
// names over the byte limits; and any ".." that is still there after
// cleaning, i.e. one that would climb above the root.
func (s scope) resolve(name, arg string) (string, error) {
	const op = "nctool.path"
	if rest, ok := strings.CutPrefix(arg, SharedReportsPrefix); ok {
		if s.shared == "" {
			return "", sb.E(op, sb.EINVALID, fmt.Sprintf("%s %s names the shared reports folder, which this agent does not have; write a path inside your own folder, such as reports/…", name, quote(arg)))
		}
		return scope{root: s.shared}.resolve(name, rest)
	}
	bad := func(format string, a ...any) (string, error) {
		return "", sb.E(op, sb.EINVALID, fmt.Sprintf("%s %s ", name, quote(arg))+fmt.Sprintf(format, a...))
	}
	if len(arg) > MaxPathBytes {
		return "", sb.E(op, sb.EINVALID, fmt.Sprintf("%s is %d bytes long; at most %d are allowed, so shorten it", name, len(arg), MaxPathBytes))
	}
	if msg := checkChars(arg); msg != "" {
		return bad("%s", msg)
	}
	rel := path.Clean("./" + strings.TrimLeft(arg, "/"))
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return bad("climbs out of your folder with ..; paths are relative to your Nextcloud folder (\"/\" is its top), so write the path from there down")
	}
	for seg := range strings.SplitSeq(rel, "/") {
		if len(seg) > MaxSegmentBytes {
			return bad("has a name of %d bytes; at most %d are allowed, so shorten it", len(seg), MaxSegmentBytes)
		}
	}
	abs := s.root
	if rel != "." {
		abs = path.Join(s.root, rel)
	}
	if !s.contains(abs) { // cannot happen after the checks above; kept as the last line of defence
		return bad("is outside your folder; write a path inside it")
	}
	return abs, nil
}

// contains reports whether abs is the root or inside it (or the shared
// reports folder or inside it).
func (s scope) contains(abs string) bool {
	if abs != path.Clean(abs) || !strings.HasPrefix(abs, "/") {
		return false
	}
	return within(abs, s.root) || s.shared != "" && within(abs, s.shared)
}

func within(abs, root string) bool {
	return abs == root || root == "/" || strings.HasPrefix(abs, root+"/")
}

// display is the path the agent uses for abs: relative to the root, with a
// leading "/" ("/" for the root itself). ok is false for paths outside the
// root, which are never shown.
func (s scope) display(abs string) (string, bool) {
	if !s.contains(abs) {
		return "", false
	}
	if !within(abs, s.root) { // in the shared reports folder
		d, _ := scope{root: s.shared}.display(abs)
		return SharedReportsPrefix + d, true
	}
	if s.root == "/" {
		return abs, true
	}
	rel := strings.TrimPrefix(abs, s.root)
	if rel == "" {
		return "/", true
	}
	return rel, true
}

// show is display for paths known to be inside (resolved by resolve).
func (s scope) show(abs string) string {
	d, ok := s.display(abs)
	if !ok {
		return "(outside your folder)"
	}
	return d
}

// checkChars returns why p cannot be a Nextcloud path, or "".
func checkChars(p string) string {
	if !utf8.ValidString(p) {
		return "is not valid UTF-8; write the name in plain text"
	}
	for _, r := range p {
		switch {
		case r == '\\':
			return "contains a backslash; use / to separate folders"
		case unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp):
			return fmt.Sprintf("contains the control character %U; remove it", r)
		case workspace.IsBidiControl(r):
			return fmt.Sprintf("contains the invisible direction character %U (it disguises file endings); remove it", r)
		}
	}
	if i := workspace.PercentEscape(p); i >= 0 {
		return fmt.Sprintf("contains the percent-escape %s; escapes are not decoded, so write the character itself", quote(p[i:i+3]))
	}
	return ""
}

// underReports reports whether abs lies in a folder named "reports" below
// the root (any depth, any case): the files a 423 may rename.
func (s scope) underReports(abs string) bool {
	if s.shared != "" && !within(abs, s.root) && within(abs, s.shared) && abs != s.shared {
		return true // the shared reports folder holds reports only
	}
	d, ok := s.display(abs)
	if !ok {
		return false
	}
	segs := strings.Split(strings.Trim(d, "/"), "/")
	for _, seg := range segs[:len(segs)-1] {
		if strings.EqualFold(seg, ReportsFolder) {
			return true
		}
	}
	return false
}
