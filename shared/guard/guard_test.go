package guard_test

import (
	"bufio"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/app/builders"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/platform/noderun"
)

// pkg is one Go package directory of the root module.
type pkg struct {
	dir        string // relative to the repository root, slash-separated
	importPath string
	name       string              // package name of the non-test files ("" if none)
	imports    map[string][]string // import path → files (non-test files only)
	files      []*ast.File         // non-test files
	fileNames  []string
	testFiles  []*ast.File // *_test.go files (for test-only directories)
}

// repo is the root module, parsed once per test binary.
type repo struct {
	root   string
	module string
	pkgs   map[string]*pkg // by import path
}

var parsed *repo

func loadRepo(t *testing.T) *repo {
	t.Helper()
	if parsed != nil {
		return parsed
	}
	root, err := noderun.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	module, err := modulePath(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	r := &repo{root: root, module: module, pkgs: map[string]*pkg{}}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root {
			// Go ignores testdata, _x and .x; node_modules is npm's; a
			// directory with its own go.mod (infra/) is another module.
			if name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		return r.parseDir(p)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.pkgs) < 5 {
		t.Fatalf("found only %d packages under %s; is the walk broken?", len(r.pkgs), root)
	}
	parsed = r
	return r
}

func (r *repo) parseDir(dir string) error {
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(matches) == 0 {
		return err
	}
	rel, err := filepath.Rel(r.root, dir)
	if err != nil {
		return err
	}
	rel = filepath.ToSlash(rel)
	p := &pkg{dir: rel, importPath: path.Join(r.module, rel), imports: map[string][]string{}}
	if rel == "." {
		p.importPath = r.module
	}
	fset := token.NewFileSet()
	for _, m := range matches {
		f, err := parser.ParseFile(fset, m, nil, parser.ParseComments|parser.ImportsOnly)
		if err != nil {
			return err
		}
		base := filepath.Base(m)
		if strings.HasSuffix(base, "_test.go") {
			p.testFiles = append(p.testFiles, f)
			continue
		}
		p.name = f.Name.Name
		p.files = append(p.files, f)
		p.fileNames = append(p.fileNames, base)
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			p.imports[ip] = append(p.imports[ip], base)
		}
	}
	r.pkgs[p.importPath] = p
	return nil
}

func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", errors.New(gomod + ": no module line")
}

// closure returns the module-internal packages start depends on (itself
// included), following non-test imports only.
func (r *repo) closure(start string) []*pkg {
	seen := map[string]bool{}
	var out []*pkg
	var visit func(string)
	visit = func(ip string) {
		p, ok := r.pkgs[ip]
		if !ok || seen[ip] {
			return
		}
		seen[ip] = true
		out = append(out, p)
		imps := make([]string, 0, len(p.imports))
		for imp := range p.imports {
			imps = append(imps, imp)
		}
		sort.Strings(imps)
		for _, imp := range imps {
			visit(imp)
		}
	}
	visit(start)
	return out
}

// forbidden reports each import of the closure of start that matches bad.
func (r *repo) forbidden(t *testing.T, start string, bad func(string) bool, why string) {
	t.Helper()
	if _, ok := r.pkgs[start]; !ok {
		t.Fatalf("package %s not found", start)
	}
	for _, p := range r.closure(start) {
		imps := make([]string, 0, len(p.imports))
		for imp := range p.imports {
			imps = append(imps, imp)
		}
		sort.Strings(imps)
		for _, imp := range imps {
			files := p.imports[imp]
			if bad(imp) {
				via := ""
				if p.importPath != start {
					via = " (reached from " + strings.TrimPrefix(start, r.module+"/") + ")"
				}
				t.Errorf("%s/%s imports %s%s: %s", p.dir, files[0], imp, via, why)
			}
		}
	}
}

// TestDomainImportsNoAWSOrHTTP: the domain and the deploy catalogue stay
// free of the AWS SDK and net/http, directly and through the packages of
// this module they import.
func TestDomainImportsNoAWSOrHTTP(t *testing.T) {
	r := loadRepo(t)
	bad := func(ip string) bool {
		return strings.HasPrefix(ip, "github.com/aws/") || ip == "net/http" || strings.HasPrefix(ip, "net/http/")
	}
	for _, dir := range []string{"shared/switchboard", "shared/platform/deploy"} {
		t.Run(dir, func(t *testing.T) {
			r.forbidden(t, r.module+"/"+dir, bad, "the domain speaks no AWS SDK and no net/http; put it in an adapter under shared/")
		})
	}
}

// TestStandardLibraryOnly: the catalogue is plain data so that infra/ can
// read it without pulling in the runtime; scrubbing and framing are pure
// text functions that every layer may use.
func TestStandardLibraryOnly(t *testing.T) {
	r := loadRepo(t)
	for _, dir := range []string{"shared/platform/deploy", "shared/platform/scrub", "shared/platform/untrusted"} {
		t.Run(dir, func(t *testing.T) {
			r.forbidden(t, r.module+"/"+dir, func(ip string) bool {
				return strings.Contains(strings.Split(ip, "/")[0], ".") || ip == "net/http" || strings.HasPrefix(ip, "net/http/")
			}, dir+" uses the standard library only (no net/http)")
		})
	}
}

// TestFunctionsImportNoCDK: a Lambda binary never links the CDK.
func TestFunctionsImportNoCDK(t *testing.T) {
	r := loadRepo(t)
	bad := func(ip string) bool {
		return strings.HasPrefix(ip, "github.com/aws/aws-cdk-go") || strings.HasPrefix(ip, "github.com/aws/constructs-go") ||
			strings.HasPrefix(ip, "github.com/aws/jsii-runtime-go")
	}
	n := 0
	for ip, p := range r.pkgs {
		if strings.HasPrefix(p.dir, "functions/") {
			n++
			r.forbidden(t, ip, bad, "CDK belongs in infra/ only")
		}
	}
	if n == 0 {
		t.Fatal("no packages under functions/")
	}
}

var (
	packageDoc = regexp.MustCompile(`^Package (\w+) `)
	commandDoc = regexp.MustCompile(`^Command ([\w-]+) `)
)

// TestOnePackageDocComment: every package of the root module has exactly
// one doc comment, "Package <name> …" (or "Command <dir> …" for main).
func TestOnePackageDocComment(t *testing.T) {
	r := loadRepo(t)
	for _, p := range r.pkgs {
		files, name := p.files, p.name
		if len(files) == 0 { // test-only directory such as tests/
			files = p.testFiles
			name = files[0].Name.Name
		}
		var docs []string
		for _, f := range files {
			if f.Doc != nil {
				docs = append(docs, strings.TrimSpace(f.Doc.Text()))
			}
		}
		switch {
		case len(docs) != 1:
			t.Errorf("%s: %d package doc comments, want exactly 1", p.dir, len(docs))
		case name == "main":
			m := commandDoc.FindStringSubmatch(docs[0])
			if m == nil || m[1] != path.Base(p.dir) {
				t.Errorf("%s: doc comment %q must start with \"Command %s \"", p.dir, firstLine(docs[0]), path.Base(p.dir))
			}
		default:
			m := packageDoc.FindStringSubmatch(docs[0])
			if m == nil || m[1] != name {
				t.Errorf("%s: doc comment %q must start with \"Package %s \"", p.dir, firstLine(docs[0]), name)
			}
		}
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// TestFunctionsMatchCatalogue: functions/<name> exists exactly for the
// functions of the deploy catalogue, each has a builder, and its main.go
// calls that very builder.
func TestFunctionsMatchCatalogue(t *testing.T) {
	r := loadRepo(t)
	entries, err := os.ReadDir(filepath.Join(r.root, "functions"))
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() {
			t.Errorf("functions/%s: only one directory per function belongs here", e.Name())
			continue
		}
		dirs[e.Name()] = true
		if _, ok := deploy.FunctionByName(e.Name()); !ok {
			t.Errorf("functions/%s is not in the deploy catalogue (shared/platform/deploy.Functions)", e.Name())
		}
	}
	for _, f := range deploy.Functions {
		if !dirs[f.Name] {
			t.Errorf("catalogue function %q has no functions/%s/main.go", f.Name, f.Name)
		}
		h, ok := builders.ByFunction[f.Name]
		if !ok {
			t.Errorf("catalogue function %q has no builder", f.Name)
			continue
		}
		p, ok := r.pkgs[r.module+"/functions/"+f.Name]
		if !ok {
			continue
		}
		if p.name != "main" {
			t.Errorf("functions/%s is package %s, want main", f.Name, p.name)
		}
		want := funcName(h)
		if got := startedHandlers(t, r.root, p); !reflect.DeepEqual(got, []string{want}) {
			t.Errorf("functions/%s/main.go calls builders %v, want exactly %s", f.Name, got, want)
		}
	}
}

// funcName is pkg.Func of a package-level function value.
func funcName(fn any) string {
	full := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	return path.Base(full)
}

// startedHandlers lists the builder calls (receive.X, decide.X, act.X, run.X, view.X) a
// function's files use.
func startedHandlers(t *testing.T, root string, p *pkg) []string {
	t.Helper()
	fset := token.NewFileSet()
	set := map[string]bool{}
	for _, name := range p.fileNames {
		f, err := parser.ParseFile(fset, filepath.Join(root, p.dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && (id.Name == "receive" || id.Name == "decide" || id.Name == "act" || id.Name == "run" || id.Name == "view" || id.Name == "mcpfn") {
					set[id.Name+"."+sel.Sel.Name] = true
				}
			}
			return true
		})
	}
	var out []string
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// TestMakeHelpListsTargets: the self-documenting Makefile lists every
// target of the External interface.
func TestMakeHelpListsTargets(t *testing.T) {
	r := loadRepo(t)
	makefile := filepath.Join(r.root, "Makefile")
	b, err := os.ReadFile(makefile)
	if err != nil {
		t.Fatal(err)
	}
	// The same pattern the help target greps for.
	documented := map[string]string{}
	line := regexp.MustCompile(`^([a-z-]+):.*## (.*)$`)
	for _, l := range strings.Split(string(b), "\n") {
		if m := line.FindStringSubmatch(l); m != nil {
			documented[m[1]] = m[2]
		}
	}
	if _, ok := documented["help"]; !ok {
		t.Errorf("Makefile has no documented help target")
	}
	want := []string{"dev", "test", "bench", "build", "synth", "deploy", "invoke"}
	for _, target := range want {
		if strings.TrimSpace(documented[target]) == "" {
			t.Errorf("Makefile: target %q has no `%s: … ## what it does` line, so make help does not list it", target, target)
		}
	}
	if !strings.Contains(string(b), ".DEFAULT_GOAL := help") {
		t.Errorf("Makefile: plain `make` should print the help (.DEFAULT_GOAL := help)")
	}

	// And the real thing, when make is installed.
	if _, err := exec.LookPath("make"); err != nil {
		t.Logf("make not on PATH; checked the Makefile text only")
		return
	}
	cmd := exec.Command("make", "--no-print-directory", "-s", "help")
	cmd.Dir = r.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make help: %v\n%s", err, out)
	}
	listed := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "make" {
			listed[f[1]] = true
		}
	}
	for _, target := range want {
		if !listed[target] {
			t.Errorf("make help does not list %q:\n%s", target, out)
		}
	}
}

// TestToolsCannotRecordAgentMessages: only the core records agent messages;
// a tool may read them (AgentMessageReader) but never holds the writing
// half, so an agent cannot colour its own record.
func TestToolsCannotRecordAgentMessages(t *testing.T) {
	r := loadRepo(t)
	for ip, p := range r.pkgs {
		if !strings.HasPrefix(ip, r.module+"/shared/tools") {
			continue
		}
		for _, name := range p.fileNames {
			file := filepath.Join(r.root, p.dir, name)
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0) // loadRepo parsed imports only
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					switch sel.Sel.Name {
					case "AgentMessageLog", "AgentMessageStore", "ScrubbingMessages":
						t.Errorf("%s/%s uses %s: tools may only read agent messages (AgentMessageReader)", p.dir, name, sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
}
