package sfn_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/taskerr"
)

// repoRoot is the module root seen from this package's directory.
const repoRoot = "../../.."

// aslFiles lists every deployed state machine definition.
func aslFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "infra", "statemachines", "*.asl.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no infra/statemachines/*.asl.json found (err %v)", err)
	}
	return files
}

// validateASL runs the pinned asl-validator on files, as `make test` does
// through this test, and returns its output.
func validateASL(t *testing.T, files ...string) (string, error) {
	t.Helper()
	bin := filepath.Join(repoRoot, "node_modules", ".bin", "asl-validator")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is missing: run npm ci in the repository root (make test does it)", bin)
	}
	args := []string{}
	for _, f := range files {
		args = append(args, "--json-path", f)
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

func TestASLFilesAreValid(t *testing.T) {
	testdata, _ := filepath.Glob("testdata/*.asl.json")
	files := append(aslFiles(t), testdata...)
	if out, err := validateASL(t, files...); err != nil {
		t.Fatalf("asl-validator rejects a state machine definition (%v):\n%s", err, out)
	}
}

func TestASLValidatorRejectsABrokenDefinition(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.asl.json")
	// Next names a state that does not exist.
	def := `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"Nowhere"}}}`
	if err := os.WriteFile(bad, []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := validateASL(t, bad); err == nil {
		t.Fatalf("asl-validator accepted a definition whose Next names no state:\n%s", out)
	}
}

// TestASLErrorNamesExist keeps Retry and Catch honest: a custom error name
// in ErrorEquals must be one a handler can return (taskerr), or it would
// never match.
func TestASLErrorNamesExist(t *testing.T) {
	for _, file := range aslFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var def struct {
			States map[string]struct {
				Retry, Catch []struct{ ErrorEquals []string }
			}
		}
		if err := json.Unmarshal(b, &def); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for state, s := range def.States {
			for _, r := range append(s.Retry, s.Catch...) {
				for _, name := range r.ErrorEquals {
					if strings.HasPrefix(name, "States.") || strings.HasPrefix(name, "Lambda.") || slices.Contains(taskerr.Names, name) {
						continue
					}
					t.Errorf("%s state %s: ErrorEquals %q is no Step Functions error and no taskerr type (%v)", filepath.Base(file), state, name, taskerr.Names)
				}
			}
		}
	}
}
