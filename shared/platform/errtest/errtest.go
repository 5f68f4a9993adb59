// Package errtest holds assertions on the domain's errors that many
// packages' tests share. Tests only.
package errtest

import (
	"errors"
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

// Check fails t unless err is (or wraps) a *switchboard.Error with code
// whose message contains every part; it returns that error for further
// checks.
func Check(t testing.TB, err error, code string, parts ...string) *sb.Error {
	t.Helper()
	var e *sb.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want a *switchboard.Error with code %s", err, err, code)
	}
	if e.Code != code {
		t.Errorf("code = %q, want %q (%v)", e.Code, code, err)
	}
	for _, p := range parts {
		if !strings.Contains(e.Message, p) {
			t.Errorf("message %q does not contain %q", e.Message, p)
		}
	}
	return e
}
