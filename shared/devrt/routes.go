package devrt

import (
	"context"
	"net/http"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/app"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/jobs"
)

// Handler is the dev listener: the function routes exactly as the functions
// serve them (tools behind the bearer token instead of IAM), plus /healthz
// and the dev-only routes under /dev/. Every route runs under its budget
// (httpapi.Budgets), exactly as on the function URLs.
func Handler(a *app.App, env *Env) http.Handler {
	mux := http.NewServeMux()
	tools := httpapi.Bearer([]string{a.Config.Instance.ToolAPIToken}, a.ToolsHandler())
	mux.Handle("GET /tools", tools)
	mux.Handle("POST /tools/invoke", tools)
	mux.Handle("POST /hooks/rocketchat", a.Receiver)
	mux.Handle("POST /hooks/telegram", a.TelegramIn)
	approvalsHandler := a.ApprovalsHandler()
	mux.Handle("GET /approvals/{id}", approvalsHandler)
	mux.Handle("HEAD /approvals/{id}", approvalsHandler)
	mux.Handle("POST /approvals/{id}", approvalsHandler)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { healthz(w, r, a, env) })
	mux.HandleFunc("POST /dev/jobs/{job}", func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if r.URL.Query().Get("dryRun") == "true" {
			ctx = jobs.DryRun(ctx)
		}
		run, err := a.Jobs.Run(ctx, r.PathValue("job"), "dev-route")
		if err != nil && sb.ErrorCode(err) == sb.ENOTFOUND {
			httpapi.WriteError(w, r, a.Log, err)
			return
		}
		status := http.StatusOK
		if err != nil {
			status = http.StatusBadGateway
		}
		httpapi.WriteJSON(w, status, run)
	})
	mux.HandleFunc("POST /dev/agents/{id}/run", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Message string `json:"message"`
		}
		if err := httpapi.DecodeJSON(r, &req); err != nil {
			httpapi.WriteError(w, r, a.Log, err)
			return
		}
		if req.Message == "" {
			httpapi.WriteError(w, r, a.Log, sb.E("dev.run", sb.EINVALID, `"message" is required: what you say to the agent`))
			return
		}
		res, err := a.Ask(r.Context(), r.PathValue("id"), "dev:"+r.RemoteAddr, req.Message, nil)
		if err != nil {
			httpapi.WriteError(w, r, a.Log, err)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, res)
	})
	mux.HandleFunc("GET /dev/chains/{root}", func(w http.ResponseWriter, r *http.Request) {
		root := r.PathValue("root")
		cost, err := a.Store.ChainCost(r.Context(), root)
		if err != nil {
			httpapi.WriteError(w, r, a.Log, err)
			return
		}
		audit, err := a.Store.ByRoot(r.Context(), root)
		if err != nil {
			httpapi.WriteError(w, r, a.Log, err)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"cost": cost, "audit": audit})
	})
	mux.HandleFunc("GET /dev/jobs", func(w http.ResponseWriter, r *http.Request) {
		runs, err := a.Store.LastRuns(r.Context())
		if err != nil {
			httpapi.WriteError(w, r, a.Log, err)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"jobs": a.Jobs.Names(), "lastRuns": runs})
	})
	return httpapi.ScrubResponses(httpapi.WithBudgets(mux, a.Log), a.Scrubber)
}

type component struct {
	Endpoint string `json:"endpoint"`
	Server   string `json:"server,omitempty"`
	OK       bool   `json:"ok"`
	Error    string `json:"error,omitempty"`
}

// healthz answers 200 when DynamoDB and S3 answer, 503 otherwise, with the
// versions of Switchboard and of what it talks to.
func healthz(w http.ResponseWriter, r *http.Request, a *app.App, env *Env) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	check := func(c *component, err error) {
		c.OK = err == nil
		if err != nil {
			c.Error = sb.ErrorMessage(err)
		}
	}
	ddb := component{Endpoint: env.DynamoDB, Server: a.Getenv(EnvDynamoServer)}
	check(&ddb, dynamo.Ping(ctx, a.Dynamo, a.Getenv))
	s3 := component{Endpoint: env.S3, Server: env.S3Server}
	_, err := a.Blobs.List(ctx, "", 1)
	check(&s3, err)
	status, code := "ok", http.StatusOK
	if !ddb.OK || !s3.OK {
		status, code = "degraded", http.StatusServiceUnavailable
	}
	httpapi.WriteJSON(w, code, map[string]any{
		"status":   status,
		"version":  app.Version,
		"go":       runtime.Version(),
		"instance": a.Config.Instance.Name,
		"agents":   len(a.Config.Agents),
		"libraries": map[string]string{
			"aws-sdk-go-v2/service/dynamodb": moduleVersion("github.com/aws/aws-sdk-go-v2/service/dynamodb"),
			"aws-sdk-go-v2/service/s3":       moduleVersion("github.com/aws/aws-sdk-go-v2/service/s3"),
			"aws-lambda-go":                  moduleVersion("github.com/aws/aws-lambda-go"),
		},
		"components": map[string]component{"dynamodb": ddb, "s3": s3},
	})
}

func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "unknown"
}
