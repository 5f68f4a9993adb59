package tests

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestTaskboardOnTheToolAPI: the operator gives an agent a task through
// POST /tools/invoke with the short action names, lists it, and the two
// taskboard jobs run on POST /dev/jobs.
func TestTaskboardOnTheToolAPI(t *testing.T) {
	config := `instance:
  name: e2e-taskboard
  toolApiToken: env:E2E_TOOL_TOKEN
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}"}
  dev: {scheduler: false}
agents:
  - id: hermes
    name: Hermes
    systemPrompt: You are Hermes.
    tools:
      Taskboard: {}
  - id: atlas
    name: Atlas
    systemPrompt: You are Atlas.
    tools:
      Taskboard: {}
  - id: solo
    systemPrompt: You work alone.
    tools: {}
`
	path := filepath.Join(t.TempDir(), "taskboard.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDevConfig(t, path)

	status, m := d.invoke("hermes", "Taskboard", "create", map[string]any{"assignee": "atlas", "title": "Check the backup", "description": "Was last night's backup complete?"})
	if status != http.StatusOK || m["status"] != "ok" || str(m["taskId"]) == "" || m["assigneeWoken"] != true {
		t.Fatalf("create = %d %v", status, m)
	}
	status, m = d.invoke("hermes", "Taskboard", "list", map[string]any{"filter": "created"})
	if status != http.StatusOK || m["count"] != float64(1) {
		t.Errorf("list = %d %v, want the human's one task", status, m)
	}
	status, m = d.invoke("hermes", "Taskboard", "task_create", map[string]any{"assignee": "solo", "title": "x", "description": "y"})
	if status != http.StatusOK || m["status"] != "error" || m["code"] != "invalid" { // an error the caller fixes: 200
		t.Errorf("task for an agent without the Taskboard = %d %v, want refused", status, m)
	}
	mustContain(t, "refusal", str(m["error"]), "solo does not take tasks")
	for _, job := range []string{"task-watchdog", "task-wakes"} {
		if status, _, m := d.do("POST", "/dev/jobs/"+job, "", nil); status != http.StatusOK || m["outcome"] != "ok" {
			t.Errorf("%s = %d %v", job, status, m)
		}
	}
}
