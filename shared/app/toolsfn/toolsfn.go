// Package toolsfn builds the tools function: POST /tools/invoke and GET
// /tools, the ask-agent machine's guard and record Tasks and the document
// pipeline's steps. It builds the core, the decide and the actions parts
// (the workspace bucket, the tool executor with every tool, approvals);
// no model provider is linked into it.
package toolsfn

import (
	"context"
	"net/http"

	"github.com/switchboard-dev/switchboard/shared/app/internal/actions"
	"github.com/switchboard-dev/switchboard/shared/app/internal/decide"
	"github.com/switchboard-dev/switchboard/shared/app/internal/spans"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/platform/runtoken"
	"github.com/switchboard-dev/switchboard/shared/usecases/askagent"
	"github.com/switchboard-dev/switchboard/shared/usecases/pipeline"
)

// Build serves the tools function URL (AuthType AWS_IAM; RequireIAM makes
// a misconfigured URL fail closed) and the Tasks (payloads with an op).
func Build(ctx context.Context, getenv func(string) string) (any, error) {
	a, err := actions.ForFunction(ctx, "tools", getenv)
	if err != nil {
		return nil, err
	}
	rec := spans.Start(a)
	url, err := handlers.URL("tools", httpapi.RequireIAM(Handler(a)), a.Core.Log, a.Core.Scrubber)
	if err != nil {
		return nil, err
	}
	return spans.Handler(handlers.URLWithTasks(url, Tasks(a)), rec)
}

// Handler serves GET /tools and POST /tools/invoke without auth; the
// caller wraps it (IAM in AWS, bearer token locally). Its answers are the
// calling agent's data under the tool contract (a share's token and
// generated password included), so the response scrubber lets them through
// (httpapi.Verbatim); the executor has scrubbed error texts and audit.
func Handler(a *actions.Actions) http.Handler {
	c := a.Core
	mux := http.NewServeMux()
	// A token of a run whose receipt is written (the run has ended) is
	// refused before its deadline: one index query on the receipts.
	runs := runtoken.Live{Keys: a.RunTokens, Receipts: c.Store}
	httpapi.ToolRoutes(mux, a.Tools, c.AgentExists, runs, c.Log)
	return httpapi.Verbatim(mux)
}

// Tasks are every Task the tools function serves: the ask-agent machine's
// guard, which records the question, and the rows of a timeout or a
// failure (written by the core, scrubbed, never by a tool); and the
// document pipeline's steps, each run through the executor (staging
// policy and audit of its tool action) and remembered in the state table.
func Tasks(a *actions.Actions) handlers.Tasks {
	c, d := a.Core, a.Decide
	rec := &askagent.Recorder{Log: a.MessageLog()}
	guard := &askagent.Guard{Recorder: rec, Askers: askagent.ConfigAskers{Config: c.Config}, Control: c.Control()}
	// The Share step reads the approval a public link waits for from the
	// approval store itself: the task output only names it.
	steps := &pipeline.Steps{Files: a.NextcloudTool.Service(a.Tools), Chat: a.RocketChatTool.Service(a.Tools), KV: c.Store.KV(), Notify: d.Router, Waker: c.Dispatcher, Audit: c.Store,
		Tokens: decide.TaskTokens{Core: c}, Approvals: c.Store.Approvals(),
		ShareLimitWaitSeconds: c.Config.Instance.Documents.ShareLimitWaitSeconds, Telemetry: c.Telemetry, Log: c.Log}
	return handlers.Tasks{
		askagent.OpGuard: handlers.TaskOf(func(ctx context.Context, q askagent.Question) (any, error) {
			return nil, guard.Admit(ctx, q)
		}),
		askagent.OpRecord: handlers.TaskOf(func(ctx context.Context, r askagent.Row) (any, error) {
			return nil, rec.Record(ctx, r)
		}),
		pipeline.OpConvert:  handlers.TaskOf(steps.Convert),
		pipeline.OpUpload:   handlers.TaskOf(steps.Upload),
		pipeline.OpShare:    handlers.TaskOf(steps.Share),
		pipeline.OpPost:     handlers.TaskOf(steps.Post),
		pipeline.OpFinish:   handlers.TaskOf(steps.Finish),
		pipeline.OpApproval: handlers.TaskOf(steps.RequestApproval),
	}
}
