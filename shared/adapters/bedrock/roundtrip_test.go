package bedrock_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/bedrock"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun/agentruntest"
)

// TestToolCallRoundTrip runs a whole agent run through the provider: the
// model calls Notes.write twice (once with a missing field), sees both
// executor answers under its toolUseIds in one user message, and answers.
func TestToolCallRoundTrip(t *testing.T) {
	step1 := converseAnswer("tool_use", []int{300, 40}, textBlock("Saving it."),
		toolUseBlock("tooluse_bad", "Notes__write", map[string]any{"name": "todo"}),
		toolUseBlock("tooluse_good", "Notes__write", map[string]any{"name": "todo", "text": "buy milk"}))
	var second string
	f := &fakeConverse{answers: []answer{
		{out: step1, check: func(in wireRequest) {
			if n := len(in.ToolConfig.Tools); n != 1 {
				t.Errorf("step 1 offers %d tools, want 1", n)
			}
		}},
		{out: textOutput(`Saved the note "todo".`, 420, 9), check: func(in wireRequest) {
			var s []string
			for _, m := range in.Messages {
				s = append(s, blocks(t, m.Role, m.Content))
			}
			second = strings.Join(s, "\n")
		}},
	}}
	e, n := agentruntest.Engine(t)
	res, err := e.Run(context.Background(), sb.Agent{ID: "ada", SystemPrompt: "You are Ada.", Model: bedrock.New(f, modelID),
		Provider: "bedrock", ModelName: modelID}, "please note: buy milk", nil)
	agentruntest.WantNoteSaved(t, res, err, n, 720, 49)
	lines := strings.Split(second, "\n")
	if len(lines) != 3 {
		t.Fatalf("step 2 messages:\n%s\nwant user, assistant, user", second)
	}
	for i, want := range []string{
		"user: text(please note: buy milk)",
		`assistant: text(Saving it.) toolUse(tooluse_bad Notes__write {"name":"todo"}) toolUse(tooluse_good Notes__write {"name":"todo","text":"buy milk"})`,
	} {
		if lines[i] != want {
			t.Errorf("step 2 message %d:\n got %s\nwant %s", i, lines[i], want)
		}
	}
	// Both results in one user message, as JSON envelopes.
	if !strings.HasPrefix(lines[2], `user: toolResult(tooluse_bad json{"error":"args of Notes.write are wrong`) ||
		!strings.HasSuffix(lines[2], `) toolResult(tooluse_good json{"name":"todo","status":"ok"})`) {
		t.Errorf("step 2 message 2 = %s", lines[2])
	}
}
