package switchboard

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"time"
)

// ApprovalStatus is where an approval stands. pending → approved | denied |
// expired; approved → executing | failed (never started); executing →
// executed | failed. Nothing ever goes back, so a conditional write on the
// status is enough to make every step happen once: in particular only the
// one caller that moves an approval to executing runs its action.
type ApprovalStatus string

const (
	ApprovalPending   ApprovalStatus = "pending"
	ApprovalApproved  ApprovalStatus = "approved"  // a human said yes; the action is queued for the worker (or never starts and expiry closes it)
	ApprovalExecuting ApprovalStatus = "executing" // the worker runs the action now (or died and expiry closes it)
	ApprovalDenied    ApprovalStatus = "denied"
	ApprovalExpired   ApprovalStatus = "expired"
	ApprovalExecuted  ApprovalStatus = "executed" // the action ran and answered status "ok"
	ApprovalFailed    ApprovalStatus = "failed"   // the action ran and failed, or its outcome is unknown
)

// Valid reports whether s is one of the seven statuses.
func (s ApprovalStatus) Valid() bool {
	switch s {
	case ApprovalPending, ApprovalApproved, ApprovalExecuting, ApprovalDenied, ApprovalExpired, ApprovalExecuted, ApprovalFailed:
		return true
	}
	return false
}

// Open reports whether an approval in status s still needs work: pending
// (waits for a human), approved (its action has not started) or executing
// (its action has not recorded a result).
func (s ApprovalStatus) Open() bool {
	return s == ApprovalPending || s == ApprovalApproved || s == ApprovalExecuting
}

// CanBecome reports whether s → to is a step of the lifecycle.
func (s ApprovalStatus) CanBecome(to ApprovalStatus) bool {
	switch s {
	case ApprovalPending:
		return to == ApprovalApproved || to == ApprovalDenied || to == ApprovalExpired
	case ApprovalApproved:
		return to == ApprovalExecuting || to == ApprovalFailed
	case ApprovalExecuting:
		return to == ApprovalExecuted || to == ApprovalFailed
	}
	return false
}

// Approval is one staged tool action waiting for a human, and what became
// of it.
type Approval struct {
	ID       string          `json:"id"` // at most MaxApprovalIDLen URL-safe characters
	AgentID  string          `json:"agentId"`
	Tool     string          `json:"tool"`
	Action   string          `json:"action"`
	Args     json.RawMessage `json:"args"`     // exactly as the agent sent them; these run
	ArgsHash string          `json:"argsHash"` // hex SHA-256 of tool, action and canonical args; links are bound to it
	// Run is the run that asked; the follow-up run is its child.
	Run RunContext `json:"run"`
	// Origin is the asking call's origin (OriginAgent for a model's call,
	// OriginOperator for POST /tools/invoke); the action runs with it.
	Origin string `json:"origin,omitempty"`
	// Client is the MCP client that asked (origin "mcp"); the action runs
	// and is audited under its name.
	Client string `json:"client,omitempty"`
	Reason string `json:"reason,omitempty"`
	// DenyReason is what the human who denied said why (scrubbed and
	// capped; others' words: the follow-up run sees it framed as
	// untrusted).
	DenyReason string `json:"denyReason,omitempty"`
	// AllowanceID names the allowance granted with the approval ("approve,
	// and allow for N hours"); "" when the approver allowed nothing more.
	AllowanceID string `json:"allowanceId,omitempty"`
	// Target is the fingerprint of what the call acts on, taken when it was
	// staged (a file's etag, a room's id); the approved call runs only if
	// its target still has it. "" when the tool records none.
	Target string `json:"target,omitempty"`
	// ReplyTo is where the asking run was woken from; the follow-up run
	// answers there (nil: the follow-up answers nowhere but the audit).
	ReplyTo   *ReplyTo       `json:"replyTo,omitempty"`
	CreatedAt time.Time      `json:"createdAt"`
	ExpiresAt time.Time      `json:"expiresAt"` // whole seconds; links die with it
	Status    ApprovalStatus `json:"status"`
	DecidedBy string         `json:"decidedBy,omitempty"` // "link", "telegram:<user id>", "expiry"
	DecidedAt time.Time      `json:"decidedAt,omitzero"`
	// StartedAt is when the worker took the approved action (approved →
	// executing); zero until then.
	StartedAt time.Time `json:"startedAt,omitzero"`
	// Result is the action's envelope (executed or failed).
	Result Envelope `json:"result,omitzero"`
	// ExecRun is the run context the action ran (and was audited) under: a
	// child of Run, stamped when the approval won pending → approved.
	ExecRun RunContext `json:"execRun,omitzero"`
	// Notice is the notifier's opaque reference to the message it showed
	// (for Telegram: chat id and message id), so it can edit it later.
	Notice json.RawMessage `json:"notice,omitempty"`
	// TaskToken, when set, is a Step Functions task token: the staged call
	// belongs to a state machine execution waiting for the decision (the
	// document pipeline's public link). Approving resumes the execution,
	// which then runs the call itself; denying or expiry fail it. No worker
	// runs the call and no follow-up run is queued: the execution tells the
	// agent.
	TaskToken string `json:"taskToken,omitempty"`
	// StagedSpan is the span (SpanID.String) of the tool call that staged
	// it, when telemetry recorded one: the wait for the decision is
	// recorded under it (docs/telemetry.md).
	StagedSpan string `json:"stagedSpan,omitempty"`
}

type taskTokenKey struct{}

// WithTaskToken marks ctx so that a call staged under it carries token
// (the pipeline stages its public link through the tool executor).
func WithTaskToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, taskTokenKey{}, token)
}

// TaskTokenFrom returns the task token WithTaskToken put into ctx, or "".
func TaskTokenFrom(ctx context.Context) string {
	t, _ := ctx.Value(taskTokenKey{}).(string)
	return t
}

// ApprovalStore keeps approvals. Every method is safe for concurrent use.
type ApprovalStore interface {
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
	// (CanBecome).
	Transition(ctx context.Context, id string, from, to ApprovalStatus, patch func(*Approval)) (Approval, error)
	// SetNotice records the notifier's reference whatever the status (the
	// message may be sent after a quick human already decided) and returns
	// the approval as written; it never touches other fields. ENOTFOUND for
	// an unknown id.
	SetNotice(ctx context.Context, id string, notice json.RawMessage) (Approval, error)
	// ListOpen returns every pending, approved or executing approval, earliest expiry
	// first, with a query on a small index (never a scan).
	ListOpen(ctx context.Context) ([]Approval, error)
}

// MaxApprovalIDLen is the length of generated approval ids (128 random bits
// in base64url) and the longest id accepted.
const MaxApprovalIDLen = 22

// ValidApprovalID reports whether id has 1 to MaxApprovalIDLen characters of
// [A-Za-z0-9_-]: safe in a URL path, in Telegram callback data and inside
// the signed text of a link.
func ValidApprovalID(id string) bool {
	if id == "" || len(id) > MaxApprovalIDLen {
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

// ValidArgsHash reports whether h looks like a hex SHA-256 (lower case).
func ValidArgsHash(h string) bool {
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

// CheckNewApproval is the validation ApprovalStore.Create applies (shared by
// the implementations so that they refuse the same things).
func CheckNewApproval(a Approval) error {
	const op = "approvals.create"
	switch {
	case !ValidApprovalID(a.ID):
		return E(op, EINVALID, "an approval id must be 1 to 22 characters of A-Z a-z 0-9 - _")
	case a.AgentID == "" || a.Tool == "" || a.Action == "":
		return E(op, EINVALID, "an approval needs an agent, a tool and an action")
	case a.Status != ApprovalPending:
		return E(op, EINVALID, "a new approval must be pending")
	case !ValidArgsHash(a.ArgsHash):
		return E(op, EINVALID, "an approval needs the hex SHA-256 of its args")
	case !json.Valid(a.Args):
		return E(op, EINVALID, "an approval's args must be valid JSON")
	case a.CreatedAt.IsZero() || a.ExpiresAt.IsZero():
		return E(op, EINVALID, "an approval needs a creation and an expiry time")
	}
	return nil
}

// CheckApprovalTransition is the validation ApprovalStore.Transition applies.
func CheckApprovalTransition(id string, from, to ApprovalStatus) error {
	const op = "approvals.transition"
	if !ValidApprovalID(id) {
		return E(op, ENOTFOUND, "no approval with this id")
	}
	if !from.CanBecome(to) {
		return E(op, EINVALID, "an approval cannot go from "+string(from)+" to "+string(to))
	}
	return nil
}

// ApplyApprovalPatch runs patch on a copy of cur and stamps the fields a
// patch may not change (ID, CreatedAt, ExpiresAt) back, then sets Status to
// to. Every store uses it, so they agree on what a patch can do.
func ApplyApprovalPatch(cur Approval, to ApprovalStatus, patch func(*Approval)) Approval {
	next := cur
	next.Args = bytes.Clone(cur.Args)
	next.ReplyTo = cur.ReplyTo.Clone()
	next.Notice = bytes.Clone(cur.Notice)
	if patch != nil {
		patch(&next)
	}
	next.ID, next.CreatedAt, next.ExpiresAt, next.Status = cur.ID, cur.CreatedAt, cur.ExpiresAt, to
	return next
}
