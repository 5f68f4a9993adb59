package guard_test

import (
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README and the code must make sense to someone who has only this
// repository: no pointer to a document beside it (the specification, the
// research notes, the concept papers) and no requirement ids, whose meaning
// lives in that specification. Say what the behaviour is instead.

const (
	handbook    = "sha" + "red"
	seedSec     = "se" + "ed §"
	groundTruth = "api-ground" + "-truth"
)

var (
	// outsideDoc matches a reference to a document outside the repository,
	// anywhere in a file (a string shown to a user is as bad as a comment).
	// The names are assembled so that this file does not cite them itself.
	outsideDoc = regexp.MustCompile(`\.\./` + handbook + `\b|\bSPEC\b|\b` + seedSec + `|\bGT` + " §" + `|` + groundTruth + `|/work/` + handbook)
	// requirementID matches the ids of the specification's requirements.
	// The list is closed on purpose, so that AWS names (S3, EC2), RFC
	// numbers and hex stay clear of it. In Go files only comments and
	// string literals are searched; elsewhere the whole text.
	requirementID = regexp.MustCompile(`\b(?:C[1-8]|RC(?:1[0-3]|[1-9])|NC[1-7]|ST[1-4]|CR[1-3]|AG[1-4]|AC[1-6]|DP1|INF[1-4])\b`)
	// issueRef matches a reference to the project's issue tracker ("issue
	// 19", "issues #3"): issue numbers belong in commit messages, whose
	// readers can look them up; the code and docs say the behaviour.
	issueRef = regexp.MustCompile(`(?i)\b` + "iss" + `ues? #?[0-9]+\b`)
)

// citationTODO are the paths whose owners are still cleaning them; the lead
// deletes each line once its path is clean. A directory covers everything
// below it; a pattern is matched by filepath.Match against the slash path.
var citationTODO = []string{}

// citationSelf is this file: its patterns name what they forbid.
const citationSelf = "shared/guard/citations_test.go"

func citationExcluded(rel string) bool {
	if rel == citationSelf {
		return true
	}
	for _, p := range citationTODO {
		if under(rel, p) {
			return true
		}
		if ok, _ := filepath.Match(p, rel); ok {
			return true
		}
	}
	return false
}

// citationFile reports whether the file is prose or code a reader meets:
// Go sources (tests included), Markdown, YAML, shell scripts, the Makefile.
func citationFile(name string) bool {
	switch filepath.Ext(name) {
	case ".go", ".md", ".yaml", ".yml", ".sh":
		return true
	}
	return name == "Makefile"
}

// TestNoOutsideCitations walks the whole repository (infra/ included) and
// names every line that cites a document outside it, a requirement id or an
// issue number.
func TestNoOutsideCitations(t *testing.T) {
	r := loadRepo(t)
	checked := 0
	err := filepath.WalkDir(r.root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r.root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if p != r.root && (name == "node_modules" || name == "cdk.out" || name == "build" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !citationFile(d.Name()) || citationExcluded(rel) {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		checked++
		for _, c := range citations(rel, src) {
			t.Errorf("%s:%d: %q cites %s; describe the behaviour in plain words instead", rel, c.line, c.text, c.what)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d files; is the walk broken?", checked)
	}
}

type citation struct {
	line       int
	text, what string
}

// citations finds the offending spots of one file: outside the Go code
// one per line, in Go comments and strings every id.
func citations(rel string, src []byte) []citation {
	var out []citation
	for i, line := range strings.Split(string(src), "\n") {
		if m := outsideDoc.FindString(line); m != "" {
			out = append(out, citation{i + 1, m, "a document outside the repository"})
		}
		if m := issueRef.FindString(line); m != "" {
			out = append(out, citation{i + 1, m, "an issue number"})
		}
	}
	if !strings.HasSuffix(rel, ".go") {
		for i, line := range strings.Split(string(src), "\n") {
			if m := requirementID.FindString(line); m != "" {
				out = append(out, citation{i + 1, m, "a requirement id"})
			}
		}
		return out
	}
	fset := token.NewFileSet()
	file := fset.AddFile(rel, -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, scanner.ScanComments)
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok != token.COMMENT && tok != token.STRING {
			continue
		}
		for _, loc := range requirementID.FindAllStringIndex(lit, -1) {
			line := fset.Position(pos).Line + strings.Count(lit[:loc[0]], "\n")
			out = append(out, citation{line, lit[loc[0]:loc[1]], "a requirement id"})
		}
	}
	return out
}

// TestCitationPatterns pins what the patterns catch and what they leave.
func TestCitationPatterns(t *testing.T) {
	tests := []struct {
		name, file, src string
		want            int
	}{
		{"id in a comment", "a.go", "package a\n\n// Wake rules (RC6) apply.\n", 1},
		{"id in a string", "a.go", "package a\n\nvar s = \"approval links (ST2)\"\n", 1},
		{"id range", "a.go", "package a\n\n// Nextcloud (NC1–NC7).\n", 2},
		{"seed section", "a.go", "package a\n\n// unread counts only mentions (" + seedSec + "2.0.2)\n", 1},
		{"ground-truth section", "a.go", "package a\n\n// the upload shape (GT" + " §3)\n", 1},
		{"research note", "a.md", "see " + groundTruth + " for details\n", 1},
		{"spec one level up", "a.md", "The product specification is ../" + handbook + "/SPEC.md.\n", 1},
		{"id in Markdown", "a.md", "## Approvals (ST1–ST3)\n", 1},
		{"AWS names are fine", "a.go", "package a\n\n// S3, EC2, AC13 and RC14 are not ids; nor is 0xC1.\n", 0},
		{"identifiers are not searched", "a.go", "package a\n\nvar C5 = 1\n", 0},
		{"RFC sections are fine", "a.go", "package a\n\n// (RFC 9110 §10.2.3)\n", 0},
		{"plain words", "a.md", "Rocket.Chat 8.x: unread counts only mentions.\n", 0},
		{"issue number in a comment", "a.go", "package a\n\n// the attack in " + "iss" + "ue 19 made 500 runs\n", 1},
		{"issue number in Markdown", "a.md", "Fixed in " + "Iss" + "ue #7.\n", 1},
		{"the word alone is fine", "a.md", "A known issue: the server answers 404.\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := citations(tt.file, []byte(tt.src)); len(got) != tt.want {
				t.Errorf("citations(%q) = %v, want %d", tt.src, got, tt.want)
			}
		})
	}
}
