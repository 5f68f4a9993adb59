package devrt

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The sandbox page polls its API every second; those reads must not bury
// the one line per request that matters. Everything else, and any sandbox
// request that fails or changes something, is logged.
func TestRequestLogLeavesOutSandboxPolls(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	h := logRequests(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/missing") {
			w.WriteHeader(http.StatusNotFound)
		}
	}), log)
	cases := []struct {
		method, path string
		logged       bool
	}{
		{"GET", "/dev/sandbox/api/rooms/GENERAL/messages", false},
		{"GET", "/dev/sandbox/api/telegram", false},
		{"GET", "/dev/sandbox/api/missing", true},
		{"POST", "/dev/sandbox/api/rooms/GENERAL/messages", true},
		{"GET", "/dev/sandbox/", true},
		{"GET", "/healthz", true},
	}
	for _, c := range cases {
		buf.Reset()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(c.method, c.path, nil))
		if got := strings.Contains(buf.String(), `"path":"`+c.path+`"`); got != c.logged {
			t.Errorf("%s %s logged = %v, want %v (%s)", c.method, c.path, got, c.logged, buf.String())
		}
	}
}
