package lambdamain

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A builder that fails ends the process with status 1 and says why, under
// the function's name, before the Lambda runtime is asked for anything.
func TestStartReportsABuildError(t *testing.T) {
	if os.Getenv("LAMBDAMAIN_CHILD") == "1" {
		Start("approvals", func(context.Context, func(string) string) (any, error) {
			return nil, errors.New("SWITCHBOARD_CONFIG is not set")
		})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStartReportsABuildError$")
	cmd.Env = append(os.Environ(), "LAMBDAMAIN_CHILD=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("child ended with %v, want exit status 1; output %q", err, out)
	}
	if want := "approvals: SWITCHBOARD_CONFIG is not set"; !strings.Contains(string(out), want) {
		t.Errorf("output %q, want %q", out, want)
	}
}
