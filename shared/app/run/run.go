// Package run builds the agent-worker function: the actions layer plus
// the per-agent models, the run engine and the wake worker, which also
// runs the calls people approved.
package run

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/app/internal/actions"
	"github.com/switchboard-dev/switchboard/shared/app/internal/agents"
	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	"github.com/switchboard-dev/switchboard/shared/app/internal/decide"
	"github.com/switchboard-dev/switchboard/shared/handlers"
)

// AgentWorker runs one wake job per asynchronous invocation, and the
// ask-agent machine's RunTarget Task (a payload with an op).
func AgentWorker(ctx context.Context, getenv func(string) string) (any, error) {
	c, err := core.New(ctx, getenv)
	if err != nil {
		return nil, err
	}
	if c.Dispatcher == nil {
		c.Dispatcher = core.NoDispatcher{Function: "agent-worker"}
	}
	d, err := decide.New(c)
	if err != nil {
		return nil, err
	}
	a, err := actions.New(d)
	if err != nil {
		return nil, err
	}
	g, err := agents.New(a)
	if err != nil {
		return nil, err
	}
	return handlers.AgentWorkerWithTasks(g.Worker, g.AskRunTasks()), nil
}
