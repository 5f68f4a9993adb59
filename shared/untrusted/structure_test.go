package untrusted

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackageStructure keeps the package to one doc comment and the standard
// library minus net/http (STYLE.md, habit 10).
func TestPackageStructure(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	docs := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ParseComments|parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		if file.Doc != nil {
			docs++
		}
		for _, imp := range file.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if strings.Contains(strings.Split(path, "/")[0], ".") || strings.HasPrefix(path, "net/http") {
				t.Errorf("%s imports %s: only the standard library without net/http is allowed", f, path)
			}
		}
	}
	if docs != 1 {
		t.Errorf("found %d package doc comments, want exactly 1", docs)
	}
}
