package guard_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/noderun"
)

// A test that sleeps and then checks guesses how long the code under test
// takes: on a busy machine it fails, on a quiet one it wastes time. Tests
// wait for an event instead (a channel the code closes, a fake's Until, a
// clocktest clock moved on, GET /dev/idle), or poll with waittest.Poll where
// nothing sends one.
//
// The rule covers the test files and the fakes and test helpers
// (isFake), so that no wait hides a sleep in a helper.
//
// sleepAllowed are the test files that may still call time.Sleep, each with
// why. Every such call must also say why on its own line, with a comment
// "// sleep-ok: <reason>". Shrink this list; a new entry needs a reason no
// event can replace.
var sleepAllowed = map[string]string{
	"tests/harness_test.go":      "switchboard dev is a child process: its /healthz is polled until it answers",
	"tests/crash_test.go":        "a claim window passes on the dev child's own clock, which a test cannot move",
	"tests/faults_test.go":       "messages and poll markers are stamped with the real clock in two processes; posts wait for the next millisecond",
	"tests/faultproxy_test.go":   "Rocket.Chat's retry schedule, shortened, against the dev child's real-time claim windows",
	"tests/webhook_load_test.go": "Rocket.Chat's retry schedule, shortened, is part of the load figures",
	"shared/tools/nctool/cleanup_test.go": "the fake Nextcloud's WebDAV memory FS (x/net/webdav) stamps mtimes with the " +
		"real clock at second resolution; two ages need a second between them",
}

// sleepOK is the comment a justified time.Sleep carries on its line.
var sleepOK = regexp.MustCompile(`// sleep-ok: \S`)

func TestTestsDoNotSleep(t *testing.T) {
	root, err := noderun.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	sleeping := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (name == "testdata" || name == "node_modules" || name == "cdk.out" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		// Test files, and the fakes and test helpers they wait through.
		if !strings.HasSuffix(rel, ".go") || !strings.HasSuffix(rel, "_test.go") && !isFake(path.Dir(rel)) {
			return nil
		}
		files++
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines, err := sleepCalls(p, src)
		if err != nil {
			return err
		}
		text := strings.Split(string(src), "\n")
		for _, line := range lines {
			sleeping[rel] = true
			_, allowed := sleepAllowed[rel]
			switch {
			case !allowed:
				t.Errorf("%s:%d calls time.Sleep: wait for an event instead (a channel, a fake's Until, a clocktest clock, "+
					"GET /dev/idle), or waittest.Poll for state outside the process; a sleep no event can replace is listed in "+
					"sleepAllowed with its reason", rel, line)
			case !sleepOK.MatchString(text[line-1]):
				t.Errorf("%s:%d calls time.Sleep without a \"// sleep-ok: <reason>\" comment on its line", rel, line)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("found only %d test and test-helper files under %s; is the walk broken?", files, root)
	}
	for f := range sleepAllowed {
		if !sleeping[f] {
			t.Errorf("sleepAllowed lists %s, which no longer sleeps: drop it from the list", f)
		}
	}
}

// sleepCalls returns the lines of src (a Go file) that call time.Sleep,
// under whatever name the file imports package time.
func sleepCalls(name string, src []byte) ([]int, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		return nil, err
	}
	pkgName := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "time" {
			pkgName = "time"
			if imp.Name != nil {
				pkgName = imp.Name.Name
			}
		}
	}
	if pkgName == "" || pkgName == "_" {
		return nil, nil
	}
	var lines []int
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Sleep" {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == pkgName {
			lines = append(lines, fset.Position(sel.Pos()).Line)
		}
		return true
	})
	return lines, nil
}

func TestSleepCallsFindsCallsNotWords(t *testing.T) {
	tests := []struct {
		name, src string
		want      []int
	}{
		{"a call", "package p\nimport \"time\"\nfunc f() {\n\ttime.Sleep(time.Second)\n}\n", []int{4}},
		{"passed as a value", "package p\nimport \"time\"\nvar sleep = time.Sleep\n", []int{3}},
		{"an aliased import", "package p\nimport tm \"time\"\nfunc f() { tm.Sleep(1) }\n", []int{3}},
		{"in a comment or a string", "package p\nimport \"time\"\n// time.Sleep(1)\nvar s = \"time.Sleep(1)\"\nvar d = time.Second\n", nil},
		{"another package's Sleep", "package p\nimport \"example.com/clock\"\nfunc f() { clock.Sleep(nil, 1) }\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sleepCalls("x_test.go", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("lines = %v, want %v", got, tt.want)
			}
		})
	}
}
