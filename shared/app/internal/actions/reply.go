package actions

import (
	"context"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// Replier wires the automatic reply path (wake.Replier) to the executor,
// the agents' Rocket.Chat clients, Telegram and the router.
func (a *Actions) Replier() *wake.Replier {
	r := &wake.Replier{
		Tools: a.Tools,
		Files: func(agentID string) (wake.FileUploader, bool) {
			rc, ok := a.RC[agentID]
			if !ok {
				return nil, false
			}
			return rc.Client, true
		},
		BaseURL: func(agentID string) string {
			if c, ok := a.Config.Agent(agentID); ok && c.Tools.RocketChat != nil {
				return c.Tools.RocketChat.BaseURL
			}
			return ""
		},
		Notify: func(ctx context.Context, agentID, text string) error {
			_, err := a.Router.Deliver(ctx, router.Notice{Kind: router.KindAgent, AgentID: agentID, Text: text})
			return err
		},
		Audit: a.Store,
		Scrub: a.Scrubber.String,
		Log:   a.Log,
	}
	if a.Telegram != nil {
		r.Telegram = func(ctx context.Context, agentID, chatID, text string) error {
			_, err := a.Telegram.SendLong(ctx, sb.TelegramText{ChatID: chatID, Text: a.AgentName(agentID) + ": " + text, DisableWebPagePreview: true})
			return err
		}
	}
	return r
}
