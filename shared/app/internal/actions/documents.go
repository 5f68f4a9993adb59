package actions

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/adapters/sfntoken"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
	"github.com/switchboard-dev/switchboard/shared/tools/rctool"
	"github.com/switchboard-dev/switchboard/shared/usecases/pipeline"
)

// DocumentPipelineMachine is the catalogue name of the document pipeline.
const DocumentPipelineMachine = "document-pipeline"

// documentsTool is Documents: it starts the document-pipeline machine
// whose ARN the catalogue gives the starting function (read per call, as
// for ask_agent). Before it starts one, the Nextcloud and RocketChat
// tools check the calls the steps will make (their Preflight, which asks
// no server), the room is held against the agent's allowedRooms and the
// workspace file must be in the bucket. Each execution is recorded under
// its run's chain, so that stopping the chain stops it. Runs after
// setupNextcloud.
func (a *Actions) documentsTool() *pipeline.Tool {
	return &pipeline.Tool{Machine: sfntoken.Machine{Client: a.sfnClient(), ARN: func() string {
		return a.Core.Getenv(deploy.StateMachineEnvVar(DocumentPipelineMachine))
	}}, KV: a.Core.Store.KV(), Log: a.Core.Log,
		Checks:    map[string]pipeline.Preflighter{nctool.ToolName: a.NextcloudTool, rctool.ToolName: a.RocketChatTool},
		Workspace: a.Blobs,
		Rooms:     a.documentRooms,
		Chains:    a.Core.Control(),
	}
}

// documentRooms are an agent's Rocket.Chat room settings for a delivery's post.
func (a *Actions) documentRooms(agentID string) (pipeline.Rooms, bool) {
	c, ok := a.Core.Config.Agent(agentID)
	if !ok || c.Tools.RocketChat == nil {
		return pipeline.Rooms{}, false
	}
	return pipeline.Rooms{AllowedRooms: c.Tools.RocketChat.AllowedRooms, DefaultRoom: c.Tools.RocketChat.DefaultRoom}, true
}

// sfnClient is the Step Functions client (the local runtime in dev).
func (a *Actions) sfnClient() *sfntoken.Client {
	return sfntoken.New(a.Core.StepFunctionsConfig(context.Background()), a.Core.Getenv)
}
