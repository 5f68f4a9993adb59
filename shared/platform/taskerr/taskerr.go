// Package taskerr holds the errors a Lambda handler returns to a Step
// Functions Task. Retry and Catch in the ASL files match an error by the
// name of its Go type, which aws-lambda-go reports as errorType (the type
// name itself, without package or pointer, and without unwrapping). So a
// handler returns one of these unwrapped at its boundary, and the ASL names
// them by the constants below.
package taskerr

// The names Retry and Catch match (ErrorEquals).
const (
	NameTransient = "TransientError"
	NamePermanent = "PermanentError"
	NameDenied    = "DeniedError"
)

// Names is every error name a handler can raise, for checking ASL files.
var Names = []string{NameTransient, NamePermanent, NameDenied}

// TransientError is a failure worth retrying: a 429, a 5xx, a dropped
// connection, a throttled table. RetryAfterSeconds is the server's hint
// when it gave one (0 = none).
type TransientError struct {
	Message           string
	RetryAfterSeconds int
}

func (e *TransientError) Error() string { return e.Message }

// PermanentError is a failure that retrying cannot fix (507 Insufficient
// Storage, a 403, a malformed request); the machine's Catch takes over.
type PermanentError struct{ Message string }

func (e *PermanentError) Error() string { return e.Message }

// DeniedError is a refusal by a rule, not a failure: an agent asking
// itself, a question going round in a circle, an unknown target. Reason is
// said to the asking agent as it is.
type DeniedError struct{ Reason string }

func (e *DeniedError) Error() string { return e.Reason }
