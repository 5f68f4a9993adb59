// Package handlers holds the Lambda handler of every function in the deploy
// catalogue. functions/<name>/main.go starts one of them; `switchboard invoke`
// (make invoke) runs the same one on a sample event through aws-lambda-go's
// own decode path, so a local invoke and a deployed one share every line.
package handlers

import (
	"context"
	"fmt"
	"sort"

	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/switchboard-dev/switchboard/shared/app"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/jobs"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Tools serves the tools function URL (AuthType AWS_IAM; RequireIAM makes a
// misconfigured URL fail closed).
func Tools(a *app.App) any {
	return lambdaurl.Wrap(httpapi.RequireIAM(a.ToolsHandler()))
}

// Jobs runs the job an EventBridge schedule names ({"job":"heartbeat"}).
// A failing job returns an error so that Lambda's retry and the error alarm
// see it.
func Jobs(a *app.App) any {
	return func(ctx context.Context, ev jobs.Event) (sb.JobRun, error) {
		return a.Jobs.Run(ctx, ev.Job, "schedule")
	}
}

// ByName maps a deploy catalogue function name to its handler constructor.
var ByName = map[string]func(*app.App) any{
	"tools": Tools,
	"jobs":  Jobs,
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
