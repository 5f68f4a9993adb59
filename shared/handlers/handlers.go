// Package handlers holds the Lambda handler of every function in the deploy
// catalogue. functions/<name>/main.go starts one of them; `switchboard invoke`
// (make invoke) runs the same one on a sample event through aws-lambda-go's
// own decode path, so a local invoke and a deployed one share every line.
package handlers

import (
	"context"
	"fmt"
	"net/http"
	"sort"

	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/switchboard-dev/switchboard/shared/app"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/jobs"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// Tools serves the tools function URL (AuthType AWS_IAM; RequireIAM makes a
// misconfigured URL fail closed).
func Tools(a *app.App) any {
	tools := httpapi.RequireIAM(a.ToolsHandler())
	mux := http.NewServeMux()
	mux.Handle("GET /tools", tools)
	mux.Handle("POST /tools/invoke", tools)
	return serve(a, mux)
}

// Jobs runs the job an EventBridge schedule names ({"job":"heartbeat"}).
// A failing job returns an error so that Lambda's retry and the error alarm
// see it.
func Jobs(a *app.App) any {
	return func(ctx context.Context, ev jobs.Event) (sb.JobRun, error) {
		return a.Jobs.Run(ctx, ev.Job, "schedule")
	}
}

// RocketChatWebhook serves POST /hooks/rocketchat on a function URL with
// AuthType NONE: the receiver checks the body token itself (RC4).
func RocketChatWebhook(a *app.App) any {
	mux := http.NewServeMux()
	mux.Handle("POST /hooks/rocketchat", a.Receiver)
	return serve(a, mux)
}

// Approvals serves the approval links (GET page, POST decision) on a
// function URL with AuthType NONE: the signed token is the credential.
func Approvals(a *app.App) any {
	h := a.ApprovalsHandler()
	mux := http.NewServeMux()
	mux.Handle("GET /approvals/{id}", h)
	mux.Handle("HEAD /approvals/{id}", h)
	mux.Handle("POST /approvals/{id}", h)
	return serve(a, mux)
}

// TelegramWebhook serves POST /hooks/telegram; the handler checks
// X-Telegram-Bot-Api-Secret-Token itself.
func TelegramWebhook(a *app.App) any {
	mux := http.NewServeMux()
	mux.Handle("POST /hooks/telegram", a.TelegramIn)
	return serve(a, mux)
}

// AgentWorker runs one wake job, invoked asynchronously. An error makes
// Lambda retry the event (AsyncRetries in the catalogue).
func AgentWorker(a *app.App) any {
	return func(ctx context.Context, job wake.Job) error {
		return a.Worker.Handle(ctx, job)
	}
}

// serve wraps a function URL's routes the same way for every function: the
// route budgets inside, the outbound scrubbing outside (so that a budget's
// own answer is scrubbed too).
func serve(a *app.App, h *http.ServeMux) any {
	return lambdaurl.Wrap(httpapi.ScrubResponses(httpapi.WithBudgets(h, a.Log), a.Scrubber))
}

// ByName maps a deploy catalogue function name to its handler constructor.
var ByName = map[string]func(*app.App) any{
	"tools":              Tools,
	"jobs":               Jobs,
	"rocketchat-webhook": RocketChatWebhook,
	"agent-worker":       AgentWorker,
	"approvals":          Approvals,
	"telegram-webhook":   TelegramWebhook,
}

// Lookup returns the handler constructor for a function.
func Lookup(name string) (func(*app.App) any, error) {
	h, ok := ByName[name]
	if !ok {
		names := make([]string, 0, len(ByName))
		for n := range ByName {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("no function %q; functions are %v", name, names)
	}
	return h, nil
}
