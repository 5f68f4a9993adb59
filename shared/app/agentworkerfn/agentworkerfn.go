// Package agentworkerfn builds the agent-worker function: the decide and
// actions parts plus the per-agent models, the run engine and the wake
// worker, which also runs the calls people approved. It links no job, no
// HTTP endpoint of its own and no Telegram inbound.
package agentworkerfn

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/adapters/wakequeue"
	"github.com/switchboard-dev/switchboard/shared/app/internal/actions"
	"github.com/switchboard-dev/switchboard/shared/app/internal/agents"
	"github.com/switchboard-dev/switchboard/shared/app/internal/spans"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/usecases/askagent"
)

// Build is the agent-worker function's handler: one wake job per
// asynchronous invocation, and the ask-agent machine's RunTarget Task (a
// payload with an op).
func Build(ctx context.Context, getenv func(string) string) (any, error) {
	a, err := actions.ForFunction(ctx, "agent-worker", getenv)
	if err != nil {
		return nil, err
	}
	rec := spans.Start(a) // before agents.New, which hands it to the engine and the worker
	g, err := agents.New(a)
	if err != nil {
		return nil, err
	}
	return spans.Handler(Handler(g), rec)
}

// Handler serves wake jobs with g's worker and the ask-agent machine's
// Tasks that the agent-worker serves: running the asked agent and
// recording its answer.
func Handler(g *agents.Agents) any {
	retry := wakequeue.Retrier{Config: g.Core.AWS, Getenv: g.Core.Getenv}
	return handlers.AgentWorkerWithTasks(g.Worker, handlers.Tasks{askagent.OpRun: handlers.TaskOf(g.Answerer().Answer)}, retry)
}
