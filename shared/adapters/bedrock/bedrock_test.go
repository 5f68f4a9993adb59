package bedrock_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/switchboard-dev/switchboard/shared/adapters/bedrock"
	"github.com/switchboard-dev/switchboard/shared/platform/errtest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

const modelID = "anthropic.claude-3-5-haiku-20241022-v1:0"

// fakeConverse answers Converse with queued outputs or errors and keeps
// every input.
type fakeConverse struct {
	mu      sync.Mutex
	inputs  []*bedrockruntime.ConverseInput
	answers []answer
}

type answer struct {
	out   *bedrockruntime.ConverseOutput
	err   error
	check func(in *bedrockruntime.ConverseInput)
}

var _ bedrock.ConverseAPI = (*fakeConverse)(nil)

func (f *fakeConverse) Converse(_ context.Context, in *bedrockruntime.ConverseInput, _ ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error) {
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
	return a.out, a.err
}

func textOutput(text string, in, out int32) *bedrockruntime.ConverseOutput {
	return &bedrockruntime.ConverseOutput{
		Output: &types.ConverseOutputMemberMessage{Value: types.Message{Role: types.ConversationRoleAssistant,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: text}}}},
		StopReason: types.StopReasonEndTurn,
		Usage:      &types.TokenUsage{InputTokens: aws.Int32(in), OutputTokens: aws.Int32(out), TotalTokens: aws.Int32(in + out)},
	}
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

func docJSON(t *testing.T, d document.Interface) string {
	t.Helper()
	b, err := d.MarshalSmithyDocument()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// blocks describes the content of a message, one word per block.
func blocks(t *testing.T, m types.Message) string {
	t.Helper()
	var s []string
	for _, b := range m.Content {
		switch b := b.(type) {
		case *types.ContentBlockMemberText:
			s = append(s, fmt.Sprintf("text(%s)", b.Value))
		case *types.ContentBlockMemberToolUse:
			s = append(s, fmt.Sprintf("toolUse(%s %s %s)", aws.ToString(b.Value.ToolUseId), aws.ToString(b.Value.Name), docJSON(t, b.Value.Input)))
		case *types.ContentBlockMemberToolResult:
			var c []string
			for _, rc := range b.Value.Content {
				switch rc := rc.(type) {
				case *types.ToolResultContentBlockMemberJson:
					c = append(c, "json"+docJSON(t, rc.Value))
				case *types.ToolResultContentBlockMemberText:
					c = append(c, "text:"+rc.Value)
				default:
					c = append(c, fmt.Sprintf("%T", rc))
				}
			}
			s = append(s, fmt.Sprintf("toolResult(%s %s)", aws.ToString(b.Value.ToolUseId), strings.Join(c, ",")))
		default:
			s = append(s, fmt.Sprintf("%T", b))
		}
	}
	return string(m.Role) + ": " + strings.Join(s, " ")
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
	if got := aws.ToString(in.ModelId); got != modelID {
		t.Errorf("ModelId = %q, want %q", got, modelID)
	}
	if len(in.System) != 1 || in.System[0].(*types.SystemContentBlockMemberText).Value != "You are Ada, a careful assistant." {
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
		if got := blocks(t, m); got != want[i] {
			t.Errorf("message %d:\n got %s\nwant %s", i, got, want[i])
		}
	}

	var tools []string
	for _, tl := range in.ToolConfig.Tools {
		spec := tl.(*types.ToolMemberToolSpec).Value
		desc := "<nil>"
		if spec.Description != nil {
			desc = *spec.Description
		}
		tools = append(tools, fmt.Sprintf("%s|%s|%s", aws.ToString(spec.Name), desc,
			docJSON(t, spec.InputSchema.(*types.ToolInputSchemaMemberJson).Value)))
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
	msg := func(stop types.StopReason, usage *types.TokenUsage, content ...types.ContentBlock) *bedrockruntime.ConverseOutput {
		return &bedrockruntime.ConverseOutput{StopReason: stop, Usage: usage,
			Output: &types.ConverseOutputMemberMessage{Value: types.Message{Role: types.ConversationRoleAssistant, Content: content}}}
	}
	use := func(id, name string, input any) types.ContentBlock {
		b := types.ToolUseBlock{ToolUseId: aws.String(id), Name: aws.String(name)}
		if input != nil {
			b.Input = document.NewLazyDocument(input)
		}
		return &types.ContentBlockMemberToolUse{Value: b}
	}
	usage := &types.TokenUsage{InputTokens: aws.Int32(1200), OutputTokens: aws.Int32(85), TotalTokens: aws.Int32(1285)}
	tests := []struct {
		name string
		out  *bedrockruntime.ConverseOutput
		want string
	}{
		{name: "text and usage", out: textOutput("Done.", 1200, 85), want: `text="Done." in=1200 out=85`},
		{name: "tool_use with text before the calls",
			out: msg(types.StopReasonToolUse, usage, &types.ContentBlockMemberText{Value: "Let me write it."},
				use("tooluse_A", "Workspace__write", map[string]any{"path": "a.md", "n": 3}), use("tooluse_B", "Clock__now", nil)),
			want: `text="Let me write it." in=1200 out=85 call{id="tooluse_A" tool="Workspace" action="write" args={"n":3,"path":"a.md"}} call{id="tooluse_B" tool="Clock" action="now" args={}}`},
		{name: "unknown name passes through as the tool", out: msg(types.StopReasonToolUse, nil, use("t1", "search", map[string]any{})),
			want: `text="" in=0 out=0 call{id="t1" tool="search" action="" args={}}`},
		{name: "max_tokens says the answer was cut off", out: msg(types.StopReasonMaxTokens, usage, &types.ContentBlockMemberText{Value: "The three parts are"}),
			want: `text="The three parts are\n\n[The answer was cut off: the model reached its output token limit.]" in=1200 out=85`},
		{name: "guardrail", out: msg(types.StopReasonGuardrailIntervened, nil, &types.ContentBlockMemberText{Value: "Sorry."}),
			want: `text="Sorry.\n\n[The model's provider withheld the rest of the answer (content filter or guardrail).]" in=0 out=0`},
		{name: "malformed tool use", out: msg(types.StopReasonMalformedToolUse, nil),
			want: `text="\n\n[The model produced a malformed tool call; ask again.]" in=0 out=0`},
		{name: "reasoning blocks are not the answer", out: msg(types.StopReasonEndTurn, nil,
			&types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{Value: types.ReasoningTextBlock{Text: aws.String("thinking…")}}},
			&types.ContentBlockMemberText{Value: "Answer."}),
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
	f := &fakeConverse{answers: []answer{{out: &bedrockruntime.ConverseOutput{Output: &types.UnknownUnionMember{Tag: "audio"}}}}}
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
		{"throttling", &types.ThrottlingException{Message: aws.String("Too many requests, please wait before trying again.")}, sb.ERATELIMITED, []string{"throttling requests to model " + modelID}, nil},
		{"quota", &types.ServiceQuotaExceededException{Message: aws.String("quota")}, sb.ERATELIMITED, []string{"quota"}, nil},
		{"service unavailable", &types.ServiceUnavailableException{Message: aws.String("down")}, sb.EUNAVAILABLE, []string{"temporarily unavailable"}, nil},
		{"internal server", &types.InternalServerException{Message: aws.String("oops")}, sb.EUNAVAILABLE, []string{"temporarily unavailable"}, nil},
		{"model timeout", &types.ModelTimeoutException{Message: aws.String("timeout")}, sb.EUNAVAILABLE, []string{"took too long"}, nil},
		{"model error", &types.ModelErrorException{Message: aws.String("model failed")}, sb.EUNAVAILABLE, []string{"failed while answering"}, nil},
		{"model not ready", &types.ModelNotReadyException{Message: aws.String("loading")}, sb.EUNAVAILABLE, []string{"not ready yet"}, nil},
		{"access denied hides the ARNs", &types.AccessDeniedException{Message: aws.String("User: arn:aws:sts::123456789012:assumed-role/fn/x is not authorized to perform: bedrock:InvokeModel")},
			sb.EUNAUTHORIZED, []string{"grant bedrock:InvokeModel for the model"}, []string{"123456789012"}},
		{"validation passes the reason on", &types.ValidationException{Message: aws.String("A conversation must start with a user message. Try again with a conversation that starts with a user message.")},
			sb.EINVALID, []string{"Bedrock rejected the request for model " + modelID, "must start with a user message"}, nil},
		{"validation message is capped", &types.ValidationException{Message: aws.String(strings.Repeat("x", 2000))}, sb.EINVALID, []string{"xxx…"}, []string{strings.Repeat("x", 501)}},
		{"resource not found", &types.ResourceNotFoundException{Message: aws.String("Model not found")}, sb.ENOTFOUND, []string{"not found in this region", "model.model"}, nil},
		{"wrapped as the SDK does", &smithy.OperationError{ServiceID: "Bedrock Runtime", OperationName: "Converse", Err: &types.ThrottlingException{}}, sb.ERATELIMITED, nil, nil},
		{"deadline", fmt.Errorf("operation error: %w", context.DeadlineExceeded), sb.EUNAVAILABLE, []string{"did not answer in time"}, nil},
		{"cancelled", &aws.RequestCanceledError{Err: context.Canceled}, sb.EUNAVAILABLE, []string{"cancelled"}, nil},
		{"network", &smithyhttp.RequestSendError{Err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}, sb.EUNAVAILABLE, []string{"cannot reach Bedrock"}, nil},
		{"unmodelled API error", &smithy.GenericAPIError{Code: "UnrecognizedClientException", Message: "The security token included in the request is invalid."},
			sb.EINTERNAL, []string{"error UnrecognizedClientException"}, []string{"security token"}},
		{"credentials not found", errors.New("get identity: failed to retrieve credentials: no EC2 IMDS role found"), sb.EINTERNAL, []string{"check the AWS credentials and region"}, []string{"IMDS"}},
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
