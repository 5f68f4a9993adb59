package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Wire shapes of POST /chat/completions, only the fields Switchboard uses
// (https://platform.openai.com/docs/api-reference/chat/create; Ollama and
// vLLM accept and answer the same shapes).

type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Tools    []chatTool    `json:"tools,omitempty"` // OpenAI refuses an empty list
}

type chatMessage struct {
	Role string `json:"role"` // system | user | assistant | tool
	// Content is null on an assistant turn that only calls tools, as the API
	// itself answers; Ollama refuses null only when there are no tool calls.
	Content    *string        `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name string `json:"name"`
	// Arguments is JSON text in a string. Some compatible servers answer a
	// plain object instead; fromResponse reads both.
	Arguments json.RawMessage `json:"arguments"`
}

type chatTool struct {
	Type     string      `json:"type"` // "function"
	Function chatFuncDef `json:"function"`
}

type chatFuncDef struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content   json.RawMessage `json:"content"` // string, null, or (rarely) a list of parts
			ToolCalls []chatToolCall  `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct { // absent from some servers (older Ollama)
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// Notes appended to a final answer the server cut short, so that the human
// reading it knows why it stops mid-sentence.
const (
	noteLength        = "\n\n[The answer was cut off: the model reached its output token limit.]"
	noteContentFilter = "\n\n[The model's provider withheld the rest of the answer (content filter).]"
)

// toRequest converts the conversation to the wire shape.
func (m *Model) toRequest(req sb.ModelRequest) (chatRequest, error) {
	const op = "openai.complete"
	if err := checkTools(op, req.Tools); err != nil {
		return chatRequest{}, err
	}
	out := chatRequest{Model: m.model, Messages: make([]chatMessage, 0, len(req.Messages)+1)}
	if req.System != "" {
		out.Messages = append(out.Messages, chatMessage{Role: "system", Content: ptr(req.System)})
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case "user":
			out.Messages = append(out.Messages, chatMessage{Role: "user", Content: ptr(msg.Content)})
		case "assistant":
			cm := chatMessage{Role: "assistant"}
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				cm.Content = ptr(msg.Content)
			}
			for _, tc := range msg.ToolCalls {
				cm.ToolCalls = append(cm.ToolCalls, chatToolCall{ID: tc.ID, Type: "function",
					Function: chatFunction{Name: sb.CalledFunctionName(tc.Tool, tc.Action), Arguments: argumentsText(tc.Args)}})
			}
			out.Messages = append(out.Messages, cm)
		case "tool":
			out.Messages = append(out.Messages, chatMessage{Role: "tool", ToolCallID: msg.ToolCallID, Content: ptr(msg.Content)})
		default:
			return chatRequest{}, sb.E(op, sb.EINTERNAL, fmt.Sprintf("message %d has role %q; want user, assistant or tool", i, msg.Role))
		}
	}
	for _, t := range req.Tools {
		for _, a := range t.Actions {
			params := a.Parameters
			if params == nil {
				params = map[string]any{"type": "object", "properties": map[string]any{}}
			}
			out.Tools = append(out.Tools, chatTool{Type: "function", Function: chatFuncDef{
				Name: sb.FunctionName(t.Name, a.Name), Description: sb.FunctionDescription(t.Description, a.Description),
				Parameters: params,
			}})
		}
	}
	return out, nil
}

// argumentsText replays a call's arguments as the JSON string the API wants:
// the model's own text, even when it was not valid JSON.
func argumentsText(args json.RawMessage) json.RawMessage {
	text := strings.TrimSpace(string(args))
	if text == "" {
		text = "{}"
	}
	b, _ := json.Marshal(text) // marshalling a string cannot fail
	return b
}

// fromResponse converts the first choice. turn (the number of messages so
// far) makes the ids it invents for calls without one unique in the run.
func fromResponse(cr chatResponse, turn int) sb.ModelResponse {
	choice := cr.Choices[0]
	var out sb.ModelResponse
	if cr.Usage != nil {
		out.TokensIn, out.TokensOut = cr.Usage.PromptTokens, cr.Usage.CompletionTokens
	}
	out.Text = contentText(choice.Message.Content)
	for i, tc := range choice.Message.ToolCalls {
		tool, action := sb.ParseFunctionName(tc.Function.Name)
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", turn, i)
		}
		out.ToolCalls = append(out.ToolCalls, sb.ModelToolCall{ID: id, Tool: tool, Action: action, Args: argumentsValue(tc.Function.Arguments)})
	}
	if len(out.ToolCalls) == 0 {
		switch choice.FinishReason {
		case "length":
			out.Text += noteLength
		case "content_filter":
			out.Text += noteContentFilter
		}
	}
	return out
}

// argumentsValue reads the arguments of a call. The API sends JSON text in a
// string; that text is kept byte for byte, even when it is not valid JSON,
// so that the executor answers the model "args … are not valid JSON; send a
// JSON object" (a JSON-string wrapper would pass the JSON check and read as
// "got string, want object" instead). Missing or blank arguments are {}.
// A server that sends an object or another JSON value directly gets it used
// as is.
func argumentsValue(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	var text string
	if raw[0] == '"' && json.Unmarshal(raw, &text) == nil {
		if strings.TrimSpace(text) == "" {
			return json.RawMessage("{}")
		}
		return json.RawMessage(text)
	}
	return raw
}

// contentText reads message.content: a string, null, or a list of parts of
// which the text parts count.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func ptr(s string) *string { return &s }
