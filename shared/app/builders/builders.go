// Package builders names each function's builder: the one its
// functions/<name>/main.go calls. The tests that check the functions
// against the deploy catalogue and run them through their Lambda handler
// read it; no function imports it (each links only its own builder).
package builders

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/app/act"
	"github.com/switchboard-dev/switchboard/shared/app/decide"
	"github.com/switchboard-dev/switchboard/shared/app/mcpfn"
	"github.com/switchboard-dev/switchboard/shared/app/receive"
	"github.com/switchboard-dev/switchboard/shared/app/run"
	"github.com/switchboard-dev/switchboard/shared/app/view"
)

// Builder builds a function's Lambda handler from its environment.
type Builder = func(ctx context.Context, getenv func(string) string) (any, error)

// ByFunction is every function's builder, by function name.
var ByFunction = map[string]Builder{
	"rocketchat-webhook": receive.RocketChatWebhook,
	"tools":              act.Tools,
	"mcp":                mcpfn.MCP,
	"approvals":          decide.Approvals,
	"telegram-webhook":   decide.TelegramWebhook,
	"jobs":               act.Jobs,
	"agent-worker":       run.AgentWorker,
	"console":            view.Console,
}
