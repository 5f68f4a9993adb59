package switchboard

import (
	"context"
	"time"
)

// Allowance lets one agent run one tool action in one room or folder
// without asking again, until ExpiresAt: a human granted it while
// approving a call of the same action there ("approve, and allow the same
// action for this room / folder for N hours").
type Allowance struct {
	ID      string `json:"id"` // random, like an approval id
	AgentID string `json:"agentId"`
	Tool    string `json:"tool"`
	Action  string `json:"action"`
	// Scope is where it applies: "room:<room>" for a Rocket.Chat action,
	// "folder:<folder>" for a file action (see approvals.ScopeOf).
	Scope string `json:"scope"`
	// GrantedBy is who approved ("link", "telegram:<user id>"); ApprovalID
	// the approval they granted it with, and Run its chain.
	GrantedBy  string     `json:"grantedBy"`
	ApprovalID string     `json:"approvalId"`
	Run        RunContext `json:"run"`
	GrantedAt  time.Time  `json:"grantedAt"`
	ExpiresAt  time.Time  `json:"expiresAt"`
}

// Active reports whether the allowance still applies at now.
func (a Allowance) Active(now time.Time) bool { return now.Before(a.ExpiresAt) }

// AllowanceStore keeps allowances. Every method is safe for concurrent use.
type AllowanceStore interface {
	// Grant stores a. An allowance for the same agent, tool, action and
	// scope is replaced (the newer grant wins). EINVALID when a lacks an
	// id, agent, tool, action, scope or expiry.
	Grant(ctx context.Context, a Allowance) error
	// Find returns the allowance of agent for tool.action in scope that is
	// active at now (one read); found is false when there is none.
	Find(ctx context.Context, agentID, tool, action, scope string, now time.Time) (a Allowance, found bool, err error)
	// List returns every allowance active at now, earliest expiry first
	// (one query, never a scan).
	List(ctx context.Context, now time.Time) ([]Allowance, error)
	// Revoke deletes allowance id and returns it; ENOTFOUND when there is
	// none (revoked already, or expired and removed).
	Revoke(ctx context.Context, id string) (Allowance, error)
}

// CheckNewAllowance is the validation AllowanceStore.Grant applies.
func CheckNewAllowance(a Allowance) error {
	const op = "allowances.grant"
	switch {
	case !ValidApprovalID(a.ID):
		return E(op, EINVALID, "an allowance id must be 1 to 22 characters of A-Z a-z 0-9 - _")
	case a.AgentID == "" || a.Tool == "" || a.Action == "" || a.Scope == "":
		return E(op, EINVALID, "an allowance needs an agent, a tool, an action and a scope")
	case a.ExpiresAt.IsZero():
		return E(op, EINVALID, "an allowance needs an expiry")
	}
	return nil
}

// AllowanceKey is the one key of an agent's allowance for tool.action in
// scope: a newer grant for the same place replaces the older.
func AllowanceKey(agentID, tool, action, scope string) string {
	return agentID + "|" + tool + "." + action + "|" + scope
}
