package bedrock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/bedrock"
	"github.com/switchboard-dev/switchboard/shared/platform/errtest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

const modelID = "anthropic.claude-3-5-haiku-20241022-v1:0"

// fakeConverse answers Converse with queued answers (JSON) or errors and
// keeps every request, decoded.
type fakeConverse struct {
	mu      sync.Mutex
	inputs  []wireRequest
	answers []answer
}

type answer struct {
	out   string
	err   error
	check func(in wireRequest)
}

// wireRequest is a Converse request as the provider sent it.
type wireRequest struct {
	ModelID  string `json:"-"`
	Messages []struct {
		Role    string                       `json:"role"`
		Content []map[string]json.RawMessage `json:"content"`
	} `json:"messages"`
	System []struct {
		Text string `json:"text"`
	} `json:"system"`
	ToolConfig *struct {
		Tools []struct {
			ToolSpec struct {
				Name        string  `json:"name"`
				Description *string `json:"description"`
				InputSchema struct {
					JSON json.RawMessage `json:"json"`
				} `json:"inputSchema"`
			} `json:"toolSpec"`
		} `json:"tools"`
	} `json:"toolConfig"`
}

var _ bedrock.ConverseAPI = (*fakeConverse)(nil)

func (f *fakeConverse) Converse(_ context.Context, id string, body []byte) ([]byte, error) {
	var in wireRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("fakeConverse: request is not JSON: %v", err)
	}
	in.ModelID = id
	f.mu.Lock()
	f.inputs = append(f.inputs, in)
	if len(f.answers) == 0 {
		f.mu.Unlock()
		return nil, errors.New("fakeConverse: no more answers")
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	f.mu.Unlock()
	if a.check != nil {
		a.check(in)
	}
	if a.err != nil {
		return nil, a.err
	}
	return []byte(a.out), nil
}

// converseAnswer is an answer with the message content blocks (JSON), the
// stop reason and the usage (nil: none).
func converseAnswer(stop string, usage []int, content ...string) string {
	u := ""
	if usage != nil {
		u = fmt.Sprintf(`,"usage":{"inputTokens":%d,"outputTokens":%d,"totalTokens":%d}`, usage[0], usage[1], usage[0]+usage[1])
	}
	return fmt.Sprintf(`{"output":{"message":{"role":"assistant","content":[%s]}},"stopReason":%q%s}`, strings.Join(content, ","), stop, u)
}

func textBlock(s string) string { b, _ := json.Marshal(map[string]string{"text": s}); return string(b) }

func toolUseBlock(id, name string, input any) string {
	u := map[string]any{"toolUseId": id, "name": name}
	if input != nil {
		u["input"] = input
	}
	b, _ := json.Marshal(map[string]any{"toolUse": u})
	return string(b)
}

func textOutput(text string, in, out int) string {
	return converseAnswer("end_turn", []int{in, out}, textBlock(text))
}

// request is one conversation with every message kind.
func request() sb.ModelRequest {
	return sb.ModelRequest{
		System: "You are Ada, a careful assistant.",
		Messages: []sb.ModelMessage{
			{Role: "user", Content: `<untrusted_content source="chat">please write notes.md</untrusted_content>`},
			{Role: "assistant", Content: "I will write it.", ToolCalls: []sb.ModelToolCall{
				{ID: "tooluse_1", Tool: "Workspace", Action: "write", Args: json.RawMessage(`{"path":"notes.md","text":"hi","copies":2,"id":12345678901234567890,"ratio":0.1}`)},
				{ID: "tooluse_2", Tool: "multi_tool_use.parallel", Args: json.RawMessage(`{}`)},
			}},
			{Role: "tool", ToolCallID: "tooluse_1", Content: `{"status":"ok","path":"notes.md","bytes":2}`},
			{Role: "tool", ToolCallID: "tooluse_2", Content: `unknown tool; not an envelope`},
			{Role: "assistant", ToolCalls: []sb.ModelToolCall{
				{ID: "tooluse_3", Tool: "Workspace", Action: "read", Args: nil},
				{ID: "tooluse_4", Tool: "Workspace", Action: "list", Args: json.RawMessage(`{path: oops`)},
			}},
			{Role: "tool", ToolCallID: "tooluse_3", Content: ""},
			{Role: "tool", ToolCallID: "tooluse_4", Content: `["not","an","object"]`},
			{Role: "user", Content: "  "},
		},
		Tools: []sb.ToolSpec{
			{Name: "Clock", Actions: []sb.ActionSpec{{Name: "now"}}},
			{Name: "Workspace", Description: "Files shared with the team.", Actions: []sb.ActionSpec{
				{Name: "write", Description: "Writes a file.", Parameters: map[string]any{
					"type": "object", "required": []string{"path", "text"}, "additionalProperties": false,
					"properties": map[string]any{"path": map[string]any{"type": "string", "maxLength": 200}, "text": map[string]any{"type": "string"}}}},
				{Name: "read", Description: "Reads a file.", Parameters: map[string]any{"type": "object",
					"properties": map[string]any{"path": map[string]any{"type": "string"}}}},
			}},
		},
	}
}

// canonical is a JSON value with sorted keys and exact numbers.
func canonical(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(buf.String())
}

// blocks describes the content of a message, one word per block.
func blocks(t *testing.T, role string, content []map[string]json.RawMessage) string {
	t.Helper()
	var s []string
	for _, b := range content {
		switch {
		case b["text"] != nil:
			var x string
			_ = json.Unmarshal(b["text"], &x)
			s = append(s, fmt.Sprintf("text(%s)", x))
		case b["toolUse"] != nil:
			var u struct {
				ToolUseID string          `json:"toolUseId"`
				Name      string          `json:"name"`
				Input     json.RawMessage `json:"input"`
			}
			_ = json.Unmarshal(b["toolUse"], &u)
			s = append(s, fmt.Sprintf("toolUse(%s %s %s)", u.ToolUseID, u.Name, canonical(t, u.Input)))
		case b["toolResult"] != nil:
			var r struct {
				ToolUseID string                       `json:"toolUseId"`
				Content   []map[string]json.RawMessage `json:"content"`
			}
			_ = json.Unmarshal(b["toolResult"], &r)
			var c []string
			for _, rc := range r.Content {
				switch {
				case rc["json"] != nil:
					c = append(c, "json"+canonical(t, rc["json"]))
				case rc["text"] != nil:
					var x string
					_ = json.Unmarshal(rc["text"], &x)
					c = append(c, "text:"+x)
				default:
					c = append(c, fmt.Sprint(rc))
				}
			}
			s = append(s, fmt.Sprintf("toolResult(%s %s)", r.ToolUseID, strings.Join(c, ",")))
		default:
			s = append(s, fmt.Sprint(b))
		}
	}
	return role + ": " + strings.Join(s, " ")
}

// TestEveryMessageKind: system → system block; user → text; assistant →
// text + toolUse; tool → toolResult (JSON for an object, text otherwise) in
// a user message; same-role turns merge so that roles alternate.
func TestEveryMessageKind(t *testing.T) {
	f := &fakeConverse{answers: []answer{{out: textOutput("ok", 1, 1)}}}
	if _, err := bedrock.New(f, modelID).Complete(context.Background(), request()); err != nil {
		t.Fatal(err)
	}
	in := f.inputs[0]
	if got := in.ModelID; got != modelID {
		t.Errorf("ModelId = %q, want %q", got, modelID)
	}
	if len(in.System) != 1 || in.System[0].Text != "You are Ada, a careful assistant." {
		t.Errorf("System = %#v", in.System)
	}
	want := []string{
		`user: text(<untrusted_content source="chat">please write notes.md</untrusted_content>)`,
		`assistant: text(I will write it.) toolUse(tooluse_1 Workspace__write {"copies":2,"id":12345678901234567890,"path":"notes.md","ratio":0.1,"text":"hi"}) toolUse(tooluse_2 multi_tool_use_parallel {})`,
		`user: toolResult(tooluse_1 json{"bytes":2,"path":"notes.md","status":"ok"}) toolResult(tooluse_2 text:unknown tool; not an envelope)`,
		`assistant: toolUse(tooluse_3 Workspace__read {}) toolUse(tooluse_4 Workspace__list "{path: oops")`,
		`user: toolResult(tooluse_3 text:(no output)) toolResult(tooluse_4 text:["not","an","object"]) text((empty message))`,
	}
	if len(in.Messages) != len(want) {
		t.Fatalf("%d messages, want %d", len(in.Messages), len(want))
	}
	for i, m := range in.Messages {
		if got := blocks(t, m.Role, m.Content); got != want[i] {
			t.Errorf("message %d:\n got %s\nwant %s", i, got, want[i])
		}
	}

	var tools []string
	for _, tl := range in.ToolConfig.Tools {
		spec := tl.ToolSpec
		desc := "<nil>"
		if spec.Description != nil {
			desc = *spec.Description
		}
		tools = append(tools, fmt.Sprintf("%s|%s|%s", spec.Name, desc, canonical(t, spec.InputSchema.JSON)))
	}
	wantTools := []string{
		`Clock__now|<nil>|{"properties":{},"type":"object"}`,
		"Workspace__write|Files shared with the team.\nWrites a file.|" +
			`{"additionalProperties":false,"properties":{"path":{"maxLength":200,"type":"string"},"text":{"type":"string"}},"required":["path","text"],"type":"object"}`,
		"Workspace__read|Files shared with the team.\nReads a file.|" + `{"properties":{"path":{"type":"string"}},"type":"object"}`,
	}
	if strings.Join(tools, "\n") != strings.Join(wantTools, "\n") {
		t.Errorf("tools:\n got %s\nwant %s", strings.Join(tools, "\n"), strings.Join(wantTools, "\n"))
	}
}

func TestNoToolConfigWithoutTools(t *testing.T) {
	f := &fakeConverse{answers: []answer{{out: textOutput("hi", 1, 1)}}}
	_, err := bedrock.New(f, modelID).Complete(context.Background(), sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if f.inputs[0].ToolConfig != nil || f.inputs[0].System != nil {
		t.Errorf("ToolConfig = %#v, System = %#v; want both nil (Converse refuses an empty tool list and blank text)", f.inputs[0].ToolConfig, f.inputs[0].System)
	}
}

func TestOutputs(t *testing.T) {
	usage := []int{1200, 85}
	tests := []struct {
		name string
		out  string
		want string
	}{
		{name: "text and usage", out: textOutput("Done.", 1200, 85), want: `text="Done." in=1200 out=85`},
		{name: "tool_use with text before the calls",
			out: converseAnswer("tool_use", usage, textBlock("Let me write it."),
				toolUseBlock("tooluse_A", "Workspace__write", map[string]any{"path": "a.md", "n": 3}), toolUseBlock("tooluse_B", "Clock__now", nil)),
			want: `text="Let me write it." in=1200 out=85 call{id="tooluse_A" tool="Workspace" action="write" args={"n":3,"path":"a.md"}} call{id="tooluse_B" tool="Clock" action="now" args={}}`},
		{name: "unknown name passes through as the tool", out: converseAnswer("tool_use", nil, toolUseBlock("t1", "search", map[string]any{})),
			want: `text="" in=0 out=0 call{id="t1" tool="search" action="" args={}}`},
		{name: "max_tokens says the answer was cut off", out: converseAnswer("max_tokens", usage, textBlock("The three parts are")),
			want: `text="The three parts are\n\n[The answer was cut off: the model reached its output token limit.]" in=1200 out=85`},
		{name: "guardrail", out: converseAnswer("guardrail_intervened", nil, textBlock("Sorry.")),
			want: `text="Sorry.\n\n[The model's provider withheld the rest of the answer (content filter or guardrail).]" in=0 out=0`},
		{name: "malformed tool use", out: converseAnswer("malformed_tool_use", nil),
			want: `text="\n\n[The model produced a malformed tool call; ask again.]" in=0 out=0`},
		{name: "reasoning blocks are not the answer", out: converseAnswer("end_turn", nil,
			`{"reasoningContent":{"reasoningText":{"text":"thinking…"}}}`, textBlock("Answer.")),
			want: `text="Answer." in=0 out=0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeConverse{answers: []answer{{out: tt.out}}}
			got, err := bedrock.New(f, modelID).Complete(context.Background(), sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}}})
			if err != nil {
				t.Fatal(err)
			}
			if s := show(got); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
		})
	}
}

func TestUnexpectedOutput(t *testing.T) {
	f := &fakeConverse{answers: []answer{{out: `{"output":{"audio":{}},"stopReason":"end_turn"}`}}}
	_, err := bedrock.New(f, modelID).Complete(context.Background(), sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}}})
	checkErr(t, err, sb.EINTERNAL, "answered model "+modelID+" in an unexpected shape")
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantCode string
		wantMsg  []string
		wantNot  []string
	}{
		{"throttling", apiErr(429, "ThrottlingException", "Too many requests, please wait before trying again."), sb.ERATELIMITED, []string{"throttling requests to model " + modelID}, nil},
		{"quota", apiErr(400, "ServiceQuotaExceededException", "quota"), sb.ERATELIMITED, []string{"quota"}, nil},
		{"service unavailable", apiErr(503, "ServiceUnavailableException", "down"), sb.EUNAVAILABLE, []string{"temporarily unavailable"}, nil},
		{"internal server", apiErr(500, "InternalServerException", "oops"), sb.EUNAVAILABLE, []string{"temporarily unavailable"}, nil},
		{"model timeout", apiErr(408, "ModelTimeoutException", "timeout"), sb.EUNAVAILABLE, []string{"took too long"}, nil},
		{"model error", apiErr(424, "ModelErrorException", "model failed"), sb.EUNAVAILABLE, []string{"failed while answering"}, nil},
		{"model not ready", apiErr(429, "ModelNotReadyException", "loading"), sb.EUNAVAILABLE, []string{"not ready yet"}, nil},
		{"access denied hides the ARNs", apiErr(403, "AccessDeniedException", "User: arn:aws:sts::123456789012:assumed-role/fn/x is not authorized to perform: bedrock:InvokeModel"),
			sb.EUNAUTHORIZED, []string{"grant bedrock:InvokeModel for the model"}, []string{"123456789012"}},
		{"validation passes the reason on", apiErr(400, "ValidationException", "A conversation must start with a user message. Try again with a conversation that starts with a user message."),
			sb.EINVALID, []string{"Bedrock rejected the request for model " + modelID, "must start with a user message"}, nil},
		{"validation message is capped", apiErr(400, "ValidationException", strings.Repeat("x", 2000)), sb.EINVALID, []string{"xxx…"}, []string{strings.Repeat("x", 501)}},
		{"resource not found", apiErr(404, "ResourceNotFoundException", "Model not found"), sb.ENOTFOUND, []string{"not found in this region", "model.model"}, nil},
		{"wrapped", fmt.Errorf("operation error Bedrock Runtime: Converse: %w", apiErr(429, "ThrottlingException", "")), sb.ERATELIMITED, nil, nil},
		{"deadline", fmt.Errorf("operation error: %w", context.DeadlineExceeded), sb.EUNAVAILABLE, []string{"did not answer in time"}, nil},
		{"cancelled", &bedrock.SendError{Err: context.Canceled}, sb.EUNAVAILABLE, []string{"cancelled"}, nil},
		{"network", &bedrock.SendError{Err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}, sb.EUNAVAILABLE, []string{"cannot reach Bedrock"}, nil},
		{"unmodelled API error", apiErr(403, "UnrecognizedClientException", "The security token included in the request is invalid."),
			sb.EINTERNAL, []string{"error UnrecognizedClientException"}, []string{"security token"}},
		{"credentials not found", errors.New("credentials: failed to retrieve credentials: no EC2 IMDS role found"), sb.EINTERNAL, []string{"check the AWS credentials and region"}, []string{"IMDS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeConverse{answers: []answer{{err: tt.err}}}
			_, err := bedrock.New(f, modelID).WithRetry(oneAttempt).Complete(context.Background(), sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}}})
			checkErr(t, err, tt.wantCode, tt.wantMsg...)
			for _, w := range tt.wantNot {
				if strings.Contains(sb.ErrorMessage(err), w) {
					t.Errorf("message %q contains %q", sb.ErrorMessage(err), w)
				}
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("the cause is not kept for the logs: %v", err)
			}
		})
	}
}

func TestRequestsRejectedBeforeTheCall(t *testing.T) {
	tests := []struct {
		name    string
		modelID string
		tools   []sb.ToolSpec
		wantMsg string
	}{
		{"empty model id", " ", nil, "model.model is empty"},
		{"tool name too long", modelID, []sb.ToolSpec{{Name: strings.Repeat("Long", 10), Actions: []sb.ActionSpec{{Name: "a_rather_long_action_name"}}}}, "at most 64"},
		{"dot in an action", modelID, []sb.ToolSpec{{Name: "Files", Actions: []sb.ActionSpec{{Name: "read.all"}}}}, "Files.read.all cannot be offered"},
		{"schema that cannot be encoded", modelID, []sb.ToolSpec{{Name: "Files", Actions: []sb.ActionSpec{{Name: "read", Parameters: map[string]any{"maximum": math.NaN()}}}}}, "schema of Files.read cannot be encoded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeConverse{}
			_, err := bedrock.New(f, tt.modelID).Complete(context.Background(), sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}}, Tools: tt.tools})
			checkErr(t, err, sb.EINVALID, tt.wantMsg)
			if len(f.inputs) != 0 {
				t.Errorf("Converse called %d times, want 0", len(f.inputs))
			}
		})
	}
}

func apiErr(status int, code, msg string) *bedrock.APIError {
	return &bedrock.APIError{Status: status, Code: code, Message: msg}
}

func checkErr(t *testing.T, err error, wantCode string, wantMsg ...string) {
	t.Helper()
	errtest.Check(t, err, wantCode, wantMsg...)
}

// show prints a Response with Args verbatim.
func show(r sb.ModelResponse) string {
	s := fmt.Sprintf("text=%q in=%d out=%d", r.Text, r.TokensIn, r.TokensOut)
	for _, c := range r.ToolCalls {
		s += fmt.Sprintf(" call{id=%q tool=%q action=%q args=%s}", c.ID, c.Tool, c.Action, c.Args)
	}
	return s
}
