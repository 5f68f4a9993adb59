package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/openai"
	"github.com/switchboard-dev/switchboard/shared/platform/errtest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

// apiKey is the key under test: it must reach the server in the header and
// nowhere else.
const apiKey = "sk-test-DoNotLeak-0123456789"

// fake is an OpenAI-compatible server on 127.0.0.1: it checks what every
// real server insists on (POST, the path, a JSON body, the bearer key when
// one is configured) and answers with the next canned reply.
type fake struct {
	t       *testing.T
	srv     *httptest.Server
	wantKey string

	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
	replies []reply
}

type reply struct {
	status int
	header map[string]string
	body   string
	delay  time.Duration
	check  func(t *testing.T, body map[string]any) // inspects the request
}

func newFake(t *testing.T, wantKey string, replies ...reply) *fake {
	t.Helper()
	f := &fake{t: t, wantKey: wantKey, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	var rp reply
	if len(f.replies) > 0 {
		rp, f.replies = f.replies[0], f.replies[1:]
	} else {
		rp = reply{status: 500, body: `{"error":{"message":"the fake has no more replies"}}`}
	}
	f.mu.Unlock()

	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions":
		http.Error(w, `{"error":{"message":"Unknown request URL: `+r.Method+" "+r.URL.Path+`","type":"invalid_request_error"}}`, 404)
		return
	case r.Header.Get("Content-Type") != "application/json" || !json.Valid(body):
		http.Error(w, `{"error":{"message":"We could not parse the JSON body of your request.","type":"invalid_request_error"}}`, 400)
		return
	case f.wantKey != "" && r.Header.Get("Authorization") != "Bearer "+f.wantKey:
		http.Error(w, `{"error":{"message":"Incorrect API key provided: sk-tes***789.","type":"invalid_request_error","code":"invalid_api_key"}}`, http.StatusUnauthorized)
		return
	}
	if rp.check != nil {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			f.t.Errorf("request body: %v", err)
		}
		rp.check(f.t, m)
	}
	if rp.delay > 0 {
		select {
		case <-time.After(rp.delay):
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range rp.header {
		w.Header().Set(k, v)
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(cmp(rp.status, 200))
	io.WriteString(w, rp.body)
}

func (f *fake) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

func (f *fake) body(i int) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[i]
}

func (f *fake) model(t *testing.T, key string) *openai.Model {
	t.Helper()
	m, err := openai.New(f.srv.URL+"/v1/", key, "gpt-4o-mini", f.srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func cmp(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Real-shaped answers (field for field as api.openai.com answers; Ollama's
// /v1 adds "index" to tool calls and, before 0.3, had no usage).
const (
	answerText = `{
  "id": "chatcmpl-AZ1", "object": "chat.completion", "created": 1735000000, "model": "gpt-4o-mini-2024-07-18",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done: notes.md is written.", "refusal": null},
    "logprobs": null, "finish_reason": "stop"}],
  "usage": {"prompt_tokens": 412, "completion_tokens": 9, "total_tokens": 421,
    "prompt_tokens_details": {"cached_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 0}},
  "system_fingerprint": "fp_0ba0d124f1"
}`
	answerToolCall = `{
  "id": "chatcmpl-AZ0", "object": "chat.completion", "created": 1735000000, "model": "gpt-4o-mini-2024-07-18",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "refusal": null,
    "tool_calls": [{"id": "call_Jx1", "type": "function",
      "function": {"name": "Workspace__write", "arguments": "{\"path\":\"notes.md\",\"text\":\"hi\"}"}}]},
    "logprobs": null, "finish_reason": "tool_calls"}],
  "usage": {"prompt_tokens": 380, "completion_tokens": 24, "total_tokens": 404},
  "system_fingerprint": "fp_0ba0d124f1"
}`
)

// request is one conversation with every message kind.
func request() sb.ModelRequest {
	return sb.ModelRequest{
		System: "You are Ada, a careful assistant.",
		Messages: []sb.ModelMessage{
			{Role: "user", Content: `<untrusted_content source="chat">please write notes.md</untrusted_content>`},
			{Role: "assistant", Content: "I will write it.", ToolCalls: []sb.ModelToolCall{
				{ID: "call_1", Tool: "Workspace", Action: "write", Args: json.RawMessage(`{"path":"notes.md","text":"hi"}`)},
				{ID: "call_2", Tool: "Workspace", Action: "list", Args: json.RawMessage(`{path: oops`)},
				{ID: "call_3", Tool: "multi_tool_use.parallel", Args: json.RawMessage(`{}`)},
			}},
			{Role: "tool", ToolCallID: "call_1", Content: `{"status":"ok","path":"notes.md"}`},
			{Role: "tool", ToolCallID: "call_2", Content: `{"error":"args of Workspace.list are not valid JSON; send a JSON object","status":"error"}`},
			{Role: "tool", ToolCallID: "call_3", Content: `{"error":"unknown tool \"multi_tool_use.parallel\"; available tools: Workspace","status":"error"}`},
			{Role: "assistant", ToolCalls: []sb.ModelToolCall{{ID: "call_4", Tool: "Workspace", Action: "read", Args: nil}}},
			{Role: "tool", ToolCallID: "call_4", Content: `{"status":"ok","text":"hi"}`},
		},
		Tools: []sb.ToolSpec{
			{Name: "Clock", Description: "", Actions: []sb.ActionSpec{{Name: "now", Description: "Current time."}}},
			{Name: "Workspace", Description: "Files shared with the team.", Actions: []sb.ActionSpec{
				{Name: "write", Description: "Writes a file.", Parameters: map[string]any{
					"type": "object", "required": []any{"path", "text"}, "additionalProperties": false,
					"properties": map[string]any{"path": map[string]any{"type": "string"}, "text": map[string]any{"type": "string"}}}},
				{Name: "read", Description: "Reads a file.", Parameters: map[string]any{"type": "object",
					"properties": map[string]any{"path": map[string]any{"type": "string"}}}},
			}},
		},
	}
}

// TestGoldenRequestBody: the whole wire request for a conversation with every
// message kind, compared with testdata/request.golden.json.
func TestGoldenRequestBody(t *testing.T) {
	f := newFake(t, apiKey, reply{body: answerText})
	if _, err := f.model(t, apiKey).Complete(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := json.Indent(&got, f.body(0), "", "  "); err != nil {
		t.Fatal(err)
	}
	got.WriteByte('\n')
	golden := filepath.Join("testdata", "request.golden.json")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update once to create it)", err)
	}
	if got.String() != string(want) {
		t.Errorf("request body differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", golden, got.String(), want)
	}
	h := f.headers[0]
	if got, want := h.Get("Authorization"), "Bearer "+apiKey; got != want {
		t.Errorf("Authorization = %q, want %q", got, want)
	}
}

func TestNoAuthorizationHeaderWithoutKey(t *testing.T) {
	f := newFake(t, "", reply{body: answerText})
	if _, err := f.model(t, "").Complete(context.Background(), sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.headers[0]["Authorization"]; ok {
		t.Errorf("Authorization header sent without a key: %q", f.headers[0].Get("Authorization"))
	}
	var body map[string]any
	_ = json.Unmarshal(f.body(0), &body)
	if _, ok := body["tools"]; ok {
		t.Errorf("tools sent without tools (OpenAI refuses an empty list): %s", f.body(0))
	}
}

func TestResponses(t *testing.T) {
	tests := []struct {
		name string
		body string
		want sb.ModelResponse
	}{
		{name: "text with usage", body: answerText,
			want: sb.ModelResponse{Text: "Done: notes.md is written.", TokensIn: 412, TokensOut: 9}},
		{name: "tool call", body: answerToolCall,
			want: sb.ModelResponse{ToolCalls: []sb.ModelToolCall{{ID: "call_Jx1", Tool: "Workspace", Action: "write",
				Args: json.RawMessage(`{"path":"notes.md","text":"hi"}`)}}, TokensIn: 380, TokensOut: 24}},
		{name: "Ollama without usage", body: `{"id":"chatcmpl-57","object":"chat.completion","created":1735000000,"model":"llama3.1:8b",
			"system_fingerprint":"fp_ollama","choices":[{"index":0,"message":{"role":"assistant","content":"",
			"tool_calls":[{"id":"call_ab12","index":0,"type":"function","function":{"name":"Workspace__read","arguments":"{\"path\":\"notes.md\"}"}}]},
			"finish_reason":"tool_calls"}]}`,
			want: sb.ModelResponse{ToolCalls: []sb.ModelToolCall{{ID: "call_ab12", Tool: "Workspace", Action: "read", Args: json.RawMessage(`{"path":"notes.md"}`)}}}},
		{name: "finish_reason length says the answer was cut off", body: `{"id":"c","object":"chat.completion","model":"m",
			"choices":[{"index":0,"message":{"role":"assistant","content":"The report has three parts: first"},"finish_reason":"length"}],
			"usage":{"prompt_tokens":50,"completion_tokens":16,"total_tokens":66}}`,
			want: sb.ModelResponse{Text: "The report has three parts: first\n\n[The answer was cut off: the model reached its output token limit.]", TokensIn: 50, TokensOut: 16}},
		{name: "content filter", body: `{"choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"content_filter"}]}`,
			want: sb.ModelResponse{Text: "\n\n[The model's provider withheld the rest of the answer (content filter).]"}},
		{name: "invalid JSON arguments are kept byte for byte", body: `{"choices":[{"index":0,"message":{"role":"assistant","content":null,
			"tool_calls":[{"id":"call_x","type":"function","function":{"name":"Workspace__write","arguments":"{path: notes.md"}}]},"finish_reason":"tool_calls"}]}`,
			want: sb.ModelResponse{ToolCalls: []sb.ModelToolCall{{ID: "call_x", Tool: "Workspace", Action: "write", Args: json.RawMessage(`{path: notes.md`)}}}},
		{name: "unknown name passes through as the tool", body: `{"choices":[{"index":0,"message":{"role":"assistant","content":null,
			"tool_calls":[{"id":"call_p","type":"function","function":{"name":"multi_tool_use.parallel","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			want: sb.ModelResponse{ToolCalls: []sb.ModelToolCall{{ID: "call_p", Tool: "multi_tool_use.parallel", Args: json.RawMessage(`{}`)}}}},
		{name: "arguments as an object, empty arguments, missing ids", body: `{"choices":[{"index":0,"message":{"role":"assistant","content":"Let me look.",
			"tool_calls":[{"type":"function","function":{"name":"Workspace__read","arguments":{"path":"a.md"}}},
			{"type":"function","function":{"name":"Clock__now","arguments":""}}]},"finish_reason":"tool_calls"}]}`,
			want: sb.ModelResponse{Text: "Let me look.", ToolCalls: []sb.ModelToolCall{
				{ID: "call_1_0", Tool: "Workspace", Action: "read", Args: json.RawMessage(`{"path":"a.md"}`)},
				{ID: "call_1_1", Tool: "Clock", Action: "now", Args: json.RawMessage(`{}`)}}}},
		{name: "content as a list of parts", body: `{"choices":[{"index":0,"message":{"role":"assistant",
			"content":[{"type":"text","text":"Hello "},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"there"}]},"finish_reason":"stop"}]}`,
			want: sb.ModelResponse{Text: "Hello there"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, apiKey, reply{body: tt.body})
			got, err := f.model(t, apiKey).Complete(context.Background(), sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}}})
			if err != nil {
				t.Fatal(err)
			}
			if g, w := show(got), show(tt.want); g != w {
				t.Errorf("got  %s\nwant %s", g, w)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	httpDate := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name           string
		reply          reply
		key            string // configured key; default apiKey
		timeout        time.Duration
		wantCode       string
		wantMsg        []string
		wantNotMsg     []string
		wantRetryAfter [2]time.Duration // inclusive range
	}{
		{name: "400 passes the server's message on, key masked",
			reply:    reply{status: 400, body: `{"error":{"message":"Invalid 'messages[2].tool_call_id': echo ` + apiKey + `","type":"invalid_request_error","param":"messages","code":null}}`},
			wantCode: sb.EINVALID, wantMsg: []string{"rejected the request (HTTP 400)", "Invalid 'messages[2].tool_call_id'", "[redacted]"}},
		{name: "401 says check model.apiKey", key: "sk-wrong-key-000",
			wantCode: sb.EUNAUTHORIZED, wantMsg: []string{"refused the credentials (HTTP 401)", "check model.apiKey"}, wantNotMsg: []string{"sk-tes"}},
		{name: "403", reply: reply{status: 403, body: `{"error":{"message":"Project does not have access to model gpt-4o-mini","type":"invalid_request_error","code":"model_not_found"}}`},
			wantCode: sb.EUNAUTHORIZED, wantMsg: []string{"HTTP 403", "check model.apiKey"}},
		{name: "404 Ollama model not pulled", reply: reply{status: 404, body: `{"error":{"message":"model \"gpt-4o-mini\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`},
			wantCode: sb.ENOTFOUND, wantMsg: []string{`model "gpt-4o-mini" not found at http://127.0.0.1:`, "/v1", "check model.model and model.baseUrl"}},
		{name: "429 with Retry-After seconds", reply: reply{status: 429, header: map[string]string{"Retry-After": "17"},
			body: `{"error":{"message":"Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 3, Used 3, Requested 1.","type":"requests","code":"rate_limit_exceeded"}}`},
			wantCode: sb.ERATELIMITED, wantMsg: []string{"rate limiting (HTTP 429)", "Rate limit reached"}, wantRetryAfter: [2]time.Duration{17 * time.Second, 17 * time.Second}},
		{name: "429 with Retry-After date", reply: reply{status: 429, header: map[string]string{"Retry-After": httpDate}, body: `{"error":{"message":"slow down"}}`},
			wantCode: sb.ERATELIMITED, wantRetryAfter: [2]time.Duration{60 * time.Second, 91 * time.Second}},
		{name: "429 without Retry-After", reply: reply{status: 429, body: `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota"}}`},
			wantCode: sb.ERATELIMITED, wantMsg: []string{"exceeded your current quota"}},
		{name: "500", reply: reply{status: 500, body: `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error"}}`},
			wantCode: sb.EUNAVAILABLE, wantMsg: []string{"failed (HTTP 500)", "try again later"}},
		{name: "502 HTML from a proxy", reply: reply{status: 502, header: map[string]string{"Content-Type": "text/html"}, body: `<html><body><h1>502 Bad Gateway</h1></body></html>`},
			wantCode: sb.EUNAVAILABLE, wantMsg: []string{"failed (HTTP 502)"}},
		{name: "503 with Retry-After", reply: reply{status: 503, header: map[string]string{"Retry-After": "5"}, body: `{"error":{"message":"overloaded"}}`},
			wantCode: sb.EUNAVAILABLE, wantRetryAfter: [2]time.Duration{5 * time.Second, 5 * time.Second}},
		{name: "vLLM error shape", reply: reply{status: 400, body: `{"object":"error","message":"This model's maximum context length is 8192 tokens.","type":"BadRequestError","param":null,"code":400}`},
			wantCode: sb.EINVALID, wantMsg: []string{"maximum context length is 8192"}},
		{name: "slow server times out", reply: reply{delay: 2 * time.Second, body: answerText}, timeout: 100 * time.Millisecond,
			wantCode: sb.EUNAVAILABLE, wantMsg: []string{"did not answer in time"}},
		{name: "200 that is not JSON", reply: reply{header: map[string]string{"Content-Type": "text/html"}, body: `<!doctype html><title>Open WebUI</title>`},
			wantCode: sb.EINTERNAL, wantMsg: []string{"did not answer like an OpenAI-compatible chat-completions API", "check model.baseUrl"}},
		{name: "200 without choices", reply: reply{body: `{"id":"x","object":"chat.completion","choices":[],"error":{"message":"upstream provider error"}}`},
			wantCode: sb.EINTERNAL, wantMsg: []string{"answered without a choice", "upstream provider error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, apiKey, tt.reply)
			hc := f.srv.Client()
			if tt.timeout > 0 {
				hc.Timeout = tt.timeout
			}
			key := apiKey
			if tt.key != "" {
				key = tt.key
			}
			m, err := openai.New(f.srv.URL+"/v1", key, "gpt-4o-mini", hc)
			if err != nil {
				t.Fatal(err)
			}
			m = m.WithRetry(oneAttempt) // the mapping of one answer; retries have their own tests
			_, err = m.Complete(context.Background(), sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}}})
			checkErr(t, err, key, tt.wantCode, tt.wantMsg, tt.wantNotMsg)
			var se *sb.Error
			errors.As(err, &se)
			if ra := se.RetryAfter; ra < tt.wantRetryAfter[0] || ra > tt.wantRetryAfter[1] {
				t.Errorf("RetryAfter = %v, want within %v", ra, tt.wantRetryAfter)
			}
		})
	}
}

func TestUnreachableServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	m, err := openai.New(url+"/v1", apiKey, "gpt-4o-mini", nil)
	if err != nil {
		t.Fatal(err)
	}
	m = m.WithRetry(oneAttempt)
	_, err = m.Complete(context.Background(), sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}}})
	checkErr(t, err, apiKey, sb.EUNAVAILABLE, []string{"cannot reach the model server at " + url + "/v1", "check model.baseUrl"}, nil)
}

func TestCancelledContext(t *testing.T) {
	f := newFake(t, apiKey, reply{delay: 2 * time.Second, body: answerText})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := f.model(t, apiKey).Complete(ctx, sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}}})
	checkErr(t, err, apiKey, sb.EUNAVAILABLE, []string{"did not answer in time"}, nil)
}

// TestToolNamesAreCheckedBeforeTheCall: a tool name the API would refuse
// fails the request here, saying which action and why, without a round trip.
func TestToolNamesAreCheckedBeforeTheCall(t *testing.T) {
	f := newFake(t, apiKey, reply{body: answerText})
	req := sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}},
		Tools: []sb.ToolSpec{{Name: strings.Repeat("Long", 10), Actions: []sb.ActionSpec{{Name: "a_rather_long_action_name"}}}}}
	_, err := f.model(t, apiKey).Complete(context.Background(), req)
	checkErr(t, err, apiKey, sb.EINVALID, []string{"LongLongLong", "cannot be offered to the model", "at most 64"}, nil)
	if n := f.requests(); n != 0 {
		t.Errorf("server got %d requests, want 0", n)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name, baseURL, model string
		wantMsg              string
	}{
		{name: "not a URL", baseURL: "127.0.0.1:11434/v1", model: "m", wantMsg: "is not an http(s) URL"},
		{name: "no host", baseURL: "http:///v1", model: "m", wantMsg: "is not an http(s) URL"},
		{name: "credentials in a bad URL are not shown", baseURL: "ftp://user:" + apiKey + "@example.org/v1", model: "m", wantMsg: "is not an http(s) URL"},
		{name: "no model", baseURL: "http://127.0.0.1:11434/v1", model: " ", wantMsg: "model.model is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := openai.New(tt.baseURL, apiKey, tt.model, nil)
			checkErr(t, err, apiKey, sb.EINVALID, []string{tt.wantMsg}, nil)
		})
	}
}

// TestPrintingTheModelHidesTheKey: a Model in a log line or %v shows no key.
func TestPrintingTheModelHidesTheKey(t *testing.T) {
	m, err := openai.New("https://api.openai.com/v1", apiKey, "gpt-4o-mini", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"%v", "%+v", "%s", "%#v"} {
		if s := fmt.Sprintf(verb, m); strings.Contains(s, apiKey) || !strings.Contains(s, "gpt-4o-mini") {
			t.Errorf("%s of the model = %q", verb, s)
		}
	}
}

// checkErr asserts code and message of err, and that the key appears
// nowhere in it, internal detail included.
func checkErr(t *testing.T, err error, key, wantCode string, wantMsg, wantNotMsg []string) {
	t.Helper()
	errtest.Check(t, err, wantCode, wantMsg...)
	for _, w := range wantNotMsg {
		if strings.Contains(err.Error(), w) {
			t.Errorf("error %q contains %q", err.Error(), w)
		}
	}
	if key != "" && strings.Contains(err.Error(), key) {
		t.Errorf("error leaks the API key: %q", err.Error())
	}
}

// show prints a Response with Args verbatim (json.Marshal refuses the
// invalid JSON some cases keep on purpose).
func show(r sb.ModelResponse) string {
	s := fmt.Sprintf("text=%q in=%d out=%d", r.Text, r.TokensIn, r.TokensOut)
	for _, c := range r.ToolCalls {
		s += fmt.Sprintf(" call{id=%q tool=%q action=%q args=%s}", c.ID, c.Tool, c.Action, c.Args)
	}
	return s
}
