package tests

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// The dev listener writes one log line per request: method, path, status,
// duration, and the run id when the request started a run.
func TestDevLogsOneLinePerRequest(t *testing.T) {
	d := startDev(t)
	d.do("GET", "/healthz", "", nil)
	status, hdr, body := d.do("POST", "/dev/agents/hermes/run", "", map[string]string{"message": "hello"})
	if status != http.StatusOK {
		t.Fatalf("run = %d %v", status, body)
	}
	runID := hdr.Get("X-Switchboard-Run-Id")
	if runID == "" {
		t.Fatal("the run answer carries no X-Switchboard-Run-Id")
	}
	var seen map[string]map[string]any
	d.untilLog(5*time.Second, "request lines for both requests", func(lines []string) bool {
		seen = map[string]map[string]any{}
		for _, line := range lines {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "request" {
				seen[str(rec["method"])+" "+str(rec["path"])] = rec
			}
		}
		return len(seen) >= 2
	})
	h, ok := seen["GET /healthz"]
	if !ok || h["status"] != float64(200) || h["durationMs"] == nil {
		t.Errorf("no request line for GET /healthz with status and duration: %v", seen)
	}
	r, ok := seen["POST /dev/agents/hermes/run"]
	if !ok || r["status"] != float64(200) || r["runId"] != runID {
		t.Errorf("request line for the run = %v, want status 200 and runId %s", r, runID)
	}
}
