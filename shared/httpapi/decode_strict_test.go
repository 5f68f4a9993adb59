package httpapi_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/httpapi"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"io"
	"log/slog"
)

func TestBugTrailingCloserAccepted(t *testing.T) {
	for _, body := range []string{`{"agent":"a"}}`, `{"agent":"a"}]`, `{"agent":"a"} ]]]}`, `null`} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		var q httpapi.InvokeRequest
		if err := httpapi.DecodeJSON(r, &q); err == nil {
			t.Errorf("DecodeJSON(%s) accepted; want EINVALID (not exactly one JSON object)", body)
		}
	}
}

func TestBugContentTypeCase(t *testing.T) {
	for _, ct := range []string{"Application/JSON", "APPLICATION/JSON; charset=utf-8"} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(`{"agent":"a"}`))
		r.Header.Set("Content-Type", ct)
		var q httpapi.InvokeRequest
		if err := httpapi.DecodeJSON(r, &q); err != nil {
			t.Errorf("Content-Type %q refused: %v", ct, err)
		}
	}
	for _, ct := range []string{"application/jsonp", "application/json-seq", "application/json+x"} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(`{"agent":"a"}`))
		r.Header.Set("Content-Type", ct)
		var q httpapi.InvokeRequest
		if err := httpapi.DecodeJSON(r, &q); err == nil {
			t.Errorf("Content-Type %q accepted", ct)
		}
	}
}

func TestBugRetryAfterSubMillisecond(t *testing.T) {
	for _, d := range []time.Duration{time.Nanosecond, 100 * time.Microsecond, time.Millisecond} {
		w := httptest.NewRecorder()
		httpapi.WriteError(w, httptest.NewRequest("GET", "/", nil), slog.New(slog.NewTextHandler(io.Discard, nil)),
			&sb.Error{Op: "op", Code: sb.ERATELIMITED, Message: "m", RetryAfter: d, Err: errors.New("x")})
		if got := w.Header().Get("Retry-After"); got != "1" {
			t.Errorf("RetryAfter %v → Retry-After %q, want 1", d, got)
		}
	}
}

func TestBugTypeErrorNamesGoTypes(t *testing.T) {
	for _, body := range []string{`{"run":"x"}`, `[]`, `"x"`} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		var q httpapi.InvokeRequest
		msg := sb.ErrorMessage(httpapi.DecodeJSON(r, &q))
		if strings.Contains(msg, "switchboard.") || strings.Contains(msg, "httpapi.") || strings.Contains(msg, `field ""`) {
			t.Errorf("%s → %q: Go type names / empty field name reach the caller", body, msg)
		}
	}
}
