// Package handlers turns what a function's builder made into the value
// lambda.Start takes: a function URL (the function's routes from the one
// route table in shared/httpapi, wrapped for Lambda), the scheduled-job
// runner, or the wake worker. functions/<name>/main.go starts one of them;
// `switchboard invoke` (make invoke) runs the same one on a sample event
// through aws-lambda-go's own decode path, so a local invoke and a
// deployed one share every line. It imports no adapter and no use case
// beyond the two event types, so that each function links only what its
// builder chose.
package handlers

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/jobs"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// URL serves function fn's routes (deploy catalogue) on its function URL
// with h: the route budgets inside, the response scrubbing outside, as on
// the dev listener.
func URL(fn string, h http.Handler, log *slog.Logger, s *scrub.Scrubber) (any, error) {
	routes, err := httpapi.Routes(map[string]http.Handler{fn: h})
	if err != nil {
		return nil, err
	}
	return lambdaurl.Wrap(httpapi.Serve(routes, log, s)), nil
}

// Jobs runs the job an EventBridge schedule names ({"job":"heartbeat"}).
// A failing job returns an error so that Lambda's retry and the error alarm
// see it.
func Jobs(r *jobs.Runner) any {
	return func(ctx context.Context, ev jobs.Event) (sb.JobRun, error) {
		return r.Run(ctx, ev.Job, "schedule")
	}
}

// AgentWorker runs one wake job, invoked asynchronously. An error makes
// Lambda retry the event (AsyncRetries in the catalogue).
func AgentWorker(w *wake.Worker) any {
	return func(ctx context.Context, job sb.WakeJob) error {
		return w.Handle(ctx, job)
	}
}
