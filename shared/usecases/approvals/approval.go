package approvals

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// The records and the store port live in the domain, so the stores that
// keep them need not import this package; these names are the vocabulary
// the use case and its callers speak.
type (
	Status   = sb.ApprovalStatus
	Approval = sb.Approval
	Store    = sb.ApprovalStore
)

const (
	StatusPending   = sb.ApprovalPending
	StatusApproved  = sb.ApprovalApproved  // handed to the worker (or never started: see ExpireDue)
	StatusExecuting = sb.ApprovalExecuting // the worker runs it now (or died: see ExpireDue)
	StatusDenied    = sb.ApprovalDenied
	StatusExpired   = sb.ApprovalExpired
	StatusExecuted  = sb.ApprovalExecuted
	StatusFailed    = sb.ApprovalFailed
)

// Decision is what a human chose.
type Decision string

const (
	Approve Decision = "approve"
	Deny    Decision = "deny"
)

// ParseDecision accepts exactly "approve" and "deny".
func ParseDecision(s string) (Decision, bool) {
	switch Decision(s) {
	case Approve, Deny:
		return Decision(s), true
	}
	return "", false
}

// Notifier shows approvals to the human (the app sends them through the
// router, Telegram first) and updates what it showed once they are decided.
type Notifier interface {
	// RequestApproval shows what, who, why and the two links (and inline
	// buttons with CallbackData). It returns an opaque reference to the
	// message for Decided. Scrub the args it shows, but never the links:
	// they carry tokens (scrub would mask "token=" and break them), so
	// pass them to the channel untouched and never log or audit them.
	RequestApproval(ctx context.Context, r Request) (notice json.RawMessage, err error)
	// Decided updates the message of a decided, expired, executed or
	// failed approval; a.Notice is nil when the request never reached the
	// human or its reference was not stored (then post a new message).
	Decided(ctx context.Context, a Approval) error
}

// Request is what RequestApproval shows.
type Request struct {
	Approval   Approval
	ApproveURL string
	DenyURL    string
}

// idBytes random bytes make an ID: 128 bits, 22 base64url characters.
const idBytes = 16 // base64url: sb.MaxApprovalIDLen characters

// NewID returns a random, URL-safe approval id of sb.MaxApprovalIDLen characters.
func NewID() string {
	var b [idBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("approvals: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ArgsHash is the hex SHA-256 of tool|action|canonical args: the
// fingerprint a link is bound to. Canonical args are the JSON a Go decoder
// sees (object keys sorted, duplicates resolved to the last one, numbers
// kept as written, no insignificant space); empty args count as {}.
// EINVALID when args are not one JSON value.
func ArgsHash(tool, action string, args json.RawMessage) (string, error) {
	canon, err := Canonical(args)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(tool + "|" + action + "|"))
	h.Write(canon)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Canonical returns args in the canonical form ArgsHash hashes (and the
// confirmation page shows, so the human sees what will run).
func Canonical(args json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		return []byte("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, sb.Wrap("approvals.canonical", sb.EINVALID, "args are not valid JSON", err)
	}
	if dec.More() {
		return nil, sb.E("approvals.canonical", sb.EINVALID, "args hold more than one JSON value")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, sb.Wrap("approvals.canonical", sb.EINVALID, "args could not be encoded", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// CallbackData is the Telegram inline-button payload for decision on id:
// "a:<id>" or "d:<id>", at most 2+sb.MaxApprovalIDLen bytes (Telegram allows 64).
func CallbackData(d Decision, id string) string {
	if d == Approve {
		return "a:" + id
	}
	return "d:" + id
}

// parseCallbackData reverses CallbackData.
func parseCallbackData(s string) (Decision, string, bool) {
	if len(s) < 3 || len(s) > 2+sb.MaxApprovalIDLen || s[1] != ':' {
		return "", "", false
	}
	var d Decision
	switch s[0] {
	case 'a':
		d = Approve
	case 'd':
		d = Deny
	default:
		return "", "", false
	}
	id := s[2:]
	if !sb.ValidApprovalID(id) {
		return "", "", false
	}
	return d, id, true
}
