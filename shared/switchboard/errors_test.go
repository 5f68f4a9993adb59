package switchboard_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

const genericMessage = "internal error; the operator can find details in the logs"

func TestErrorCodeAndMessage(t *testing.T) {
	inner := sb.Wrap("audit.append", sb.ECONFLICT, "the entry exists already; use a new id",
		errors.New("ConditionalCheckFailedException: secret-table-name"))
	tests := []struct {
		name        string
		err         error
		wantCode    string
		wantMessage string
	}{
		{name: "nil", err: nil, wantCode: "", wantMessage: ""},
		{name: "domain error", err: sb.E("config.load", sb.EINVALID, "instance.name is required"),
			wantCode: sb.EINVALID, wantMessage: "instance.name is required"},
		{name: "domain error with cause", err: inner,
			wantCode: sb.ECONFLICT, wantMessage: "the entry exists already; use a new id"},
		{name: "wrapped domain error", err: fmt.Errorf("store put: %w", inner),
			wantCode: sb.ECONFLICT, wantMessage: "the entry exists already; use a new id"},
		{name: "twice wrapped domain error", err: fmt.Errorf("a: %w", fmt.Errorf("b: %w", inner)),
			wantCode: sb.ECONFLICT, wantMessage: "the entry exists already; use a new id"},
		{name: "outermost domain error wins",
			err:      sb.Wrap("outer", sb.EUNAVAILABLE, "try again later", inner),
			wantCode: sb.EUNAVAILABLE, wantMessage: "try again later"},
		{name: "plain error", err: errors.New("dial tcp 10.0.0.7:443: connection refused"),
			wantCode: sb.EINTERNAL, wantMessage: genericMessage},
		{name: "domain error without code or message", err: &sb.Error{Op: "x", Err: errors.New("boom")},
			wantCode: sb.EINTERNAL, wantMessage: genericMessage},
		{name: "joined errors find the domain error", err: errors.Join(errors.New("boom"), inner),
			wantCode: sb.ECONFLICT, wantMessage: "the entry exists already; use a new id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sb.ErrorCode(tt.err); got != tt.wantCode {
				t.Errorf("ErrorCode = %q, want %q", got, tt.wantCode)
			}
			if got := sb.ErrorMessage(tt.err); got != tt.wantMessage {
				t.Errorf("ErrorMessage = %q, want %q", got, tt.wantMessage)
			}
		})
	}
}

func TestErrorTextAndUnwrap(t *testing.T) {
	cause := errors.New("cause")
	tests := []struct {
		name string
		err  *sb.Error
		want string
	}{
		{name: "op and code", err: sb.E("op", sb.ENOTFOUND, ""), want: "op: not_found"},
		{name: "with message", err: sb.E("op", sb.ENOTFOUND, "no such file"), want: "op: not_found: no such file"},
		{name: "with cause", err: sb.Wrap("op", sb.EINTERNAL, "failed", cause), want: "op: internal: failed: cause"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
	if err := sb.Wrap("op", sb.EINTERNAL, "failed", cause); !errors.Is(err, cause) {
		t.Errorf("errors.Is(Wrap(…, cause), cause) = false, want true")
	}
}

// TestFailErrShowsOnlyCallerSafeText: the internal cause of an error never
// reaches the envelope: internal error text never reaches an HTTP caller
// or a model.
func TestFailErrShowsOnlyCallerSafeText(t *testing.T) {
	const secret = "arn:aws:dynamodb:eu-central-1:123456789012:table/prod-audit AKIAIOSFODNN7EXAMPLE"
	tests := []struct {
		name      string
		err       error
		wantError string
		wantCode  string
	}{
		{name: "domain error with internal cause",
			err:       sb.Wrap("audit.append", sb.EUNAVAILABLE, "the audit store is busy; try again in a minute", errors.New(secret)),
			wantError: "the audit store is busy; try again in a minute", wantCode: sb.EUNAVAILABLE},
		{name: "wrapped domain error",
			err:       fmt.Errorf("put %s: %w", secret, sb.E("workspace.write", sb.EINVALID, "path must start with personal: or shared:")),
			wantError: "path must start with personal: or shared:", wantCode: sb.EINVALID},
		{name: "plain error", err: errors.New(secret), wantError: genericMessage, wantCode: sb.EINTERNAL},
		{name: "domain error without message", err: &sb.Error{Op: "x", Code: sb.EFORBIDDEN, Err: errors.New(secret)},
			wantError: genericMessage, wantCode: sb.EFORBIDDEN},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := sb.FailErr(tt.err)
			if env.Status != "error" {
				t.Errorf("Status = %q, want error", env.Status)
			}
			if env.Error != tt.wantError {
				t.Errorf("Error = %q, want %q", env.Error, tt.wantError)
			}
			if got := env.Data["code"]; got != tt.wantCode {
				t.Errorf(`Data["code"] = %v, want %q`, got, tt.wantCode)
			}
			b, err := env.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			for _, leak := range []string{"AKIA", "arn:aws", "123456789012", "audit.append", "workspace.write"} {
				if strings.Contains(string(b), leak) {
					t.Errorf("envelope %s leaks %q", b, leak)
				}
			}
		})
	}
}
