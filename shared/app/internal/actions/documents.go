package actions

import (
	"context"
	"maps"

	sfnapi "github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/switchboard-dev/switchboard/shared/adapters/sfn"
	"github.com/switchboard-dev/switchboard/shared/app/internal/decide"
	"github.com/switchboard-dev/switchboard/shared/handlers"
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
// workspace file must be in the bucket. Runs after setupNextcloud.
func (a *Actions) documentsTool() *pipeline.Tool {
	return &pipeline.Tool{Machine: sfn.Machine{Client: a.sfnClient(), ARN: func() string {
		return a.Getenv(deploy.StateMachineEnvVar(DocumentPipelineMachine))
	}}, KV: a.Store.KV(), Log: a.Log,
		Checks:    map[string]pipeline.Preflighter{nctool.ToolName: a.ncTool, rctool.ToolName: a.rcTool},
		Workspace: a.Blobs,
		Rooms:     a.documentRooms,
	}
}

// documentRooms are an agent's Rocket.Chat room settings for a delivery's post.
func (a *Actions) documentRooms(agentID string) (pipeline.Rooms, bool) {
	c, ok := a.Config.Agent(agentID)
	if !ok || c.Tools.RocketChat == nil {
		return pipeline.Rooms{}, false
	}
	return pipeline.Rooms{AllowedRooms: c.Tools.RocketChat.AllowedRooms, DefaultRoom: c.Tools.RocketChat.DefaultRoom}, true
}

// sfnClient is the Step Functions client (the local runtime in dev).
func (a *Actions) sfnClient() *sfnapi.Client {
	return sfn.NewClient(a.StepFunctionsConfig(context.Background()))
}

// DocumentTasks are the document-pipeline machine's Tasks, served by the
// tools function: each step runs through the executor (staging policy and
// audit of its tool action) and remembers itself in the state table.
func (a *Actions) DocumentTasks() handlers.Tasks {
	// The Share step reads the approval a public link waits for from the
	// approval store itself: the task output only names it.
	steps := &pipeline.Steps{Files: a.ncTool.Service(a.Tools), Chat: a.rcTool.Service(a.Tools), KV: a.Store.KV(), Notify: a.Router, Waker: a.Dispatcher, Audit: a.Store,
		Tokens: decide.TaskTokens{D: a.Decide}, Approvals: a.Store.Approvals(),
		ShareLimitWaitSeconds: a.Config.Instance.Documents.ShareLimitWaitSeconds, Log: a.Log}
	return handlers.Tasks{
		pipeline.OpConvert:  handlers.TaskOf(steps.Convert),
		pipeline.OpUpload:   handlers.TaskOf(steps.Upload),
		pipeline.OpShare:    handlers.TaskOf(steps.Share),
		pipeline.OpPost:     handlers.TaskOf(steps.Post),
		pipeline.OpFinish:   handlers.TaskOf(steps.Finish),
		pipeline.OpApproval: handlers.TaskOf(steps.RequestApproval),
	}
}

// ToolsTasks are every Task the tools function serves.
func (a *Actions) ToolsTasks() handlers.Tasks {
	ts := a.AskGuardTasks()
	maps.Copy(ts, a.DocumentTasks())
	return ts
}
