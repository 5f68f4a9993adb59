package guard_test

import (
	"path"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The layers of shared/, innermost first. A package may import the layers
// inside its own, never the ones outside: the domain imports nothing of
// ours, platform helpers import no layer that uses them, adapters implement
// the domain's ports without knowing a use case, use cases and agent tools
// never reach the wiring. Only non-test files count: a test may use
// whatever it needs.
//
// layerRules maps a directory prefix (with its subdirectories) to the
// directory prefixes its packages must not import, and why.
var layerRules = []struct {
	dir    string
	forbid []string
	why    string
}{
	{"shared/platform", []string{"shared/usecases", "shared/tools", "shared/adapters", "shared/app", "shared/httpapi", "shared/handlers", "shared/devrt"},
		"platform helpers are leaves every layer may use; they must not depend on those layers"},
	{"shared/adapters", []string{"shared/usecases", "shared/tools", "shared/app", "shared/httpapi", "shared/handlers", "shared/devrt"},
		"an adapter implements a port of the domain (shared/switchboard); move the type it needs into the domain"},
	{"shared/usecases", []string{"shared/app", "shared/handlers", "shared/devrt"},
		"a use case is wired by shared/app, it never reaches back into the wiring"},
	{"shared/usecases", []string{"shared/httpapi"},
		"a use case exposes plain methods; every endpoint's HTTP code lives in shared/httpapi"},
	{"shared/tools", []string{"shared/app", "shared/handlers", "shared/devrt", "shared/usecases"},
		"agent tools call adapters through the domain's ports; a tool that is a use case's facade lives in that use case"},
	{"shared/usecases", []string{"shared/adapters"},
		"a use case reaches a server through a port of the domain (shared/switchboard); the wiring passes the adapter in"},
	{"shared/tools", []string{"shared/adapters"},
		"an agent tool reaches a server through a port of the domain (shared/switchboard); the wiring passes the adapter in"},
}

// layerExceptions are the imports that break a rule today, each with the
// reason it is tolerated and what removes it. Shrink this list; never grow
// it without a reason the lead agreed to. Keys are "importer → imported",
// both as directories.
var layerExceptions = map[string]string{}

// under reports whether dir is prefix or below it.
func under(dir, prefix string) bool {
	return dir == prefix || strings.HasPrefix(dir, prefix+"/")
}

// TestLayers enforces layerRules on every package's non-test imports.
func TestLayers(t *testing.T) {
	r := loadRepo(t)
	used := map[string]bool{}
	for _, p := range sortedPkgs(r) {
		for _, rule := range layerRules {
			if !under(p.dir, rule.dir) {
				continue
			}
			if isFake(p.dir) && slices.Contains(rule.forbid, "shared/adapters") {
				continue // a test-support package may build on the fakes and stores it sets up
			}
			for _, imp := range sortedImports(p) {
				dep, ok := strings.CutPrefix(imp, r.module+"/")
				if !ok {
					continue
				}
				for _, f := range rule.forbid {
					if !under(dep, f) {
						continue
					}
					key := p.dir + " → " + dep
					if _, ok := layerExceptions[key]; ok {
						used[key] = true
						continue
					}
					t.Errorf("%s/%s imports %s: %s must not import %s (%s)", p.dir, p.imports[imp][0], imp, rule.dir, f, rule.why)
				}
			}
		}
	}
	for key := range layerExceptions {
		if !used[key] {
			t.Errorf("layerExceptions lists %q, but that import is gone: delete the exception", key)
		}
	}
}

// TestDomainImportsOnlyStandardLibrary: shared/switchboard is the centre;
// it imports the standard library and nothing else, not even the rest of
// this module, so every layer can depend on it.
func TestDomainImportsOnlyStandardLibrary(t *testing.T) {
	r := loadRepo(t)
	n := 0
	for _, p := range sortedPkgs(r) {
		if !under(p.dir, "shared/switchboard") {
			continue
		}
		n++
		for _, imp := range sortedImports(p) {
			if strings.Contains(strings.Split(imp, "/")[0], ".") {
				t.Errorf("%s/%s imports %s: the domain (shared/switchboard) imports only the standard library", p.dir, p.imports[imp][0], imp)
			}
		}
	}
	if n == 0 {
		t.Fatal("no package under shared/switchboard")
	}
}

// fakeExtra are fake or test-support packages whose names do not end in
// "fake" or "test".
var fakeExtra = map[string]bool{
	"shared/adapters/memstore": true, // the in-memory stores, for use-case tests
}

// isFake reports whether dir is a fake of somebody's server or a test
// helper: rcfake, ncfake, tgfake, cofake, dynamotest, storetest,
// retrytest, memstore, and whatever is added under those names.
func isFake(dir string) bool {
	base := path.Base(dir)
	return strings.HasSuffix(base, "fake") || strings.HasSuffix(base, "test") || fakeExtra[dir]
}

// fakeImporters may import fakes from non-test files, each only the fakes
// listed for it: the local runtime that stands in for the real servers. A
// sandbox that needs another one adds it here with its reason. Lambda
// binaries never may (TestFunctionsLinkNoFakes), and only the dev binary
// may link these packages (TestOnlyTheDevBinaryLinksTheSandbox).
var fakeImporters = map[string]struct {
	why   string
	fakes []string
}{
	"shared/devrt": {"the local runtime serves the in-process S3 (s3fake) when no S3 endpoint is set",
		[]string{"shared/adapters/s3blob/s3fake"}},
	"shared/devrt/sandbox": {"`switchboard dev` stands in for the Rocket.Chat, Telegram and Nextcloud the config does not name, and for the Collabora the sandbox Nextcloud converts with",
		[]string{"shared/adapters/rocketchat/rcfake", "shared/adapters/telegram/tgfake", "shared/adapters/nextcloud/ncfake", "shared/adapters/collabora/cofake"}},
}

// TestFakesStayInTests: no product package imports a fake or a test
// helper; they exist for tests.
func TestFakesStayInTests(t *testing.T) {
	r := loadRepo(t)
	fakes := 0
	for _, p := range sortedPkgs(r) {
		if isFake(p.dir) {
			fakes++
			continue // a fake may build on another (dynamotest on dynamo)
		}
		allowed := fakeImporters[p.dir].fakes
		for _, imp := range sortedImports(p) {
			dep, ok := strings.CutPrefix(imp, r.module+"/")
			if ok && isFake(dep) && !slices.Contains(allowed, dep) {
				t.Errorf("%s/%s imports %s: fakes and test helpers are for _test.go files only (a dev sandbox that needs one is listed in fakeImporters with its reason)", p.dir, p.imports[imp][0], imp)
			}
		}
	}
	if fakes < 5 {
		t.Fatalf("found only %d fake packages; is isFake broken?", fakes)
	}
}

// TestFunctionsLinkNoFakes: no Lambda binary links a fake or test helper,
// directly or through the packages it imports.
func TestFunctionsLinkNoFakes(t *testing.T) {
	r := loadRepo(t)
	n := 0
	for _, p := range sortedPkgs(r) {
		if !under(p.dir, "functions") || p.name != "main" {
			continue
		}
		n++
		r.forbidden(t, p.importPath, func(ip string) bool {
			dep, ok := strings.CutPrefix(ip, r.module+"/")
			return ok && isFake(dep)
		}, "a Lambda binary links no fake or test helper")
	}
	if n == 0 {
		t.Fatal("no main packages under functions/")
	}
}

// TestOnlyTheDevBinaryLinksTheSandbox: the packages allowed to import
// fakes are linked by cmd/switchboard (the operator CLI and `switchboard
// dev`) and by nothing else that ships.
func TestOnlyTheDevBinaryLinksTheSandbox(t *testing.T) {
	r := loadRepo(t)
	for _, p := range sortedPkgs(r) {
		if p.name != "main" || p.dir == "cmd/switchboard" {
			continue
		}
		r.forbidden(t, p.importPath, func(ip string) bool {
			dep, ok := strings.CutPrefix(ip, r.module+"/")
			_, listed := fakeImporters[dep]
			return ok && listed
		}, "only the dev binary (cmd/switchboard) links the local runtime and its sandbox")
	}
}

func sortedPkgs(r *repo) []*pkg {
	out := make([]*pkg, 0, len(r.pkgs))
	for _, p := range r.pkgs {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	return out
}

func sortedImports(p *pkg) []string {
	out := make([]string, 0, len(p.imports))
	for imp := range p.imports {
		out = append(out, imp)
	}
	sort.Strings(out)
	return out
}
