package actions

import (
	"context"
	"fmt"
	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/usecases/health"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// pollRocketChat is the rocketchat-poll job.
func (a *Actions) pollRocketChat(ctx context.Context) (string, error) {
	var agents []wake.PollAgent
	for _, ag := range a.Config.Agents {
		rc, ok := a.RC[ag.ID]
		if !ok {
			continue
		}
		agents = append(agents, wake.PollAgent{ID: ag.ID, Rules: rc.Rules, Chat: rc.Client,
			MaxMessages: rc.MaxMsgs, Lookback: rc.Lookback, MaxWakesPerHour: rc.MaxWakes})
	}
	st, err := a.poller.Tick(ctx, agents)
	return fmt.Sprintf("%d agents, %d rooms with news, %d messages, %d wakes, %d throttled, %d rate-limited",
		st.Agents, st.Rooms, st.Messages, st.Wakes, st.Throttled, st.RateLimited), err
}

// healthCheck is the rocketchat-health job.
func (a *Actions) healthCheck(ctx context.Context) (string, error) {
	base := a.Config.Instance.RocketChat.BaseURL
	if base == "" {
		if id := a.FirstRocketChatAgent(); id != "" {
			c, _ := a.Config.Agent(id)
			base = c.Tools.RocketChat.BaseURL
		}
	}
	if base == "" {
		return "no Rocket.Chat configured; nothing to check", nil
	}
	// /api/info needs no login; an empty identity is fine.
	probe, err := rocketchat.NewAnonymous(base, a.HTTP)
	if err != nil {
		return "", err
	}
	c := &health.Checker{
		Info:   probe.Info,
		KV:     a.Store.KV(),
		Key:    core.RocketChatHealthKey,
		Notify: a.Router.Without(swcfg.ChannelRocketChat),
		Loc:    time.UTC,
		Now:    time.Now,
		Log:    a.Log,
	}
	return c.Tick(ctx)
}
