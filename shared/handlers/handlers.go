// Package handlers turns what a function's builder made into the value
// lambda.Start takes: a function URL (the function's routes from the one
// route table in shared/httpapi, wrapped for Lambda), or the wake worker,
// either of them also serving Step Functions Tasks. The jobs function's
// handler is its builder's (shared/app/jobsfn), so that no other function
// links the job runner. functions/<name>/main.go starts one of them;
// `switchboard invoke` (make invoke) runs the same one on a sample event
// through aws-lambda-go's own decode path, so a local invoke and a
// deployed one share every line. It imports no adapter and no use case
// beyond the wake worker, so that each function links only what its
// builder chose.
package handlers

import (
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
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
