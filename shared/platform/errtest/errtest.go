// Package errtest holds assertions on the domain's errors that many
// packages' tests share. Tests only.
package errtest

import (
	"strings"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// WantRefusal fails t unless err is a refusal with code whose message
// contains want; what names the call in the failure.
func WantRefusal(t testing.TB, what string, err error, code, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s = nil, want a refusal", what)
	}
	if got := sb.ErrorCode(err); got != code {
		t.Errorf("code = %s, want %s (%v)", got, code, err)
	}
	if !strings.Contains(sb.ErrorMessage(err), want) {
		t.Errorf("message = %q, want it to contain %q", sb.ErrorMessage(err), want)
	}
}
