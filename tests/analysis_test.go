package tests

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnalysisToolThroughTheBinary: the AgentCommAnalysis block offers the
// tool to that agent only, and its index reads run against the dev
// runtime's tables (the byMonth index exists there).
func TestAnalysisToolThroughTheBinary(t *testing.T) {
	data, err := os.ReadFile("testdata/e2e.yaml")
	if err != nil {
		t.Fatal(err)
	}
	config := strings.Replace(string(data), "    tools: {}\n", "    tools:\n      AgentCommAnalysis: {}\n", 1)
	path := filepath.Join(t.TempDir(), "analysis.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDevConfig(t, path)
	_, _, m := d.do("GET", "/tools?agent=atlas", toolToken, nil)
	var names []string
	for _, x := range m["tools"].([]any) {
		names = append(names, str(x.(map[string]any)["name"]))
	}
	if strings.Join(names, ",") != "AgentCommAnalysis,notify_user" {
		t.Fatalf("tools for atlas = %v, want AgentCommAnalysis,notify_user", names)
	}
	for _, c := range []struct {
		action string
		args   map[string]any
	}{
		{"list_pairs", map[string]any{}},
		{"stats", map[string]any{"agent": "hermes"}},
		{"read_conversation", map[string]any{"a": "hermes", "b": "atlas"}},
		{"chain", map[string]any{"rootRunId": "r1"}},
		{"search", map[string]any{"query": "invoice"}},
	} {
		status, m := d.invoke("atlas", "AgentCommAnalysis", c.action, c.args)
		if status != http.StatusOK || m["status"] != "ok" {
			t.Errorf("atlas %s = %d %v", c.action, status, m)
		}
	}
	if _, m := d.invoke("hermes", "AgentCommAnalysis", "list_pairs", map[string]any{}); m["status"] != "error" ||
		!strings.Contains(str(m["error"]), "not configured for AgentCommAnalysis") {
		t.Errorf("hermes without the block: %v", m)
	}
}
