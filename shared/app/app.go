// Package app is the composition root of the whole system in one process:
// `switchboard dev`, the operator CLI and `switchboard invoke` build it. It
// stacks the same layers the Lambdas build one by one (shared/app/internal:
// core → decide → actions → agents) and, where no agent-worker Lambda is
// named, queues wakes on an in-process pool. The Lambdas do not import it:
// each functions/<name>/main.go calls its own builder (shared/app/receive,
// shared/app/decide, shared/app/act, shared/app/run), so that it links only
// what it uses.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sort"

	"github.com/switchboard-dev/switchboard/shared/app/internal/actions"
	"github.com/switchboard-dev/switchboard/shared/app/internal/agents"
	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	"github.com/switchboard-dev/switchboard/shared/app/internal/decide"
	"github.com/switchboard-dev/switchboard/shared/app/mcpfn"
	"github.com/switchboard-dev/switchboard/shared/app/view"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
	"github.com/switchboard-dev/switchboard/shared/usecases/jobs"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// Version is set at link time (-X); "dev" otherwise.
var Version = "dev"

// DefaultConfigFile is used when SWITCHBOARD_CONFIG is unset.
const DefaultConfigFile = core.DefaultConfigFile

// EnvPublicBaseURL stands in for an empty instance.publicBaseUrl; the dev
// runtime sets it to its own listener so that approval links work locally.
const EnvPublicBaseURL = decide.EnvPublicBaseURL

// App is every layer, built once per process.
type App struct {
	g       *agents.Agents
	jobs    *jobs.Runner
	pool    *wake.Pool
	console http.Handler
	mcp     http.Handler
}

// New builds the App. getenv is os.Getenv in production; tests pass their own.
func New(ctx context.Context, getenv func(string) string) (*App, error) {
	c, err := core.New(ctx, getenv)
	if err != nil {
		return nil, err
	}
	a := &App{}
	if c.Dispatcher == nil {
		// No agent-worker Lambda: wakes run in this process. The pool's
		// handler is bound late, once the worker exists.
		workers := c.Config.Instance.Dev.Workers
		if workers == 0 {
			workers = 4
		}
		delays, err := c.RetryDelays()
		if err != nil {
			return nil, err
		}
		a.pool = wake.NewPool(workers, 256, func(ctx context.Context, job sb.WakeJob) error {
			return a.g.Worker.Handle(ctx, job)
		}, c.Log)
		a.pool.SetRetryDelays(delays)
		c.Dispatcher = a.pool
	}
	d, err := decide.New(c)
	if err != nil {
		return nil, err
	}
	act, err := actions.New(d)
	if err != nil {
		return nil, err
	}
	if a.g, err = agents.New(act); err != nil {
		return nil, err
	}
	if a.jobs, err = act.Jobs(); err != nil {
		return nil, err
	}
	if a.console, err = view.Handler(c); err != nil {
		return nil, err
	}
	if a.mcp, err = mcpfn.Handler(a.g.Actions, Version); err != nil {
		return nil, err
	}
	return a, nil
}

// Endpoints are the handlers of the functions with routes, for the route
// table (httpapi.Routes); toolAuth guards the tools routes (IAM in AWS, a
// bearer token on the dev listener).
func (a *App) Endpoints(toolAuth func(http.Handler) http.Handler) map[string]http.Handler {
	return map[string]http.Handler{
		"tools":              toolAuth(a.g.ToolsHandler()),
		"rocketchat-webhook": httpapi.RocketChatWebhook(a.g.Receiver()),
		"approvals":          a.g.ApprovalsHandler(),
		"telegram-webhook":   a.g.TelegramHandler(),
		"console":            a.console,
		"mcp":                a.mcp,
	}
}

// Handler is function fn's Lambda handler, built on this App: what
// `switchboard invoke` runs through aws-lambda-go's decode path.
func (a *App) Handler(fn string) (any, error) {
	switch fn {
	case "jobs":
		return handlers.Jobs(a.jobs), nil
	case "agent-worker":
		return handlers.AgentWorkerWithTasks(a.g.Worker, a.g.AskRunTasks()), nil
	}
	eps := a.Endpoints(httpapi.RequireIAM)
	h, ok := eps[fn]
	if !ok {
		names := []string{"agent-worker", "jobs"}
		for n := range eps {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("no function %q; functions are %v", fn, names)
	}
	url, err := handlers.URL(fn, h, a.g.Log, a.g.Scrubber)
	if err != nil || fn != "tools" {
		return url, err
	}
	return handlers.URLWithTasks(url, a.g.ToolsTasks()), nil
}

// Ask runs agentID on a human's message (the dev route and the CLI).
func (a *App) Ask(ctx context.Context, agentID, source, message string, parent *sb.RunContext) (agentrun.Result, error) {
	return a.g.Ask(ctx, agentID, source, message, parent)
}

// Jobs is the runner of the scheduled jobs.
func (a *App) Jobs() *jobs.Runner { return a.jobs }

// Config is the loaded config.
func (a *App) Config() *swcfg.Config { return a.g.Config }

// Log is the scrubbing JSON logger.
func (a *App) Log() *slog.Logger { return a.g.Log }

// Scrubber removes configured secrets from outbound text.
func (a *App) Scrubber() *scrub.Scrubber { return a.g.Scrubber }

// Getenv is the environment the App was built from.
func (a *App) Getenv(key string) string { return a.g.Getenv(key) }

// Store is the audit, receipt and state store (the dev routes read chains
// and job runs from it).
func (a *App) Store() Store { return a.g.Store }

// Store is what the dev runtime and the CLI read.
type Store interface {
	ChainCost(ctx context.Context, rootRunID string) (sb.ChainCost, error)
	ByRoot(ctx context.Context, rootRunID string) ([]sb.AuditEntry, error)
	LastRuns(ctx context.Context) ([]sb.JobRun, error)
}

// Ping checks that every table and the bucket answer (dev /healthz).
func (a *App) Ping(ctx context.Context) (tables, bucket error) {
	tables = a.g.Ping(ctx)
	_, bucket = a.g.Blobs.List(ctx, "", 1)
	return tables, bucket
}

// Close stops the local worker pool, letting queued runs finish until ctx ends.
func (a *App) Close(ctx context.Context) {
	if a.pool != nil {
		a.pool.Close(ctx)
	}
}

// Blobs is the workspace bucket.
func (a *App) Blobs() sb.BlobStore { return a.g.Blobs }
