package nctool

import (
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
)

func TestResolve(t *testing.T) {
	sc, err := newScope("/Switchboard/Hermes")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		arg     string
		want    string
		wantErr string // substring of the message; "" = no error
	}{
		{name: "empty is the root", arg: "", want: "/Switchboard/Hermes"},
		{name: "slash is the root", arg: "/", want: "/Switchboard/Hermes"},
		{name: "dot is the root", arg: ".", want: "/Switchboard/Hermes"},
		{name: "relative", arg: "reports/q3.md", want: "/Switchboard/Hermes/reports/q3.md"},
		{name: "leading slash is relative to the root", arg: "/reports/q3.md", want: "/Switchboard/Hermes/reports/q3.md"},
		{name: "many slashes", arg: "//reports///q3.md/", want: "/Switchboard/Hermes/reports/q3.md"},
		{name: "dot dot that stays inside", arg: "a/../b.md", want: "/Switchboard/Hermes/b.md"},
		{name: "spaces and unicode", arg: "Berichte/Q3 Übersicht.md", want: "/Switchboard/Hermes/Berichte/Q3 Übersicht.md"},
		{name: "percent that is not an escape", arg: "100%.md", want: "/Switchboard/Hermes/100%.md"},
		{name: "root path repeated is just a folder name", arg: "/Switchboard/Hermes/x", want: "/Switchboard/Hermes/Switchboard/Hermes/x"},
		{name: "climb out", arg: "..", wantErr: "climbs out"},
		{name: "climb out to a sibling", arg: "../Atlas/secret.md", wantErr: "climbs out"},
		{name: "climb out from absolute", arg: "/../Atlas", wantErr: "climbs out"},
		{name: "climb out after a detour", arg: "reports/../../Atlas", wantErr: "climbs out"},
		{name: "climb out deep", arg: "a/b/../../../..", wantErr: "climbs out"},
		{name: "NUL", arg: "a\x00b", wantErr: "control character"},
		{name: "newline", arg: "a\nb", wantErr: "control character"},
		{name: "DEL", arg: "a\x7fb", wantErr: "control character"},
		{name: "U+0085", arg: "a\u0085b", wantErr: "control character"},
		{name: "line separator", arg: "a\u2028b", wantErr: "control character"},
		{name: "bidi override", arg: "report\u202Efdp.exe", wantErr: "direction character"},
		{name: "backslash", arg: `..\Atlas`, wantErr: "backslash"},
		{name: "encoded slash", arg: "..%2fAtlas", wantErr: "percent-escape"},
		{name: "encoded dots", arg: "%2e%2e/Atlas", wantErr: "percent-escape"},
		{name: "encoded backslash", arg: "a%5Cb", wantErr: "percent-escape"},
		{name: "double encoding", arg: "a%252fb", wantErr: "percent-escape"},
		{name: "invalid UTF-8", arg: "a\xffb", wantErr: "UTF-8"},
		{name: "long name", arg: strings.Repeat("x", 256), wantErr: "name of 256 bytes"},
		{name: "long path", arg: strings.Repeat("x/", 600), wantErr: "bytes long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sc.resolve("path", tt.arg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("resolve(%q) = %q, %v; want an error with %q", tt.arg, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("resolve(%q) = %q, %v; want %q", tt.arg, got, err, tt.want)
			}
		})
	}
}

func TestNewScope(t *testing.T) {
	tests := []struct {
		root, want, wantErr string
	}{
		{root: "/Switchboard/Hermes", want: "/Switchboard/Hermes"},
		{root: "Switchboard/Hermes/", want: "/Switchboard/Hermes"},
		{root: "/", want: "/"},
		{root: "", wantErr: "rootPath is not set"},
		{root: "  ", wantErr: "rootPath is not set"},
		{root: "/Switchboard/../Atlas", wantErr: ". or .."},
		{root: "/Switch\x00board", wantErr: "control character"},
		{root: `\Switchboard`, wantErr: "backslash"},
	}
	for _, tt := range tests {
		sc, err := newScope(tt.root)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("newScope(%q) = %q, %v; want error with %q", tt.root, sc.root, err, tt.wantErr)
			}
			continue
		}
		if err != nil || sc.root != tt.want {
			t.Errorf("newScope(%q) = %q, %v; want %q", tt.root, sc.root, err, tt.want)
		}
	}
}

func TestDisplay(t *testing.T) {
	sc, _ := newScope("/Switchboard/Hermes")
	for abs, want := range map[string]string{
		"/Switchboard/Hermes":              "/",
		"/Switchboard/Hermes/reports/q.md": "/reports/q.md",
	} {
		if got, ok := sc.display(abs); !ok || got != want {
			t.Errorf("display(%q) = %q, %v; want %q", abs, got, ok, want)
		}
	}
	for _, abs := range []string{"/Switchboard/HermesX/a", "/Switchboard", "/Switchboard/Atlas/a", "/Switchboard/Hermes/../Atlas", "relative"} {
		if got, ok := sc.display(abs); ok {
			t.Errorf("display(%q) = %q, want refused", abs, got)
		}
	}
	everything, _ := newScope("/")
	if got, ok := everything.display("/a/b"); !ok || got != "/a/b" {
		t.Errorf("root / display = %q, %v", got, ok)
	}
}

func TestUnderReports(t *testing.T) {
	sc, _ := newScope("/Switchboard/Hermes")
	for p, want := range map[string]bool{
		"/Switchboard/Hermes/reports/q3.md":      true,
		"/Switchboard/Hermes/Reports/2026/q3.md": true,
		"/Switchboard/Hermes/x/reports/q3.md":    true,
		"/Switchboard/Hermes/reports":            false, // the folder itself, not a file in it
		"/Switchboard/Hermes/q3.md":              false,
		"/Switchboard/Hermes/reports.md":         false,
		"/Switchboard/reports/q3.md":             false, // outside the root
	} {
		if got := sc.underReports(p); got != want {
			t.Errorf("underReports(%q) = %v, want %v", p, got, want)
		}
	}
}

// FuzzScope checks the scoping property: whatever the argument, a resolved
// path is the root or inside it, is clean, carries nothing a URL or WebDAV
// server could read differently, survives the client's segment escaping
// unchanged, and shows as a path that resolves back to itself.
func FuzzScope(f *testing.F) {
	for _, s := range []string{
		"", "/", ".", "..", "../", "/..", "../../etc/passwd", "a/../..", "a/./b/../../..", "reports/q3.md",
		"..%2f..%2fAtlas", "%2e%2e", "%252e%252e", `..\..\Atlas`, "a\x00b", "\u202e", "a//b", "./.././",
		"Switchboard/Hermes/../../Atlas", "…/..", "..;/", "..\t/", " ../", "../ ", "\u2215..\u2215", "．．/",
		"a/b/c/../../../../Hermes2", "/Switchboard/HermesX", strings.Repeat("../", 40), "?x=..", "#..",
	} {
		f.Add("/Switchboard/Hermes", s)
		f.Add("/", s)
	}
	f.Add("Switchboard/Hermes/", "../Hermes2/x")
	f.Fuzz(func(t *testing.T, rootPath, arg string) {
		sc, err := newScope(rootPath)
		if err != nil {
			return
		}
		abs, err := sc.resolve("path", arg)
		if err != nil {
			return
		}
		if !(abs == sc.root || sc.root == "/" || strings.HasPrefix(abs, sc.root+"/")) {
			t.Fatalf("root %q, arg %q: resolved %q escapes the root", sc.root, arg, abs)
		}
		if abs != path.Clean(abs) || !strings.HasPrefix(abs, "/") {
			t.Fatalf("root %q, arg %q: resolved %q is not clean and absolute", sc.root, arg, abs)
		}
		for _, seg := range strings.Split(abs, "/") {
			if seg == ".." || seg == "." {
				t.Fatalf("root %q, arg %q: resolved %q has a %q segment", sc.root, arg, abs, seg)
			}
		}
		if strings.ContainsAny(abs, "\\\x00") || workspace.PercentEscape(abs) >= 0 {
			t.Fatalf("root %q, arg %q: resolved %q has a backslash, NUL or escape", sc.root, arg, abs)
		}
		// The client escapes each segment; decoding must give the same path.
		segs := strings.Split(abs, "/")
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
		if back, err := url.PathUnescape(strings.Join(segs, "/")); err != nil || back != abs {
			t.Fatalf("root %q, arg %q: escaped form of %q decodes to %q, %v", sc.root, arg, abs, back, err)
		}
		shown, ok := sc.display(abs)
		if !ok {
			t.Fatalf("root %q, arg %q: display refuses the resolved %q", sc.root, arg, abs)
		}
		if again, err := sc.resolve("path", shown); err != nil || again != abs {
			t.Fatalf("root %q, arg %q: display %q resolves to %q, %v; want %q", sc.root, arg, shown, again, err, abs)
		}
	})
}

// The shared reports folder: shared-reports:… resolves inside it, shows as
// it was written, counts as a reports folder, and is refused to agents
// without one and for paths that climb out of it.
func TestSharedReportsFolder(t *testing.T) {
	own, _ := newScope("/Switchboard/Hermes")
	sc, err := own.withShared("/Switchboard/Berichte/")
	if err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]string{
		"shared-reports:":           "/Switchboard/Berichte",
		"shared-reports:/":          "/Switchboard/Berichte",
		"shared-reports:q3.xlsx":    "/Switchboard/Berichte/q3.xlsx",
		"shared-reports:/2026/q3.x": "/Switchboard/Berichte/2026/q3.x",
		"reports/q3.xlsx":           "/Switchboard/Hermes/reports/q3.xlsx",
	} {
		got, err := sc.resolve("path", arg)
		if err != nil || got != want {
			t.Errorf("resolve(%q) = %q, %v; want %q", arg, got, err, want)
			continue
		}
		if back, err := sc.resolve("path", sc.show(got)); err != nil || back != got {
			t.Errorf("show(%q) = %q resolves to %q, %v", got, sc.show(got), back, err)
		}
	}
	if got := sc.show("/Switchboard/Berichte/q3.xlsx"); got != "shared-reports:/q3.xlsx" {
		t.Errorf("show = %q, want shared-reports:/q3.xlsx", got)
	}
	for _, arg := range []string{"shared-reports:../Hermes/x", "shared-reports:../../etc"} {
		if got, err := sc.resolve("path", arg); err == nil {
			t.Errorf("resolve(%q) = %q, want refused", arg, got)
		}
	}
	if !sc.underReports("/Switchboard/Berichte/q3.xlsx") || sc.underReports("/Switchboard/Berichte") {
		t.Error("a file in the shared reports folder is a report; the folder itself is not")
	}
	if got, err := own.resolve("path", "shared-reports:q3.xlsx"); err == nil || !strings.Contains(err.Error(), "does not have") {
		t.Errorf("without a shared folder: %q, %v; want refused", got, err)
	}
	if _, err := own.withShared("/"); err == nil {
		t.Error("the whole account as shared reports folder was accepted")
	}
}
