package bedrock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	smithydocument "github.com/aws/smithy-go/document"

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

// toInput converts the conversation. Converse wants strictly alternating
// user/assistant messages and tool results inside a user message, so tool
// turns (and anything else of the same role in a row) merge into one
// message.
func (m *Model) toInput(req sb.ModelRequest) (*bedrockruntime.ConverseInput, error) {
	const op = "bedrock.converse"
	in := &bedrockruntime.ConverseInput{ModelId: aws.String(m.modelID)}
	if strings.TrimSpace(req.System) != "" {
		in.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: req.System}}
	}
	add := func(role types.ConversationRole, blocks ...types.ContentBlock) {
		if n := len(in.Messages); n > 0 && in.Messages[n-1].Role == role {
			in.Messages[n-1].Content = append(in.Messages[n-1].Content, blocks...)
			return
		}
		in.Messages = append(in.Messages, types.Message{Role: role, Content: blocks})
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case "user":
			add(types.ConversationRoleUser, text(msg.Content, emptyMessage))
		case "assistant":
			var blocks []types.ContentBlock
			if strings.TrimSpace(msg.Content) != "" || len(msg.ToolCalls) == 0 {
				blocks = append(blocks, text(msg.Content, emptyMessage))
			}
			for _, tc := range msg.ToolCalls {
				blocks = append(blocks, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: aws.String(tc.ID),
					Name:      aws.String(sb.CalledFunctionName(tc.Tool, tc.Action)),
					Input:     document.NewLazyDocument(argsValue(tc.Args)),
				}})
			}
			add(types.ConversationRoleAssistant, blocks...)
		case "tool":
			add(types.ConversationRoleUser, &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
				ToolUseId: aws.String(msg.ToolCallID),
				Content:   []types.ToolResultContentBlock{resultContent(msg.Content)},
			}})
		default:
			return nil, sb.E(op, sb.EINTERNAL, fmt.Sprintf("message %d has role %q; want user, assistant or tool", i, msg.Role))
		}
	}
	var specs []types.Tool
	for _, t := range req.Tools {
		for _, a := range t.Actions {
			if err := sb.CheckFunctionName(t.Name, a.Name); err != nil {
				return nil, sb.Wrap(op, sb.EINVALID, fmt.Sprintf("%s.%s cannot be offered to the model: %v", t.Name, a.Name, err), err)
			}
			params := a.Parameters
			if params == nil {
				params = map[string]any{"type": "object", "properties": map[string]any{}}
			}
			// Through encoding/json and back to plain JSON values: the
			// SDK's document encoder panics on NaN and drops what it cannot
			// encode, where encoding/json reports it.
			raw, err := json.Marshal(params)
			schema, ok := decodeJSON(raw)
			if err != nil || !ok {
				return nil, sb.Wrap(op, sb.EINVALID, fmt.Sprintf("the parameter schema of %s.%s cannot be encoded as JSON", t.Name, a.Name), err)
			}
			spec := types.ToolSpecification{
				Name:        aws.String(sb.FunctionName(t.Name, a.Name)),
				InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)},
			}
			if d := sb.FunctionDescription(t.Description, a.Description); d != "" {
				spec.Description = aws.String(d) // Converse: min length 1 when present
			}
			specs = append(specs, &types.ToolMemberToolSpec{Value: spec})
		}
	}
	if len(specs) > 0 {
		in.ToolConfig = &types.ToolConfiguration{Tools: specs}
	}
	return in, nil
}

func text(s, placeholder string) types.ContentBlock {
	if strings.TrimSpace(s) == "" {
		s = placeholder
	}
	return &types.ContentBlockMemberText{Value: s}
}

// resultContent sends a tool's answer (an envelope) as a JSON block when
// it is a JSON object, otherwise as text.
func resultContent(content string) types.ToolResultContentBlock {
	if v, ok := decodeJSON([]byte(content)); ok {
		if _, isObject := v.(map[string]any); isObject {
			return &types.ToolResultContentBlockMemberJson{Value: document.NewLazyDocument(v)}
		}
	}
	if strings.TrimSpace(content) == "" {
		content = emptyResult
	}
	return &types.ToolResultContentBlockMemberText{Value: content}
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

// decodeJSON decodes one JSON value keeping numbers exact: json.Number
// becomes smithy's document.Number, which the document encoder writes
// verbatim (a json.Number would be written as a string).
func decodeJSON(b []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return nil, false
	}
	return numbers(v), true
}

func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		return smithydocument.Number(v)
	case map[string]any:
		for k, e := range v {
			v[k] = numbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = numbers(e)
		}
	}
	return v
}

// fromOutput converts Bedrock's answer. Every toolUse block is a call,
// whatever the stop reason says (it is tool_use whenever there are calls).
func fromOutput(out *bedrockruntime.ConverseOutput) (sb.ModelResponse, error) {
	var resp sb.ModelResponse
	if out == nil {
		return resp, errors.New("no output")
	}
	if u := out.Usage; u != nil {
		resp.TokensIn, resp.TokensOut = int(aws.ToInt32(u.InputTokens)), int(aws.ToInt32(u.OutputTokens))
	}
	msg, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return resp, fmt.Errorf("output is %T, not a message", out.Output)
	}
	var texts []string
	for _, block := range msg.Value.Content {
		switch b := block.(type) {
		case *types.ContentBlockMemberText:
			texts = append(texts, b.Value)
		case *types.ContentBlockMemberToolUse:
			args := json.RawMessage("{}")
			if b.Value.Input != nil {
				raw, err := b.Value.Input.MarshalSmithyDocument()
				if err != nil {
					return resp, fmt.Errorf("toolUse %s input: %w", aws.ToString(b.Value.ToolUseId), err)
				}
				if s := bytes.TrimSpace(raw); len(s) > 0 && string(s) != "null" {
					args = s
				}
			}
			tool, action := sb.ParseFunctionName(aws.ToString(b.Value.Name))
			resp.ToolCalls = append(resp.ToolCalls, sb.ModelToolCall{ID: aws.ToString(b.Value.ToolUseId), Tool: tool, Action: action, Args: args})
		}
		// Reasoning, citations and other blocks are not part of the answer.
	}
	resp.Text = strings.Join(texts, "\n")
	if len(resp.ToolCalls) == 0 {
		switch out.StopReason {
		case types.StopReasonMaxTokens, types.StopReasonModelContextWindowExceeded:
			resp.Text += noteLength
		case types.StopReasonContentFiltered, types.StopReasonGuardrailIntervened:
			resp.Text += noteContentFilter
		case types.StopReasonMalformedToolUse, types.StopReasonMalformedModelOutput:
			resp.Text += noteMalformed
		}
	}
	return resp, nil
}
