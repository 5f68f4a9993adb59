package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// ToolService lists and runs tools (tools.Executor).
type ToolService interface {
	Specs(agentID string) []sb.ToolSpec
	Invoke(ctx context.Context, call sb.ToolCall) sb.Envelope
}

// InvokeRequest is the body of POST /tools/invoke.
type InvokeRequest struct {
	Agent  string          `json:"agent"`
	Tool   string          `json:"tool"`
	Action string          `json:"action"`
	Args   json.RawMessage `json:"args"`
	// Run names the agent run making the call, as the engine's token of
	// it; operators leave it out and get a fresh run.
	Run *RunRef `json:"run,omitempty"`
}

// RunRef is the "run" of an invoke request: {"token": "<the engine's run
// token>"} (sb.RunToken of the run's context). Run ids and call paths are
// never taken from a caller — they would put the call in any chain, under
// any parent, past ask_agent's cycle check; the other fields exist only so
// that a request naming them is refused saying so.
type RunRef struct {
	Token       string  `json:"token,omitempty"`
	RunID       string  `json:"runId,omitempty"`
	ParentRunID string  `json:"parentRunId,omitempty"`
	RootRunID   string  `json:"rootRunId,omitempty"`
	AgentID     string  `json:"agentId,omitempty"`
	CallPath    *string `json:"callPath,omitempty"`
}

// bare reports whether r names run ids or a call path, or no token.
func (r RunRef) bare() bool {
	return r.Token == "" || r.RunID != "" || r.ParentRunID != "" || r.RootRunID != "" || r.AgentID != "" || r.CallPath != nil
}

// RunVerifier checks the run tokens the engine issues (runtoken.Live).
// Verify answers the run a token names; EFORBIDDEN when the token is
// malformed, changed, expired or of a run that has ended, or when the
// instance issues none; EUNAVAILABLE when that cannot be checked now.
type RunVerifier interface {
	Verify(ctx context.Context, token string) (sb.RunContext, error)
}

// ToolRoutes mounts GET /tools and POST /tools/invoke. agentExists reports
// whether an agent id is configured; runs checks the run tokens of calls
// made from inside a run. Auth is the caller's to wrap around.
func ToolRoutes(mux *http.ServeMux, svc ToolService, agentExists func(string) bool, runs RunVerifier, log *slog.Logger) {
	mux.HandleFunc("GET /tools", func(w http.ResponseWriter, r *http.Request) {
		agent := r.URL.Query().Get("agent")
		if agent != "" && !agentExists(agent) {
			WriteError(w, r, log, sb.E("tools.list", sb.ENOTFOUND, fmt.Sprintf("no agent %q in the config", agent)))
			return
		}
		WriteJSON(w, http.StatusOK, map[string]any{"tools": svc.Specs(agent)})
	})
	mux.HandleFunc("POST /tools/invoke", func(w http.ResponseWriter, r *http.Request) {
		var req InvokeRequest
		if err := DecodeJSON(r, &req); err != nil {
			WriteError(w, r, log, err)
			return
		}
		if msg := req.problem(); msg != "" {
			WriteError(w, r, log, sb.E("tools.invoke", sb.EINVALID, msg))
			return
		}
		if !agentExists(req.Agent) {
			WriteError(w, r, log, sb.E("tools.invoke", sb.ENOTFOUND, fmt.Sprintf("no agent %q in the config", req.Agent)))
			return
		}
		call := sb.ToolCall{AgentID: req.Agent, Tool: req.Tool, Action: req.Action, Args: req.Args, Origin: sb.OriginOperator}
		if req.Run != nil {
			run, err := runOf(r.Context(), runs, req.Run.Token, req.Agent)
			if err != nil {
				log.WarnContext(r.Context(), "tools.invoke: run token refused", "agent", req.Agent, "tool", req.Tool,
					"action", req.Action, "reason", sb.ErrorMessage(err))
				WriteError(w, r, log, err)
				return
			}
			call.Run, call.Origin = run, sb.OriginAgent
		} else {
			call.Run = sb.NewRun(req.Agent, nil, time.Now())
		}
		env := svc.Invoke(r.Context(), call)
		WriteJSON(w, invokeStatus(w, env), env)
	})
}

// runOf is the run token names, which must be a run of agent: the call
// lands in that run's chain, under its parent, with its call path, all as
// the engine stamped them.
func runOf(ctx context.Context, runs RunVerifier, token, agent string) (sb.RunContext, error) {
	if runs == nil {
		return sb.RunContext{}, sb.E("tools.invoke", sb.EFORBIDDEN, "run tokens are not accepted here; leave \"run\" out to call as the operator")
	}
	run, err := runs.Verify(ctx, token)
	if err != nil {
		return sb.RunContext{}, err
	}
	if run.AgentID != agent {
		return sb.RunContext{}, sb.E("tools.invoke", sb.EFORBIDDEN, fmt.Sprintf(
			"the run token names a run of %s, not of %s: a run's tools are called as its own agent", run.AgentID, agent))
	}
	return run, nil
}

// invokeStatus is the HTTP status of a tool call's envelope: 200 for ok and
// for errors the caller has to fix, 202 while it awaits approval, and 503
// with Retry-After when a service the call needed was unavailable (code
// "unavailable"), so that HTTP clients and their retry logic see it; the
// envelope still says what happened and what to do.
func invokeStatus(w http.ResponseWriter, env sb.Envelope) int {
	switch {
	case env.Status == sb.OutcomePending:
		return http.StatusAccepted
	case env.Status == "error" && env.Data["code"] == sb.EUNAVAILABLE:
		w.Header().Set("Retry-After", "5")
		return http.StatusServiceUnavailable
	}
	return http.StatusOK
}

func (q InvokeRequest) problem() string {
	switch {
	case q.Agent == "":
		return `"agent" is required: the id of a configured agent`
	case q.Tool == "":
		return `"tool" is required, e.g. "Workspace"; GET /tools lists them`
	case q.Action == "":
		return `"action" is required, e.g. "write"; GET /tools lists them`
	case q.Run != nil && q.Run.bare():
		return `"run" must be {"token": "<the engine's run token>"}: run ids and call paths are never taken from a caller; ` +
			`leave "run" out to call as the operator (a fresh run)`
	}
	return ""
}
