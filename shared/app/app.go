// Package app is the composition root of the whole system in one process:
// `switchboard dev`, the operator CLI and `switchboard invoke` build it. It
// builds the parts the Lambdas build one by one (shared/app/internal: core,
// decide, actions, agents), mounts every function's handler from its
// builder package, and, where no agent-worker Lambda is named, queues
// wakes on an in-process pool. The Lambdas do not import it: each
// functions/<name>/main.go calls its own builder (shared/app/<name>fn:
// agentworkerfn, approvalsfn, consolefn, jobsfn, rocketchatwebhookfn,
// telegramwebhookfn, toolsfn), so that it links only what it uses.
package app

import (
	"context"
	"fmt"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/switchboard-dev/switchboard/shared/adapters/awsconfig/awsprofile"
	"log/slog"
	"net/http"
	"sort"

	"github.com/switchboard-dev/switchboard/shared/app/agentworkerfn"
	"github.com/switchboard-dev/switchboard/shared/app/approvalsfn"
	"github.com/switchboard-dev/switchboard/shared/app/consolefn"
	"github.com/switchboard-dev/switchboard/shared/app/internal/actions"
	"github.com/switchboard-dev/switchboard/shared/app/internal/agents"
	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	"github.com/switchboard-dev/switchboard/shared/app/internal/decide"
	"github.com/switchboard-dev/switchboard/shared/app/jobsfn"
	"github.com/switchboard-dev/switchboard/shared/app/mcpfn"
	"github.com/switchboard-dev/switchboard/shared/app/rocketchatwebhookfn"
	"github.com/switchboard-dev/switchboard/shared/app/telegramwebhookfn"
	"github.com/switchboard-dev/switchboard/shared/app/telemetryexportfn"
	"github.com/switchboard-dev/switchboard/shared/app/toolsfn"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
	"github.com/switchboard-dev/switchboard/shared/usecases/jobs"
	"github.com/switchboard-dev/switchboard/shared/usecases/tginbound"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// Version is set at link time (-X); "dev" otherwise.
var Version = "dev"

// DefaultConfigFile is used when SWITCHBOARD_CONFIG is unset: the packaged config.yaml.
const DefaultConfigFile = core.DefaultConfigFile

// EnvPublicBaseURL stands in for an empty instance.publicBaseUrl; the dev
// runtime sets it to its own listener so that approval links work locally.
const EnvPublicBaseURL = core.EnvPublicBaseURL

// Builder builds a function's Lambda handler from its environment.
type Builder = func(ctx context.Context, getenv func(string) string) (any, error)

// Builders are every function's builder, by function name: the one its
// functions/<name>/main.go calls. The tests that check the functions
// against the deploy catalogue and run them through their Lambda handler
// read it.
var Builders = map[string]Builder{
	"agent-worker":       agentworkerfn.Build,
	"approvals":          approvalsfn.Build,
	"console":            consolefn.Build,
	"jobs":               jobsfn.Build,
	"mcp":                mcpfn.Build,
	"rocketchat-webhook": rocketchatwebhookfn.Build,
	"telegram-webhook":   telegramwebhookfn.Build,
	"telemetry-export":   telemetryexportfn.Build,
	"tools":              toolsfn.Build,
}

// App is every part, built once per process.
type App struct {
	core     *core.Core
	decide   *decide.Decide
	actions  *actions.Actions
	agents   *agents.Agents
	telegram *tginbound.Inbound
	jobs     *jobs.Runner
	pool     *wake.Pool
	console  http.Handler
	mcp      http.Handler
}

// New builds the App. getenv is os.Getenv in production; tests pass their own.
func New(ctx context.Context, getenv func(string) string) (*App, error) {
	c, err := core.New(ctx, getenv, func(ctx context.Context) (aws.Config, error) { return awsprofile.Load(ctx) })
	if err != nil {
		return nil, err
	}
	a := &App{core: c}
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
			return a.agents.Worker.Handle(ctx, job)
		}, c.Log)
		a.pool.SetRetryDelays(delays)
		c.Dispatcher = a.pool
	}
	if a.decide, err = decide.New(c); err != nil {
		return nil, err
	}
	if a.actions, err = actions.New(a.decide); err != nil {
		return nil, err
	}
	if a.agents, err = agents.New(a.actions); err != nil {
		return nil, err
	}
	a.telegram = telegramwebhookfn.Inbound(a.decide)
	if a.jobs, err = jobsfn.Runner(a.actions, a.telegram); err != nil {
		return nil, err
	}
	if a.console, err = consolefn.Handler(c); err != nil {
		return nil, err
	}
	if a.mcp, err = mcpfn.Handler(a.actions, Version); err != nil {
		return nil, err
	}
	return a, nil
}

// Idle returns once the wakes dispatched in this process are over: none
// queued, running or waiting for a retry. With an agent-worker Lambda to
// dispatch to, nothing runs here and it returns at once.
func (a *App) Idle(ctx context.Context) error {
	if a.pool == nil {
		return nil
	}
	return a.pool.Idle(ctx)
}

// Endpoints are the handlers of the functions with routes, for the route
// table (httpapi.Routes); toolAuth guards the tools routes (IAM in AWS, a
// bearer token on the dev listener).
func (a *App) Endpoints(toolAuth func(http.Handler) http.Handler) map[string]http.Handler {
	return map[string]http.Handler{
		"tools":              toolAuth(toolsfn.Handler(a.actions)),
		"rocketchat-webhook": rocketchatwebhookfn.Handler(a.core),
		"approvals":          approvalsfn.Handler(a.decide),
		"telegram-webhook":   httpapi.TelegramWebhook(a.telegram),
		"console":            a.console,
		"mcp":                a.mcp,
	}
}

// Handler is function fn's Lambda handler, built on this App: what
// `switchboard invoke` runs through aws-lambda-go's decode path.
func (a *App) Handler(fn string) (any, error) {
	switch fn {
	case "jobs":
		return jobsfn.Handler(a.jobs), nil
	case "agent-worker":
		return agentworkerfn.Handler(a.agents), nil
	case "telemetry-export":
		exp, err := telemetryexportfn.NewExporter(a.core.Config)
		if err != nil {
			return nil, err
		}
		h := &telemetryexportfn.Handler{Exporter: exp, Log: a.core.Log}
		return h.Handle, nil
	}
	eps := a.Endpoints(httpapi.RequireIAM)
	h, ok := eps[fn]
	if !ok {
		names := []string{"agent-worker", "jobs", "telemetry-export"}
		for n := range eps {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("no function %q; functions are %v", fn, names)
	}
	url, err := handlers.URL(fn, h, a.core.Log, a.core.Scrubber)
	if err != nil || fn != "tools" {
		return url, err
	}
	return handlers.URLWithTasks(url, toolsfn.Tasks(a.actions)), nil
}

// Ask runs agentID on a human's message (the dev route and the CLI).
func (a *App) Ask(ctx context.Context, agentID, source, message string, parent *sb.RunContext) (agentrun.Result, error) {
	return a.agents.Runner.Ask(ctx, agentID, source, message, parent)
}

// Jobs is the runner of the scheduled jobs.
func (a *App) Jobs() *jobs.Runner { return a.jobs }

// Config is the loaded config.
func (a *App) Config() *swcfg.Config { return a.core.Config }

// Log is the scrubbing JSON logger.
func (a *App) Log() *slog.Logger { return a.core.Log }

// Scrubber removes configured secrets from outbound text.
func (a *App) Scrubber() *scrub.Scrubber { return a.core.Scrubber }

// Getenv is the environment the App was built from.
func (a *App) Getenv(key string) string { return a.core.Getenv(key) }

// Store is the audit, receipt and state store (the dev routes read chains
// and job runs from it).
func (a *App) Store() Store { return a.core.Store }

// Store is what the dev runtime and the CLI read.
type Store interface {
	ChainCost(ctx context.Context, rootRunID string) (sb.ChainCost, error)
	ByRoot(ctx context.Context, rootRunID string) ([]sb.AuditEntry, error)
	LastRuns(ctx context.Context) ([]sb.JobRun, error)
}

// Ping checks that every table and the bucket answer (dev /healthz).
func (a *App) Ping(ctx context.Context) (tables, bucket error) {
	tables = a.core.Ping(ctx)
	_, bucket = a.actions.Blobs.List(ctx, "", 1)
	return tables, bucket
}

// Close stops the local worker pool, letting queued runs finish until ctx ends.
func (a *App) Close(ctx context.Context) {
	if a.pool != nil {
		a.pool.Close(ctx)
	}
}

// Blobs is the workspace bucket.
func (a *App) Blobs() sb.BlobStore { return a.actions.Blobs }
