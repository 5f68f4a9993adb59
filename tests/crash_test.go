package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// hangingModel is an OpenAI-compatible chat-completions server that never
// answers its first hang requests (until the caller goes away) and answers
// every later one with "answer N".
type hangingModel struct {
	*httptest.Server
	mu      sync.Mutex
	calls   int
	hang    int
	down    bool          // answer every request 503, like a model server that is down
	limited int           // answer this many requests 429 with Retry-After: 2
	started chan struct{} // closed when the first hanging request came in
	once    sync.Once
	// think is how long an answer takes; inFlight and maxInFlight count
	// the requests being answered at once.
	think                 time.Duration
	inFlight, maxInFlight int
}

func newHangingModel(t *testing.T, hang int) *hangingModel {
	m := &hangingModel{hang: hang, started: make(chan struct{})}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		m.mu.Lock()
		m.calls++
		n := m.calls
		m.mu.Unlock()
		// Read the body: only then does the server notice a caller that
		// went away (and cancel r.Context).
		_, _ = io.Copy(io.Discard, r.Body)
		m.mu.Lock()
		down, limited := m.down, m.limited > 0
		if limited {
			m.limited--
		}
		m.mu.Unlock()
		if limited {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"error":{"message":"Rate limit reached, retry in 2s","type":"rate_limit_error"}}`)
			return
		}
		if down {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":{"message":"upstream sk-internal-9f8e7d overloaded","type":"server_error"}}`)
			return
		}
		if n <= m.hang {
			m.once.Do(func() { close(m.started) })
			select {
			case <-r.Context().Done(): // the caller died or gave up
			case <-time.After(time.Minute):
			}
			return
		}
		m.mu.Lock()
		think := m.think
		m.inFlight++
		m.maxInFlight = max(m.maxInFlight, m.inFlight)
		m.mu.Unlock()
		thinking(r, think)
		m.mu.Lock()
		m.inFlight--
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": fmt.Sprint("c", n), "object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": fmt.Sprintf("answer %d", n)}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 3},
		})
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *hangingModel) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

// crashWorld is a fake Rocket.Chat and the config of a `switchboard dev`
// on the hanging model, with run timing in seconds.
type crashWorld struct {
	rc     *rcfake.Server
	model  *hangingModel
	room   string
	config string
	env    []string
}

func newCrashWorld(t *testing.T, hang int) *crashWorld {
	t.Helper()
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0)
	rc.SetWebhookToken(rcWebhookToken)
	rc.AddUser("richard", "user")
	agentID, agentToken := rc.AddUser("agent-hermes", "bot", "user")
	w := &crashWorld{rc: rc, model: newHangingModel(t, hang)}
	w.room = rc.AddChannel("finanz-team", "richard", "agent-hermes")
	config := fmt.Sprintf(`instance:
  name: e2e-crash
  toolApiToken: env:E2E_TOOL_TOKEN
  model: {provider: openai, baseUrl: %s/v1, model: fake}
  rocketchat:
    baseUrl: %s
    webhookTokens: [%s]
  approvals: {signingKey: env:E2E_SIGNING_KEY}
  human: {rocketchatUsername: richard}
  dev: {scheduler: false, workers: 2}
agents:
  - id: hermes
    name: Hermes
    systemPrompt: You are Hermes.
    tools:
      RocketChat:
        userId: %s
        authToken: %s
        username: agent-hermes
`, w.model.URL, rc.URL, rcWebhookToken, agentID, agentToken)
	w.config = filepath.Join(t.TempDir(), "crash.yaml")
	if err := os.WriteFile(w.config, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	// One table set for both processes: the restart sees what the crash left.
	w.env = []string{
		"SWITCHBOARD_TABLE_PREFIX=" + fmt.Sprintf("crash%d-", time.Now().UnixNano()),
		"SWITCHBOARD_RUN_TIMEOUT=3s", "SWITCHBOARD_AGENT_WAIT=1s",
		"SWITCHBOARD_WAKE_RETRY_DELAYS=300ms,600ms",
	}
	return w
}

func (w *crashWorld) replies() []rcfake.Message {
	var out []rcfake.Message
	for _, m := range w.rc.Messages(w.room) {
		if m.Username == "agent-hermes" {
			out = append(out, m)
		}
	}
	return out
}

// tickUntil runs the poll every 250 ms until cond holds or d passes.
func tickUntil(t *testing.T, d *devServer, within time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if status, _, m := d.do("POST", "/dev/jobs/rocketchat-poll", "", nil); status != http.StatusOK {
			t.Fatalf("poll tick = %d %v", status, m)
		}
		if cond() {
			return true
		}
		time.Sleep(250 * time.Millisecond) // sleep-ok: a claim window passes on the dev child's own clock; no event marks it
	}
	return cond()
}

// thinking is a fake model's time to answer: a stated latency the
// benchmark-style tests need for their figures and for runs to overlap if
// they could. It ends early when the caller gives up, and no assertion
// depends on how long it takes.
func thinking(r *http.Request, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

// kill -9 of `switchboard dev` in the middle of a run: after a restart the
// poll takes the dead run's claim over once its window has passed, and the
// message is answered exactly once.
func TestKilledRunIsRecoveredAndAnsweredOnce(t *testing.T) {
	w := newCrashWorld(t, 1)
	first := startDevConfig(t, w.config, w.env...)
	if _, err := w.rc.Post("richard", w.room, "@agent-hermes wie stehen die Zahlen?", rcfake.PostOptions{}); err != nil {
		t.Fatal(err)
	}
	if status, _, m := first.do("POST", "/dev/jobs/rocketchat-poll", "", nil); status != http.StatusOK {
		t.Fatalf("tick = %d %v", status, m)
	}
	select {
	case <-w.model.started:
	case <-time.After(15 * time.Second):
		t.Fatalf("the run never reached the model\n%s", first.logs.String())
	}
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.done
	killedAt := time.Now()

	second := startDevConfig(t, w.config, w.env...)
	if !tickUntil(t, second, 30*time.Second, func() bool { return len(w.replies()) > 0 }) {
		t.Fatalf("no answer after the restart; model calls %d\nfirst:\n%s\nsecond:\n%s", w.model.count(), first.logs.String(), second.logs.String())
	}
	recovered := time.Since(killedAt)
	// Keep polling: nothing is answered twice.
	tickUntil(t, second, 3*time.Second, func() bool { return false })
	got := w.replies()
	if len(got) != 1 || !strings.Contains(got[0].Text, "answer 2") {
		t.Fatalf("agent posted %d messages %+v, want exactly one with the second model answer", len(got), got)
	}
	if n := w.model.count(); n != 2 {
		t.Errorf("model called %d times, want 2 (the killed run and the recovery)", n)
	}
	t.Logf("answered %.1f s after the kill (claim window: wait 1 s + run 3 s + 2×0.75 s slack)", recovered.Seconds())
}

// A model server that is down: the person hears after the first attempt
// that the agent cannot reach its model and will try again (not minutes
// later), the wake is tried three times (the local pool retries like
// Lambda), then the person is told the outcome once, in their thread,
// without the server's error text.
func TestModelDownEndsInOneNotice(t *testing.T) {
	w := newCrashWorld(t, 0)
	w.model.mu.Lock()
	w.model.down = true
	w.model.mu.Unlock()
	d := startDevConfig(t, w.config, w.env...)
	parent, _ := w.rc.Post("richard", w.room, "Quartalszahlen", rcfake.PostOptions{})
	if _, err := w.rc.Post("richard", w.room, "@agent-hermes stimmen die?", rcfake.PostOptions{Tmid: parent.ID}); err != nil {
		t.Fatal(err)
	}
	if !tickUntil(t, d, 30*time.Second, func() bool { return len(w.replies()) > 1 }) {
		t.Fatalf("no final notice; posts %+v; model calls %d\n%s", w.replies(), w.model.count(), d.logs.String())
	}
	tickUntil(t, d, 3*time.Second, func() bool { return false })
	got := w.replies()
	if len(got) != 2 {
		t.Fatalf("agent posted %d messages %+v, want the try-again notice and the outcome", len(got), got)
	}
	if !strings.Contains(got[0].Text, "try again") || got[0].ThreadID != parent.ID {
		t.Errorf("first notice %q in thread %q, want that it tries again, in %s", got[0].Text, got[0].ThreadID, parent.ID)
	}
	if !strings.Contains(got[1].Text, "not reachable") || got[1].ThreadID != parent.ID {
		t.Errorf("notice %q in thread %q, want the model-unavailable notice in %s", got[1].Text, got[1].ThreadID, parent.ID)
	}
	for _, m := range got {
		if strings.Contains(m.Text, "sk-internal") {
			t.Errorf("notice %q leaks internals", m.Text)
		}
	}
	if n := w.model.count(); n < 3 {
		t.Errorf("model called %d times, want at least one per attempt (3)", n)
	}
}

// A model that answers 429 with Retry-After: 2 is waited for (2 s, not
// less), and the answer arrives in the person's thread; nobody is told of
// a failure.
func TestModelRateLimitIsWaitedFor(t *testing.T) {
	w := newCrashWorld(t, 0)
	w.model.mu.Lock()
	w.model.limited = 1
	w.model.mu.Unlock()
	d := startDevConfig(t, w.config, append(w.env, "SWITCHBOARD_RUN_TIMEOUT=20s")...)
	if _, err := w.rc.Post("richard", w.room, "@agent-hermes stimmen die Zahlen?", rcfake.PostOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if !tickUntil(t, d, 20*time.Second, func() bool { return len(w.replies()) > 0 }) {
		t.Fatalf("no answer; model calls %d\n%s", w.model.count(), d.logs.String())
	}
	waited := time.Since(start)
	tickUntil(t, d, time.Second, func() bool { return false })
	got := w.replies()
	if len(got) != 1 || got[0].Text != "answer 2" {
		t.Fatalf("agent posted %+v, want the one answer of the second model call", got)
	}
	if waited < 2*time.Second {
		t.Errorf("answer after %s, want the model's Retry-After (2 s) waited out", waited)
	}
	t.Logf("429 Retry-After 2 → answer %s after the mention, %d model calls", waited.Round(100*time.Millisecond), w.model.count())
}

// An answer Rocket.Chat will not take in the room (after the retries) is
// not dropped: it reaches the human through the router, with a link.
func TestUnpostableAnswerGoesThroughTheRouter(t *testing.T) {
	w := newCrashWorld(t, 0)
	dm := w.rc.AddDM("richard", "agent-hermes")
	d := startDevConfig(t, w.config, w.env...)
	if _, err := w.rc.Post("richard", w.room, "@agent-hermes wie stehen die Zahlen?", rcfake.PostOptions{}); err != nil {
		t.Fatal(err)
	}
	const down = `<html><body><h1>502 Bad Gateway</h1></body></html>`
	for range 3 {
		w.rc.FailNext("chat.postMessage", http.StatusBadGateway, down)
	}
	var got []rcfake.Message
	ok := tickUntil(t, d, 20*time.Second, func() bool {
		got = nil
		for _, m := range w.rc.Messages(dm) {
			if m.Username == "agent-hermes" {
				got = append(got, m)
			}
		}
		return len(got) > 0
	})
	if !ok {
		t.Fatalf("the answer did not reach the human\n%s", d.logs.String())
	}
	if len(got) != 1 || !strings.Contains(got[0].Text, "answer 1") || !strings.Contains(got[0].Text, w.rc.URL+"/channel/finanz-team") {
		t.Errorf("router delivery %+v, want the answer once with a link to the room", got)
	}
	if n := len(w.replies()); n != 0 {
		t.Errorf("%d posts in the room, want none (it refused them)", n)
	}
	if !strings.Contains(d.logs.String(), "wake answer delivered through the router instead of the room") {
		t.Error("the log does not say where the answer went")
	}
}

// actingModel is an OpenAI-compatible chat-completions server for a run
// that acts: the wake "wie stehen die Zahlen?" is answered with two tool
// calls (post the numbers into the room, give atlas a task); the first
// answer to their results never comes (the caller is killed meanwhile),
// later ones end the run. Any other wake (atlas's task) is just noted.
type actingModel struct {
	*httptest.Server
	mu      sync.Mutex
	wakes   int           // requests that began the Hermes wake
	hung    bool          // the first request after the tool results hung
	started chan struct{} // closed when that request came in
	// tasks are the task_create answers the runs saw, in order.
	tasks []taskAnswer
}

// taskAnswer is what a run's task_create answered.
type taskAnswer struct {
	TaskID   string `json:"taskId"`
	Replayed bool   `json:"replayed"`
}

func newActingModel(t *testing.T, room string) *actingModel {
	m := &actingModel{started: make(chan struct{})}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) == 0 {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		last := req.Messages[len(req.Messages)-1]
		msg := map[string]any{"role": "assistant"}
		fn := func(id, tool, action string, args map[string]any) any {
			b, _ := json.Marshal(args)
			return map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": sb.FunctionName(tool, action), "arguments": string(b)}}
		}
		switch {
		case last.Role == "user" && strings.Contains(last.Content, "wie stehen die Zahlen"):
			m.mu.Lock()
			m.wakes++
			m.mu.Unlock()
			msg["tool_calls"] = []any{
				fn("call_1", "RocketChat", "send_message", map[string]any{"room": room, "text": "Umsatz Q3: 1,2 Mio."}),
				fn("call_2", "Taskboard", "task_create", map[string]any{"assignee": "atlas", "title": "Q3 prüfen", "description": "Bitte die Q3-Zahlen prüfen."}),
			}
		case last.Role == "tool":
			m.mu.Lock()
			for _, tm := range req.Messages {
				var a taskAnswer
				if tm.Role == "tool" && json.Unmarshal([]byte(tm.Content), &a) == nil && a.TaskID != "" {
					m.tasks = append(m.tasks, a)
				}
			}
			hang := !m.hung
			m.hung = true
			m.mu.Unlock()
			if hang {
				close(m.started)
				select {
				case <-r.Context().Done(): // the caller died
				case <-time.After(time.Minute):
				}
				return
			}
			msg["content"] = "Erledigt."
		default:
			msg["content"] = "noted"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": msg}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 3}})
	}))
	t.Cleanup(m.Close)
	return m
}

// kill -9 of `switchboard dev` after the run had posted a message and
// created a task (while it waits for the model): the recovered wake runs
// again and makes the same calls, which answer what the killed run did
// instead of doing it again. One message in the room, one task.
func TestKilledRunsEffectsAreNotRepeatedByTheRecovery(t *testing.T) {
	w := newCrashWorld(t, 0)
	model := newActingModel(t, "finanz-team")
	raw, err := os.ReadFile(w.config)
	if err != nil {
		t.Fatal(err)
	}
	config := strings.Replace(string(raw), w.model.URL, model.URL, 1)
	config = strings.Replace(config, "    tools:\n", "    tools:\n      Taskboard: {}\n", 1) +
		"  - id: atlas\n    name: Atlas\n    systemPrompt: You are Atlas.\n    tools:\n      Taskboard: {}\n"
	if err := os.WriteFile(w.config, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}

	first := startDevConfig(t, w.config, w.env...)
	if _, err := w.rc.Post("richard", w.room, "@agent-hermes wie stehen die Zahlen?", rcfake.PostOptions{}); err != nil {
		t.Fatal(err)
	}
	if status, _, m := first.do("POST", "/dev/jobs/rocketchat-poll", "", nil); status != http.StatusOK {
		t.Fatalf("tick = %d %v", status, m)
	}
	select {
	case <-model.started:
	case <-time.After(15 * time.Second):
		t.Fatalf("the run never came back to the model after its tool calls\n%s", first.logs.String())
	}
	if n := len(w.replies()); n != 1 {
		t.Fatalf("before the kill the agent posted %d messages, want its one send_message\n%s", n, first.logs.String())
	}
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.done

	second := startDevConfig(t, w.config, w.env...)
	recovered := func() bool {
		model.mu.Lock()
		defer model.mu.Unlock()
		return model.wakes >= 2
	}
	if !tickUntil(t, second, 30*time.Second, recovered) {
		t.Fatalf("the wake was not run again after the restart\nfirst:\n%s\nsecond:\n%s", first.logs.String(), second.logs.String())
	}
	// Keep polling: the recovered run ends, and nothing comes twice.
	tickUntil(t, second, 4*time.Second, func() bool { return false })
	if got := w.replies(); len(got) != 1 || got[0].Text != "Umsatz Q3: 1,2 Mio." {
		t.Errorf("agent posted %d messages %+v, want the numbers once", len(got), got)
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	// The task_create of each run, as its model saw it: a second task would
	// have an id of its own.
	if len(model.tasks) != 2 || model.tasks[0].TaskID != model.tasks[1].TaskID || model.tasks[0].Replayed || !model.tasks[1].Replayed {
		t.Errorf("task_create answers %+v, want the killed run's task, then the same task replayed", model.tasks)
	}
	t.Logf("wake run %d times; posts %d; task answers %+v", model.wakes, len(w.replies()), model.tasks)
}

// The attack run's silent minutes, at the default timings (the model's six
// attempts with 15.5–31 s of backoff, the pool's whole-run retries after 1
// and 2 minutes): with the model answering 503, the person hears within 45
// s of writing that the agent cannot reach its model and will try again,
// once, before any whole-run retry.
func TestModelDownIsToldWithinTheFirstAttemptE2E(t *testing.T) {
	w := newCrashWorld(t, 0)
	w.model.mu.Lock()
	w.model.down = true
	w.model.mu.Unlock()
	d := startDevConfig(t, w.config, w.env[0]) // the table prefix only: default run timing
	parent, _ := w.rc.Post("richard", w.room, "Quartalszahlen", rcfake.PostOptions{})
	sent := time.Now()
	if _, err := w.rc.Post("richard", w.room, "@agent-hermes stimmen die?", rcfake.PostOptions{Tmid: parent.ID}); err != nil {
		t.Fatal(err)
	}
	if !tickUntil(t, d, 45*time.Second, func() bool { return len(w.replies()) > 0 }) {
		t.Fatalf("nobody was told within 45 s that the model is down; model calls %d", w.model.count())
	}
	told := time.Since(sent)
	got := w.replies()
	if len(got) != 1 || !strings.Contains(got[0].Text, "try again") || got[0].ThreadID != parent.ID {
		t.Errorf("posts %+v, want one notice in the thread that the agent will try again", got)
	}
	if n := w.model.count(); n != 6 {
		t.Errorf("model called %d times before the notice, want the first attempt's 6", n)
	}
	t.Logf("told %.1f s after the message (model calls %d): %q", told.Seconds(), w.model.count(), got[0].Text)
}
