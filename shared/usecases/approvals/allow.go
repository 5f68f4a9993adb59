package approvals

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// DefaultAllowForHours are the choices of "approve, and allow for N hours"
// when instance.approvals.allowForHours is not set.
var DefaultAllowForHours = []float64{1, 4, 24}

// MaxAllowForHours bounds every choice: an allowance is a shortcut for a
// working day or a week, not a standing rule (that is instance.staging).
const MaxAllowForHours = 168

// maxDenyReason caps what a human may say when denying.
const maxDenyReason = 500

// ScopeOf is where an allowance for a call of tool with args applies: the
// room of a Rocket.Chat call ("room:<room>" as the call names it) or the
// folder of a file call's path ("folder:<folder>", the path's directory
// with its area, e.g. "folder:/Reports/" or "folder:personal:/"); "" when
// the call names neither, and then no allowance is offered or consulted.
// The same room spelled another way is another scope: it then asks again,
// which is the safe side.
func ScopeOf(tool string, args json.RawMessage) string {
	var a struct {
		Room       *string `json:"room"`
		Path       *string `json:"path"`
		RemotePath *string `json:"remotePath"`
	}
	if json.Unmarshal(args, &a) != nil {
		return ""
	}
	if tool == "RocketChat" {
		if a.Room == nil {
			return ""
		}
		room := strings.TrimPrefix(strings.TrimSpace(*a.Room), "#")
		if room == "" {
			return ""
		}
		return "room:" + room
	}
	p := a.Path
	if p == nil {
		p = a.RemotePath
	}
	if p == nil || strings.TrimSpace(*p) == "" {
		return ""
	}
	return "folder:" + folderOf(strings.TrimSpace(*p))
}

// folderOf is the directory of p, keeping a workspace area ("personal:").
func folderOf(p string) string {
	area := ""
	if i := strings.Index(p, ":"); i >= 0 && !strings.Contains(p[:i], "/") {
		area, p = p[:i+1], p[i+1:]
	}
	dir := path.Dir(path.Clean("/" + p))
	if dir != "/" {
		dir += "/"
	}
	return area + dir
}

// DescribeScope says a scope in words: "room general", "folder /Reports/".
func DescribeScope(scope string) string {
	kind, where, _ := strings.Cut(scope, ":")
	return kind + " " + where
}

// DescribeHours says a choice of hours in words: "1 hour", "30 minutes".
func DescribeHours(h float64) string {
	switch {
	case h == 1:
		return "1 hour"
	case h >= 1 && h == float64(int(h)):
		return strconv.Itoa(int(h)) + " hours"
	}
	d := time.Duration(h * float64(time.Hour)).Round(time.Second)
	if d >= time.Minute && d%time.Minute == 0 {
		return strconv.Itoa(int(d.Minutes())) + " minutes"
	}
	return d.String()
}

// CheckAllowForHours checks the configured choices: each above 0 and at
// most MaxAllowForHours, no duplicates.
func CheckAllowForHours(hours []float64) error {
	seen := map[float64]bool{}
	for _, h := range hours {
		if h <= 0 || h > MaxAllowForHours {
			return sb.E("approvals.allowForHours", sb.EINVALID,
				fmt.Sprintf("allowForHours %v is out of range; use hours above 0 and at most %d (fractions are fine: 0.5 is 30 minutes)", h, MaxAllowForHours))
		}
		if seen[h] {
			return sb.E("approvals.allowForHours", sb.EINVALID, fmt.Sprintf("allowForHours lists %v twice", h))
		}
		seen[h] = true
	}
	return nil
}

// AllowChoices are the hours an approver may allow a's action for in its
// scope; nil when no allowance can be granted for it (no allowance store,
// a call without a room or folder, or a call a delivery waits for).
func (s *Service) AllowChoices(a Approval) []float64 {
	if s.allowances == nil || a.TaskToken != "" || ScopeOf(a.Tool, a.Args) == "" {
		return nil
	}
	return s.allowHours
}

// Allowed reports the active allowance that lets call run without a new
// approval: the same agent, tool action and scope (ScopeOf). A store
// failure is no allowance, and its error (fail closed: the executor does
// not run the call and does not wait for the store a second time).
func (s *Service) Allowed(ctx context.Context, call sb.ToolCall) (sb.Allowance, bool, error) {
	if s.allowances == nil {
		return sb.Allowance{}, false, nil
	}
	scope := ScopeOf(call.Tool, call.Args)
	if scope == "" {
		return sb.Allowance{}, false, nil
	}
	al, ok, err := s.allowances.Find(ctx, call.AgentID, call.Tool, call.Action, scope, s.now())
	if err != nil {
		s.log.WarnContext(ctx, "allowance lookup failed; the call is not run without a human's yes", "agent", call.AgentID,
			"tool", call.Tool, "action", call.Action, "err", err)
		return sb.Allowance{}, false, err
	}
	return al, ok, nil
}

// AllowedBy is the audit's DecidedBy of a call an allowance let run.
func AllowedBy(al sb.Allowance) string {
	return "allowance " + al.ID + " granted by " + al.GrantedBy
}

// grant stores allowance id that an approver granted with a (already
// approved) for hours, and audits it in a's chain. It reports false when
// it could not be stored (logged; the approval stands).
func (s *Service) grant(ctx context.Context, a Approval, id string, hours float64) bool {
	now := s.now().UTC()
	al := sb.Allowance{ID: id, AgentID: a.AgentID, Tool: a.Tool, Action: a.Action, Scope: ScopeOf(a.Tool, a.Args),
		GrantedBy: a.DecidedBy, ApprovalID: a.ID, Run: a.Run, GrantedAt: now,
		ExpiresAt: now.Add(time.Duration(hours * float64(time.Hour))).Truncate(time.Second)}
	if err := s.allowances.Grant(ctx, al); err != nil {
		s.log.ErrorContext(ctx, "allowance not stored; only this call was approved", s.attrs(a, "err", err)...)
		return false
	}
	s.log.InfoContext(ctx, "allowance granted", s.attrs(a, "allowanceId", al.ID, "scope", al.Scope, "until", al.ExpiresAt)...)
	s.audit(ctx, sb.AuditEntry{Run: a.Run, AgentID: a.AgentID, Tool: a.Tool, Action: a.Action, Args: scopeArgs(al),
		Decision: sb.DecisionApproved, Outcome: sb.OutcomeAllowanceGranted, ApprovalID: a.ID, DecidedBy: a.DecidedBy,
		Error: fmt.Sprintf("allowance %s: %s.%s in %s until %s", al.ID, al.Tool, al.Action, DescribeScope(al.Scope),
			al.ExpiresAt.Format(time.RFC3339))})
	return true
}

// scopeArgs is what an allowance's audit entry shows as its arguments.
func scopeArgs(al sb.Allowance) string {
	b, _ := json.Marshal(map[string]string{"allowance": al.ID, "scope": al.Scope, "expires": al.ExpiresAt.Format(time.RFC3339)})
	return string(b)
}

// RevokeAllowance ends allowance id now (the console's revoke) and
// audits it in the chain it was granted in, naming who revoked it. audit
// may be nil (then only the log has it). ENOTFOUND when there is no
// active allowance with id.
func RevokeAllowance(ctx context.Context, store sb.AllowanceStore, audit sb.AuditStore, id, by string, now time.Time) (sb.Allowance, error) {
	if !sb.ValidApprovalID(id) {
		return sb.Allowance{}, sb.E("allowances.revoke", sb.ENOTFOUND, "no allowance with this id; it was revoked or has expired")
	}
	al, err := store.Revoke(ctx, id)
	if err != nil {
		return sb.Allowance{}, err
	}
	if audit != nil {
		e := sb.AuditEntry{ID: sb.NewID(now), At: now.UTC(), Run: al.Run, AgentID: al.AgentID, Tool: al.Tool, Action: al.Action,
			Args: scopeArgs(al), Decision: sb.DecisionDeny, Outcome: sb.OutcomeAllowanceRevoked, ApprovalID: al.ApprovalID, DecidedBy: by,
			Error: fmt.Sprintf("allowance %s revoked by %s", al.ID, by)}
		if err := audit.Append(context.WithoutCancel(ctx), e); err != nil {
			return al, fmt.Errorf("allowance %s revoked, but its audit entry was not written: %w", al.ID, err)
		}
	}
	return al, nil
}

// audit appends e (stamped with an id and the time) when an audit store is
// wired; a failure is logged, the decision stands.
func (s *Service) audit(ctx context.Context, e sb.AuditEntry) {
	if s.auditStore == nil {
		return
	}
	now := s.now()
	e.ID, e.At = sb.NewID(now), now.UTC()
	if err := s.auditStore.Append(context.WithoutCancel(ctx), e); err != nil {
		s.log.ErrorContext(ctx, "approval audit entry not written", "approvalId", e.ApprovalID, "outcome", e.Outcome, "err", err)
	}
}

// denialText says who denied a and why, for the audit.
func denialText(a Approval) string {
	t := "denied by " + describeDecider(a.DecidedBy)
	if a.DenyReason != "" {
		t += "; reason: " + a.DenyReason
	}
	return t
}

// cleanDenyReason is a human's reason as it is kept: control characters
// out, secrets masked, at most maxDenyReason characters.
func (s *Service) cleanDenyReason(r string) string {
	r = strings.Map(func(c rune) rune {
		if c == '\n' || c == '\t' {
			return ' '
		}
		if c < 0x20 || c == 0x7f {
			return -1
		}
		return c
	}, r)
	r = strings.TrimSpace(r)
	if r == "" {
		return ""
	}
	r = s.scrub.String(r)
	if rs := []rune(r); len(rs) > maxDenyReason {
		r = string(rs[:maxDenyReason]) + "…"
	}
	return r
}

// TargetChangedCode is the envelope code (Data["code"]) of an approved call
// the executor refused because its target changed after it was staged.
const TargetChangedCode = sb.CodeTargetChanged
