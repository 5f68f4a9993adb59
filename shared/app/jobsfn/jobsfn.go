// Package jobsfn builds the jobs function: the scheduled jobs an
// EventBridge schedule names. It builds the core, the decide and the
// actions parts (the jobs poll Rocket.Chat and Telegram, clean up
// Nextcloud, expire approvals and watch the Taskboard); no model provider
// is linked into it.
package jobsfn

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/app/internal/actions"
	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	"github.com/switchboard-dev/switchboard/shared/app/internal/decide"
	"github.com/switchboard-dev/switchboard/shared/app/internal/spans"
	"github.com/switchboard-dev/switchboard/shared/app/telegramwebhookfn"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/health"
	"github.com/switchboard-dev/switchboard/shared/usecases/jobs"
	"github.com/switchboard-dev/switchboard/shared/usecases/tginbound"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// Build runs the job an EventBridge schedule names.
func Build(ctx context.Context, getenv func(string) string) (any, error) {
	a, err := actions.ForFunction(ctx, "jobs", getenv)
	if err != nil {
		return nil, err
	}
	rec := spans.Start(a)
	r, err := Runner(a, telegramwebhookfn.Inbound(a.Decide))
	if err != nil {
		return nil, err
	}
	return spans.After(Handler(r), rec), nil
}

// Handler runs the job an EventBridge schedule names ({"job":"heartbeat"}).
// A failing job returns an error so that Lambda's retry and the error
// alarm see it.
func Handler(r *jobs.Runner) func(context.Context, jobs.Event) (sb.JobRun, error) {
	return func(ctx context.Context, ev jobs.Event) (sb.JobRun, error) {
		return r.Run(ctx, ev.Job, "schedule")
	}
}

// Runner is the runner of every scheduled job, over a; tg handles the
// updates the telegram-poll job fetches.
func Runner(a *actions.Actions, tg *tginbound.Inbound) (*jobs.Runner, error) {
	c := a.Core
	j := &jobSet{a: a, c: c, d: a.Decide, tg: tg,
		poller: &wake.Poller{KV: c.Store.KV(), Counters: c.Store, Claims: c.Store, Wakes: c.Wakes, ClaimFor: c.ClaimFor,
			Dispatch: c.Dispatcher, Log: c.Log, Loc: time.UTC, Now: time.Now}}
	return jobs.New(map[string]jobs.Func{
		"heartbeat":         j.heartbeat,
		"rocketchat-poll":   j.pollRocketChat,
		"rocketchat-health": j.healthCheck,
		"nextcloud-cleanup": nextcloudCleanup(a).Run,
		"approvals-expire":  j.expireApprovals,
		"telegram-poll":     j.pollTelegram,
		"task-watchdog":     a.Taskboard.Watchdog,
		"task-wakes":        a.Taskboard.RunDeferredWakes,
	}, c.Store, c.Log)
}

// nextcloudCleanup is the nextcloud-cleanup job over the agents that have
// Nextcloud.
func nextcloudCleanup(a *actions.Actions) *jobs.NextcloudCleanup {
	c := a.Core
	var agents []string
	for _, ag := range c.Config.Agents {
		if _, ok := a.Nextcloud[ag.ID]; ok {
			agents = append(agents, ag.ID)
		}
	}
	return &jobs.NextcloudCleanup{Agents: agents, Cleaner: a.NextcloudTool, Audit: c.Store, Scrub: c.Scrubber, Log: c.Log, Now: time.Now}
}

// jobSet holds what the jobs run on.
type jobSet struct {
	a      *actions.Actions
	c      *core.Core
	d      *decide.Decide
	tg     *tginbound.Inbound
	poller *wake.Poller // one per process: it remembers Rocket.Chat rate limits between ticks
}

// heartbeat checks that every table and the bucket answer.
func (j *jobSet) heartbeat(ctx context.Context) (string, error) {
	if err := j.c.Ping(ctx); err != nil {
		return "", err
	}
	if _, err := j.a.Blobs.List(ctx, "", 1); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d tables and bucket %s answer", len(deploy.Tables), j.a.Bucket), nil
}

// pollRocketChat is the rocketchat-poll job.
func (j *jobSet) pollRocketChat(ctx context.Context) (string, error) {
	var agents []wake.PollAgent
	for _, ag := range j.c.Config.Agents {
		rc, ok := j.c.RC[ag.ID]
		if !ok {
			continue
		}
		agents = append(agents, wake.PollAgent{ID: ag.ID, Rules: rc.Rules, Chat: rc.Client,
			MaxMessages: rc.MaxMsgs, Lookback: rc.Lookback, MaxWakesPerHour: rc.MaxWakes})
	}
	st, err := j.poller.Tick(ctx, agents)
	return fmt.Sprintf("%d agents, %d rooms with news, %d messages, %d wakes, %d throttled, %d rate-limited",
		st.Agents, st.Rooms, st.Messages, st.Wakes, st.Throttled, st.RateLimited), err
}

// healthCheck is the rocketchat-health job.
func (j *jobSet) healthCheck(ctx context.Context) (string, error) {
	base := j.c.Config.Instance.RocketChat.BaseURL
	if base == "" {
		if id := j.c.FirstRocketChatAgent(); id != "" {
			ag, _ := j.c.Config.Agent(id)
			base = ag.Tools.RocketChat.BaseURL
		}
	}
	if base == "" {
		return "no Rocket.Chat configured; nothing to check", nil
	}
	// /api/info needs no login; an empty identity is fine.
	probe, err := rocketchat.NewAnonymous(base, j.c.HTTP)
	if err != nil {
		return "", err
	}
	h := &health.Checker{
		Info:   probe.Info,
		KV:     j.c.Store.KV(),
		Key:    core.RocketChatHealthKey,
		Notify: j.d.Router.Without(swcfg.ChannelRocketChat),
		Loc:    time.UTC,
		Now:    time.Now,
		Log:    j.c.Log,
	}
	return h.Tick(ctx)
}

// expireApprovals is the approvals-expire job: pending approvals past their
// expiry are closed and their agents told; approved calls that never
// started and stuck ones are closed and reported.
func (j *jobSet) expireApprovals(ctx context.Context) (string, error) {
	if j.d.Approvals == nil {
		return "approvals are not set up", nil
	}
	n, err := j.d.Approvals.ExpireDue(ctx)
	return fmt.Sprintf("%d approvals expired or closed", n), err
}

// pollTelegram is the telegram-poll job.
func (j *jobSet) pollTelegram(ctx context.Context) (string, error) {
	if j.d.Telegram == nil {
		return "no Telegram bot configured", nil
	}
	p := &tginbound.Poller{Client: j.d.Telegram, KV: j.c.Store.KV(), In: j.tg}
	return p.Tick(ctx)
}
