package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Budget is how long one route may take and what the caller gets when the
// time is up before the handler has answered.
type Budget struct {
	Limit   time.Duration
	Status  int    // answered when Limit passes first
	Message string // caller-safe: what happened and what to do
}

// Budgets is the one table of route budgets, keyed by the ServeMux pattern.
// The Lambda function URLs (shared/handlers) and the dev listener both serve
// their routes through WithBudgets, so a route has the same budget in both.
// Every budget stays below the timeout of the function serving the route,
// so that the answer is ours and not a Lambda timeout (a test checks).
var Budgets = map[string]Budget{
	// Rocket.Chat expects the webhook to answer within about a second; a
	// 503 with a body makes it retry, a 500 with a body or a timeout does
	// not. Nothing slow runs here: one claim and one dispatch per agent.
	"POST /hooks/rocketchat": {Limit: 900 * time.Millisecond, Status: http.StatusServiceUnavailable,
		Message: "temporarily unable to queue the message; Rocket.Chat will retry"},
	// An approval button records the decision and edits the request
	// message (waiting out one Telegram 429) before it answers; the
	// approved call itself runs in the agent-worker. Telegram resends on
	// any non-2xx status.
	"POST /hooks/telegram": {Limit: 55 * time.Second, Status: http.StatusServiceUnavailable,
		Message: "temporarily unable to take the update; Telegram will resend it"},
	// A tool call may upload a file to Rocket.Chat or Nextcloud: one
	// request to them may take up to the 30 s of the third-party HTTP
	// client, plus reading the file from the workspace and the audit write.
	"POST /tools/invoke": {Limit: 55 * time.Second, Status: http.StatusGatewayTimeout,
		Message: "the tool call did not finish in time; it may still have taken effect, so check its result (list, stat or read) before you call it again"},
	// An MCP tools/call is a tool call like POST /tools/invoke.
	"POST /mcp": {Limit: 55 * time.Second, Status: http.StatusGatewayTimeout,
		Message: "the MCP request did not finish in time; a tool call may still have taken effect, so check its result before you call it again"},
	"GET /tools": {Limit: 5 * time.Second, Status: http.StatusServiceUnavailable,
		Message: "the tool list could not be served in time; try again"},
	"GET /approvals/{id}": {Limit: 10 * time.Second, Status: http.StatusServiceUnavailable,
		Message: "the approval could not be loaded in time; open the link again in a minute"},
	"HEAD /approvals/{id}": {Limit: 10 * time.Second, Status: http.StatusServiceUnavailable,
		Message: "the approval could not be loaded in time; open the link again in a minute"},
	// Approving records the decision and edits the request message before
	// the page answers; the agent-worker runs the call.
	"POST /approvals/{id}": {Limit: 55 * time.Second, Status: http.StatusServiceUnavailable,
		Message: "the decision did not finish in time; open the link again in a minute to see whether it was recorded"},

	// The web console: a page is a handful of DynamoDB reads (the chain
	// page three queries, the start page one per agent).
	"GET /console/{$}": {Limit: 10 * time.Second, Status: http.StatusServiceUnavailable,
		Message: "the console page could not be loaded in time; reload it in a minute"},
	"HEAD /console/{$}": {Limit: 10 * time.Second, Status: http.StatusServiceUnavailable,
		Message: "the console page could not be loaded in time; reload it in a minute"},
	"GET /console/{page}": {Limit: 10 * time.Second, Status: http.StatusServiceUnavailable,
		Message: "the console page could not be loaded in time; reload it in a minute"},
	"HEAD /console/{page}": {Limit: 10 * time.Second, Status: http.StatusServiceUnavailable,
		Message: "the console page could not be loaded in time; reload it in a minute"},
	"POST /console/{page}": {Limit: 10 * time.Second, Status: http.StatusServiceUnavailable,
		Message: "the console did not answer in time; reload the page and try again"},

	// Routes of the dev listener only.
	"GET /healthz": {Limit: 5 * time.Second, Status: http.StatusServiceUnavailable,
		Message: "the health check did not finish in time; DynamoDB or S3 is not answering"},
	"POST /dev/jobs/{job}": {Limit: 110 * time.Second, Status: http.StatusGatewayTimeout,
		Message: "the job did not finish in time; GET /dev/jobs shows its last run"},
	"GET /dev/jobs": {Limit: 10 * time.Second, Status: http.StatusServiceUnavailable,
		Message: "the job list could not be loaded in time; try again"},
	// An agent run may take up to 7 minutes.
	"POST /dev/agents/{id}/run": {Limit: 8 * time.Minute, Status: http.StatusGatewayTimeout,
		Message: "the run did not finish in time; GET /dev/chains/{rootRunId} shows what it did"},
	"GET /dev/idle": {Limit: 60 * time.Second, Status: http.StatusGatewayTimeout,
		Message: "wakes were still queued, running or waiting for a retry after 60 s; ask again"},
	"GET /dev/executions/{id}": {Limit: 10 * time.Second, Status: http.StatusServiceUnavailable,
		Message: "the execution history could not be loaded in time; try again"},
	"GET /dev/chains/{root}": {Limit: 10 * time.Second, Status: http.StatusServiceUnavailable,
		Message: "the chain could not be loaded in time; try again"},
}

// DefaultBudget applies to a route missing from Budgets (and to requests no
// route matches, which answer at once anyway).
var DefaultBudget = Budget{Limit: 10 * time.Second, Status: http.StatusServiceUnavailable,
	Message: "the request did not finish in time; try again"}

// BudgetFor returns the budget of a ServeMux pattern.
func BudgetFor(pattern string) Budget {
	if b, ok := Budgets[pattern]; ok {
		return b
	}
	return DefaultBudget
}

// WithBudgets serves mux with each route's budget from Budgets. The
// handler's context ends when the budget is spent, so every DynamoDB, S3 and
// third-party call under it gives up; and when the handler has not answered
// by then (it waits on something that ignores its context), the caller gets
// the budget's status with an error envelope at once. What the handler
// writes after that is discarded.
//
// The handler's answer is buffered until it returns, which is what a
// function URL does anyway; none of these routes streams.
func WithBudgets(mux *http.ServeMux, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := mux.Handler(r)
		b := BudgetFor(pattern)
		ctx, cancel := context.WithTimeout(r.Context(), b.Limit)
		defer cancel()

		bw := &bufferedWriter{header: http.Header{}}
		done := make(chan struct{})
		panicked := make(chan any, 1)
		start := time.Now()
		go func() {
			defer func() {
				if p := recover(); p != nil {
					panicked <- p
				}
			}()
			mux.ServeHTTP(bw, r.WithContext(ctx))
			close(done)
		}()
		select {
		case p := <-panicked:
			panic(p) // net/http logs it and closes the connection, as without us
		case <-done:
			bw.copyTo(w)
		case <-ctx.Done():
			bw.expire()
			if errors.Is(r.Context().Err(), context.Canceled) {
				return // the caller went away; nobody to answer
			}
			log.WarnContext(r.Context(), "route budget spent; answered for the handler",
				"route", pattern, "budget", b.Limit.String(), "elapsed", time.Since(start).Round(time.Millisecond).String(),
				"status", b.Status)
			writeBudgetAnswer(w, b)
		}
	})
}

// writeBudgetAnswer writes the error envelope of a spent budget.
func writeBudgetAnswer(w http.ResponseWriter, b Budget) {
	err := sb.E("httpapi.budget", sb.EUNAVAILABLE, b.Message)
	if b.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	env := sb.FailErr(err)
	env.Data["budget_ms"] = b.Limit.Milliseconds()
	WriteJSON(w, b.Status, env)
}

// bufferedWriter holds a handler's answer until it returns; after expire
// every write fails with http.ErrHandlerTimeout.
type bufferedWriter struct {
	mu      sync.Mutex
	header  http.Header
	status  int
	body    bytes.Buffer
	expired bool
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(status int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.expired || b.status != 0 {
		return
	}
	if status < 100 || status > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", status))
	}
	b.status = status
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.expired {
		return 0, http.ErrHandlerTimeout
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (b *bufferedWriter) expire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expired = true
}

// copyTo sends the buffered answer; called once the handler has returned.
func (b *bufferedWriter) copyTo(w http.ResponseWriter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	dst := w.Header()
	for k, v := range b.header {
		dst[k] = v
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body.Bytes())
}
