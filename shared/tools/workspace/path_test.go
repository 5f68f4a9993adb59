package workspace_test

import (
	"strings"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
)

func TestResolve(t *testing.T) {
	long := strings.Repeat("a", 255)
	tests := []struct {
		name    string
		agent   string
		ref     string
		want    string
		wantErr string // substring of the caller-safe message; "" = no error
	}{
		{name: "personal prefix", agent: "hermes", ref: "personal:reports/q3.md", want: "agents/hermes/personal/reports/q3.md"},
		{name: "shared prefix", agent: "hermes", ref: "shared:x/y.csv", want: "shared/x/y.csv"},
		{name: "no prefix is personal", agent: "hermes", ref: "notes.md", want: "agents/hermes/personal/notes.md"},
		{name: "nested, unicode, spaces inside", agent: "a-1", ref: "Berichte/Q3 Übersicht (final).md", want: "agents/a-1/personal/Berichte/Q3 Übersicht (final).md"},
		{name: "percent that is no escape", agent: "hermes", ref: "100%.md", want: "agents/hermes/personal/100%.md"},
		{name: "percent before non-hex", agent: "hermes", ref: "50%off.txt", want: "agents/hermes/personal/50%off.txt"},
		{name: "three dots is a name", agent: "hermes", ref: "shared:.../x", want: "shared/.../x"},
		{name: "dot file", agent: "hermes", ref: ".env", want: "agents/hermes/personal/.env"},
		{name: "dots inside a name", agent: "hermes", ref: "a..b/c", want: "agents/hermes/personal/a..b/c"},
		{name: "longest segment", agent: "hermes", ref: long, want: "agents/hermes/personal/" + long},
		{name: "longest path", agent: "hermes", ref: "shared:" + strings.Repeat("a/", 255) + "bc", want: "shared/" + strings.Repeat("a/", 255) + "bc"},

		{name: "empty", agent: "hermes", ref: "", wantErr: "the path is empty"},
		{name: "prefix only", agent: "hermes", ref: "personal:", wantErr: "names no file"},
		{name: "shared only", agent: "hermes", ref: "shared:", wantErr: "names no file"},
		{name: "absolute", agent: "hermes", ref: "/etc/passwd", wantErr: "is absolute"},
		{name: "absolute after prefix", agent: "hermes", ref: "shared:/x", wantErr: "is absolute"},
		{name: "dotdot", agent: "hermes", ref: "../other/x", wantErr: "contains .."},
		{name: "dotdot inside", agent: "hermes", ref: "shared:a/../../agents/x/personal/y", wantErr: "contains .."},
		{name: "dotdot at end", agent: "hermes", ref: "a/..", wantErr: "contains .."},
		{name: "backslash dotdot", agent: "hermes", ref: `..\x`, wantErr: "backslash"},
		{name: "backslash", agent: "hermes", ref: `a\b.txt`, wantErr: "backslash"},
		{name: "encoded dotdot", agent: "hermes", ref: "%2e%2e/x", wantErr: "percent-escape"},
		{name: "encoded slash upper", agent: "hermes", ref: "a%2Fb", wantErr: "percent-escape"},
		{name: "double encoded", agent: "hermes", ref: "%252e%252e/x", wantErr: "percent-escape"},
		{name: "overlong utf8 dot escape", agent: "hermes", ref: "%c0%ae%c0%ae/x", wantErr: "percent-escape"},
		{name: "dot segment", agent: "hermes", ref: "./x", wantErr: "a . folder"},
		{name: "dot segment inside", agent: "hermes", ref: "a/./x", wantErr: "a . folder"},
		{name: "double slash", agent: "hermes", ref: "a//b", wantErr: "empty folder name"},
		{name: "trailing slash", agent: "hermes", ref: "reports/", wantErr: "names a folder"},
		{name: "second colon", agent: "hermes", ref: "personal:a:b", wantErr: "contains a colon"},
		{name: "prefix twice", agent: "hermes", ref: "personal:shared:x", wantErr: "contains a colon"},
		{name: "unknown prefix", agent: "hermes", ref: "private:x", wantErr: `unknown prefix "private:"`},
		{name: "wrong case prefix", agent: "hermes", ref: "Personal:x", wantErr: `unknown prefix "Personal:"`},
		{name: "drive letter", agent: "hermes", ref: `C:/Windows/x`, wantErr: `unknown prefix "C:"`},
		{name: "colon in a later segment", agent: "hermes", ref: "a/b:c", wantErr: "contains a colon"},
		{name: "url", agent: "hermes", ref: "https://example.org/x", wantErr: `unknown prefix "https:"`},
		{name: "NUL", agent: "hermes", ref: "a\x00b", wantErr: "U+0000"},
		{name: "newline", agent: "hermes", ref: "a\nb", wantErr: "U+000A"},
		{name: "tab", agent: "hermes", ref: "a\tb", wantErr: "U+0009"},
		{name: "DEL", agent: "hermes", ref: "a\x7fb", wantErr: "U+007F"},
		{name: "U+0085 control", agent: "hermes", ref: "a\u0085b", wantErr: "U+0085"},
		{name: "line separator", agent: "hermes", ref: "a\u2028b", wantErr: "U+2028"},
		{name: "bidi override", agent: "hermes", ref: "report\u202Efdp.exe", wantErr: "U+202E"},
		{name: "leading space", agent: "hermes", ref: " a.md", wantErr: "starts or ends with a space"},
		{name: "trailing space in folder", agent: "hermes", ref: "shared:a /b", wantErr: "starts or ends with a space"},
		{name: "trailing no-break space", agent: "hermes", ref: "a\u00a0", wantErr: "starts or ends with a space"},
		{name: "segment too long", agent: "hermes", ref: long + "b", wantErr: "256 bytes long"},
		{name: "path too long", agent: "hermes", ref: strings.Repeat("a/", 256) + "b", wantErr: "513 bytes long"},
		{name: "invalid utf8", agent: "hermes", ref: "a\xffb", wantErr: "not valid UTF-8"},

		{name: "agent empty", agent: "", ref: "x", wantErr: "agent id"},
		{name: "agent upper", agent: "Hermes", ref: "x", wantErr: "agent id"},
		{name: "agent slash", agent: "a/b", ref: "x", wantErr: "agent id"},
		{name: "agent dotdot", agent: "..", ref: "x", wantErr: "agent id"},
		{name: "agent too long", agent: strings.Repeat("a", 65), ref: "x", wantErr: "agent id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := workspace.Resolve(tt.agent, tt.ref)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("Resolve(%q, %q) = %q, want an error with %q", tt.agent, tt.ref, got, tt.wantErr)
				}
				if code := sb.ErrorCode(err); code != sb.EINVALID {
					t.Errorf("code = %q, want %q", code, sb.EINVALID)
				}
				msg := sb.ErrorMessage(err)
				if !strings.Contains(msg, tt.wantErr) {
					t.Errorf("message %q does not contain %q", msg, tt.wantErr)
				}
				if strings.ContainsAny(msg, "\x00\n\u202E") {
					t.Errorf("message %q carries raw control characters", msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q, %q): %v", tt.agent, tt.ref, err)
			}
			if got != tt.want {
				t.Errorf("Resolve(%q, %q) = %q, want %q", tt.agent, tt.ref, got, tt.want)
			}
		})
	}
}

func TestResolvePrefix(t *testing.T) {
	tests := []struct {
		ref     string
		want    string
		wantErr bool
	}{
		{ref: "", want: "agents/hermes/personal/"},
		{ref: "personal:", want: "agents/hermes/personal/"},
		{ref: "shared:", want: "shared/"},
		{ref: "shared:reports", want: "shared/reports/"},
		{ref: "shared:reports/", want: "shared/reports/"},
		{ref: "reports/2026/", want: "agents/hermes/personal/reports/2026/"},
		{ref: "shared:reports//", wantErr: true},
		{ref: "shared:/", wantErr: true},
		{ref: "shared:../", wantErr: true},
		{ref: "other:", wantErr: true},
	}
	for _, tt := range tests {
		got, err := workspace.ResolvePrefix("hermes", tt.ref)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ResolvePrefix(%q) = %q, %v; want %q, error %v", tt.ref, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestDisplayRef(t *testing.T) {
	tests := []struct {
		agent string
		key   string
		want  string
	}{
		{"hermes", "agents/hermes/personal/reports/q3.md", "personal:reports/q3.md"},
		{"hermes", "shared/x/y.csv", "shared:x/y.csv"},
		{"hermes", "agents/atlas/personal/secret.md", ""}, // another agent's file
		{"herm", "agents/hermes/personal/x", ""},          // prefix of another agent id
		{"hermes", "agents/hermes/inbox/x", ""},           // not the workspace
		{"hermes", "shared/a//b", ""},                     // no path names it
		{"hermes", "shared/", ""},                         // the root is no file
		{"hermes", "audit/2026/x", ""},                    // system key
		{"Hermes", "agents/Hermes/personal/x", ""},        // invalid agent id
		{"hermes", "agents/hermes/personal/a:b", ""},      // colon
		{"hermes", "agents/hermes/personal/%2e%2e/x", ""}, // escape
		{"hermes", "agents/hermes/personal/Ü b/c.md", "personal:Ü b/c.md"},
	}
	for _, tt := range tests {
		if got := workspace.DisplayRef(tt.agent, tt.key); got != tt.want {
			t.Errorf("DisplayRef(%q, %q) = %q, want %q", tt.agent, tt.key, got, tt.want)
		}
	}
}
