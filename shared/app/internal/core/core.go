// Package core is what every function builds first: the config, the
// logger and scrubber, the AWS config, the DynamoDB store, the agents'
// Rocket.Chat clients and wake rules, and the dispatcher.
// It links no model provider, no Nextcloud, no S3 and no tool executor, so
// that the webhook receivers stay small; the other parts (decide, actions,
// agents) hold it in a field. Internal: only the builders under shared/app
// use it.
package core

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/adapters/awsconfig"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/adapters/secrets"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfntoken"
	"github.com/switchboard-dev/switchboard/shared/adapters/wakequeue"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/control"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// EnvPublicBaseURL stands in for an empty instance.publicBaseUrl; the dev
// runtime sets it to its own listener so that approval links work locally.
const EnvPublicBaseURL = "SWITCHBOARD_PUBLIC_BASE_URL"

// PublicBaseURL is instance.publicBaseUrl, or EnvPublicBaseURL when that is
// empty, without a trailing slash.
func (c *Core) PublicBaseURL() string {
	base := c.Config.Instance.PublicBaseURL
	if base == "" {
		base = c.Getenv(EnvPublicBaseURL)
	}
	return strings.TrimRight(base, "/")
}

// StepFunctionsConfig is the AWS config for Step Functions: the endpoint
// from AWS_ENDPOINT_URL_SFN or AWS_ENDPOINT_URL, and local credentials when
// that endpoint is a local runtime that checks no signature (make dev sets
// none).
func (c *Core) StepFunctionsConfig(ctx context.Context) aws.Config {
	endpoint := c.Getenv("AWS_ENDPOINT_URL_SFN")
	if endpoint == "" {
		endpoint = c.Getenv("AWS_ENDPOINT_URL")
	}
	return awsconfig.LocalCredentials(ctx, c.AWS, endpoint)
}

// RocketChatHealthKey is the KV key of the rocketchat-health job's state.
const RocketChatHealthKey = "health#rocketchat"

// DefaultConfigFile is used when SWITCHBOARD_CONFIG is unset: the config
// packaged in a function's zip. (The stack sets the variable to it anyway;
// the dev runtime and the CLI always set it, by devrt.ConfigFile's rule.)
const DefaultConfigFile = deploy.ConfigFileName

// httpTimeout bounds every call to a third-party server.
const httpTimeout = 30 * time.Second

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

// RCAgent is one agent's Rocket.Chat side.
type RCAgent struct {
	Client   *rocketchat.Client
	Rules    wake.Rules
	MaxWakes int
	MaxMsgs  int
	Lookback time.Duration
}

// Core holds what every function builds once per cold start.
type Core struct {
	Config   *swcfg.Config
	Log      *slog.Logger
	Scrubber *scrub.Scrubber
	AWS      aws.Config
	Dynamo   *ddb.Client
	Store    *dynamo.Store
	HTTP     *http.Client
	Getenv   func(string) string

	RC    map[string]*RCAgent
	Wakes *sb.WakeClaims

	// Run timing (see the constants above).
	Wait, Run, Slack, ClaimFor time.Duration

	// Dispatcher queues wakes: the agent-worker Lambda in AWS; the caller
	// sets it (the dev runtime's in-process pool) when that is not named.
	Dispatcher sb.WakeDispatcher
	// WakeQueue is the dispatcher when the wake queue feeds the
	// agent-worker (nil otherwise); the agent-worker sets a failed wake's
	// retry delay through it.
	WakeQueue *wakequeue.Queue
	// Telemetry records spans (nil: none, as in the receivers); the
	// functions that run agents and tools set it (shared/app/internal/spans).
	Telemetry sb.Telemetry

	control *control.Control
}

// LoadAWS builds the AWS SDK config: awsconfig.FromEnvironment in a
// Lambda function, the SDK's full default chain (awsprofile.Load) in the
// dev runtime and the CLI, which the functions must not link.
type LoadAWS func(context.Context) (aws.Config, error)

// New reads the config and builds the core. getenv is os.Getenv in
// production; tests pass their own.
func New(ctx context.Context, getenv func(string) string, loadAWS LoadAWS) (*Core, error) {
	c := &Core{Getenv: getenv, HTTP: &http.Client{Timeout: httpTimeout}}
	awsCfg, err := loadAWS(ctx) // once per cold start; every client is built from it
	if err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	c.AWS = awsCfg
	path := getenv(deploy.EnvConfig)
	if path == "" {
		path = DefaultConfigFile
	}
	resolver := swcfg.Chain{SecretsManager: secrets.NewResolver(secrets.NewClient(awsCfg))}
	if c.Config, err = swcfg.Load(ctx, path, resolver); err != nil {
		return nil, err
	}
	c.Scrubber = scrub.New(c.Config.Secrets())
	c.Log = slog.New(scrub.NewHandler(slog.NewJSONHandler(os.Stderr, nil), c.Scrubber)).
		With("instance", c.Config.Instance.Name)

	c.Dynamo = dynamo.NewClientFromConfig(ctx, awsCfg)
	c.Store = dynamo.New(c.Dynamo, getenv)
	if days := c.Config.Instance.AuditRetentionDays; days > 0 {
		c.Store.AuditRetention = time.Duration(days) * 24 * time.Hour
	}
	if days := c.Config.Instance.AgentMessageRetentionDays; days > 0 { // 0 keeps them forever
		c.Store.AgentMessageRetention = time.Duration(days) * 24 * time.Hour
	}
	if err := c.setupRocketChat(); err != nil {
		return nil, err
	}
	// Wakes go to the agent-worker through the wake queue (deploy.WakeQueue).
	if q := getenv(deploy.EnvWakeQueueURL); q != "" {
		c.WakeQueue = wakequeue.New(awsCfg, q, getenv)
		c.Dispatcher = c.WakeQueue
	}
	return c, nil
}

// ForFunction builds the core of Lambda function fn. Where the deploy
// catalogue does not let fn hand out wakes, its dispatcher says so on a
// wake (NoDispatcher).
func ForFunction(ctx context.Context, fn string, getenv func(string) string) (*Core, error) {
	c, err := New(ctx, getenv, awsconfig.FromEnvironment)
	if err != nil {
		return nil, err
	}
	if c.Dispatcher == nil {
		c.Dispatcher = NoDispatcher{Function: fn}
	}
	return c, nil
}

// NoDispatcher stands in for the dispatcher in a function that the deploy
// catalogue does not let hand out wakes (deploy.SendsWakes): a wake there
// is a wiring mistake, said as such.
type NoDispatcher struct{ Function string }

// Dispatch implements sb.WakeDispatcher.
func (d NoDispatcher) Dispatch(context.Context, sb.WakeJob) error {
	return sb.E("app.dispatch", sb.EUNAVAILABLE, fmt.Sprintf(
		"%s cannot wake agents: %s is not set (the deploy catalogue's SendsWakes gives it to the functions that hand out wakes)",
		d.Function, deploy.EnvWakeQueueURL))
}

// wakeTiming reads the run timing, with the defaults above.
func (c *Core) wakeTiming() (wait, run time.Duration, err error) {
	wait, run = waitForAgent, runTimeout
	for _, v := range []struct {
		env string
		dst *time.Duration
	}{{"SWITCHBOARD_AGENT_WAIT", &wait}, {"SWITCHBOARD_RUN_TIMEOUT", &run}} {
		if s := c.Getenv(v.env); s != "" {
			d, perr := time.ParseDuration(s)
			if perr != nil || d <= 0 {
				return 0, 0, fmt.Errorf("app: %s=%q is not a positive duration (e.g. 7m, 30s)", v.env, s)
			}
			*v.dst = d
		}
	}
	return wait, run, nil
}

// RetryDelays are the local pool's waits before each retry of a failed
// wake: Lambda's by default, SWITCHBOARD_WAKE_RETRY_DELAYS (comma-separated
// durations, "" entries not allowed, "none" for no retries) otherwise.
func (c *Core) RetryDelays() ([]time.Duration, error) {
	s := c.Getenv("SWITCHBOARD_WAKE_RETRY_DELAYS")
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

// setupRocketChat builds a client per agent with a RocketChat block and the
// wake claims and timing shared by the receiver, the poller and the worker.
func (c *Core) setupRocketChat() error {
	c.RC = map[string]*RCAgent{}
	for _, ag := range c.Config.Agents {
		t := ag.Tools.RocketChat
		if t == nil {
			continue
		}
		cl, err := rocketchat.New(t.BaseURL, t.UserID, t.AuthToken, c.HTTP, rocketchat.WithScrubber(c.Scrubber))
		if err != nil {
			return fmt.Errorf("app: agent %s: RocketChat: %w", ag.ID, err)
		}
		rules := wake.Rules{Username: t.Username, UserID: t.UserID, AgentUsernames: t.AgentUsernames,
			AllowedRooms: t.AllowedRooms, RespondToAllRooms: t.RespondToAllRooms, MentionOnly: t.MentionOnly}
		c.RC[ag.ID] = &RCAgent{Client: cl, Rules: rules, MaxWakes: t.MaxWakesPerRoomPerHour,
			MaxMsgs: t.MaxMessagesPerRoom, Lookback: time.Duration(t.InitialLookbackMinutes) * time.Minute}
	}
	var err error
	if c.Wait, c.Run, err = c.wakeTiming(); err != nil {
		return err
	}
	c.Slack = min(runSlack, c.Run/4) // short runs (tests) get a short slack
	c.ClaimFor = wake.ClaimWindow(c.Wait, c.Run, c.Slack)
	c.Wakes = &sb.WakeClaims{KV: c.Store.KV(), Keep: wake.ClaimTTL}
	return nil
}

// AgentName is the agent's display name, or its id.
func (c *Core) AgentName(id string) string {
	if a, ok := c.Config.Agent(id); ok && a.Name != "" {
		return a.Name
	}
	return id
}

// DailyBudget implements agentrun.BudgetLimits: the agent's
// dailyBudgetUsd and its display name.
func (c *Core) DailyBudget(id string) (float64, string) {
	a, ok := c.Config.Agent(id)
	if !ok {
		return 0, id
	}
	return a.DailyBudgetUSD, c.AgentName(id)
}

// ChainBudget implements control.Limits: the agent's chainBudgetUsd,
// else the instance's (0 = no chain budget).
func (c *Core) ChainBudget(id string) float64 {
	if a, ok := c.Config.Agent(id); ok && a.ChainBudgetUSD != nil {
		return *a.ChainBudgetUSD
	}
	return c.Config.Instance.ChainBudgetUSD
}

// Control is the operator's pause, resume and stop and the chain budget,
// over the state table and the audit; built once. The parts that can
// tell the human (the router) set its Notifier.
func (c *Core) Control() *control.Control {
	if c.control == nil {
		c.control = &control.Control{KV: c.Store.KV(), Markers: c.Store, Receipts: c.Store, Audit: c.Store,
			Limits: c, Dispatch: c.Dispatcher, Log: c.Log}
		if base := c.PublicBaseURL(); base != "" {
			c.control.ChainLink = func(root string) string { return base + "/console/chain?root=" + url.QueryEscape(root) }
		}
	}
	return c.control
}

// StepFunctionsExecutions stops a stopped chain's pipeline executions
// (control.Executions) with signed DescribeExecution and StopExecution
// calls. The client is built per call: the dev runtime points
// AWS_ENDPOINT_URL_SFN at its local service after the functions are built,
// and a stop is rare. Only the functions the deploy catalogue lets stop
// executions (StoppedBy) set it on their Control.
type StepFunctionsExecutions struct{ Core *Core }

// Stop implements control.Executions.
func (x StepFunctionsExecutions) Stop(ctx context.Context, executionARN, cause string) (bool, error) {
	return sfntoken.New(x.Core.StepFunctionsConfig(ctx), x.Core.Getenv).Stop(ctx, executionARN, cause)
}

// AgentExists says whether the config has the agent.
func (c *Core) AgentExists(id string) bool { _, ok := c.Config.Agent(id); return ok }

// RocketChatClient is the agent's Rocket.Chat client, for posting.
func (c *Core) RocketChatClient(agentID string) (sb.ChatPoster, bool) {
	rc, ok := c.RC[agentID]
	if !ok {
		return nil, false
	}
	return rc.Client, true
}

// FirstRocketChatAgent is the first agent with a RocketChat block, or "".
func (c *Core) FirstRocketChatAgent() string {
	for _, ag := range c.Config.Agents {
		if ag.Tools.RocketChat != nil {
			return ag.ID
		}
	}
	return ""
}

// Ping checks that every table answers.
func (c *Core) Ping(ctx context.Context) error { return dynamo.Ping(ctx, c.Dynamo, c.Getenv) }
