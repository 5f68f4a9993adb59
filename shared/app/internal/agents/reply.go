package agents

import (
	"github.com/switchboard-dev/switchboard/shared/app/internal/actions"
	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// newReplier wires the automatic reply path (wake.Replier) to the
// executor, the agents' Rocket.Chat accounts, Telegram and the router.
func newReplier(a *actions.Actions) *wake.Replier {
	c, d := a.Core, a.Decide
	r := &wake.Replier{Chat: a.RocketChatTool.Service(a.Tools), Accounts: accounts(c), Names: c, Human: router.Notices{Router: d.Router},
		Scrubber: c.Scrubber, Log: c.Log}
	if d.Telegram != nil { // never a nil *Client in the interface
		r.Telegram = d.Telegram
	}
	return r
}

// accounts are the agents' Rocket.Chat accounts as the wake uses them.
func accounts(core *core.Core) wake.Accounts {
	out := wake.Accounts{}
	for id, rc := range core.RC {
		acc := wake.Account{Messages: rc.Client, Rules: rc.Rules, MaxWakes: rc.MaxWakes}
		if c, ok := core.Config.Agent(id); ok && c.Tools.RocketChat != nil {
			acc.BaseURL = c.Tools.RocketChat.BaseURL
		}
		out[id] = acc
	}
	return out
}
