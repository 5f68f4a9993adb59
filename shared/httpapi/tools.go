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
	// Run is set by the agent engine when it calls tools through this API
	// from inside a run; operators leave it out and get a fresh run.
	Run *sb.RunContext `json:"run,omitempty"`
}

// ToolRoutes mounts GET /tools and POST /tools/invoke. agentExists reports
// whether an agent id is configured. Auth is the caller's to wrap around.
func ToolRoutes(mux *http.ServeMux, svc ToolService, agentExists func(string) bool, log *slog.Logger) {
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
			call.Run, call.Origin = *req.Run, sb.OriginAgent
			call.Run.AgentID = req.Agent
		} else {
			call.Run = sb.NewRun(req.Agent, nil, time.Now())
		}
		env := svc.Invoke(r.Context(), call)
		WriteJSON(w, invokeStatus(w, env), env)
	})
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
	case q.Run != nil && (q.Run.RunID == "" || q.Run.RootRunID == ""):
		return `"run" needs runId and rootRunId (parentRunId when the run has a parent)`
	}
	return ""
}
