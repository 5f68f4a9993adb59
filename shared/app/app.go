// Package app is the composition root: it reads the environment and the
// config once per cold start, builds the adapters (DynamoDB, S3, Secrets
// Manager) and the services on top of them. Every Lambda entry point, the dev
// runtime and the operator CLI build the same App, so there is one code path.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/switchboard-dev/switchboard/shared/adapters/bedrock"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/openai"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
	"github.com/switchboard-dev/switchboard/shared/tools/rctool"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
	"github.com/switchboard-dev/switchboard/shared/usecases/jobs"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
	"github.com/switchboard-dev/switchboard/shared/usecases/tginbound"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// Version is set at link time (-X); "dev" otherwise.
var Version = "dev"

// DefaultConfigFile is used when SWITCHBOARD_CONFIG is unset.
const DefaultConfigFile = "switchboard.yaml"

// App holds everything built once per process.
type App struct {
	Config   *swcfg.Config
	Log      *slog.Logger
	Scrubber *scrub.Scrubber
	Dynamo   *dynamodb.Client
	Store    *dynamo.Store
	Blobs    *s3blob.Store
	Bucket   string
	Tools    *tools.Executor
	Engine   *agentrun.Engine
	Jobs     *jobs.Runner

	// Nextcloud: per-agent clients and the tool (cleanup job).
	nc     map[string]nctool.Agent
	ncTool *nctool.Tool

	// Approvals (ST2/ST3) and Telegram inbound (CR3).
	Approvals  *approvals.Service
	TelegramIn *tginbound.Inbound

	// Router delivers to the human over the ordered channels (CR1).
	Router   *router.Router
	telegram *telegram.Client

	// Rocket.Chat: per-agent clients, the wake worker, where wakes go.
	Worker     *wake.Worker
	Dispatcher wake.Dispatcher
	Receiver   *wake.Receiver
	rc         map[string]*rcAgent
	poller     *wake.Poller
	pool       *wake.Pool

	awsCfg aws.Config
	http   *http.Client
	getenv func(string) string
}

// httpTimeout bounds every call to a third-party server.
const httpTimeout = 30 * time.Second

// New builds the App. getenv is os.Getenv in production; tests pass their own.
func New(ctx context.Context, getenv func(string) string) (*App, error) {
	a := &App{getenv: getenv, http: &http.Client{Timeout: httpTimeout}}
	awsCfg, err := dynamo.LoadAWSConfig(ctx) // once per cold start; every client is built from it
	if err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	a.awsCfg = awsCfg
	path := getenv(deploy.EnvConfig)
	if path == "" {
		path = DefaultConfigFile
	}
	resolver := swcfg.Chain{SecretsManager: swcfg.NewAWSResolver(secretsmanager.NewFromConfig(awsCfg))}
	if a.Config, err = swcfg.Load(ctx, path, resolver); err != nil {
		return nil, err
	}
	a.Scrubber = scrub.New(a.Config.Secrets())
	a.Log = slog.New(scrub.NewHandler(slog.NewJSONHandler(os.Stderr, nil), a.Scrubber)).
		With("instance", a.Config.Instance.Name)

	a.Dynamo = dynamo.NewClientFromConfig(ctx, awsCfg)
	a.Store = dynamo.New(a.Dynamo, getenv)
	if days := a.Config.Instance.AuditRetentionDays; days > 0 {
		a.Store.AuditRetention = time.Duration(days) * 24 * time.Hour
	}
	a.Bucket = getenv(deploy.EnvBucket)
	if a.Bucket == "" {
		return nil, fmt.Errorf("app: %s is not set; it names the workspace bucket (cdk deploy sets it; switchboard dev uses switchboard-dev)", deploy.EnvBucket)
	}
	a.Blobs = s3blob.New(s3blob.NewClientFromConfig(awsCfg), a.Bucket)

	policy, err := staging.New(a.Config.Instance.Staging)
	if err != nil {
		return nil, fmt.Errorf("app: config %s: instance.staging: %w", a.Config.File, err)
	}
	if err := a.setupRocketChat(awsCfg, a.http); err != nil {
		return nil, err
	}
	if t := a.Config.Instance.Telegram; t.BotToken != "" {
		if a.telegram, err = telegram.New(t.APIBaseURL, t.BotToken, a.http, telegram.WithScrubber(a.Scrubber)); err != nil {
			return nil, fmt.Errorf("app: config %s: instance.telegram: %w", a.Config.File, err)
		}
	}
	a.setupRouter()
	if err := a.setupNextcloud(a.http); err != nil {
		return nil, err
	}
	a.Tools, err = tools.New(tools.Options{
		Tools: []sb.Tool{
			workspace.NewTool(a.Blobs, a.workspaceLimit),
			rctool.New(a.rocketChatAgent, a.Blobs),
			a.ncTool,
			router.NewTool(a.Router),
		},
		Policy:  policy,
		Audit:   a.Store,
		Scrub:   a.Scrubber,
		Permits: a.permits,
		Log:     a.Log,
	})
	if err != nil {
		return nil, err
	}
	a.Engine = &agentrun.Engine{Tools: a.Tools, Receipts: a.Store}
	if err := a.setupApprovals(); err != nil {
		return nil, err
	}
	a.setupTelegramInbound()
	for _, ag := range a.Config.Agents {
		if _, err := a.agent(ag.ID); err != nil {
			return nil, err
		}
	}
	a.Jobs, err = jobs.New(map[string]jobs.Func{
		"heartbeat":         a.heartbeat,
		"rocketchat-poll":   a.pollRocketChat,
		"rocketchat-health": a.healthCheck,
		"nextcloud-cleanup": a.cleanupNextcloud,
		"approvals-expire":  a.expireApprovals,
		"telegram-poll":     a.pollTelegram,
	}, a.Store, a.Log)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// ToolsHandler serves GET /tools and POST /tools/invoke without auth; the
// caller wraps it (IAM in AWS, bearer token locally). Its answers are the
// calling agent's data under the tool contract (a share's token and
// generated password included), so the response scrubber lets them through
// (httpapi.Verbatim); the executor has scrubbed error texts and audit.
func (a *App) ToolsHandler() http.Handler {
	mux := http.NewServeMux()
	httpapi.ToolRoutes(mux, a.Tools, a.agentExists, a.Log)
	return httpapi.Verbatim(mux)
}

// Ask runs agentID on a human's message: the text is framed as untrusted
// (C7) before it reaches the model.
func (a *App) Ask(ctx context.Context, agentID, source, message string, parent *sb.RunContext) (agentrun.Result, error) {
	ag, err := a.agent(agentID)
	if err != nil {
		return agentrun.Result{}, err
	}
	if over, err := a.overBudget(ctx, agentID); err != nil {
		return agentrun.Result{}, err
	} else if over {
		return agentrun.Result{}, sb.E("app.ask", sb.EFORBIDDEN, fmt.Sprintf(
			"agent %s has used up its daily budget (dailyBudgetUsd) and takes no requests until 00:00 UTC", agentID))
	}
	return a.Engine.Run(ctx, ag, untrusted.Frame(source, message), parent)
}

func (a *App) agent(id string) (agentrun.Agent, error) {
	c, ok := a.Config.Agent(id)
	if !ok {
		return agentrun.Agent{}, sb.E("app.agent", sb.ENOTFOUND, fmt.Sprintf("no agent %q in the config", id))
	}
	m := c.EffectiveModel(a.Config.Instance)
	ag := agentrun.Agent{ID: c.ID, MaxSteps: c.MaxSteps, Provider: m.Provider, ModelName: m.Model,
		SystemPrompt: c.SystemPrompt + "\n\n" + untrusted.Instructions(),
		Pricing:      agentrun.Pricing{InputPer1M: m.InputPer1M, OutputPer1M: m.OutputPer1M}}
	model, err := a.model(m, c)
	if err != nil {
		return agentrun.Agent{}, fmt.Errorf("app: agent %s: model: %w", id, err)
	}
	ag.Model = model
	if m.Provider == swcfg.ProviderScripted {
		ag.ModelName = "scripted"
	}
	return ag, nil
}

// Getenv is the environment the App was built from.
func (a *App) Getenv(key string) string { return a.getenv(key) }

// model builds the provider for one agent. Built per run: the clients are
// cheap (the HTTP and AWS clients underneath are shared).
func (a *App) model(m swcfg.Model, c *swcfg.Agent) (agentrun.Model, error) {
	switch m.Provider {
	case swcfg.ProviderScripted:
		name := c.Name
		if name == "" {
			name = c.ID
		}
		return agentrun.Scripted{AgentName: name, Reply: m.Reply}, nil
	case swcfg.ProviderOpenAI:
		return openai.New(m.BaseURL, m.APIKey, m.Model, a.modelHTTP())
	case swcfg.ProviderBedrock:
		cfg := a.awsCfg.Copy()
		if m.Region != "" {
			cfg.Region = m.Region
		}
		return bedrock.New(bedrockruntime.NewFromConfig(cfg), m.Model), nil
	}
	return nil, sb.E("app.model", sb.EINVALID, fmt.Sprintf("unknown model provider %q; use openai, bedrock or scripted", m.Provider))
}

// modelHTTP allows slow model answers (local models can take minutes); the
// run's own timeout bounds the whole run.
func (a *App) modelHTTP() *http.Client { return &http.Client{Timeout: 5 * time.Minute} }

func (a *App) agentExists(id string) bool { _, ok := a.Config.Agent(id); return ok }

func (a *App) permits(agentID, tool string) bool {
	c, ok := a.Config.Agent(agentID)
	if !ok {
		return false
	}
	switch tool {
	case "Workspace":
		return c.Tools.Workspace != nil
	case "RocketChat":
		return c.Tools.RocketChat != nil
	case "Nextcloud":
		return c.Tools.Nextcloud != nil
	case "notify_user":
		return true // every agent may tell the human something (CR2)
	}
	return false
}

func (a *App) workspaceLimit(agentID string) (int64, bool) {
	c, ok := a.Config.Agent(agentID)
	if !ok || c.Tools.Workspace == nil {
		return 0, false
	}
	return int64(c.Tools.Workspace.MaxFileMB) << 20, true
}

// heartbeat checks that every table and the bucket answer.
func (a *App) heartbeat(ctx context.Context) (string, error) {
	if err := dynamo.Ping(ctx, a.Dynamo, a.getenv); err != nil {
		return "", err
	}
	if _, err := a.Blobs.List(ctx, "", 1); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d tables and bucket %s answer", len(deploy.Tables), a.Bucket), nil
}
