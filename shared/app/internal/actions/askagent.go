package actions

import (
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/sfntoken"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/usecases/askagent"
)

// AskAgentMachine is the catalogue name of the ask_agent state machine.
const AskAgentMachine = "ask-agent"

// askTool is ask_agent: it starts the ask-agent machine whose ARN the
// catalogue gives the starting function (read per call: the dev runtime
// creates its machines after this part is built).
func (a *Actions) askTool() *askagent.Tool {
	env := deploy.StateMachineEnvVar(AskAgentMachine)
	return &askagent.Tool{
		Machine: sfntoken.SyncMachine{Client: a.sfnClient(), ARN: func() string { return a.Core.Getenv(env) }},
		Timeout: time.Duration(a.Core.Config.Instance.AskAgent.TimeoutSeconds) * time.Second,
		Log:     a.Core.Log,
	}
}
