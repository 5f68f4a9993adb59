package switchboard

import (
	"context"
	"time"
)

// MaxAuditArgs caps the scrubbed arguments stored with an audit entry.
const MaxAuditArgs = 4000

// Decision is the staging policy's verdict on a tool action.
type Decision string

const (
	DecisionAuto    Decision = "auto"
	DecisionApprove Decision = "approve"
	DecisionDeny    Decision = "deny"
	// DecisionApproved is never a rule: it marks the audit entry of a call
	// that ran because a human approved it (the entry then names the
	// approval and who decided).
	DecisionApproved Decision = "approved"
	// DecisionAllowed marks the audit entry of a call that ran at once
	// because an allowance covered it (the entry then names the approval
	// the allowance was granted with, and DecidedBy the allowance and who
	// granted it).
	DecisionAllowed Decision = "allowed"
)

// Valid reports whether d is one of the three rule decisions.
func (d Decision) Valid() bool {
	return d == DecisionAuto || d == DecisionApprove || d == DecisionDeny
}

// Outcomes of a tool call as the audit records them.
const (
	OutcomeOK       = "ok"
	OutcomeError    = "error"
	OutcomeDenied   = "denied"
	OutcomePending  = "pending_approval"
	OutcomeRejected = "rejected" // invalid call: unknown tool/action, bad arguments
	// The approvals flow's own entries in a chain's audit trail.
	OutcomeAllowanceGranted = "allowance_granted"
	OutcomeAllowanceRevoked = "allowance_revoked"
)

// AuditEntry is one tool call. Args are scrubbed and capped before they
// reach a store.
type AuditEntry struct {
	ID       string        `json:"id"`
	At       time.Time     `json:"at"`
	Run      RunContext    `json:"run"`
	AgentID  string        `json:"agentId"`
	Tool     string        `json:"tool"`
	Action   string        `json:"action"`
	Args     string        `json:"args"`
	Decision Decision      `json:"decision"`
	Outcome  string        `json:"outcome"`
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"durationNs"`
	// ApprovalID is the approval a staged call waits for, or the one whose
	// yes made it run; DecidedBy who said yes ("link", "telegram:<id>").
	ApprovalID string `json:"approvalId,omitempty"`
	DecidedBy  string `json:"decidedBy,omitempty"`
	// Origin is the call's origin (sb.OriginMCP, …); Client the MCP
	// client's name for calls of origin "mcp".
	Origin string `json:"origin,omitempty"`
	Client string `json:"client,omitempty"`
}

// ToolAudit receives the audit entry of the tool call made under a
// context carrying it (WithToolAudit): the executor copies its entry
// there once the call is over, so that a caller (a run's execute_tool
// span) can say what the staging policy decided without a second lookup.
type ToolAudit struct{ Entry AuditEntry }

type toolAuditKey struct{}

// WithToolAudit returns ctx carrying a; nil carries none (a nested call's
// entry does not overwrite its caller's).
func WithToolAudit(ctx context.Context, a *ToolAudit) context.Context {
	return context.WithValue(ctx, toolAuditKey{}, a)
}

// ToolAuditFrom returns the ToolAudit ctx carries, or nil.
func ToolAuditFrom(ctx context.Context) *ToolAudit {
	a, _ := ctx.Value(toolAuditKey{}).(*ToolAudit)
	return a
}

// Receipt is written once per agent run.
type Receipt struct {
	Run       RunContext    `json:"run"`
	AgentID   string        `json:"agentId"`
	Provider  string        `json:"provider"`
	Model     string        `json:"model"`
	StartedAt time.Time     `json:"startedAt"`
	Duration  time.Duration `json:"durationNs"`
	TokensIn  int           `json:"tokensIn"`
	TokensOut int           `json:"tokensOut"`
	CostUSD   float64       `json:"costUsd"`
	Steps     int           `json:"steps"`
	Outcome   string        `json:"outcome"` // "answered", "step_budget", "loop_guard", "error"
	// Reason says why a run ended without an answer ("model_unavailable",
	// "model_unauthorized", …); "" when it answered.
	Reason string `json:"reason,omitempty"`
}

// ChainCost sums the receipts of one run chain.
type ChainCost struct {
	RootRunID string    `json:"rootRunId"`
	Runs      int       `json:"runs"`
	TokensIn  int       `json:"tokensIn"`
	TokensOut int       `json:"tokensOut"`
	CostUSD   float64   `json:"costUsd"`
	Receipts  []Receipt `json:"receipts"`
}

// Add folds r into the chain total.
func (c *ChainCost) Add(r Receipt) {
	c.Runs++
	c.TokensIn += r.TokensIn
	c.TokensOut += r.TokensOut
	c.CostUSD += r.CostUSD
	c.Receipts = append(c.Receipts, r)
}

// AuditStore keeps the audit trail.
type AuditStore interface {
	// Append writes e. It returns ECONFLICT when an entry with the same ID
	// already exists (a retried write never doubles an entry), EUNAVAILABLE
	// when the store is temporarily unreachable.
	Append(ctx context.Context, e AuditEntry) error
	// ByRoot returns the entries of one run chain, oldest first, via an index
	// (never a scan). An unknown chain yields an empty list, not an error.
	ByRoot(ctx context.Context, rootRunID string) ([]AuditEntry, error)
}

// ReceiptStore keeps run receipts.
type ReceiptStore interface {
	// Put writes r; ECONFLICT when a receipt for r.Run.RunID exists already.
	Put(ctx context.Context, r Receipt) error
	// ChainCost sums all receipts whose RootRunID is rootRunID with one index
	// query. An unknown chain yields a zero ChainCost.
	ChainCost(ctx context.Context, rootRunID string) (ChainCost, error)
	// AgentCostSince sums the cost of the runs charged to agentID
	// (Run.Payer(): its own runs and the runs of the tasks it handed out,
	// not its runs another agent pays for) started at or after since (the
	// daily budget).
	AgentCostSince(ctx context.Context, agentID string, since time.Time) (float64, error)
}
