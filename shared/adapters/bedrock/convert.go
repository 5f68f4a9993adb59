package bedrock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Converse refuses blank text blocks ("text content blocks must be
// non-empty"), and a refused block in the history would fail every later
// step of the run; these stand in for empty text.
const (
	emptyMessage = "(empty message)"
	emptyResult  = "(no output)"
)

// Notes appended to a final answer Bedrock cut short, so that the human
// reading it knows why it stops.
const (
	noteLength        = "\n\n[The answer was cut off: the model reached its output token limit.]"
	noteContentFilter = "\n\n[The model's provider withheld the rest of the answer (content filter or guardrail).]"
	noteMalformed     = "\n\n[The model produced a malformed tool call; ask again.]"
)

// The Converse request and answer on the wire (restJson1; the API
// reference's ConverseRequest and ConverseResponse). Only what the provider
// sends and reads.
type (
	converseRequest struct {
		Messages   []message     `json:"messages"`
		System     []systemBlock `json:"system,omitempty"`
		ToolConfig *toolConfig   `json:"toolConfig,omitempty"`
	}
	systemBlock struct {
		Text string `json:"text"`
	}
	message struct {
		Role    string         `json:"role"` // user, assistant
		Content []contentBlock `json:"content"`
	}
	// contentBlock is a union: exactly one member is set.
	contentBlock struct {
		Text       *string     `json:"text,omitempty"`
		ToolUse    *toolUse    `json:"toolUse,omitempty"`
		ToolResult *toolResult `json:"toolResult,omitempty"`
	}
	toolUse struct {
		Input     any    `json:"input"`
		Name      string `json:"name"`
		ToolUseID string `json:"toolUseId"`
	}
	toolResult struct {
		Content   []resultBlock `json:"content"`
		ToolUseID string        `json:"toolUseId"`
	}
	// resultBlock is a union: JSON or Text.
	resultBlock struct {
		JSON any     `json:"json,omitempty"`
		Text *string `json:"text,omitempty"`
	}
	toolConfig struct {
		Tools []toolEntry `json:"tools"`
	}
	toolEntry struct {
		ToolSpec toolSpec `json:"toolSpec"`
	}
	toolSpec struct {
		Description string      `json:"description,omitempty"` // Converse: min length 1 when present
		InputSchema inputSchema `json:"inputSchema"`
		Name        string      `json:"name"`
	}
	inputSchema struct {
		JSON any `json:"json"`
	}

	converseResponse struct {
		Output struct {
			Message *struct {
				Content []struct {
					Text    *string `json:"text"`
					ToolUse *struct {
						Input     json.RawMessage `json:"input"`
						Name      string          `json:"name"`
						ToolUseID string          `json:"toolUseId"`
					} `json:"toolUse"`
					// Reasoning, citations and other blocks are not part of the answer.
				} `json:"content"`
			} `json:"message"`
		} `json:"output"`
		StopReason string `json:"stopReason"`
		Usage      *struct {
			InputTokens  int `json:"inputTokens"`
			OutputTokens int `json:"outputTokens"`
		} `json:"usage"`
	}
)

// toInput converts the conversation into the request's JSON. Converse
// wants strictly alternating user/assistant messages and tool results
// inside a user message, so tool turns (and anything else of the same role
// in a row) merge into one message.
func (m *Model) toInput(req sb.ModelRequest) ([]byte, error) {
	const op = "bedrock.converse"
	var in converseRequest
	if strings.TrimSpace(req.System) != "" {
		in.System = []systemBlock{{Text: req.System}}
	}
	add := func(role string, blocks ...contentBlock) {
		if n := len(in.Messages); n > 0 && in.Messages[n-1].Role == role {
			in.Messages[n-1].Content = append(in.Messages[n-1].Content, blocks...)
			return
		}
		in.Messages = append(in.Messages, message{Role: role, Content: blocks})
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case "user":
			add("user", text(msg.Content, emptyMessage))
		case "assistant":
			var blocks []contentBlock
			if strings.TrimSpace(msg.Content) != "" || len(msg.ToolCalls) == 0 {
				blocks = append(blocks, text(msg.Content, emptyMessage))
			}
			for _, tc := range msg.ToolCalls {
				blocks = append(blocks, contentBlock{ToolUse: &toolUse{
					ToolUseID: tc.ID,
					Name:      sb.CalledFunctionName(tc.Tool, tc.Action),
					Input:     argsValue(tc.Args),
				}})
			}
			add("assistant", blocks...)
		case "tool":
			add("user", contentBlock{ToolResult: &toolResult{
				ToolUseID: msg.ToolCallID,
				Content:   []resultBlock{resultContent(msg.Content)},
			}})
		default:
			return nil, sb.E(op, sb.EINTERNAL, fmt.Sprintf("message %d has role %q; want user, assistant or tool", i, msg.Role))
		}
	}
	var specs []toolEntry
	for _, t := range req.Tools {
		for _, a := range t.Actions {
			if err := sb.CheckFunctionName(t.Name, a.Name); err != nil {
				return nil, sb.Wrap(op, sb.EINVALID, fmt.Sprintf("%s.%s cannot be offered to the model: %v", t.Name, a.Name, err), err)
			}
			params := a.Parameters
			if params == nil {
				params = map[string]any{"type": "object", "properties": map[string]any{}}
			}
			raw, err := json.Marshal(params)
			schema, ok := decodeJSON(raw)
			if err != nil || !ok {
				return nil, sb.Wrap(op, sb.EINVALID, fmt.Sprintf("the parameter schema of %s.%s cannot be encoded as JSON", t.Name, a.Name), err)
			}
			specs = append(specs, toolEntry{ToolSpec: toolSpec{
				Name:        sb.FunctionName(t.Name, a.Name),
				Description: sb.FunctionDescription(t.Description, a.Description),
				InputSchema: inputSchema{JSON: schema},
			}})
		}
	}
	if len(specs) > 0 {
		in.ToolConfig = &toolConfig{Tools: specs}
	}
	body, err := marshal(in)
	if err != nil {
		return nil, sb.Wrap(op, sb.EINTERNAL, "the Bedrock request could not be encoded", err)
	}
	return body, nil
}

// marshal is json.Marshal without HTML escaping: the text goes to the
// model as it was written.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func text(s, placeholder string) contentBlock {
	if strings.TrimSpace(s) == "" {
		s = placeholder
	}
	return contentBlock{Text: &s}
}

// resultContent sends a tool's answer (an envelope) as a JSON block when
// it is a JSON object, otherwise as text.
func resultContent(content string) resultBlock {
	if v, ok := decodeJSON([]byte(content)); ok {
		if _, isObject := v.(map[string]any); isObject {
			return resultBlock{JSON: v}
		}
	}
	if strings.TrimSpace(content) == "" {
		content = emptyResult
	}
	return resultBlock{Text: &content}
}

// argsValue is a call's input for the history. Bedrock hands inputs out as
// JSON documents, so its own calls always decode; arguments that do not
// (recorded by another provider) replay as a string rather than fail the run.
func argsValue(args json.RawMessage) any {
	if len(bytes.TrimSpace(args)) == 0 {
		return map[string]any{}
	}
	if v, ok := decodeJSON(args); ok {
		return v
	}
	return string(args)
}

// decodeJSON decodes one JSON value keeping numbers exact (json.Number,
// which encoding/json writes back verbatim).
func decodeJSON(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return nil, false
	}
	return v, true
}

// fromOutput converts Bedrock's answer. Every toolUse block is a call,
// whatever the stop reason says (it is tool_use whenever there are calls).
func fromOutput(body []byte) (sb.ModelResponse, error) {
	var resp sb.ModelResponse
	var out converseResponse
	if err := json.Unmarshal(body, &out); err != nil {
		return resp, fmt.Errorf("decode answer: %w", err)
	}
	if u := out.Usage; u != nil {
		resp.TokensIn, resp.TokensOut = u.InputTokens, u.OutputTokens
	}
	msg := out.Output.Message
	if msg == nil {
		return resp, errors.New("output is not a message")
	}
	var texts []string
	for _, block := range msg.Content {
		switch {
		case block.Text != nil:
			texts = append(texts, *block.Text)
		case block.ToolUse != nil:
			args := json.RawMessage("{}")
			if s := bytes.TrimSpace(block.ToolUse.Input); len(s) > 0 && string(s) != "null" {
				var compact bytes.Buffer
				if err := json.Compact(&compact, s); err != nil {
					return resp, fmt.Errorf("toolUse %s input: %w", block.ToolUse.ToolUseID, err)
				}
				args = compact.Bytes()
			}
			tool, action := sb.ParseFunctionName(block.ToolUse.Name)
			resp.ToolCalls = append(resp.ToolCalls, sb.ModelToolCall{ID: block.ToolUse.ToolUseID, Tool: tool, Action: action, Args: args})
		}
	}
	resp.Text = strings.Join(texts, "\n")
	if len(resp.ToolCalls) == 0 {
		switch out.StopReason {
		case "max_tokens", "model_context_window_exceeded":
			resp.Text += noteLength
		case "content_filtered", "guardrail_intervened":
			resp.Text += noteContentFilter
		case "malformed_tool_use", "malformed_model_output":
			resp.Text += noteMalformed
		}
	}
	return resp, nil
}
