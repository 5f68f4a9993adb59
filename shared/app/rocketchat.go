package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/switchboard-dev/switchboard/shared/adapters/lambdainvoke"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/rctool"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// Timing of agent runs. The agent-worker Lambda has 600 s: a wait for a busy
// agent plus one run and its reply fit in it. A run's lease ends at its
// deadline plus runSlack, and its wake claim soon after, so a crashed run's
// agent and message are free again within minutes. SWITCHBOARD_RUN_TIMEOUT
// and SWITCHBOARD_AGENT_WAIT override the first two (tests use seconds).
const (
	waitForAgent = 2 * time.Minute
	runTimeout   = 7 * time.Minute
	runSlack     = 15 * time.Second
)

// wakeTiming reads the run timing, with the defaults above.
func (a *App) wakeTiming() (wait, run time.Duration, err error) {
	wait, run = waitForAgent, runTimeout
	for _, v := range []struct {
		env string
		dst *time.Duration
	}{{"SWITCHBOARD_AGENT_WAIT", &wait}, {"SWITCHBOARD_RUN_TIMEOUT", &run}} {
		if s := a.getenv(v.env); s != "" {
			d, perr := time.ParseDuration(s)
			if perr != nil || d <= 0 {
				return 0, 0, fmt.Errorf("app: %s=%q is not a positive duration (e.g. 7m, 30s)", v.env, s)
			}
			*v.dst = d
		}
	}
	return wait, run, nil
}

// retryDelays are the local pool's waits before each retry of a failed
// wake: Lambda's by default, SWITCHBOARD_WAKE_RETRY_DELAYS (comma-separated
// durations, "" entries not allowed, "none" for no retries) otherwise.
func (a *App) retryDelays() ([]time.Duration, error) {
	s := a.getenv("SWITCHBOARD_WAKE_RETRY_DELAYS")
	switch s {
	case "":
		return wake.LambdaRetryDelays, nil
	case "none":
		return nil, nil
	}
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("app: SWITCHBOARD_WAKE_RETRY_DELAYS=%q: want durations like 1m,2m", s)
		}
		out = append(out, d)
	}
	return out, nil
}

// rcAgent is one agent's Rocket.Chat side.
type rcAgent struct {
	client   *rocketchat.Client
	rules    wake.Rules
	maxWakes int
	maxMsgs  int
	lookback time.Duration
}

// setupRocketChat builds a client per agent with a RocketChat block, the
// dispatcher (async Lambda invoke in AWS, an in-process pool locally), the
// worker, the webhook receiver and the poller.
func (a *App) setupRocketChat(awsCfg aws.Config, hc *http.Client) error {
	a.rc = map[string]*rcAgent{}
	var hookAgents []wake.WebhookAgent
	for _, ag := range a.Config.Agents {
		t := ag.Tools.RocketChat
		if t == nil {
			continue
		}
		c, err := rocketchat.New(t.BaseURL, t.UserID, t.AuthToken, hc, rocketchat.WithScrubber(a.Scrubber))
		if err != nil {
			return fmt.Errorf("app: agent %s: RocketChat: %w", ag.ID, err)
		}
		rules := wake.Rules{Username: t.Username, UserID: t.UserID, AgentUsernames: t.AgentUsernames,
			AllowedRooms: t.AllowedRooms, RespondToAllRooms: t.RespondToAllRooms, MentionOnly: t.MentionOnly}
		a.rc[ag.ID] = &rcAgent{client: c, rules: rules, maxWakes: t.MaxWakesPerRoomPerHour,
			maxMsgs: t.MaxMessagesPerRoom, lookback: time.Duration(t.InitialLookbackMinutes) * time.Minute}
		hookAgents = append(hookAgents, wake.WebhookAgent{ID: ag.ID, UserID: t.UserID, Username: t.Username,
			AgentUsernames: t.AgentUsernames, RespondToAllRooms: t.RespondToAllRooms, MentionOnly: t.MentionOnly})
	}

	wait, run, err := a.wakeTiming()
	if err != nil {
		return err
	}
	slack := min(runSlack, run/4) // short runs (tests) get a short slack
	claimFor := wake.ClaimWindow(wait, run, slack)
	wakes := &sb.WakeClaims{KV: a.Store.KV(), Keep: wake.ClaimTTL}
	preparer := &wake.Preparer{Counters: a.Store, Claims: a.Store, Wakes: wakes, Log: a.Log, Loc: time.UTC, Now: time.Now}
	a.Worker = &wake.Worker{
		Leases:  a.Store,
		Claims:  wakes,
		Notes:   a.Store,
		RunFor:  run,
		WaitFor: wait,
		Slack:   slack,
		Log:     a.Log,
		Prepare: func(ctx context.Context, job wake.Job) (wake.Job, bool, error) {
			rc, ok := a.rc[job.AgentID]
			if !ok {
				return job, false, sb.E("app.prepare", sb.ENOTFOUND, fmt.Sprintf("agent %q has no RocketChat block", job.AgentID))
			}
			return preparer.Prepare(ctx, job, rc.client, rc.rules, rc.maxWakes)
		},
		Run:        a.runJob,
		Reply:      a.reply,
		Fallback:   a.replyByRouter,
		Attach:     a.replyAsFile,
		MaxMessage: a.Config.Instance.RocketChat.MaxMessageLength,
		MaxParts:   a.Config.Instance.RocketChat.MaxReplyParts,
	}

	if fn := a.getenv(deploy.FunctionEnvVar("agent-worker")); fn != "" {
		a.Dispatcher = &lambdainvoke.Dispatcher{Client: lambda.NewFromConfig(awsCfg), Function: fn}
	} else {
		workers := a.Config.Instance.Dev.Workers
		if workers == 0 {
			workers = 4
		}
		delays, err := a.retryDelays()
		if err != nil {
			return err
		}
		a.pool = wake.NewPool(workers, 256, a.Worker.Handle, a.Log)
		a.pool.SetRetryDelays(delays)
		a.Dispatcher = a.pool
	}
	a.Receiver = wake.NewReceiver(a.Config.Instance.RocketChat.WebhookTokens, hookAgents, wakes, a.Dispatcher, a.Log)
	a.Receiver.ClaimFor = claimFor
	a.poller = &wake.Poller{KV: a.Store.KV(), Counters: a.Store, Claims: a.Store, Wakes: wakes, ClaimFor: claimFor,
		Dispatch: a.Dispatcher, Log: a.Log, Loc: time.UTC, Now: time.Now}
	return nil
}

// rocketChatAgent gives the RocketChat tool an agent's client and limits.
func (a *App) rocketChatAgent(agentID string) (rctool.Agent, bool) {
	rc, ok := a.rc[agentID]
	c, _ := a.Config.Agent(agentID)
	if !ok || c == nil || c.Tools.RocketChat == nil {
		return rctool.Agent{}, false
	}
	t := c.Tools.RocketChat
	return rctool.Agent{Client: rc.client, Username: t.Username, AllowedRooms: t.AllowedRooms,
		DefaultRoom: t.DefaultRoom, MaxUploadMB: t.MaxUploadMB, MaxDownloadMB: t.MaxDownloadMB,
		AllowDangerousDownloads: t.AllowDangerousDownloads}, true
}

// pollRocketChat is the rocketchat-poll job.
func (a *App) pollRocketChat(ctx context.Context) (string, error) {
	var agents []wake.PollAgent
	for _, ag := range a.Config.Agents {
		rc, ok := a.rc[ag.ID]
		if !ok {
			continue
		}
		agents = append(agents, wake.PollAgent{ID: ag.ID, Rules: rc.rules, Chat: rc.client,
			MaxMessages: rc.maxMsgs, Lookback: rc.lookback, MaxWakesPerHour: rc.maxWakes})
	}
	st, err := a.poller.Tick(ctx, agents)
	return fmt.Sprintf("%d agents, %d rooms with news, %d messages, %d wakes, %d throttled, %d rate-limited",
		st.Agents, st.Rooms, st.Messages, st.Wakes, st.Throttled, st.RateLimited), err
}

// runJob runs the woken agent.
func (a *App) runJob(ctx context.Context, job wake.Job) (agentrun.Result, error) {
	ag, err := a.agent(job.AgentID)
	if err != nil {
		return agentrun.Result{}, err
	}
	if over, err := a.overBudget(ctx, job.AgentID); err != nil || over {
		// No run: the human was told once through the router; the
		// worker tells the room once a day.
		return agentrun.Result{Outcome: wake.OutcomeBudget}, err
	}
	// The worker gave ctx the run's deadline.
	if job.ReplyTo != nil {
		ctx = replyContext(ctx, job.ReplyTo)
	}
	return a.Engine.Run(ctx, ag, job.Text, job.Parent)
}

// reply posts the run's final answer where the agent was woken (RC8),
// through the tool path so that it is audited like any other post; the
// router origin marks it as a system action.
func (a *App) reply(ctx context.Context, job wake.Job, run sb.RunContext, text string) error {
	if chat := job.ReplyTo.TelegramChatID; chat != "" {
		return a.replyTelegram(ctx, job.AgentID, chat, text)
	}
	args := map[string]string{"room": job.ReplyTo.RoomID, "text": text}
	action := "send_message"
	if job.ReplyTo.ThreadID != "" {
		action, args["tmid"] = "reply", job.ReplyTo.ThreadID
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return err
	}
	env := a.Tools.Invoke(ctx, sb.ToolCall{AgentID: job.AgentID, Tool: "RocketChat", Action: action,
		Args: raw, Run: run, Origin: sb.OriginRouter})
	if env.Status != "ok" {
		// Temporary refusals (429, 5xx, no answer) are worth another try;
		// the worker retries those and hands the rest to the router.
		code := sb.EUNAVAILABLE
		switch s := env.HTTPStatus; {
		case s == http.StatusTooManyRequests:
			code = sb.ERATELIMITED
		case s >= 400 && s < 500:
			code = sb.EINVALID
		case env.Status == "pending_approval":
			code = sb.ECONFLICT
		}
		return sb.E("app.reply", code, env.Error)
	}
	return nil
}

// replyAsFile posts an answer too long for a few messages as a Markdown
// file (rooms.media + rooms.mediaConfirm) with caption as its message, and
// audits it like the RocketChat tool's send_file.
func (a *App) replyAsFile(ctx context.Context, job wake.Job, run sb.RunContext, text, caption string) error {
	rc, ok := a.rc[job.AgentID]
	if !ok {
		return sb.E("app.reply", sb.EINVALID, fmt.Sprintf("agent %q has no RocketChat block", job.AgentID))
	}
	name := "answer-" + run.RunID + ".md"
	if run.RunID == "" {
		name = "answer.md"
	}
	start := time.Now()
	text = a.Scrubber.String(text) // the client scrubs texts, not file contents
	_, err := rc.client.UploadFile(ctx, job.ReplyTo.RoomID, name, "text/markdown", strings.NewReader(text), int64(len(text)), caption, job.ReplyTo.ThreadID)
	args, _ := json.Marshal(map[string]any{"room": job.ReplyTo.RoomID, "fileName": name, "tmid": job.ReplyTo.ThreadID, "bytes": len(text)})
	entry := sb.AuditEntry{ID: sb.NewID(start), At: start, Run: run, AgentID: job.AgentID, Tool: "RocketChat",
		Action: "send_file", Args: string(args), Decision: sb.DecisionAuto, Outcome: sb.OutcomeOK, Duration: time.Since(start)}
	if err != nil {
		entry.Outcome, entry.Error = sb.OutcomeError, a.Scrubber.String(sb.ErrorMessage(err))
	}
	if aerr := a.Store.Append(context.WithoutCancel(ctx), entry); aerr != nil {
		a.Log.ErrorContext(ctx, "audit entry of a reply file not written", "agent", job.AgentID, "err", aerr)
	}
	return err
}

// replyByRouter hands an answer that Rocket.Chat would not take (after the
// client's retries) to the human through the router, with a link to the
// room, so that it is not lost.
func (a *App) replyByRouter(ctx context.Context, job wake.Job, text string) error {
	where := job.ReplyTo.RoomName
	if where == "" {
		where = job.ReplyTo.RoomID
	}
	if link := a.roomLink(job.AgentID, job.ReplyTo); link != "" {
		where += " (" + link + ")"
	}
	n := router.Notice{Kind: router.KindAgent, AgentID: job.AgentID,
		Text: fmt.Sprintf("This answer could not be posted in %s:\n\n%s", where, text)}
	_, err := a.Router.Deliver(ctx, n)
	return err
}

// roomLink is the web link to a room (and thread), or "" when the agent has
// no Rocket.Chat base URL.
func (a *App) roomLink(agentID string, to *wake.ReplyTo) string {
	c, ok := a.Config.Agent(agentID)
	if !ok || c.Tools.RocketChat == nil || c.Tools.RocketChat.BaseURL == "" {
		return ""
	}
	base := strings.TrimRight(c.Tools.RocketChat.BaseURL, "/")
	var link string
	switch rocketchat.RoomType(to.RoomType) {
	case rocketchat.Group:
		link = base + "/group/" + url.PathEscape(to.RoomName)
	case rocketchat.Direct:
		link = base + "/direct/" + url.PathEscape(to.RoomID)
	default:
		name := to.RoomName
		if name == "" {
			name = to.RoomID
		}
		link = base + "/channel/" + url.PathEscape(name)
	}
	if to.ThreadID != "" {
		link += "?msg=" + url.QueryEscape(to.ThreadID)
	}
	return link
}

// Close stops the local worker pool, letting queued runs finish until ctx ends.
func (a *App) Close(ctx context.Context) {
	if a.pool != nil {
		a.pool.Close(ctx)
	}
}
