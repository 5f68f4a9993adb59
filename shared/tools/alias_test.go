package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
)

// aliasTool offers its action under a long name and accepts a short alias.
type aliasTool struct{ got []string }

func (a *aliasTool) Spec() sb.ToolSpec {
	return sb.ToolSpec{Name: "Board", Actions: []sb.ActionSpec{{Name: "task_create", Aliases: []string{"create"},
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"t": map[string]any{"type": "string"}},
			"required": []string{"t"}, "additionalProperties": false}}}}
}

func (a *aliasTool) Invoke(_ context.Context, call sb.ToolCall) sb.Envelope {
	a.got = append(a.got, call.Action)
	return sb.OK(nil)
}

// TestActionAliases: an alias runs the action under its own name (the tool,
// the schema check, the staging rule and the audit all see the name), and
// an alias that clashes with an action or another alias is refused by New.
func TestActionAliases(t *testing.T) {
	f := newFixture(t)
	tool := &aliasTool{}
	x, err := tools.New(tools.Options{Tools: []sb.Tool{tool}, Policy: boardPolicy(t), Audit: f.store,
		Scrub: scrub.New(nil), Permits: func(string, string) bool { return true }, Log: discard(), Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{"create", "task_create"} {
		run := runCtx("alias-" + action)
		env := x.Invoke(t.Context(), sb.ToolCall{AgentID: "alice", Tool: "Board", Action: action, Args: json.RawMessage(`{"t":"x"}`), Run: run})
		if env.Status != "ok" {
			t.Fatalf("%s: %+v, want ok", action, env)
		}
		if e := f.only(t, run.RootRunID); e.Action != "task_create" {
			t.Errorf("%s: audited as %q, want task_create", action, e.Action)
		}
		env = x.Invoke(t.Context(), sb.ToolCall{AgentID: "alice", Tool: "Board", Action: action, Args: json.RawMessage(`{}`), Run: runCtx("bad-" + action)})
		if env.Status != "error" || !strings.Contains(env.Error, "task_create") {
			t.Errorf("%s without t: %+v, want the schema check of task_create", action, env)
		}
	}
	if strings.Join(tool.got, ",") != "task_create,task_create" {
		t.Errorf("tool saw actions %v, want task_create twice", tool.got)
	}
	clash := badTool{sb.ToolSpec{Name: "Bad", Actions: []sb.ActionSpec{
		{Name: "go", Parameters: map[string]any{"type": "object"}},
		{Name: "run", Aliases: []string{"go"}, Parameters: map[string]any{"type": "object"}},
	}}}
	if _, err := tools.New(tools.Options{Tools: []sb.Tool{clash}, Policy: mustPolicy(t), Audit: f.store, Scrub: nilScrubber{},
		Permits: func(string, string) bool { return true }, Log: discard()}); err == nil || !strings.Contains(err.Error(), "alias") {
		t.Errorf("New with a clashing alias: %v, want an error naming the alias", err)
	}
}

func boardPolicy(t testing.TB) *staging.Policy {
	t.Helper()
	p, err := staging.New(map[string]string{"Board.task_create": "auto"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
