package agentrun

import (
	"context"
	"fmt"

	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Result outcomes of a wake that ended before any run.
const (
	OutcomeBudget      = "budget_exceeded" // the agent's daily budget is used up
	OutcomeTaskRefused = "task_refused"    // the taskboard refused the task's wake
)

// Providers builds the client of a model that lives on a server
// (OpenAI-compatible, Bedrock) from its config; the scripted model is
// built here.
type Providers interface {
	Model(m swcfg.Model) (sb.Model, error)
}

// Agents builds the agents of the config for a run: system prompt with the
// rules for untrusted content, step budget, model and pricing.
type Agents struct {
	Config    *swcfg.Config
	Providers Providers
}

// Agent builds agent id. ENOTFOUND when the config has no such agent.
func (a *Agents) Agent(id string) (sb.Agent, error) {
	c, ok := a.Config.Agent(id)
	if !ok {
		return sb.Agent{}, sb.E("app.agent", sb.ENOTFOUND, fmt.Sprintf("no agent %q in the config", id))
	}
	m := c.EffectiveModel(a.Config.Instance)
	ag := sb.Agent{ID: c.ID, MaxSteps: c.MaxSteps, Provider: m.Provider, ModelName: m.Model,
		SystemPrompt: c.SystemPrompt + "\n\n" + untrusted.Instructions(),
		Pricing:      sb.Pricing{InputPer1M: m.InputPer1M, OutputPer1M: m.OutputPer1M}}
	if m.Provider == swcfg.ProviderScripted {
		name := c.Name
		if name == "" {
			name = c.ID
		}
		ag.Model, ag.ModelName = Scripted{AgentName: name, Reply: m.Reply}, "scripted"
		return ag, nil
	}
	model, err := a.Providers.Model(m)
	if err != nil {
		return sb.Agent{}, fmt.Errorf("app: agent %s: model: %w", id, err)
	}
	ag.Model = model
	return ag, nil
}

// Check builds every agent once, so that a config mistake fails the cold
// start, not the first run.
func (a *Agents) Check() error {
	for _, c := range a.Config.Agents {
		if _, err := a.Agent(c.ID); err != nil {
			return err
		}
	}
	return nil
}

// BudgetGate tells whether an agent has used up today's budget (Budget).
type BudgetGate interface {
	Over(ctx context.Context, agentID string) (bool, error)
}

// WakeAdmitter admits a task's wake (the taskboard); false with no error
// is a refusal (the taskboard wrote its denied row).
type WakeAdmitter interface {
	Admits(ctx context.Context, job sb.WakeJob) (bool, error)
}

// Runner runs the configured agents, each within its daily budget: on a
// wake job (the worker) and on a human's message (the CLI and the dev
// route).
type Runner struct {
	Engine *Engine
	Agents *Agents
	Budget BudgetGate
	Tasks  WakeAdmitter
	// Chain is asked before a hop (a job that continues a chain: a task's
	// wake, an approval's or a delivery's follow-up); nil: never.
	Chain ChainGate
	// Pauses says whether an agent is paused (Ask refuses it; the worker
	// holds its wakes before they get here); nil: none is.
	Pauses Pauses
}

// Pauses says whether the operator paused an agent (control.Control).
type Pauses interface {
	Paused(ctx context.Context, agentID string) (bool, error)
}

// RunJob runs the woken agent. A task's wake runs only as the taskboard
// admits it (within the hop limit, its payer's budget not used up: the run
// is charged to the payer); a refused one ends without a run and without
// an answer (the taskboard wrote its denied row). An agent over its budget
// is not run either: the human was told once through the router, and the
// worker tells the room.
func (r *Runner) RunJob(ctx context.Context, job sb.WakeJob) (Result, error) {
	ag, err := r.Agents.Agent(job.AgentID)
	if err != nil {
		return Result{}, err
	}
	if ok, err := r.Tasks.Admits(ctx, job); err != nil {
		return Result{}, err
	} else if !ok {
		return Result{Outcome: OutcomeTaskRefused}, nil
	}
	if over, err := r.Budget.Over(ctx, job.AgentID); err != nil || over {
		return Result{Outcome: OutcomeBudget}, err
	}
	if job.Parent != nil && r.Chain != nil {
		// A hop of a stopped chain, or of one over its budget, is dropped.
		reason, err := r.Chain.Check(ctx, sb.RunContext{AgentID: job.AgentID, RunID: job.Parent.RunID, RootRunID: job.Parent.RootRunID}, 0)
		if err != nil {
			return Result{}, fmt.Errorf("agentrun %s: chain gate: %w", job.AgentID, err)
		}
		if reason != "" {
			return Result{Outcome: reason, Run: *job.Parent}, nil
		}
	}
	// The worker gave ctx the run's deadline.
	return r.Engine.Start(ctx, ag, Start{Wake: job.Text, Parent: job.Parent, ReplyTo: job.ReplyTo, Replay: job.ReplayKey()})
}

// Ask runs agentID on a human's message: the text is framed as untrusted
// before it reaches the model. EFORBIDDEN when the agent's daily budget is
// used up.
func (r *Runner) Ask(ctx context.Context, agentID, source, message string, parent *sb.RunContext) (Result, error) {
	ag, err := r.Agents.Agent(agentID)
	if err != nil {
		return Result{}, err
	}
	if r.Pauses != nil {
		if paused, err := r.Pauses.Paused(ctx, agentID); err != nil {
			return Result{}, err
		} else if paused {
			return Result{}, sb.E("app.ask", sb.EFORBIDDEN, fmt.Sprintf(
				"agent %s is paused by the operator and takes no requests until it is resumed (switchboard console or /resume %s in Telegram)", agentID, agentID))
		}
	}
	if over, err := r.Budget.Over(ctx, agentID); err != nil {
		return Result{}, err
	} else if over {
		return Result{}, sb.E("app.ask", sb.EFORBIDDEN, fmt.Sprintf(
			"agent %s has used up its daily budget (dailyBudgetUsd) and takes no requests until 00:00 UTC", agentID))
	}
	return r.Engine.Run(ctx, ag, untrusted.Frame(source, message), parent)
}
