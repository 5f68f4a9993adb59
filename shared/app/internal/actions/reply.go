package actions

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// Replier wires the automatic reply path (wake.Replier) to the executor,
// the agents' Rocket.Chat accounts, Telegram and the router.
func (a *Actions) Replier() *wake.Replier {
	r := &wake.Replier{Chat: a.rcTool.Service(a.Tools), Accounts: a.Accounts(), Names: a.Core, Human: routerNotices{a.Router},
		Audit: a.Store, Scrubber: a.Scrubber, Log: a.Log}
	if a.Telegram != nil {
		r.Telegram = telegramChats{a.Telegram}
	}
	return r
}

// Accounts are the agents' Rocket.Chat accounts as the wake uses them.
func (a *Actions) Accounts() wake.Accounts {
	out := wake.Accounts{}
	for id, rc := range a.RC {
		acc := wake.Account{Messages: rc.Client, Files: rc.Client, Rules: rc.Rules, MaxWakes: rc.MaxWakes}
		if c, ok := a.Config.Agent(id); ok && c.Tools.RocketChat != nil {
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
