package guard_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// The README is what a person needs in the first hour: the two commands,
// the sandbox, connecting the real servers, and the tables of commands and
// routes. The reference lives in docs/, linked from it. These tests keep
// the README short, its tables complete, and every link between the
// documents pointing at a file and heading that exist.

// readmeMaxLines bounds the README; what does not fit belongs in docs/.
const readmeMaxLines = 300

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadmeIsShort(t *testing.T) {
	r := loadRepo(t)
	readme := readFile(t, filepath.Join(r.root, "README.md"))
	if n := strings.Count(readme, "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, at most %d: move the reference into docs/ and link it", n, readmeMaxLines)
	}
}

// TestReadmeListsCommandsAndRoutes: every make target that make help lists,
// every verb of the operator CLI and every HTTP route (the functions' routes
// from the deploy catalogue, the dev listener's and the sandbox's from
// their source) has its row in the README.
func TestReadmeListsCommandsAndRoutes(t *testing.T) {
	r := loadRepo(t)
	readme := readFile(t, filepath.Join(r.root, "README.md"))

	target := regexp.MustCompile(`(?m)^([a-z-]+):.*## `)
	for _, m := range target.FindAllStringSubmatch(readFile(t, filepath.Join(r.root, "Makefile")), -1) {
		if !strings.Contains(readme, "| `make "+m[1]) {
			t.Errorf("README.md: no row for `make %s` in the table of make targets", m[1])
		}
	}

	verb := regexp.MustCompile(`(?m)^\tcase "([a-z-]+)"`)
	verbs := verb.FindAllStringSubmatch(readFile(t, filepath.Join(r.root, "cmd/switchboard/main.go")), -1)
	if len(verbs) < 5 {
		t.Fatalf("found only %d CLI verbs in cmd/switchboard/main.go; is the pattern stale?", len(verbs))
	}
	for _, m := range verbs {
		if !strings.Contains(readme, "| `"+m[1]) {
			t.Errorf("README.md: no row for the CLI verb %q", m[1])
		}
	}

	var routes []string
	for _, f := range deploy.Functions {
		for _, rt := range f.Routes {
			routes = append(routes, rt.Method+" "+rt.Path)
		}
	}
	handle := regexp.MustCompile(`HandleFunc\("([A-Z]+ /[^"]*)"`)
	for _, dir := range []string{"shared/devrt", "shared/devrt/sandbox"} {
		files, err := filepath.Glob(filepath.Join(r.root, dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			for _, m := range handle.FindAllStringSubmatch(readFile(t, f), -1) {
				routes = append(routes, m[1])
			}
		}
	}
	if len(routes) < 20 {
		t.Fatalf("found only %d routes; is a pattern stale?", len(routes))
	}
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt, " ")
		path = strings.TrimSuffix(path, "{$}")
		if !readmeRow(readme, method, path) {
			t.Errorf("README.md: no row of the route table names %s %s", method, path)
		}
	}
}

// readmeRow reports whether one table row names the method and the path
// as a code span (`GET /x`, or `GET`/`POST /x`).
func readmeRow(readme, method, path string) bool {
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, "| ") && strings.Contains(line, method) &&
			(strings.Contains(line, " "+path+"`") || strings.Contains(line, " "+path+"[") || strings.Contains(line, " "+path+"?")) {
			return true
		}
	}
	return false
}

// TestDocLinksResolve: every relative link in README.md and docs/ names a
// file of the repository and, with a #fragment, a heading or an <a id> of
// that file.
func TestDocLinksResolve(t *testing.T) {
	r := loadRepo(t)
	docs := []string{filepath.Join(r.root, "README.md")}
	err := filepath.WalkDir(filepath.Join(r.root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			docs = append(docs, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	links := 0
	for _, doc := range docs {
		rel, _ := filepath.Rel(r.root, doc)
		for _, m := range link.FindAllStringSubmatch(stripCode(readFile(t, doc)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			file, frag, _ := strings.Cut(target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), filepath.FromSlash(file))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %q: %s does not exist", rel, target, file)
					continue
				}
			}
			if frag != "" && !anchors(t, path)[frag] {
				t.Errorf("%s: link %q: no heading or <a id> %q in %s", rel, target, frag, filepath.Base(path))
			}
		}
	}
	if links < 20 {
		t.Fatalf("found only %d relative links; is the pattern stale?", links)
	}
}

// stripCode drops fenced code blocks, where a "](" is code, not a link.
func stripCode(md string) string {
	var out []string
	in := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in
			continue
		}
		if !in {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

var (
	anchorCache = map[string]map[string]bool{}
	explicitID  = regexp.MustCompile(`<a id="([^"]+)"`)
	notSlug     = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// anchors are the fragments a Markdown file answers: GitHub's heading
// slugs (lower case, punctuation dropped, spaces to hyphens) and explicit
// <a id="…"> targets.
func anchors(t *testing.T, path string) map[string]bool {
	if a, ok := anchorCache[path]; ok {
		return a
	}
	a := map[string]bool{}
	if strings.HasSuffix(path, ".md") {
		md := readFile(t, path)
		for _, line := range strings.Split(stripCode(md), "\n") {
			if h := strings.TrimLeft(line, "#"); h != line && strings.HasPrefix(h, " ") {
				slug := notSlug.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), "")
				a[strings.ReplaceAll(slug, " ", "-")] = true
			}
		}
		for _, m := range explicitID.FindAllStringSubmatch(md, -1) {
			a[m[1]] = true
		}
	}
	anchorCache[path] = a
	return a
}
