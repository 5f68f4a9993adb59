package httpapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/platform/runtoken"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// FuzzDecodeInvokeRequest: whatever the body of POST /tools/invoke, decoding
// never panics and ends in either a valid InvokeRequest (one that survives a
// strict re-encode/decode round trip) or an EINVALID error with a
// caller-safe message; the route answers 200/202 after calling the service
// with a fully stamped call, or 400/403/404 with an error envelope — never
// 500 (403: a "run" token that is not the engine's).
func FuzzDecodeInvokeRequest(f *testing.F) {
	for _, seed := range []string{
		`{"agent":"hermes","tool":"Workspace","action":"list","args":{"prefix":"personal:"}}`,
		`{"agent":"hermes","tool":"Workspace","action":"write","args":{"path":"personal:notes/hello.md","content":"# Hello\n"}}`,
		`{"agent":"hermes","tool":"Workspace","action":"list","run":{"runId":"a","parentRunId":"b","rootRunId":"c","agentId":"x"}}`,
		`{"agent":"hermes","tool":"Workspace","action":"list","run":{}}`,
		`{"agent":"hermes","tool":"Workspace","action":"list","run":{"token":"v1.e30.AAAA"}}`,
		`{"agent":"hermes","tool":"Workspace","action":"list","run":{"token":"","callPath":""}}`,
		`{"agent":"hermes","tool":"Workspace","action":"list","run":null,"args":null}`,
		`{"agent":"nobody","tool":"T","action":"a"}`,
		`{"agent":5}`,
		`{"agnet":"hermes"}`,
		`{"run":{"runId":1}}`,
		`{"agent":"a"} {"agent":"b"}`,
		`{"agent":"a"}}`,
		`[]`,
		`null`,
		`""`,
		``,
		` `,
		`{`,
		`{"args":{"a":[1,2,{"b":null}]},"agent":"\u0000"}`,
		`{"agent":"h\ud800","tool":"\"","action":"\\"}`,
		`{"AGENT":"hermes","Tool":"Workspace","ACTION":"list"}`,
		`{"agent":"hermes","agent":"atlas","tool":"Workspace","action":"list"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest("POST", "/tools/invoke", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		var q httpapi.InvokeRequest
		err := httpapi.DecodeJSON(r, &q)
		if err != nil {
			checkInvalid(t, body, err)
		} else {
			checkRoundTrip(t, body, q)
		}
		checkRoute(t, body)
	})
}

func checkInvalid(t *testing.T, body []byte, err error) {
	t.Helper()
	var e *sb.Error
	if !errors.As(err, &e) || sb.ErrorCode(err) != sb.EINVALID {
		t.Fatalf("DecodeJSON(%q) = %v (%T), want an *Error with code %s", body, err, err, sb.EINVALID)
	}
	msg := sb.ErrorMessage(err)
	if !strings.HasPrefix(msg, "the request body ") {
		t.Fatalf("DecodeJSON(%q) message %q does not say what is wrong with the body", body, msg)
	}
	if env := sb.FailErr(err); env.Error != msg {
		t.Fatalf("FailErr shows %q, want the caller-safe message %q", env.Error, msg)
	}
}

func checkRoundTrip(t *testing.T, body []byte, q httpapi.InvokeRequest) {
	t.Helper()
	if q.Args != nil && !json.Valid(q.Args) {
		t.Fatalf("DecodeJSON(%q) accepted args that are not JSON: %q", body, q.Args)
	}
	b, err := json.Marshal(q)
	if err != nil {
		t.Fatalf("re-encode %+v (from %q): %v", q, body, err)
	}
	r := httptest.NewRequest("POST", "/tools/invoke", bytes.NewReader(b))
	var again httpapi.InvokeRequest
	if err := httpapi.DecodeJSON(r, &again); err != nil {
		t.Fatalf("re-encoded request %s (from %q) does not decode: %v", b, body, err)
	}
	if !reflect.DeepEqual(normalise(q), normalise(again)) {
		t.Fatalf("round trip of %q changed the request:\n got %+v\nwant %+v", body, again, q)
	}
}

// normalise makes Args comparable: Marshal compacts raw JSON and writes an
// absent Args as null.
func normalise(q httpapi.InvokeRequest) httpapi.InvokeRequest {
	if q.Args == nil {
		q.Args = json.RawMessage("null")
	}
	var buf bytes.Buffer
	if json.Compact(&buf, q.Args) == nil {
		q.Args = buf.Bytes()
	}
	return q
}

// fuzzKeys are the run-token keys of the fuzzed route.
var fuzzKeys = func() *runtoken.Keys {
	k, err := runtoken.New("fuzz-approval-signing-key-0001")
	if err != nil {
		panic(err)
	}
	return k
}()

func checkRoute(t *testing.T, body []byte) {
	t.Helper()
	f := &fakeTools{answer: sb.OK(nil)}
	mux := http.NewServeMux()
	httpapi.ToolRoutes(mux, f, func(id string) bool { return id == "hermes" }, runtoken.Live{Keys: fuzzKeys}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r := httptest.NewRequest("POST", "/tools/invoke", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)

	var env map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
		t.Fatalf("POST %q answered %d with a body that is not JSON: %q", body, w.Code, w.Body.Bytes())
	}
	switch w.Code {
	case http.StatusOK, http.StatusAccepted:
		if len(f.calls) != 1 {
			t.Fatalf("POST %q = %d with %d service calls, want 1", body, w.Code, len(f.calls))
		}
		c := f.calls[0]
		if c.AgentID != "hermes" || c.Tool == "" || c.Action == "" {
			t.Fatalf("POST %q called the service with %+v: agent, tool and action must be set", body, c)
		}
		if c.Run.RunID == "" || c.Run.RootRunID == "" || c.Run.AgentID != c.AgentID {
			t.Fatalf("POST %q called the service with run %+v: not stamped", body, c.Run)
		}
		if c.Origin != sb.OriginOperator && c.Origin != sb.OriginAgent {
			t.Fatalf("POST %q: Origin = %q", body, c.Origin)
		}
	case http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound:
		if len(f.calls) != 0 {
			t.Fatalf("POST %q = %d but the service was called", body, w.Code)
		}
		if env["status"] != "error" || env["error"] == "" {
			t.Fatalf("POST %q = %d with %v, want an error envelope", body, w.Code, env)
		}
	default:
		t.Fatalf("POST %q = %d %s, want 200, 202, 400, 403 or 404", body, w.Code, w.Body.Bytes())
	}
}
