// Package staging decides, per tool action and condition, whether a call runs
// at once (auto), waits for a human (approve) or is refused (deny).
package staging

import (
	"fmt"
	"sort"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Defaults is the built-in rule table. Keys are "Tool.action" or
// "Tool.action:condition"; a tool names its condition through Conditioner.
// Actions that appear nowhere fall back to approve (fail closed).
var Defaults = map[string]switchboard.Decision{
	"RocketChat.send_message":            switchboard.DecisionAuto,
	"RocketChat.send_message:other_room": switchboard.DecisionDeny,
	"RocketChat.reply":                   switchboard.DecisionAuto,
	"RocketChat.reply:other_room":        switchboard.DecisionDeny,
	"RocketChat.send_file":               switchboard.DecisionApprove,
	"RocketChat.send_file:other_room":    switchboard.DecisionDeny, // the tool refuses it anyway: nobody should be asked
	"RocketChat.list_rooms":              switchboard.DecisionAuto,
	"RocketChat.read_room":               switchboard.DecisionAuto,
	"RocketChat.mark_read":               switchboard.DecisionAuto,
	"RocketChat.download_file":           switchboard.DecisionAuto,
	"RocketChat.react":                   switchboard.DecisionAuto,
	"RocketChat.search":                  switchboard.DecisionAuto,
	"Nextcloud.upload":                   switchboard.DecisionAuto,
	"Nextcloud.mkdir":                    switchboard.DecisionAuto,
	"Nextcloud.move":                     switchboard.DecisionAuto,
	"Nextcloud.delete":                   switchboard.DecisionApprove,
	"Nextcloud.share":                    switchboard.DecisionAuto,
	"Nextcloud.share:public":             switchboard.DecisionApprove,
	"Nextcloud.share:public_not_allowed": switchboard.DecisionDeny,
	"Nextcloud.download":                 switchboard.DecisionAuto,
	"Nextcloud.list":                     switchboard.DecisionAuto,
	"Nextcloud.stat":                     switchboard.DecisionAuto,
	"Nextcloud.search":                   switchboard.DecisionAuto,
	"Nextcloud.versions":                 switchboard.DecisionAuto,
	"Nextcloud.restore_version":          switchboard.DecisionAuto, // the replaced content stays a version
	"Nextcloud.trash":                    switchboard.DecisionAuto, // empty asks for confirmation itself
	"Nextcloud.favorite":                 switchboard.DecisionAuto,
	"Nextcloud.quota":                    switchboard.DecisionAuto,
	"Nextcloud.capabilities":             switchboard.DecisionAuto,
	"Nextcloud.convert":                  switchboard.DecisionAuto,
	"Nextcloud.shares":                   switchboard.DecisionAuto,
	"Nextcloud.unshare":                  switchboard.DecisionAuto, // removing access; by path it asks for confirmation
	"Telegram.send_message":              switchboard.DecisionApprove,
	"notify_user.send":                   switchboard.DecisionAuto,
	"ask_agent.ask":                      switchboard.DecisionAuto, // changes nothing outside; its guard refuses what the rules forbid
	"Taskboard.task_create":              switchboard.DecisionAuto, // the assignee must have the Taskboard too
	"Taskboard.task_comment":             switchboard.DecisionAuto,
	"Taskboard.task_complete":            switchboard.DecisionAuto,
	"Taskboard.task_block":               switchboard.DecisionAuto,
	"Taskboard.task_list":                switchboard.DecisionAuto,
	// Each step of a delivery goes through the policy of its own tool
	// action (a public link waits for a human there).
	"Documents.deliver": switchboard.DecisionAuto,
	"Workspace.write":   switchboard.DecisionAuto,
	"Workspace.read":    switchboard.DecisionAuto,
	"Workspace.list":    switchboard.DecisionAuto,
	"Workspace.delete":  switchboard.DecisionAuto,
	// The analysis tool only reads; who may use it is the config's choice.
	"AgentCommAnalysis.list_pairs":        switchboard.DecisionAuto,
	"AgentCommAnalysis.stats":             switchboard.DecisionAuto,
	"AgentCommAnalysis.read_conversation": switchboard.DecisionAuto,
	"AgentCommAnalysis.chain":             switchboard.DecisionAuto,
	"AgentCommAnalysis.search":            switchboard.DecisionAuto,
}

// Conditioner is implemented by tools whose policy depends on the arguments
// (an allowed room, a public share). It returns "" when no condition applies.
type Conditioner interface {
	Condition(call switchboard.ToolCall) string
}

// Policy is an immutable rule table.
type Policy struct {
	rules map[string]switchboard.Decision
}

// New returns the defaults with overrides applied (config key instance.staging).
// Override keys must look like "Tool.action" or "Tool.action:condition".
func New(overrides map[string]string) (*Policy, error) {
	rules := make(map[string]switchboard.Decision, len(Defaults)+len(overrides))
	for k, v := range Defaults {
		rules[k] = v
	}
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d := switchboard.Decision(overrides[k])
		if !d.Valid() {
			return nil, fmt.Errorf("staging rule %q: decision %q must be auto, approve or deny", k, overrides[k])
		}
		tool, action, ok := strings.Cut(k, ".")
		if !ok || tool == "" || action == "" {
			return nil, fmt.Errorf("staging rule %q: key must look like Tool.action or Tool.action:condition", k)
		}
		rules[k] = d
	}
	return &Policy{rules: rules}, nil
}

// Decide returns the decision for call given its condition (may be "").
// Router-originated notices bypass approval but never a deny; a call
// the approvals flow executes after a human said yes is auto.
func (p *Policy) Decide(call switchboard.ToolCall, condition string) switchboard.Decision {
	d := p.lookup(call.Tool, call.Action, condition)
	if d == switchboard.DecisionApprove && (call.Approved || call.Origin == switchboard.OriginRouter) {
		return switchboard.DecisionAuto
	}
	return d
}

func (p *Policy) lookup(tool, action, condition string) switchboard.Decision {
	base := tool + "." + action
	if condition != "" {
		if d, ok := p.rules[base+":"+condition]; ok {
			return d
		}
	}
	if d, ok := p.rules[base]; ok {
		return d
	}
	return switchboard.DecisionApprove
}

// Rules returns the effective table, for GET /tools and the README.
func (p *Policy) Rules() map[string]switchboard.Decision {
	out := make(map[string]switchboard.Decision, len(p.rules))
	for k, v := range p.rules {
		out[k] = v
	}
	return out
}
