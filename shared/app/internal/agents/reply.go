package agents

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	"github.com/switchboard-dev/switchboard/shared/app/internal/actions"
	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// newReplier wires the automatic reply path (wake.Replier) to the
// executor, the agents' Rocket.Chat accounts, Telegram and the router.
func newReplier(a *actions.Actions) *wake.Replier {
	c, d := a.Core, a.Decide
	r := &wake.Replier{Chat: a.RocketChatTool.Service(a.Tools), Accounts: accounts(c), Names: c, Human: routerNotices{d.Router},
		Scrubber: c.Scrubber, Log: c.Log}
	if d.Telegram != nil {
		r.Telegram = telegramChats{d.Telegram}
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

// telegramChats posts a wake's answer as the bot, without link previews.
type telegramChats struct{ client *telegram.Client }

func (t telegramChats) Send(ctx context.Context, chatID, text string) error {
	_, err := t.client.SendLong(ctx, sb.TelegramText{ChatID: chatID, Text: text, DisableWebPagePreview: true})
	return err
}

// routerNotices hands an agent's text to the human as the router's agent
// notice.
type routerNotices struct{ router *router.Router }

func (n routerNotices) NotifyHuman(ctx context.Context, agentID, text string) error {
	_, err := n.router.Deliver(ctx, router.Notice{Kind: router.KindAgent, AgentID: agentID, Text: text})
	return err
}
