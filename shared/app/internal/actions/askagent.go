package actions

import (
	"context"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/sfn"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/usecases/askagent"
)

// AskAgentMachine is the catalogue name of the ask_agent state machine.
const AskAgentMachine = "ask-agent"

// askTool is ask_agent: it starts the ask-agent machine whose ARN the
// catalogue gives the starting function (read per call: the dev runtime
// creates its machines after this layer is built).
func (a *Actions) askTool() *askagent.Tool {
	env := deploy.StateMachineEnvVar(AskAgentMachine)
	return &askagent.Tool{
		Machine: sfn.SyncMachine{Client: a.sfnClient(), ARN: func() string { return a.Getenv(env) }},
		Timeout: time.Duration(a.Config.Instance.AskAgent.TimeoutSeconds) * time.Second,
		Log:     a.Log,
	}
}

// AskGuardTasks are the ask-agent machine's Tasks that the tools function
// serves: the guard, which records the question, and the rows of a timeout
// or a failure. Rows are written by the core, scrubbed (here and by the
// answering run), never by a tool.
func (a *Actions) AskGuardTasks() handlers.Tasks {
	rec := &askagent.Recorder{Log: a.MessageLog()}
	guard := &askagent.Guard{Recorder: rec, Agent: func(id string) askagent.Asker {
		c, ok := a.Config.Agent(id)
		if !ok {
			return askagent.Asker{}
		}
		as := askagent.Asker{Exists: true, Enabled: c.Tools.AskAgent != nil}
		if as.Enabled {
			as.Allowed = c.Tools.AskAgent.Agents
		}
		return as
	}}
	return handlers.Tasks{
		askagent.OpGuard: handlers.TaskOf(func(ctx context.Context, q askagent.Question) (any, error) {
			return nil, guard.Admit(ctx, q)
		}),
		askagent.OpRecord: handlers.TaskOf(func(ctx context.Context, r askagent.Row) (any, error) {
			return nil, rec.Record(ctx, r)
		}),
	}
}
