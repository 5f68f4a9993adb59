package app

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/health"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// setupRouter builds the channel router from instance.channels (CR1).
func (a *App) setupRouter() {
	var channels []router.Channel
	for _, name := range a.Config.Instance.Channels {
		switch name {
		case swcfg.ChannelRocketChat:
			channels = append(channels, &router.RocketChatChannel{
				Human:   a.Config.Instance.Human.RocketChatUsername,
				Clients: a.rocketChatClient,
				Default: a.firstRocketChatAgent(),
			})
		case swcfg.ChannelTelegram:
			if ch := a.telegramChannel(); ch != nil {
				channels = append(channels, ch)
			}
		}
	}
	a.Router = router.New(channels, a.Store, a.Log)
}

// telegramChannel is nil when no bot token or chat is configured.
func (a *App) telegramChannel() router.Channel {
	t := a.Config.Instance.Telegram
	if a.telegram == nil || t.ChatID == "" {
		return nil
	}
	return &router.TelegramChannel{Client: a.telegram, ChatID: t.ChatID, Names: a.agentName}
}

func (a *App) agentName(id string) string {
	if c, ok := a.Config.Agent(id); ok && c.Name != "" {
		return c.Name
	}
	return id
}

func (a *App) rocketChatClient(agentID string) (*rocketchat.Client, bool) {
	rc, ok := a.rc[agentID]
	if !ok {
		return nil, false
	}
	return rc.client, true
}

func (a *App) firstRocketChatAgent() string {
	for _, ag := range a.Config.Agents {
		if ag.Tools.RocketChat != nil {
			return ag.ID
		}
	}
	return ""
}

// healthCheck is the rocketchat-health job (RC12).
func (a *App) healthCheck(ctx context.Context) (string, error) {
	base := a.Config.Instance.RocketChat.BaseURL
	if base == "" {
		if id := a.firstRocketChatAgent(); id != "" {
			c, _ := a.Config.Agent(id)
			base = c.Tools.RocketChat.BaseURL
		}
	}
	if base == "" {
		return "no Rocket.Chat configured; nothing to check", nil
	}
	// /api/info needs no login; an empty identity is fine.
	probe, err := rocketchat.NewAnonymous(base, a.http)
	if err != nil {
		return "", err
	}
	c := &health.Checker{
		Info:   probe.Info,
		KV:     a.Store.KV(),
		Key:    "health#rocketchat",
		Notify: a.Router.Without(swcfg.ChannelRocketChat),
		Loc:    time.UTC,
		Now:    time.Now,
		Log:    a.Log,
	}
	return c.Tick(ctx)
}

// overBudget applies the daily budget (AG3): when the agent's receipts of
// today (UTC) reach dailyBudgetUsd it takes no wakes until tomorrow, and the
// human is told once per agent and day.
func (a *App) overBudget(ctx context.Context, agentID string) (bool, error) {
	c, ok := a.Config.Agent(agentID)
	if !ok || c.DailyBudgetUSD <= 0 {
		return false, nil
	}
	day := time.Now().UTC().Truncate(24 * time.Hour)
	spent, err := a.Store.AgentCostSince(ctx, agentID, day)
	if err != nil || spent < c.DailyBudgetUSD {
		return false, err
	}
	first, err := a.Store.Claim(ctx, "budget#"+agentID+"#"+day.Format("2006-01-02"), day.Add(48*time.Hour))
	if err != nil {
		return true, err
	}
	if first {
		name := c.Name
		if name == "" {
			name = c.ID
		}
		text := fmt.Sprintf("%s reached its daily budget of $%.2f ($%.2f spent today) and takes no new requests until 00:00 UTC.",
			name, c.DailyBudgetUSD, spent)
		if _, err := a.Router.Deliver(ctx, router.Notice{Kind: router.KindBudget, Text: text}); err != nil {
			// Give the claim back so that the next wake tries again: the
			// human must hear about it once, not never.
			a.Log.ErrorContext(ctx, "budget notice not delivered; will retry on the next wake", "agent", agentID, "err", err)
			if uerr := a.Store.Unclaim(context.WithoutCancel(ctx), "budget#"+agentID+"#"+day.Format("2006-01-02")); uerr != nil {
				a.Log.ErrorContext(ctx, "budget notice claim could not be given back", "agent", agentID, "err", uerr)
			}
		}
	}
	return true, nil
}

// replyTelegram answers a message that came in over Telegram (CR3).
func (a *App) replyTelegram(ctx context.Context, agentID, chatID, text string) error {
	if a.telegram == nil {
		return sb.E("app.reply", sb.EINVALID, "instance.telegram.botToken is not set")
	}
	_, err := a.telegram.SendLong(ctx, telegram.Message{ChatID: chatID, Text: a.agentName(agentID) + ": " + text, DisableWebPagePreview: true})
	return err
}
