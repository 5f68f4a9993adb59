package httpapi_test

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/httpapi"
)

// withBudget installs a budget for pattern for the length of the test.
func withBudget(t *testing.T, pattern string, b httpapi.Budget) {
	t.Helper()
	old, had := httpapi.Budgets[pattern]
	httpapi.Budgets[pattern] = b
	t.Cleanup(func() {
		if had {
			httpapi.Budgets[pattern] = old
		} else {
			delete(httpapi.Budgets, pattern)
		}
	})
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestWithBudgetsPassesAFastAnswerThrough(t *testing.T) {
	withBudget(t, "POST /fast", httpapi.Budget{Limit: time.Second, Status: http.StatusServiceUnavailable, Message: "m"})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /fast", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Test", "yes")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "hello")
	})
	rec := httptest.NewRecorder()
	httpapi.WithBudgets(mux, quiet()).ServeHTTP(rec, httptest.NewRequest("POST", "/fast", nil))
	if rec.Code != http.StatusCreated || rec.Body.String() != "hello" || rec.Header().Get("X-Test") != "yes" {
		t.Errorf("got %d %q %v, want the handler's 201 hello with its header", rec.Code, rec.Body.String(), rec.Header())
	}
}

// A handler's context carries the route's deadline, so calls under it give up.
func TestWithBudgetsGivesTheHandlerTheDeadline(t *testing.T) {
	withBudget(t, "GET /dl", httpapi.Budget{Limit: 700 * time.Millisecond, Status: http.StatusServiceUnavailable, Message: "m"})
	var left time.Duration
	mux := http.NewServeMux()
	mux.HandleFunc("GET /dl", func(w http.ResponseWriter, r *http.Request) {
		d, ok := r.Context().Deadline()
		if !ok {
			t.Error("handler context has no deadline")
		}
		left = time.Until(d)
	})
	httpapi.WithBudgets(mux, quiet()).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/dl", nil))
	if left <= 0 || left > 700*time.Millisecond {
		t.Errorf("deadline %v away, want within the 700ms budget", left)
	}
}

func TestWithBudgetsAnswersForAHandlerThatIgnoresItsContext(t *testing.T) {
	tests := []struct {
		name, pattern, target string
		budget                httpapi.Budget
		wantRetryAfter        bool
	}{
		{name: "webhook-style 503", pattern: "POST /hook", target: "/hook",
			budget:         httpapi.Budget{Limit: 50 * time.Millisecond, Status: http.StatusServiceUnavailable, Message: "temporarily unable; the sender will retry"},
			wantRetryAfter: true},
		{name: "tool-style 504", pattern: "POST /call", target: "/call",
			budget: httpapi.Budget{Limit: 50 * time.Millisecond, Status: http.StatusGatewayTimeout, Message: "did not finish; check before you call again"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withBudget(t, tt.pattern, tt.budget)
			release := make(chan struct{})
			lateWrite := make(chan error, 1)
			mux := http.NewServeMux()
			mux.HandleFunc(tt.pattern, func(w http.ResponseWriter, r *http.Request) {
				<-release // e.g. a write under context.WithoutCancel on a hung database
				_, err := io.WriteString(w, `{"late":true}`)
				lateWrite <- err
			})
			srv := httptest.NewServer(httpapi.WithBudgets(mux, quiet()))
			defer srv.Close()
			defer close(release)

			start := time.Now()
			resp, err := http.Post(srv.URL+tt.target, "application/json", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			elapsed := time.Since(start)
			defer resp.Body.Close()
			var env map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
				t.Fatalf("answer is not JSON: %v", err)
			}
			if resp.StatusCode != tt.budget.Status {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.budget.Status)
			}
			if env["status"] != "error" || env["error"] != tt.budget.Message || env["code"] != "unavailable" {
				t.Errorf("envelope = %v, want status error, the budget's message and code unavailable", env)
			}
			if got := resp.Header.Get("Retry-After") != ""; got != tt.wantRetryAfter {
				t.Errorf("Retry-After present = %v, want %v", got, tt.wantRetryAfter)
			}
			if elapsed > 2*time.Second {
				t.Errorf("answered after %v; the budget is %v", elapsed, tt.budget.Limit)
			}
			release <- struct{}{}
			if err := <-lateWrite; !errors.Is(err, http.ErrHandlerTimeout) {
				t.Errorf("late write = %v, want http.ErrHandlerTimeout", err)
			}
		})
	}
}

// A handler that honours its context answers itself (here with its own 503
// body) — the middleware's answer is only the fallback.
func TestWithBudgetsKeepsTheHandlersOwnAnswerWhenItStopsInTime(t *testing.T) {
	withBudget(t, "POST /polite", httpapi.Budget{Limit: 2 * time.Second, Status: http.StatusGatewayTimeout, Message: "fallback"})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /polite", func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond): // a per-call deadline shorter than the route's
		}
		httpapi.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "error", "error": "mine"})
	})
	rec := httptest.NewRecorder()
	httpapi.WithBudgets(mux, quiet()).ServeHTTP(rec, httptest.NewRequest("POST", "/polite", nil))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "mine") {
		t.Errorf("got %d %s, want the handler's own 503", rec.Code, rec.Body.String())
	}
}

func TestWithBudgetsPropagatesAPanic(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /boom", func(http.ResponseWriter, *http.Request) { panic("boom") })
	defer func() {
		if p := recover(); p != "boom" {
			t.Errorf("recovered %v, want the handler's panic", p)
		}
	}()
	httpapi.WithBudgets(mux, quiet()).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/boom", nil))
}

// The budget is looked up by the pattern the mux matched, not the raw path.
func TestWithBudgetsUsesTheMatchedPattern(t *testing.T) {
	withBudget(t, "GET /items/{id}", httpapi.Budget{Limit: 30 * time.Millisecond, Status: http.StatusServiceUnavailable, Message: "items"})
	var calls atomic.Int32
	answered := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		<-r.Context().Done()
		<-answered // answers too late: only after the budget's answer
	})
	rec := httptest.NewRecorder()
	httpapi.WithBudgets(mux, quiet()).ServeHTTP(rec, httptest.NewRequest("GET", "/items/42", nil))
	close(answered)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"items"`) {
		t.Errorf("got %d %s, want the budget answer of GET /items/{id}", rec.Code, rec.Body.String())
	}
	if calls.Load() != 1 {
		t.Errorf("handler ran %d times, want 1", calls.Load())
	}
}

func TestBudgetsAreSane(t *testing.T) {
	for pattern, b := range httpapi.Budgets {
		if b.Limit <= 0 || b.Message == "" || (b.Status != http.StatusServiceUnavailable && b.Status != http.StatusGatewayTimeout) {
			t.Errorf("%s: budget %+v needs a limit, a message and status 503 or 504", pattern, b)
		}
	}
	// Rocket.Chat expects an answer within about a second.
	if b := httpapi.BudgetFor("POST /hooks/rocketchat"); b.Limit >= time.Second || b.Status != http.StatusServiceUnavailable {
		t.Errorf("rocketchat webhook budget %+v: want under 1 s and 503 (a 500 is not retried)", b)
	}
}
