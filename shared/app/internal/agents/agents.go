// Package agents builds the part that runs agents: per-agent models
// (OpenAI-compatible, Bedrock, scripted), the run engine with its daily
// budget, and the wake worker that replies where an agent was woken. Only
// the agent-worker function and the dev runtime link it. Internal: only
// the builders under shared/app use it.
package agents

import (
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/switchboard-dev/switchboard/shared/adapters/bedrock"
	"github.com/switchboard-dev/switchboard/shared/adapters/openai"
	"github.com/switchboard-dev/switchboard/shared/app/internal/actions"
	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
	"github.com/switchboard-dev/switchboard/shared/usecases/askagent"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// Agents runs agents, over the core and the actions part; the daily
// budget (Actions.Budget) is the actions part's, shared with the
// taskboard.
type Agents struct {
	Core    *core.Core
	Actions *actions.Actions
	Engine  *agentrun.Engine
	Runner  *agentrun.Runner
	Worker  *wake.Worker
}

// New builds the part on a. Every agent's model is checked once here, so
// that a config mistake fails the cold start, not the first run.
func New(a *actions.Actions) (*Agents, error) {
	c := a.Core
	g := &Agents{Core: c, Actions: a, Engine: &agentrun.Engine{Tools: a.Tools, Receipts: c.Store, Chain: c.Control()}}
	if a.RunTokens != nil { // never a nil *Keys in the interface
		g.Engine.Tokens = a.RunTokens
	}
	g.Runner = &agentrun.Runner{Engine: g.Engine, Budget: a.Budget, Tasks: a.Taskboard, Chain: c.Control(), Pauses: c.Control(),
		Agents: &agentrun.Agents{Config: c.Config, Providers: providers{aws: c.AWS}}}
	if err := g.Runner.Agents.Check(); err != nil {
		return nil, err
	}
	replier := newReplier(a)
	preparer := &wake.Preparer{Counters: c.Store, Claims: c.Store, Wakes: c.Wakes, Log: c.Log, Loc: time.UTC, Now: time.Now}
	g.Worker = &wake.Worker{
		Leases:     c.Store,
		Claims:     c.Wakes,
		Notes:      c.Store,
		RunFor:     c.Run,
		WaitFor:    c.Wait,
		Slack:      c.Slack,
		Log:        c.Log,
		Preparer:   wake.AccountPreparer{Preparer: preparer, Accounts: replier.Accounts},
		Runner:     g.Runner,
		Replies:    replier,
		Files:      replier,
		Fallback:   replier,
		MaxMessage: c.Config.Instance.RocketChat.MaxMessageLength,
		MaxParts:   c.Config.Instance.RocketChat.MaxReplyParts,
		Scrubber:   c.Scrubber, // the whole answer, before it is cut
		Pauses:     c.Control(),
	}
	if ap := a.Decide.Approvals; ap != nil { // never a nil *Service in the interface
		g.Worker.Approvals = ap
	}
	g.Engine.Telemetry, g.Worker.Telemetry = c.Telemetry, c.Telemetry
	return g, nil
}

// Answerer runs the agent an ask_agent question is for.
func (g *Agents) Answerer() *askagent.Answerer {
	c := g.Core
	return &askagent.Answerer{Engine: g.Engine, Recorder: &askagent.Recorder{Log: g.Actions.MessageLog()}, Agents: g.Runner.Agents,
		Leases: c.Store, Budget: g.Actions.Budget, MaxSteps: c.Config.Instance.AskAgent.MaxSteps, Log: c.Log}
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
		return bedrock.New(bedrock.NewClient(cfg), m.Model), nil
	}
	return nil, sb.E("app.model", sb.EINVALID, fmt.Sprintf("unknown model provider %q; use openai, bedrock or scripted", m.Provider))
}

// modelHTTP allows slow model answers (local models can take minutes); the
// run's own timeout bounds the whole run.
var modelHTTP = &http.Client{Timeout: 5 * time.Minute}
