package devrt

import (
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/app"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/jobs"
)

// Handler is the dev listener: the one route table (httpapi.Routes) with
// every function's handler exactly as the functions serve them (tools
// behind the bearer token instead of IAM), plus /healthz and the dev-only
// routes under /dev/. It is served through httpapi.Serve like every
// function URL, so every route runs under its budget and every answer is
// scrubbed.
func Handler(a *app.App, env *Env) (http.Handler, error) {
	bearer := func(h http.Handler) http.Handler {
		return httpapi.Bearer([]string{a.Config().Instance.ToolAPIToken}, h)
	}
	mux, err := httpapi.Routes(a.Endpoints(bearer))
	if err != nil {
		return nil, err
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { healthz(w, r, a, env) })
	mux.HandleFunc("POST /dev/jobs/{job}", func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if r.URL.Query().Get("dryRun") == "true" {
			ctx = jobs.DryRun(ctx)
		}
		run, err := a.Jobs().Run(ctx, r.PathValue("job"), "dev-route")
		if err != nil && sb.ErrorCode(err) == sb.ENOTFOUND {
			httpapi.WriteError(w, r, a.Log(), err)
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
			httpapi.WriteError(w, r, a.Log(), err)
			return
		}
		if req.Message == "" {
			httpapi.WriteError(w, r, a.Log(), sb.E("dev.run", sb.EINVALID, `"message" is required: what you say to the agent`))
			return
		}
		res, err := a.Ask(r.Context(), r.PathValue("id"), "dev:"+r.RemoteAddr, req.Message, nil)
		if err != nil {
			httpapi.WriteError(w, r, a.Log(), err)
			return
		}
		w.Header().Set(httpapi.HeaderRunID, res.Run.RunID)
		httpapi.WriteJSON(w, http.StatusOK, res)
	})
	mux.HandleFunc("GET /dev/chains/{root}", func(w http.ResponseWriter, r *http.Request) {
		root := r.PathValue("root")
		cost, err := a.Store().ChainCost(r.Context(), root)
		if err != nil {
			httpapi.WriteError(w, r, a.Log(), err)
			return
		}
		audit, err := a.Store().ByRoot(r.Context(), root)
		if err != nil {
			httpapi.WriteError(w, r, a.Log(), err)
			return
		}
		if cost.Runs == 0 && len(audit) == 0 {
			httpapi.WriteError(w, r, a.Log(), sb.E("dev.chain", sb.ENOTFOUND,
				"no run chain has the root run id "+root+"; use the rootRunId a run answered"))
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"cost": cost, "audit": audit,
			"executions": chainExecutions(r.Context(), env, audit)})
	})
	mux.HandleFunc("GET /dev/idle", func(w http.ResponseWriter, r *http.Request) {
		if err := a.Idle(r.Context()); err != nil {
			return // the route's budget answers
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]bool{"idle": true})
	})
	mux.HandleFunc("GET /dev/executions/{id}", executionRoute(a, env))
	mux.HandleFunc("GET /dev/jobs", func(w http.ResponseWriter, r *http.Request) {
		runs, err := a.Store().LastRuns(r.Context())
		if err != nil {
			httpapi.WriteError(w, r, a.Log(), err)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"jobs": a.Jobs().Names(), "lastRuns": runs})
	})
	h := httpapi.Serve(mux, a.Log(), a.Scrubber())
	if env.SFN != nil && env.SFN.UserKey != "" {
		// A user's Step Functions server runs the machines' Tasks through
		// the Lambda Invoke API here; the handlers' payloads pass as they
		// are (in AWS, too, Step Functions gets a function's own answer).
		outer := http.NewServeMux()
		outer.Handle("POST "+LambdaPath, env.SFN)
		outer.Handle("/", h)
		h = outer
	}
	if env.Sandbox != nil {
		// The sandbox shows what reached the stand-in servers as a person
		// there sees it: the clients masked secrets before sending, and
		// an approval link must keep its signed token to work. So its
		// routes get their budgets but no second masking.
		sbx := http.NewServeMux()
		env.Sandbox.Mount(sbx)
		outer := http.NewServeMux()
		outer.Handle("/dev/sandbox", httpapi.WithBudgets(sbx, a.Log()))
		outer.Handle("/dev/sandbox/", httpapi.WithBudgets(sbx, a.Log()))
		outer.Handle("/", h)
		h = outer
	}
	return logRequests(h, a.Log()), nil
}

// logRequests writes one log line per request of the dev listener: method,
// path, status, duration (and the run id when the answer names one). The
// sandbox page's successful polls go to the debug level.
func logRequests(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		attrs := []any{"method", r.Method, "path", r.URL.Path, "status", rec.status,
			"durationMs", float64(time.Since(start).Microseconds()) / 1000}
		if id := rec.Header().Get(httpapi.HeaderRunID); id != "" {
			attrs = append(attrs, "runId", id)
		}
		level := slog.LevelInfo
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/dev/sandbox/api/") && rec.status < 400 {
			level = slog.LevelDebug // the sandbox page polls these every second
		}
		log.Log(r.Context(), level, "request", attrs...)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Flush keeps streaming answers streaming.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
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
	check := func(name string, c *component, err error) {
		c.OK = err == nil
		if err != nil {
			c.Error = sb.ErrorMessage(err)
			// The answer keeps internal error text out; the log has it.
			a.Log().Warn("healthz: "+name+" does not answer", "component", name, "endpoint", c.Endpoint, "error", err.Error())
		}
	}
	ddb := component{Endpoint: env.DynamoDB, Server: a.Getenv(EnvDynamoServer)}
	tablesErr, bucketErr := a.Ping(ctx)
	check("dynamodb", &ddb, tablesErr)
	s3 := component{Endpoint: env.S3, Server: env.S3Server}
	check("s3", &s3, bucketErr)
	// Step Functions is reported but does not degrade the status: dev
	// starts without it only when no configured feature needs it.
	sf := env.SFN
	if sf == nil {
		sf = &StepFunctions{}
	}
	sfnc := component{Endpoint: sf.Endpoint, Server: sf.Server}
	check("stepfunctions", &sfnc, sf.Ping(ctx))
	status, code := "ok", http.StatusOK
	if !ddb.OK || !s3.OK {
		status, code = "degraded", http.StatusServiceUnavailable
	}
	httpapi.WriteJSON(w, code, map[string]any{
		"status":   status,
		"version":  app.Version,
		"go":       runtime.Version(),
		"instance": a.Config().Instance.Name,
		"agents":   len(a.Config().Agents),
		// DynamoDB and S3 are called through Switchboard's own signed
		// clients; the SDK core signs them.
		"libraries": map[string]string{
			"aws-sdk-go-v2": moduleVersion("github.com/aws/aws-sdk-go-v2"),
			"aws-lambda-go": moduleVersion("github.com/aws/aws-lambda-go"),
		},
		"components": map[string]component{"dynamodb": ddb, "s3": s3, "stepfunctions": sfnc},
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
