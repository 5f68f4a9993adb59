// Package approvalsfn builds the approvals function: the approval links
// (GET page, POST decision). It records a decision and hands an approved
// call to the agent-worker, which runs it; so it builds only the core and
// the decide part, and links no tool executor, S3, Nextcloud or model
// provider.
package approvalsfn

import (
	"context"
	"net/http"

	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	"github.com/switchboard-dev/switchboard/shared/app/internal/decide"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
)

// Build serves the approval links on a function URL with AuthType NONE:
// the signed token is the credential.
func Build(ctx context.Context, getenv func(string) string) (any, error) {
	c, err := core.ForFunction(ctx, "approvals", getenv)
	if err != nil {
		return nil, err
	}
	d, err := decide.New(c)
	if err != nil {
		return nil, err
	}
	return handlers.URL("approvals", Handler(d), c.Log, c.Scrubber)
}

// Handler serves GET/POST /approvals/{id}; without approvals set up it
// answers 404 with a page that says so.
func Handler(d *decide.Decide) http.Handler {
	if d.Approvals == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "approvals are not set up on this instance", http.StatusNotFound)
		})
	}
	return httpapi.Approvals(d.Approvals)
}
