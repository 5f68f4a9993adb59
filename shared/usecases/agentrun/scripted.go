package agentrun

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Scripted is a deterministic model for demos and tests (no credentials, no
// network). It reads the first user message:
//   - every line "call Tool.action {json args}" (also as a further line of
//     a chat message, "| call …") becomes a tool call, issued together on
//     the first step;
//   - once tool results are back, or when there was nothing to call, it
//     answers with Reply, where {{agent}} and {{message}} are replaced, followed
//     by one line per tool result ("Workspace.write → ok"; an answer a
//     result carries is shown: "ask_agent.ask → ok: <answer>").
//
// Tokens are counted as bytes/4, so receipts carry deterministic costs.
type Scripted struct {
	AgentName string
	Reply     string
}

// Complete implements sb.Model.
func (s Scripted) Complete(_ context.Context, req sb.ModelRequest) (sb.ModelResponse, error) {
	in := 0
	for _, m := range req.Messages {
		in += len(m.Content)
	}
	in = (in + len(req.System)) / 4
	first := ""
	if len(req.Messages) > 0 {
		first = req.Messages[0].Content
	}
	var results []string
	for i, m := range req.Messages {
		if i > 0 && m.Role == "tool" {
			results = append(results, m.Content)
		}
	}
	if len(req.Messages) == 1 {
		if calls := parseCalls(first); len(calls) > 0 {
			return sb.ModelResponse{ToolCalls: calls, TokensIn: in, TokensOut: 8 * len(calls)}, nil
		}
	}
	text := s.reply(first)
	calls := lastCalls(req.Messages)
	for i, r := range results {
		var env struct {
			Status string `json:"status"`
			Error  string `json:"error"`
			Answer string `json:"answer"` // ask_agent's
		}
		_ = json.Unmarshal([]byte(r), &env)
		line := env.Status
		if env.Error != "" {
			line += ": " + env.Error
		}
		if env.Answer != "" {
			line += ": " + env.Answer
		}
		name := "tool"
		if i < len(calls) {
			name = calls[i].Tool + "." + calls[i].Action
		}
		text += fmt.Sprintf("\n%s → %s", name, line)
	}
	return sb.ModelResponse{Text: text, TokensIn: in, TokensOut: (len(text) + 3) / 4}, nil
}

func (s Scripted) reply(message string) string {
	tpl := s.Reply
	if tpl == "" {
		tpl = "Hello, this is {{agent}}. You said: {{message}}"
	}
	return strings.NewReplacer("{{agent}}", s.AgentName, "{{message}}", stripFrame(message)).Replace(tpl)
}

// stripFrame shows the human's words without the untrusted frame tags, and
// without the instructions a wake message puts before the frame.
func stripFrame(s string) string {
	if i := strings.Index(s, "<untrusted_content"); i > 0 {
		s = s[i:]
	}
	s = strings.TrimSpace(s)
	if i := strings.Index(s, ">"); strings.HasPrefix(s, "<untrusted_content") && i > 0 {
		s = s[i+1:]
		if j := strings.LastIndex(s, "</untrusted_content"); j >= 0 {
			s = s[:j]
		}
	}
	return strings.TrimSpace(s)
}

func parseCalls(message string) []sb.ModelToolCall {
	var calls []sb.ModelToolCall
	for _, line := range strings.Split(stripFrame(message), "\n") {
		// A chat message's further lines come as "  | …" in a wake.
		line = strings.TrimPrefix(strings.TrimSpace(line), "| ")
		rest, ok := strings.CutPrefix(line, "call ")
		if !ok {
			continue
		}
		name, args, _ := strings.Cut(strings.TrimSpace(rest), " ")
		tool, action, ok := strings.Cut(name, ".")
		if !ok {
			continue
		}
		args = strings.TrimSpace(args)
		if args == "" {
			args = "{}"
		}
		calls = append(calls, sb.ModelToolCall{ID: fmt.Sprintf("call-%d", len(calls)+1), Tool: tool, Action: action, Args: json.RawMessage(args)})
	}
	return calls
}

func lastCalls(msgs []sb.ModelMessage) []sb.ModelToolCall {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "assistant" {
			return msgs[i].ToolCalls
		}
	}
	return nil
}
