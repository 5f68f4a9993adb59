package approvals

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Status is where an approval stands. pending → approved | denied | expired;
// approved → executed | failed. Nothing ever goes back, so a conditional
// write on the status is enough to make every step happen once.
type Status string

const (
	StatusPending  Status = "pending"
	StatusApproved Status = "approved" // a human said yes; the action runs now (or its runner died: see ExpireDue)
	StatusDenied   Status = "denied"
	StatusExpired  Status = "expired"
	StatusExecuted Status = "executed" // the action ran and answered status "ok"
	StatusFailed   Status = "failed"   // the action ran and failed, or its outcome is unknown
)

// Valid reports whether s is one of the six statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusPending, StatusApproved, StatusDenied, StatusExpired, StatusExecuted, StatusFailed:
		return true
	}
	return false
}

// Open reports whether an approval in status s still needs work: pending
// (waits for a human) or approved (its action has not recorded a result).
func (s Status) Open() bool { return s == StatusPending || s == StatusApproved }

// CanTransition reports whether from → to is a step of the lifecycle.
func CanTransition(from, to Status) bool {
	switch from {
	case StatusPending:
		return to == StatusApproved || to == StatusDenied || to == StatusExpired
	case StatusApproved:
		return to == StatusExecuted || to == StatusFailed
	}
	return false
}

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

// Approval is one staged tool action and what became of it.
type Approval struct {
	ID       string          `json:"id"` // NewID: 22 URL-safe characters
	AgentID  string          `json:"agentId"`
	Tool     string          `json:"tool"`
	Action   string          `json:"action"`
	Args     json.RawMessage `json:"args"`     // exactly as the agent sent them; these run
	ArgsHash string          `json:"argsHash"` // ArgsHash(Tool, Action, Args); links are bound to it
	// Run is the run that asked; the follow-up run is its child.
	Run sb.RunContext `json:"run"`
	// Origin is the asking call's origin (sb.OriginAgent for a model's call,
	// sb.OriginOperator for POST /tools/invoke); the action runs with it.
	Origin string `json:"origin,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Context is opaque JSON the caller attached (WithContext); a "replyTo"
	// member in wake.ReplyTo's shape routes the follow-up run's answer.
	Context   json.RawMessage `json:"context,omitempty"`
	CreatedAt time.Time       `json:"createdAt"`
	ExpiresAt time.Time       `json:"expiresAt"` // whole seconds; links die with it
	Status    Status          `json:"status"`
	DecidedBy string          `json:"decidedBy,omitempty"` // "link", "telegram:<user id>", "expiry"
	DecidedAt time.Time       `json:"decidedAt,omitzero"`
	// Result is the action's envelope (executed or failed).
	Result sb.Envelope `json:"result,omitzero"`
	// ExecRun is the run context the action ran (and was audited) under: a
	// child of Run, stamped when the approval won pending → approved.
	ExecRun sb.RunContext `json:"execRun,omitzero"`
	// Notice is the Notifier's opaque reference to the message it showed
	// (for Telegram: chat id and message id), so Decided can edit it.
	Notice json.RawMessage `json:"notice,omitempty"`
}

// Store keeps approvals. Every method is safe for concurrent use.
type Store interface {
	// Create stores a new approval, which must be pending and have a valid
	// ID, an agent, a tool, an action, valid JSON args, a hash, a creation
	// and an expiry time (EINVALID otherwise). ECONFLICT when an approval
	// with the same ID exists.
	Create(ctx context.Context, a Approval) error
	// Get returns the approval; ENOTFOUND when there is none with id.
	Get(ctx context.Context, id string) (Approval, error)
	// Transition moves the approval from one status to the next in ONE
	// conditional write (status = from), applying patch to the stored
	// approval first (patch may be nil; it cannot change ID, CreatedAt,
	// ExpiresAt or Status). Of any number of concurrent callers exactly one
	// wins; the others get ECONFLICT, as does a caller whose from is not
	// the current status. It returns the approval as written. ENOTFOUND for
	// an unknown id; EINVALID when from → to is not a lifecycle step
	// (CanTransition).
	Transition(ctx context.Context, id string, from, to Status, patch func(*Approval)) (Approval, error)
	// SetNotice records the Notifier's reference whatever the status (the
	// message may be sent after a quick human already decided) and returns
	// the approval as written; it never touches other fields. ENOTFOUND for
	// an unknown id.
	SetNotice(ctx context.Context, id string, notice json.RawMessage) (Approval, error)
	// ListOpen returns every pending or approved approval, earliest expiry
	// first, with a query on a small index (never a scan).
	ListOpen(ctx context.Context) ([]Approval, error)
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
const idBytes = 16

// MaxIDLen is the length of NewID's ids and the longest id accepted.
const MaxIDLen = 22

// NewID returns a random, URL-safe approval id of MaxIDLen characters.
func NewID() string {
	var b [idBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("approvals: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ValidID reports whether id has 1 to MaxIDLen characters of [A-Za-z0-9_-]:
// safe in a URL path, in Telegram callback data and inside the signed text.
func ValidID(id string) bool {
	if id == "" || len(id) > MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// validHash reports whether h looks like a hex SHA-256 (lower case).
func validHash(h string) bool {
	if len(h) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
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
// "a:<id>" or "d:<id>", at most 2+MaxIDLen bytes (Telegram allows 64).
func CallbackData(d Decision, id string) string {
	if d == Approve {
		return "a:" + id
	}
	return "d:" + id
}

// parseCallbackData reverses CallbackData.
func parseCallbackData(s string) (Decision, string, bool) {
	if len(s) < 3 || len(s) > 2+MaxIDLen || s[1] != ':' {
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
	if !ValidID(id) {
		return "", "", false
	}
	return d, id, true
}

// CheckNew is the validation Store.Create applies (shared by the
// implementations so that they refuse the same things).
func CheckNew(a Approval) error {
	const op = "approvals.create"
	switch {
	case !ValidID(a.ID):
		return sb.E(op, sb.EINVALID, "an approval id must be 1 to 22 characters of A-Z a-z 0-9 - _")
	case a.AgentID == "" || a.Tool == "" || a.Action == "":
		return sb.E(op, sb.EINVALID, "an approval needs an agent, a tool and an action")
	case a.Status != StatusPending:
		return sb.E(op, sb.EINVALID, "a new approval must be pending")
	case !validHash(a.ArgsHash):
		return sb.E(op, sb.EINVALID, "an approval needs the hex SHA-256 of its args")
	case !json.Valid(a.Args):
		return sb.E(op, sb.EINVALID, "an approval's args must be valid JSON")
	case len(a.Context) > 0 && !json.Valid(a.Context):
		return sb.E(op, sb.EINVALID, "an approval's context must be valid JSON")
	case a.CreatedAt.IsZero() || a.ExpiresAt.IsZero():
		return sb.E(op, sb.EINVALID, "an approval needs a creation and an expiry time")
	}
	return nil
}

// CheckTransition is the validation Store.Transition applies.
func CheckTransition(id string, from, to Status) error {
	const op = "approvals.transition"
	if !ValidID(id) {
		return sb.E(op, sb.ENOTFOUND, "no approval with this id")
	}
	if !CanTransition(from, to) {
		return sb.E(op, sb.EINVALID, "an approval cannot go from "+string(from)+" to "+string(to))
	}
	return nil
}

// ApplyPatch runs patch on a copy of cur and stamps the fields a patch may
// not change (ID, CreatedAt, ExpiresAt) back, then sets Status to to. Both
// stores use it, so they agree on what a patch can do.
func ApplyPatch(cur Approval, to Status, patch func(*Approval)) Approval {
	next := cur
	next.Args = bytes.Clone(cur.Args)
	next.Context = bytes.Clone(cur.Context)
	next.Notice = bytes.Clone(cur.Notice)
	if patch != nil {
		patch(&next)
	}
	next.ID, next.CreatedAt, next.ExpiresAt, next.Status = cur.ID, cur.CreatedAt, cur.ExpiresAt, to
	return next
}
