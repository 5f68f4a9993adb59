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

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/switchboard-dev/switchboard/shared/adapters/bedrock"
	"github.com/switchboard-dev/switchboard/shared/adapters/openai"
	"github.com/switchboard-dev/switchboard/shared/app/internal/actions"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
	"github.com/switchboard-dev/switchboard/shared/usecases/askagent"
	"github.com/switchboard-dev/switchboard/shared/usecases/taskboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// OutcomeTaskRefused is the outcome of a task's wake the taskboard refused
// (no run happened).
const OutcomeTaskRefused = "task_refused"

// Agents is the actions layer plus the engine and the worker; the daily
// budget (Budget) is the actions layer's, shared with the taskboard.
type Agents struct {
	*actions.Actions
	Engine *agentrun.Engine
	Worker *wake.Worker
}

// AskRunTasks are the ask-agent machine's Tasks that the agent-worker
// serves: running the asked agent and recording its answer.
func (g *Agents) AskRunTasks() handlers.Tasks {
	an := &askagent.Answerer{Engine: g.Engine, Recorder: &askagent.Recorder{Log: g.MessageLog()}, Agent: g.agent,
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
	for _, ag := range a.Config.Agents {
		if _, err := g.agent(ag.ID); err != nil {
			return nil, err
		}
	}
	replier := a.Replier()
	preparer := &wake.Preparer{Counters: a.Store, Claims: a.Store, Wakes: a.Wakes, Log: a.Log, Loc: time.UTC, Now: time.Now}
	g.Worker = &wake.Worker{
		Leases:  a.Store,
		Claims:  a.Wakes,
		Notes:   a.Store,
		RunFor:  a.Run,
		WaitFor: a.Wait,
		Slack:   a.Slack,
		Log:     a.Log,
		Prepare: func(ctx context.Context, job wake.Job) (wake.Job, bool, error) {
			rc, ok := a.RC[job.AgentID]
			if !ok {
				return job, false, sb.E("app.prepare", sb.ENOTFOUND, fmt.Sprintf("agent %q has no RocketChat block", job.AgentID))
			}
			return preparer.Prepare(ctx, job, rc.Client, rc.Rules, rc.MaxWakes)
		},
		Run:        g.runJob,
		Execute:    g.execute,
		Reply:      replier.Reply,
		Fallback:   replier.Fallback,
		Attach:     replier.Attach,
		MaxMessage: a.Config.Instance.RocketChat.MaxMessageLength,
		MaxParts:   a.Config.Instance.RocketChat.MaxReplyParts,
		Scrub:      a.Scrubber.StringContext, // the whole answer, before it is cut
	}
	return g, nil
}

// Ask runs agentID on a human's message: the text is framed as untrusted
// before it reaches the model.
func (g *Agents) Ask(ctx context.Context, agentID, source, message string, parent *sb.RunContext) (agentrun.Result, error) {
	ag, err := g.agent(agentID)
	if err != nil {
		return agentrun.Result{}, err
	}
	if over, err := g.Budget.Over(ctx, agentID); err != nil {
		return agentrun.Result{}, err
	} else if over {
		return agentrun.Result{}, sb.E("app.ask", sb.EFORBIDDEN, fmt.Sprintf(
			"agent %s has used up its daily budget (dailyBudgetUsd) and takes no requests until 00:00 UTC", agentID))
	}
	return g.Engine.Run(ctx, ag, untrusted.Frame(source, message), parent)
}

// execute runs an approved call handed over by the function that
// recorded the decision.
func (g *Agents) execute(ctx context.Context, approvalID string) error {
	if g.Approvals == nil {
		return sb.E("app.execute", sb.EUNAVAILABLE, "approvals are not set up here, so approved call "+approvalID+" cannot run")
	}
	return g.Approvals.Execute(ctx, approvalID)
}

// runJob runs the woken agent. A task's wake runs only as the taskboard
// admits it (within the hop limit, its payer's budget not used up: the
// run is charged to the payer); a refused one ends without a run and
// without an answer (the taskboard wrote its denied row).
func (g *Agents) runJob(ctx context.Context, job wake.Job) (agentrun.Result, error) {
	ag, err := g.agent(job.AgentID)
	if err != nil {
		return agentrun.Result{}, err
	}
	if err := g.Taskboard.AdmitWake(ctx, job); err != nil {
		if taskboard.RefusedFor(err) != "" {
			return agentrun.Result{Outcome: OutcomeTaskRefused}, nil
		}
		return agentrun.Result{}, err
	}
	if over, err := g.Budget.Over(ctx, job.AgentID); err != nil || over {
		// No run: the human was told once through the router; the
		// worker tells the room once a day.
		return agentrun.Result{Outcome: wake.OutcomeBudget}, err
	}
	// The worker gave ctx the run's deadline.
	return g.Engine.Start(ctx, ag, agentrun.Start{Wake: job.Text, Parent: job.Parent, ReplyTo: job.ReplyTo, Replay: job.ReplayKey()})
}

func (g *Agents) agent(id string) (agentrun.Agent, error) {
	c, ok := g.Config.Agent(id)
	if !ok {
		return agentrun.Agent{}, sb.E("app.agent", sb.ENOTFOUND, fmt.Sprintf("no agent %q in the config", id))
	}
	m := c.EffectiveModel(g.Config.Instance)
	ag := agentrun.Agent{ID: c.ID, MaxSteps: c.MaxSteps, Provider: m.Provider, ModelName: m.Model,
		SystemPrompt: c.SystemPrompt + "\n\n" + untrusted.Instructions(),
		Pricing:      agentrun.Pricing{InputPer1M: m.InputPer1M, OutputPer1M: m.OutputPer1M}}
	model, err := g.model(m, c)
	if err != nil {
		return agentrun.Agent{}, fmt.Errorf("app: agent %s: model: %w", id, err)
	}
	ag.Model = model
	if m.Provider == swcfg.ProviderScripted {
		ag.ModelName = "scripted"
	}
	return ag, nil
}

// model builds the provider for one agent. Built per run: the clients are
// cheap (the HTTP and AWS clients underneath are shared).
func (g *Agents) model(m swcfg.Model, c *swcfg.Agent) (agentrun.Model, error) {
	switch m.Provider {
	case swcfg.ProviderScripted:
		name := c.Name
		if name == "" {
			name = c.ID
		}
		return agentrun.Scripted{AgentName: name, Reply: m.Reply}, nil
	case swcfg.ProviderOpenAI:
		return openai.New(m.BaseURL, m.APIKey, m.Model, modelHTTP)
	case swcfg.ProviderBedrock:
		cfg := g.AWS.Copy()
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
