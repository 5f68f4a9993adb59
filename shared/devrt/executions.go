package devrt

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/adapters/sfn"
	"github.com/switchboard-dev/switchboard/shared/app"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/pipeline"
)

// executionRoute serves GET /dev/executions/{id}: what an execution of a
// catalogue state machine did, step by step with attempts and outcome,
// read from its execution history (as in AWS). id is the execution's name
// (Documents.deliver answers it as executionId) or its ARN.
func executionRoute(a *app.App, env *Env) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		x, err := describeExecution(r.Context(), env, r.PathValue("id"))
		if err != nil {
			httpapi.WriteError(w, r, a.Log(), err)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, x)
	}
}

// describeExecution finds execution id (a name or an ARN) among the
// runtime's machines and reads it.
func describeExecution(ctx context.Context, env *Env, id string) (sfn.Execution, error) {
	const op = "dev.execution"
	if env.SFN == nil || env.SFN.Endpoint == "" {
		return sfn.Execution{}, sb.E(op, sb.EUNAVAILABLE, "no Step Functions service runs in this dev runtime; see the startup log")
	}
	c, err := env.SFN.client(ctx)
	if err != nil {
		return sfn.Execution{}, sb.Wrap(op, sb.EUNAVAILABLE, "Step Functions client", err)
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
		x, err := sfn.Describe(ctx, c, arn)
		if sb.ErrorCode(err) == sb.ENOTFOUND || sb.ErrorCode(err) == sb.EINVALID {
			continue
		}
		return x, err
	}
	return sfn.Execution{}, sb.E(op, sb.ENOTFOUND, "no execution "+id+" in any state machine of this runtime; use the executionId a tool answered")
}

// chainExecutions reads the executions a chain's audit names: the outcome
// entry of each document delivery carries its execution.
func chainExecutions(ctx context.Context, env *Env, audit []sb.AuditEntry) []sfn.Execution {
	out := []sfn.Execution{}
	seen := map[string]bool{}
	for _, e := range audit {
		if e.Tool != pipeline.ToolName {
			continue
		}
		var args struct {
			Execution string `json:"execution"`
		}
		if json.Unmarshal([]byte(e.Args), &args) != nil || args.Execution == "" || seen[args.Execution] {
			continue
		}
		seen[args.Execution] = true
		if x, err := describeExecution(ctx, env, args.Execution); err == nil {
			out = append(out, x)
		}
	}
	return out
}
