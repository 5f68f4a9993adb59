package staging_test

import (
	"sort"
	"strings"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/commtool"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
	"github.com/switchboard-dev/switchboard/shared/tools/rctool"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
	"github.com/switchboard-dev/switchboard/shared/usecases/askagent"
	"github.com/switchboard-dev/switchboard/shared/usecases/pipeline"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
	"github.com/switchboard-dev/switchboard/shared/usecases/taskboard"
)

const (
	auto    = sb.DecisionAuto
	approve = sb.DecisionApprove
	deny    = sb.DecisionDeny
)

// pinned is the default rule table, row by row: every action the tools
// offer, under every condition their Conditioner names ("" = none), with
// the decision an agent's call gets. Changing a default means changing a
// row here; a new action without a row fails the test.
var pinned = map[string]sb.Decision{
	// Sending into an allowed room runs; into any other room it is refused.
	"RocketChat.send_message":            auto,
	"RocketChat.send_message:other_room": deny,
	"RocketChat.reply":                   auto,
	"RocketChat.reply:other_room":        deny,
	"RocketChat.send_file":               approve,
	"RocketChat.send_file:other_room":    deny,
	"RocketChat.list_rooms":              auto,
	"RocketChat.read_room":               auto,
	"RocketChat.mark_read":               auto,
	"RocketChat.download_file":           auto,
	"RocketChat.react":                   auto,
	"RocketChat.search":                  auto,

	// A delivery's steps each meet the policy of their own tool action.
	"Documents.deliver": auto,

	"Nextcloud.upload":                   auto,
	"Nextcloud.mkdir":                    auto,
	"Nextcloud.move":                     auto,
	"Nextcloud.delete":                   approve,
	"Nextcloud.share":                    auto, // to a user or group
	"Nextcloud.share:public":             approve,
	"Nextcloud.share:public_not_allowed": deny,
	"Nextcloud.download":                 auto,
	"Nextcloud.list":                     auto,
	"Nextcloud.stat":                     auto,
	"Nextcloud.search":                   auto,
	"Nextcloud.versions":                 auto,
	"Nextcloud.restore_version":          auto,
	"Nextcloud.trash":                    auto,
	"Nextcloud.favorite":                 auto,
	"Nextcloud.quota":                    auto,
	"Nextcloud.capabilities":             auto,
	"Nextcloud.convert":                  auto,
	"Nextcloud.shares":                   auto,
	"Nextcloud.unshare":                  auto,

	"Workspace.write":  auto,
	"Workspace.read":   auto,
	"Workspace.list":   auto,
	"Workspace.delete": auto,

	"notify_user.send": auto,

	// A question to a colleague changes nothing outside; its rules are the
	// ask_agent guard's.
	"ask_agent.ask": auto,
	// Reading other agents' messages: whom it is given to is the guard.
	"AgentCommAnalysis.list_pairs":        auto,
	"AgentCommAnalysis.stats":             auto,
	"AgentCommAnalysis.read_conversation": auto,
	"AgentCommAnalysis.chain":             auto,
	"AgentCommAnalysis.search":            auto,
	// Delegation between agents that both have the Taskboard; the wakes it
	// causes are bounded by each agent's budget.
	"Taskboard.task_create":   auto,
	"Taskboard.task_comment":  auto,
	"Taskboard.task_complete": auto,
	"Taskboard.task_block":    auto,
	"Taskboard.task_list":     auto,

	// Not a tool of its own (the router sends through Telegram), but a
	// rule: an agent's direct Telegram message waits for a human.
	"Telegram.send_message": approve,
}

// conditions names the conditions each conditional action can have.
var conditions = map[string][]string{
	"RocketChat.send_message": {"other_room"},
	"RocketChat.reply":        {"other_room"},
	"RocketChat.send_file":    {"other_room"},
	"Nextcloud.share":         {"public", "public_not_allowed"},
}

// offered lists "Tool.action" for every action of every tool, from the
// tools' own specs.
func offered() []string {
	specs := []sb.ToolSpec{
		rctool.New(nil, nil).Spec(),
		nctool.New(nil, nil, nil).Spec(),
		workspace.NewTool(nil, nil).Spec(),
		router.NewTool(nil).Spec(),
		(&askagent.Tool{}).Spec(),
		(&pipeline.Tool{}).Spec(),
		commtool.New(nil, nil, nil, nil).Spec(),
		taskboard.NewTool(nil).Spec(),
	}
	var out []string
	for _, s := range specs {
		for _, a := range s.ActionNames() {
			out = append(out, s.Name+"."+a)
		}
	}
	return append(out, "Telegram.send_message")
}

func TestDefaultTableIsPinned(t *testing.T) {
	p, err := staging.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, action := range offered() {
		tool, name, _ := strings.Cut(action, ".")
		for _, cond := range append([]string{""}, conditions[action]...) {
			key := action
			if cond != "" {
				key += ":" + cond
			}
			seen[key] = true
			want, ok := pinned[key]
			if !ok {
				t.Errorf("%s has no row in the pinned table; decide its default and add one", key)
				continue
			}
			agent := sb.ToolCall{Tool: tool, Action: name, Origin: sb.OriginAgent}
			if got := p.Decide(agent, cond); got != want {
				t.Errorf("%s from an agent = %s, want %s", key, got, want)
			}
			// What the router generates itself bypasses approval, never a deny.
			routerWant := want
			if want == approve {
				routerWant = auto
			}
			routed := sb.ToolCall{Tool: tool, Action: name, Origin: sb.OriginRouter}
			if got := p.Decide(routed, cond); got != routerWant {
				t.Errorf("%s from the router = %s, want %s", key, got, routerWant)
			}
		}
	}
	var stale []string
	for key := range pinned {
		if !seen[key] {
			stale = append(stale, key)
		}
	}
	for key := range staging.Defaults {
		if _, ok := pinned[key]; !ok {
			stale = append(stale, key+" (a default without a pinned row)")
		}
	}
	sort.Strings(stale)
	for _, key := range stale {
		t.Errorf("%s is pinned or defaulted but no tool offers it", key)
	}
	// Actions nobody listed need approval (fail closed), from any caller
	// but the router.
	for _, call := range []sb.ToolCall{
		{Tool: "Nextcloud", Action: "format_disk", Origin: sb.OriginAgent},
		{Tool: "Shell", Action: "run", Origin: sb.OriginOperator},
	} {
		if got := p.Decide(call, ""); got != approve {
			t.Errorf("unknown %s.%s = %s, want approve", call.Tool, call.Action, got)
		}
	}
}
