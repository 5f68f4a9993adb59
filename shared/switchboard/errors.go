package switchboard

import (
	"errors"
	"fmt"
	"time"
)

// Error codes: the whole vocabulary. Transports map them to HTTP status in one
// table (shared/httpapi); tools map them into envelopes.
const (
	EINVALID      = "invalid"      // the caller sent something wrong; the message says what to fix
	ENOTFOUND     = "not_found"    // the thing does not exist
	ECONFLICT     = "conflict"     // already exists, already decided, condition failed
	EUNAUTHORIZED = "unauthorized" // missing or wrong credentials
	EFORBIDDEN    = "forbidden"    // credentials fine, action not allowed
	ERATELIMITED  = "rate_limited" // slow down; RetryAfter says how long
	EUNAVAILABLE  = "unavailable"  // temporary failure; retrying later may work
	EINTERNAL     = "internal"     // a bug or an unexpected answer; details only in logs
)

// Error is the domain error. Message is safe to show to a caller or a model:
// it says what happened and what to do. Err carries internal detail for logs.
type Error struct {
	Op         string        // where: "audit.append", "config.load"
	Code       string        // one of the E* constants
	Message    string        // human reason and what to do
	RetryAfter time.Duration // for ERATELIMITED / EUNAVAILABLE, when known
	Err        error         // underlying cause, never shown to callers
}

// E builds an *Error.
func E(op, code, message string) *Error { return &Error{Op: op, Code: code, Message: message} }

// Wrap builds an *Error around a cause.
func Wrap(op, code, message string, err error) *Error {
	return &Error{Op: op, Code: code, Message: message, Err: err}
}

func (e *Error) Error() string {
	s := e.Op + ": " + e.Code
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the code of the outermost *Error in err's chain, EINTERNAL
// for any other non-nil error and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) && e.Code != "" {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the caller-safe message of err. Errors that are not
// *Error (or carry no message) yield a generic text: internal detail never
// leaks to an HTTP caller or a model.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return "internal error; the operator can find details in the logs"
}

// Errorf is fmt.Errorf, re-exported so that packages that only speak the
// domain do not need two imports for error text.
func Errorf(format string, a ...any) error { return fmt.Errorf(format, a...) }
