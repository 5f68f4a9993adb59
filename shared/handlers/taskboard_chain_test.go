package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// assigneeModel is an OpenAI-compatible chat-completions server for the
// assignee: woken with a task, it calls the function offered for
// completing it with the task id from the wake message; given the tool's
// answer, it says it is done. It answers like the real API (tool_calls
// with arguments as JSON text, usage).
type assigneeModel struct {
	mu      sync.Mutex
	offered []string // function names of the last request
}

var taskIDInWake = regexp.MustCompile(`taskId "([0-9a-f]{26})"`)

func (m *assigneeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Function.Name)
	}
	m.mu.Lock()
	m.offered = names
	m.mu.Unlock()
	last := req.Messages[len(req.Messages)-1]
	msg := map[string]any{"role": "assistant", "content": "The invoices add up to 4711 EUR; I completed the task."}
	if last.Role != "tool" {
		wakeText := ""
		for _, mm := range req.Messages {
			if mm.Role == "user" && mm.Content != nil {
				wakeText = *mm.Content
			}
		}
		id := taskIDInWake.FindStringSubmatch(wakeText)
		fn := ""
		for _, n := range names {
			if strings.Contains(n, "task_complete") {
				fn = n
			}
		}
		if id == nil || fn == "" {
			http.Error(w, `{"error":{"message":"no task in the wake or no task_complete offered"}}`, http.StatusBadRequest)
			return
		}
		args, _ := json.Marshal(map[string]string{"taskId": id[1], "result": "4711 EUR"})
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"id": "call_1", "type": "function", "function": map[string]any{"name": fn, "arguments": string(args)}}}}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"choices": []any{map[string]any{"message": msg, "finish_reason": "stop"}},
		"usage":   map[string]int{"prompt_tokens": 120, "completion_tokens": 30},
	})
}

// TestTaskboardWakeChain runs the whole delegation through the app layer:
// ada (the scripted model) is woken with "call Taskboard.create …" (the
// short name, audited as task_create),
// which wakes bob (an OpenAI-compatible model) in the local pool; bob
// completes the task, which wakes ada again. The three runs form one chain:
// bob's run is a follow-up of ada's first, ada's second of bob's.
func TestTaskboardWakeChain(t *testing.T) {
	model := &assigneeModel{}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	config := fmt.Sprintf(`instance:
  name: taskboard-chain
  channels: [Telegram]
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}"}
  dev: {scheduler: false}
agents:
  - id: ada
    name: Ada
    systemPrompt: You are Ada.
    tools:
      Taskboard: {}
  - id: bob
    name: Bob
    systemPrompt: You are Bob.
    model: {provider: openai, baseUrl: %s/v1, model: fake-assistant}
    tools:
      Taskboard: {}
`, srv.URL)
	path := filepath.Join(t.TempDir(), "taskboard.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newAppWith(t, path)
	t.Cleanup(func() { a.Close(t.Context()) })

	first, err := a.Ask(t.Context(), "ada", "test",
		`call Taskboard.create {"assignee":"bob","title":"Sum the invoices","description":"Add up the November invoices."}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first.Answer, "Taskboard.create → ok") {
		t.Fatalf("ada's answer = %q, want the task created", first.Answer)
	}
	root := first.Run.RootRunID

	// The follow-up wakes run in the app's pool; each queues the next
	// before it ends, so the pool falls idle once the chain is over.
	idle, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := a.Idle(idle); err != nil {
		t.Fatalf("the wake chain still runs after 30 s: %v", err)
	}
	chain, err := a.Store().ChainCost(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	if chain.Runs != 3 {
		t.Fatalf("chain %s has %d runs, want ada → bob → ada: %+v", root, chain.Runs, chain.Receipts)
	}
	var bob, again sb.Receipt
	for _, r := range chain.Receipts {
		switch {
		case r.AgentID == "bob":
			bob = r
		case r.AgentID == "ada" && r.Run.RunID != first.Run.RunID:
			again = r
		}
	}
	if bob.Run.ParentRunID != first.Run.RunID {
		t.Errorf("bob's run %+v, want ParentRunId = ada's creating run %s", bob.Run, first.Run.RunID)
	}
	if again.Run.ParentRunID == "" || again.Run.ParentRunID != bob.Run.RunID {
		t.Errorf("ada's second run %+v, want ParentRunId = bob's completing run %s", again.Run, bob.Run.RunID)
	}
	if bob.TokensIn != 240 {
		t.Errorf("bob's receipt = %+v, want the model's tokens (2 × 120 in)", bob)
	}

	model.mu.Lock()
	offered := model.offered
	model.mu.Unlock()
	for _, want := range []string{"Taskboard__task_create", "Taskboard__task_comment", "Taskboard__task_complete", "Taskboard__task_block", "Taskboard__task_list"} {
		if !slices.Contains(offered, want) {
			t.Errorf("bob was offered %v, lacking %s", offered, want)
		}
	}

	// The audit shows the two tool calls, each in its own run of the chain.
	entries, err := a.Store().ByRoot(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		got[e.Tool+"."+e.Action] = e.Run.RunID + "/" + e.Outcome
	}
	if got["Taskboard.task_create"] != first.Run.RunID+"/ok" || got["Taskboard.task_complete"] != bob.Run.RunID+"/ok" {
		t.Errorf("audit = %v", got)
	}
}

// TestTaskJobsRunInTheJobsFunction: the two taskboard jobs run through the
// jobs function's own builder, as the schedules invoke them.
func TestTaskJobsRunInTheJobsFunction(t *testing.T) {
	a := newApp(t)
	for job, want := range map[string]string{
		"task-watchdog": "0 open tasks past 24h0m0s reported",
		"task-wakes":    "0 deferred wakes queued",
	} {
		out, err := invoke(t, a, "jobs", []byte(`{"job":"`+job+`"}`))
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("%s: %s, %v; want %q", job, out, err, want)
		}
	}
}
