package workspace_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
)

// FuzzResolve checks the property every caller relies on: Resolve either
// refuses, or answers a key inside the agent's personal folder or the shared
// folder, with no way out (no "..", "//", backslash, control character,
// escape), within the length limits, and stable: the path DisplayRef shows
// for the key resolves to the same key. Interesting inputs the fuzzer finds
// are kept in testdata/fuzz/FuzzResolve.
func FuzzResolve(f *testing.F) {
	for _, seed := range []struct{ agent, ref string }{
		{"hermes", "personal:reports/q3.md"},
		{"hermes", "shared:x/y.csv"},
		{"hermes", "notes.md"},
		{"hermes", "../x"},
		{"hermes", "shared:a/../../agents/atlas/personal/x"},
		{"hermes", "%2e%2e/%2fetc"},
		{"hermes", `..\..\x`},
		{"hermes", "a//b/./c"},
		{"hermes", "personal:shared:x"},
		{"hermes", "C:/x"},
		{"hermes", "/abs"},
		{"hermes", " a /b "},
		{"hermes", "a\x00b"},
		{"hermes", "report\u202Efdp.exe"},
		{"hermes", "Übersicht.md"},
		{"a-1", "x"},
		{"", "x"},
		{"../x", "y"},
		{"hermes", strings.Repeat("a/", 256)},
	} {
		f.Add(seed.agent, seed.ref)
	}
	f.Fuzz(func(t *testing.T, agent, ref string) {
		checkResolve(t, agent, ref)
		// Most random agent ids are refused at once; a valid one makes every
		// input exercise the path rules too.
		checkResolve(t, "hermes", ref)
	})
}

func checkResolve(t *testing.T, agent, ref string) {
	t.Helper()
	key, err := workspace.Resolve(agent, ref)
	if err != nil {
		return
	}
	personal := "agents/" + agent + "/personal/"
	var p string
	switch {
	case strings.HasPrefix(key, personal):
		p = strings.TrimPrefix(key, personal)
	case strings.HasPrefix(key, "shared/"):
		p = strings.TrimPrefix(key, "shared/")
	default:
		t.Fatalf("Resolve(%q, %q) = %q: outside %s and shared/", agent, ref, key, personal)
	}
	if strings.Contains(agent, "/") || strings.Contains(agent, ".") {
		t.Fatalf("agent id %q accepted", agent)
	}
	if p == "" || len(p) > workspace.MaxPathBytes {
		t.Fatalf("Resolve(%q, %q) = %q: path part of %d bytes", agent, ref, key, len(p))
	}
	if strings.Contains(key, "//") || strings.Contains(key, `\`) || strings.HasSuffix(key, "/") {
		t.Fatalf("Resolve(%q, %q) = %q: //, backslash or trailing /", agent, ref, key)
	}
	if strings.Contains(p, ":") || strings.Contains(p, "%") && hasEscape(p) {
		t.Fatalf("Resolve(%q, %q) = %q: colon or escape in the path", agent, ref, key)
	}
	if !utf8.ValidString(key) {
		t.Fatalf("Resolve(%q, %q) = %q: invalid UTF-8", agent, ref, key)
	}
	for _, r := range key {
		if unicode.IsControl(r) {
			t.Fatalf("Resolve(%q, %q) = %q: control character %U", agent, ref, key, r)
		}
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || seg == "." || seg == "" || len(seg) > workspace.MaxSegmentBytes || strings.TrimSpace(seg) != seg {
			t.Fatalf("Resolve(%q, %q) = %q: bad segment %q", agent, ref, key, seg)
		}
	}
	shown := workspace.DisplayRef(agent, key)
	if shown == "" {
		t.Fatalf("DisplayRef(%q, %q) is empty for a resolved key", agent, key)
	}
	if !strings.HasPrefix(shown, workspace.PrefixPersonal) && !strings.HasPrefix(shown, workspace.PrefixShared) {
		t.Fatalf("DisplayRef(%q, %q) = %q: no prefix", agent, key, shown)
	}
	again, err := workspace.Resolve(agent, shown)
	if err != nil || again != key {
		t.Fatalf("Resolve(%q, DisplayRef = %q) = %q, %v; want %q", agent, shown, again, err, key)
	}
	// A folder prefix of the key resolves to a prefix of the key.
	if i := strings.LastIndexByte(shown, '/'); i >= 0 {
		dir, err := workspace.ResolvePrefix(agent, shown[:i+1])
		if err != nil || !strings.HasPrefix(key, dir) {
			t.Fatalf("ResolvePrefix(%q, %q) = %q, %v; want a prefix of %q", agent, shown[:i+1], dir, err, key)
		}
	}
}

func hasEscape(s string) bool {
	const hex = "0123456789abcdefABCDEF"
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '%' && strings.IndexByte(hex, s[i+1]) >= 0 && strings.IndexByte(hex, s[i+2]) >= 0 {
			return true
		}
	}
	return false
}
