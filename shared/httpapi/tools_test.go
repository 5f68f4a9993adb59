package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/platform/runtoken"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// fakeTools is a ToolService that records calls and answers with a fixed
// envelope.
type fakeTools struct {
	mu     sync.Mutex
	answer sb.Envelope
	calls  []sb.ToolCall
	listed []string
}

var _ httpapi.ToolService = (*fakeTools)(nil)

func (f *fakeTools) Specs(agentID string) []sb.ToolSpec {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listed = append(f.listed, agentID)
	specs := []sb.ToolSpec{{Name: "Workspace", Description: "files", Actions: []sb.ActionSpec{{Name: "list"}}}}
	if agentID == "" {
		specs = append(specs, sb.ToolSpec{Name: "Nextcloud", Actions: []sb.ActionSpec{{Name: "upload"}}})
	}
	return specs
}

func (f *fakeTools) Invoke(_ context.Context, call sb.ToolCall) sb.Envelope {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	return f.answer
}

func newToolServer(t *testing.T, answer sb.Envelope) (*fakeTools, http.Handler) {
	t.Helper()
	return newToolServerWith(t, answer, runtoken.Live{Keys: testKeys(t, time.Now)})
}

func newToolServerWith(t *testing.T, answer sb.Envelope, runs httpapi.RunVerifier) (*fakeTools, http.Handler) {
	t.Helper()
	f := &fakeTools{answer: answer}
	mux := http.NewServeMux()
	agents := map[string]bool{"hermes": true, "atlas": true}
	httpapi.ToolRoutes(mux, f, func(id string) bool { return agents[id] }, runs, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return f, mux
}

// testKeys are the engine's run-token keys of the tests, on clock now.
func testKeys(t testing.TB, now func() time.Time) *runtoken.Keys {
	t.Helper()
	k, err := runtoken.New("tools-test-approval-signing-key")
	if err != nil {
		t.Fatal(err)
	}
	k.Now = now
	return k
}

func serve(t *testing.T, h http.Handler, method, target, body string) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Code, decodeEnvelope(t, w.Body.Bytes())
}

func TestToolRoutesList(t *testing.T) {
	tests := []struct {
		name       string
		target     string
		wantStatus int
		wantTools  []string
		wantError  string
	}{
		{name: "all tools", target: "/tools", wantStatus: 200, wantTools: []string{"Workspace", "Nextcloud"}},
		{name: "one agent's tools", target: "/tools?agent=hermes", wantStatus: 200, wantTools: []string{"Workspace"}},
		{name: "unknown agent", target: "/tools?agent=nobody", wantStatus: 404, wantError: `no agent "nobody" in the config`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, h := newToolServer(t, sb.OK(nil))
			status, body := serve(t, h, "GET", tt.target, "")
			if status != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %v", status, tt.wantStatus, body)
			}
			if tt.wantError != "" {
				if body["status"] != "error" || body["error"] != tt.wantError || body["code"] != sb.ENOTFOUND {
					t.Errorf("body = %v, want error %q with code %s", body, tt.wantError, sb.ENOTFOUND)
				}
				return
			}
			list, _ := body["tools"].([]any)
			var names []string
			for _, x := range list {
				m, _ := x.(map[string]any)
				name, _ := m["name"].(string)
				names = append(names, name)
			}
			if strings.Join(names, ",") != strings.Join(tt.wantTools, ",") {
				t.Errorf("tools = %v, want %v", names, tt.wantTools)
			}
		})
	}
}

func TestToolRoutesMethods(t *testing.T) {
	_, h := newToolServer(t, sb.OK(nil))
	for _, tt := range []struct{ method, target string }{
		{"GET", "/tools/invoke"},
		{"POST", "/tools"},
		{"DELETE", "/tools/invoke"},
	} {
		req := httptest.NewRequest(tt.method, tt.target, nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s %s = %d, want 405", tt.method, tt.target, w.Code)
		}
	}
}

func TestToolRoutesInvokeStatus(t *testing.T) {
	tests := []struct {
		name       string
		answer     sb.Envelope
		body       string
		wantStatus int
		wantError  string // part of the envelope's error text
		wantCalled bool
	}{
		{name: "ok", answer: sb.OK(map[string]any{"path": "personal:a.md"}),
			body:       `{"agent":"hermes","tool":"Workspace","action":"list","args":{"prefix":"personal:"}}`,
			wantStatus: 200, wantCalled: true},
		{name: "pending approval", answer: sb.Envelope{Status: sb.OutcomePending, NeedsConfirmation: true},
			body:       `{"agent":"hermes","tool":"Workspace","action":"delete","args":{"path":"a.md"}}`,
			wantStatus: 202, wantCalled: true},
		{name: "tool error envelope is still an answer", answer: sb.Fail("no such file; list the folder first"),
			body:       `{"agent":"hermes","tool":"Workspace","action":"read","args":{"path":"x"}}`,
			wantStatus: 200, wantError: "no such file", wantCalled: true},
		{name: "a service the call needs is unavailable: 503 so that HTTP retries see it",
			answer:     sb.FailErr(sb.E("workspace.list", sb.EUNAVAILABLE, "the workspace storage is unavailable right now; try again in a minute")),
			body:       `{"agent":"hermes","tool":"Workspace","action":"list","args":{}}`,
			wantStatus: 503, wantError: "try again in a minute", wantCalled: true},
		{name: "other coded errors stay 200", answer: sb.FailErr(sb.E("workspace.read", sb.ENOTFOUND, "no such file")),
			body:       `{"agent":"hermes","tool":"Workspace","action":"read","args":{"path":"x"}}`,
			wantStatus: 200, wantError: "no such file", wantCalled: true},
		{name: "missing agent", body: `{"tool":"Workspace","action":"list"}`,
			wantStatus: 400, wantError: `"agent" is required`},
		{name: "missing tool", body: `{"agent":"hermes","action":"list"}`,
			wantStatus: 400, wantError: `"tool" is required`},
		{name: "missing action", body: `{"agent":"hermes","tool":"Workspace"}`,
			wantStatus: 400, wantError: `"action" is required`},
		{name: "unknown field", body: `{"agent":"hermes","tool":"Workspace","action":"list","runid":"x"}`,
			wantStatus: 400, wantError: `unknown field "runid"`},
		{name: "not JSON", body: `agent=hermes`,
			wantStatus: 400, wantError: "must be a JSON object"},
		{name: "unknown agent", body: `{"agent":"nobody","tool":"Workspace","action":"list"}`,
			wantStatus: 404, wantError: `no agent "nobody"`},
		{name: "empty run", body: `{"agent":"hermes","tool":"Workspace","action":"list","run":{}}`,
			wantStatus: 400, wantError: `"run" must be {"token": "<the engine's run token>"}`},
		{name: "bare run ids", body: `{"agent":"hermes","tool":"Workspace","action":"list","run":{"runId":"r1","rootRunId":"r1"}}`,
			wantStatus: 400, wantError: `run ids and call paths are never taken from a caller`},
		{name: "run without root", body: `{"agent":"hermes","tool":"Workspace","action":"list","run":{"runId":"r1"}}`,
			wantStatus: 400, wantError: `"run" must be {"token"`},
		{name: "run without run id", body: `{"agent":"hermes","tool":"Workspace","action":"list","run":{"rootRunId":"r0"}}`,
			wantStatus: 400, wantError: `"run" must be {"token"`},
		{name: "a token that is no token", body: `{"agent":"hermes","tool":"Workspace","action":"list","run":{"token":"v1.x.y"}}`,
			wantStatus: 403, wantError: `signature does not match`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, h := newToolServer(t, tt.answer)
			status, body := serve(t, h, "POST", "/tools/invoke", tt.body)
			if status != tt.wantStatus {
				t.Errorf("status = %d, want %d; body %v", status, tt.wantStatus, body)
			}
			if called := len(f.calls) == 1; called != tt.wantCalled {
				t.Errorf("service called = %v (%d calls), want %v", called, len(f.calls), tt.wantCalled)
			}
			if tt.wantError != "" {
				if body["status"] != "error" || !strings.Contains(body["error"].(string), tt.wantError) {
					t.Errorf("body = %v, want an error envelope containing %q", body, tt.wantError)
				}
			} else if body["status"] != tt.answer.Status {
				t.Errorf("body = %v, want the service's envelope (status %q)", body, tt.answer.Status)
			}
		})
	}
}

var runIDPattern = regexp.MustCompile(`^[0-9a-f]{26}$`)

func TestToolRoutesRunContext(t *testing.T) {
	t.Run("operator call gets a fresh root run", func(t *testing.T) {
		f, h := newToolServer(t, sb.OK(nil))
		status, _ := serve(t, h, "POST", "/tools/invoke",
			`{"agent":"hermes","tool":"Workspace","action":"list","args":{"prefix":"personal:"}}`)
		if status != 200 || len(f.calls) != 1 {
			t.Fatalf("status %d, %d calls; want 200 and one call", status, len(f.calls))
		}
		call := f.calls[0]
		if call.Origin != sb.OriginOperator {
			t.Errorf("Origin = %q, want %q", call.Origin, sb.OriginOperator)
		}
		if !runIDPattern.MatchString(call.Run.RunID) || call.Run.RootRunID != call.Run.RunID || call.Run.ParentRunID != "" {
			t.Errorf("Run = %+v, want a root run (RootRunID = RunID, no parent)", call.Run)
		}
		if call.Run.AgentID != "hermes" || call.AgentID != "hermes" || call.Tool != "Workspace" || call.Action != "list" {
			t.Errorf("call = %+v, want agent hermes, Workspace.list", call)
		}
		if call.Approved {
			t.Error("Approved = true; only the approvals flow may set it")
		}
		var args map[string]any
		if err := json.Unmarshal(call.Args, &args); err != nil || args["prefix"] != "personal:" {
			t.Errorf("Args = %s, want the request's args", call.Args)
		}
	})
	t.Run("two operator calls are two runs", func(t *testing.T) {
		f, h := newToolServer(t, sb.OK(nil))
		for i := 0; i < 2; i++ {
			serve(t, h, "POST", "/tools/invoke", `{"agent":"hermes","tool":"Workspace","action":"list"}`)
		}
		if len(f.calls) != 2 || f.calls[0].Run.RunID == f.calls[1].Run.RunID {
			t.Errorf("calls = %+v, want two calls with different run ids", f.calls)
		}
	})
	t.Run("engine call keeps its run", func(t *testing.T) {
		now := time.Now()
		keys := testKeys(t, func() time.Time { return now })
		f, h := newToolServerWith(t, sb.OK(nil), runtoken.Live{Keys: keys})
		run := sb.RunContext{RunID: "run-child", ParentRunID: "run-parent", RootRunID: "run-root", AgentID: "atlas", CallPath: "hermes"}
		status, body := serve(t, h, "POST", "/tools/invoke", `{"agent":"atlas","tool":"Workspace","action":"list","run":{"token":"`+issue(t, keys, run, now.Add(time.Minute))+`"}}`)
		if status != 200 || len(f.calls) != 1 {
			t.Fatalf("status %d, %d calls (%v); want 200 and one call", status, len(f.calls), body)
		}
		call := f.calls[0]
		if call.Run != run {
			t.Errorf("Run = %+v, want the token's %+v", call.Run, run)
		}
		if call.Origin != sb.OriginAgent {
			t.Errorf("Origin = %q, want %q", call.Origin, sb.OriginAgent)
		}
	})
}

func issue(t *testing.T, keys *runtoken.Keys, run sb.RunContext, expires time.Time) string {
	t.Helper()
	tok, err := keys.Issue(run, expires)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// The attack run's calls, refused: a run is believed only as the engine's
// token, only for the token's own agent, and only until it expires; run
// ids or a call path sent beside or instead of a token are refused, never
// used. The service is not called, so nothing is audited or costed in
// anyone's chain.
func TestToolRoutesRefuseAForgedRun(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 15, 0, 0, time.UTC)
	keys := testKeys(t, func() time.Time { return now })
	hermes := sb.RunContext{RunID: "run-h", RootRunID: "root-h", AgentID: "hermes"}
	hermesToken := issue(t, keys, hermes, now.Add(time.Minute))
	otherKeys, err := runtoken.New("another-instance-signing-key")
	if err != nil {
		t.Fatal(err)
	}
	otherKeys.Now = func() time.Time { return now }
	otherInstance := issue(t, otherKeys, hermes, now.Add(time.Minute))
	// hermes's payload under atlas's signature: the MAC covers the payload.
	atlasToken := issue(t, keys, sb.RunContext{RunID: "run-a", RootRunID: "root-a", AgentID: "atlas"}, now.Add(time.Minute))
	hp, ap := strings.Split(hermesToken, "."), strings.Split(atlasToken, ".")
	tampered := hp[0] + "." + hp[1] + "." + ap[2]

	tests := []struct {
		name       string
		agent      string
		run        string
		at         time.Time
		wantStatus int
		wantError  string
	}{
		{"atlas with hermes's token", "atlas", `{"token":"` + hermesToken + `"}`, now, 403,
			"the run token names a run of hermes, not of atlas"},
		{"atlas with hermes's bare run ids", "atlas", `{"runId":"run-h","rootRunId":"root-h"}`, now, 400,
			"run ids and call paths are never taken from a caller"},
		{"a parentRunId that never existed", "hermes", `{"runId":"x","parentRunId":"never-existed","rootRunId":"root-h"}`, now, 400,
			"run ids and call paths are never taken from a caller"},
		{"a token with a call path beside it", "hermes", `{"token":"` + hermesToken + `","callPath":""}`, now, 400,
			"run ids and call paths are never taken from a caller"},
		{"a token with run ids beside it", "hermes", `{"token":"` + hermesToken + `","rootRunId":"root-x"}`, now, 400,
			"run ids and call paths are never taken from a caller"},
		{"tampered token", "hermes", `{"token":"` + tampered + `"}`, now, 403, "signature does not match"},
		{"another instance's token", "hermes", `{"token":"` + otherInstance + `"}`, now, 403, "signature does not match"},
		{"expired token", "hermes", `{"token":"` + hermesToken + `"}`, now.Add(time.Minute), 403, "the run token expired at 2026-12-02T10:16:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := tt.at
			keys.Now = func() time.Time { return clock }
			f, h := newToolServerWith(t, sb.OK(nil), runtoken.Live{Keys: keys})
			status, body := serve(t, h, "POST", "/tools/invoke",
				`{"agent":"`+tt.agent+`","tool":"Workspace","action":"list","run":`+tt.run+`}`)
			if status != tt.wantStatus || len(f.calls) != 0 {
				t.Fatalf("status %d with %d calls (%v), want %d and no call", status, len(f.calls), body, tt.wantStatus)
			}
			if msg, _ := body["error"].(string); body["status"] != "error" || !strings.Contains(msg, tt.wantError) {
				t.Errorf("body = %v, want an error saying %q", body, tt.wantError)
			}
		})
	}
	// A valid token of the same agent before its deadline is taken.
	keys.Now = func() time.Time { return now }
	f, h := newToolServerWith(t, sb.OK(nil), runtoken.Live{Keys: keys})
	if status, body := serve(t, h, "POST", "/tools/invoke", `{"agent":"hermes","tool":"Workspace","action":"list","run":{"token":"`+hermesToken+`"}}`); status != 200 || len(f.calls) != 1 || f.calls[0].Run != hermes {
		t.Errorf("hermes with its own token: %d %v, calls %+v; want 200 on hermes's run", status, body, f.calls)
	}
}

// Without run-token keys (no instance.approvals.signingKey) every token is
// refused; operator calls still work.
func TestToolRoutesWithoutRunTokens(t *testing.T) {
	f, h := newToolServerWith(t, sb.OK(nil), runtoken.Live{})
	status, body := serve(t, h, "POST", "/tools/invoke", `{"agent":"hermes","tool":"Workspace","action":"list","run":{"token":"v1.a.b"}}`)
	if status != 403 || len(f.calls) != 0 || !strings.Contains(body["error"].(string), "run tokens are not set up") {
		t.Errorf("token without keys: %d %v, %d calls; want 403 saying run tokens are not set up", status, body, len(f.calls))
	}
	if status, _ := serve(t, h, "POST", "/tools/invoke", `{"agent":"hermes","tool":"Workspace","action":"list"}`); status != 200 || len(f.calls) != 1 {
		t.Errorf("operator call without keys: %d, %d calls; want 200", status, len(f.calls))
	}
}

// A run whose liveness cannot be checked now is a 503 with Retry-After,
// not a call on a run that may have ended.
func TestToolRoutesRunCheckUnavailable(t *testing.T) {
	f, h := newToolServerWith(t, sb.OK(nil), downRuns{})
	req := httptest.NewRequest("POST", "/tools/invoke", strings.NewReader(`{"agent":"hermes","tool":"Workspace","action":"list","run":{"token":"t"}}`))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusServiceUnavailable || len(f.calls) != 0 {
		t.Errorf("status %d with %d calls, want 503 and no call", w.Code, len(f.calls))
	}
}

type downRuns struct{}

func (downRuns) Verify(context.Context, string) (sb.RunContext, error) {
	return sb.RunContext{}, sb.E("runtoken.verify", sb.EUNAVAILABLE, "could not be checked; try again in a moment")
}

func TestToolRoutesInvokeBodyLimit(t *testing.T) {
	f, h := newToolServer(t, sb.OK(nil))
	big := `{"agent":"hermes","tool":"Workspace","action":"write","args":{"content":"` +
		strings.Repeat("x", httpapi.MaxBody) + `"}}`
	req := httptest.NewRequest("POST", "/tools/invoke", bytes.NewReader([]byte(big)))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusBadRequest || len(f.calls) != 0 {
		t.Errorf("status = %d with %d calls, want 400 and no call", w.Code, len(f.calls))
	}
	if !strings.Contains(w.Body.String(), "larger than") {
		t.Errorf("body = %s, want it to say the body is too large", w.Body.String())
	}
}
