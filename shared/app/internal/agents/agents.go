// Package agents builds the layer that runs agents: per-agent models
// (OpenAI-compatible, Bedrock, scripted), the run engine with its daily
// budget, and the wake worker that replies where an agent was woken. Only
// the agent-worker function and the dev runtime link it. Internal: only
// the builders under shared/app use it.
package agents

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/switchboard-dev/switchboard/shared/adapters/bedrock"
	"github.com/switchboard-dev/switchboard/shared/adapters/openai"
	"github.com/switchboard-dev/switchboard/shared/app/internal/actions"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
	"github.com/switchboard-dev/switchboard/shared/usecases/askagent"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// Agents is the actions layer plus the engine, the runner and the worker;
// the daily budget (Budget) is the actions layer's, shared with the
// taskboard.
type Agents struct {
	*actions.Actions
	Engine *agentrun.Engine
	Runner *agentrun.Runner
	Worker *wake.Worker
}

// AskRunTasks are the ask-agent machine's Tasks that the agent-worker
// serves: running the asked agent and recording its answer.
func (g *Agents) AskRunTasks() handlers.Tasks {
	an := &askagent.Answerer{Engine: g.Engine, Recorder: &askagent.Recorder{Log: g.MessageLog()}, Agent: g.Runner.Agents.Agent,
		Leases: g.Store, Budget: g.Budget, MaxSteps: g.Config.Instance.AskAgent.MaxSteps, Log: g.Log}
	return handlers.Tasks{askagent.OpRun: handlers.TaskOf(an.Answer)}
}

// New builds the agents layer on a. Every agent's model is checked once
// here, so that a config mistake fails the cold start, not the first run.
func New(a *actions.Actions) (*Agents, error) {
	g := &Agents{Actions: a, Engine: &agentrun.Engine{Tools: a.Tools, Receipts: a.Store}}
	if a.RunTokens != nil { // never a nil *Keys in the interface
		g.Engine.Tokens = a.RunTokens
	}
	g.Runner = &agentrun.Runner{Engine: g.Engine, Budget: a.Budget, Tasks: a.Taskboard,
		Agents: &agentrun.Agents{Config: a.Config, Providers: providers{aws: a.AWS}}}
	if err := g.Runner.Agents.Check(); err != nil {
		return nil, err
	}
	replier := a.Replier()
	preparer := &wake.Preparer{Counters: a.Store, Claims: a.Store, Wakes: a.Wakes, Log: a.Log, Loc: time.UTC, Now: time.Now}
	g.Worker = &wake.Worker{
		Leases:     a.Store,
		Claims:     a.Wakes,
		Notes:      a.Store,
		RunFor:     a.Run,
		WaitFor:    a.Wait,
		Slack:      a.Slack,
		Log:        a.Log,
		Preparer:   wake.AccountPreparer{Preparer: preparer, Accounts: replier.Accounts},
		Runner:     g.Runner,
		Replies:    replier,
		Files:      replier,
		Fallback:   replier,
		MaxMessage: a.Config.Instance.RocketChat.MaxMessageLength,
		MaxParts:   a.Config.Instance.RocketChat.MaxReplyParts,
		Scrubber:   a.Scrubber, // the whole answer, before it is cut
	}
	if a.Approvals != nil { // never a nil *Service in the interface
		g.Worker.Approvals = a.Approvals
	}
	return g, nil
}

// Ask runs agentID on a human's message (agentrun.Runner.Ask).
func (g *Agents) Ask(ctx context.Context, agentID, source, message string, parent *sb.RunContext) (agentrun.Result, error) {
	return g.Runner.Ask(ctx, agentID, source, message, parent)
}

// providers builds the model clients that reach a server. Built per run:
// the clients are cheap (the HTTP and AWS clients underneath are shared).
type providers struct{ aws aws.Config }

func (p providers) Model(m swcfg.Model) (sb.Model, error) {
	switch m.Provider {
	case swcfg.ProviderOpenAI:
		return openai.New(m.BaseURL, m.APIKey, m.Model, modelHTTP)
	case swcfg.ProviderBedrock:
		cfg := p.aws.Copy()
		if m.Region != "" {
			cfg.Region = m.Region
		}
		return bedrock.New(bedrockruntime.NewFromConfig(cfg), m.Model), nil
	}
	return nil, sb.E("app.model", sb.EINVALID, fmt.Sprintf("unknown model provider %q; use openai, bedrock or scripted", m.Provider))
}

// modelHTTP allows slow model answers (local models can take minutes); the
// run's own timeout bounds the whole run.
var modelHTTP = &http.Client{Timeout: 5 * time.Minute}
