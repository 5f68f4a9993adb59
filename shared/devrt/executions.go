package devrt

import (
	"net/http"
	"sort"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/adapters/sfn"
	"github.com/switchboard-dev/switchboard/shared/app"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// executionRoute serves GET /dev/executions/{id}: what an execution of a
// catalogue state machine did, step by step with attempts and outcome,
// read from its execution history (as in AWS). id is the execution's name
// (Documents.deliver answers it as executionId) or its ARN.
func executionRoute(a *app.App, env *Env) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		const op = "dev.execution"
		id := r.PathValue("id")
		if env.SFN == nil || env.SFN.Endpoint == "" {
			httpapi.WriteError(w, r, a.Log(), sb.E(op, sb.EUNAVAILABLE, "no Step Functions service runs in this dev runtime; see the startup log"))
			return
		}
		c, err := env.SFN.client(r.Context())
		if err != nil {
			httpapi.WriteError(w, r, a.Log(), sb.Wrap(op, sb.EUNAVAILABLE, "Step Functions client", err))
			return
		}
		arns := []string{id}
		if !strings.HasPrefix(id, "arn:") {
			arns = nil
			names := make([]string, 0, len(env.SFN.ARNs))
			for name := range env.SFN.ARNs {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				arns = append(arns, strings.Replace(env.SFN.ARNs[name], ":stateMachine:", ":execution:", 1)+":"+id)
			}
		}
		for _, arn := range arns {
			x, err := sfn.Describe(r.Context(), c, arn)
			if sb.ErrorCode(err) == sb.ENOTFOUND || sb.ErrorCode(err) == sb.EINVALID {
				continue
			}
			if err != nil {
				httpapi.WriteError(w, r, a.Log(), err)
				return
			}
			httpapi.WriteJSON(w, http.StatusOK, x)
			return
		}
		httpapi.WriteError(w, r, a.Log(), sb.E(op, sb.ENOTFOUND, "no execution "+id+" in any state machine of this runtime; use the executionId a tool answered"))
	}
}
