// Package agentruntest gives model provider tests a whole agent run to
// drive: the run engine over the real tool executor (schema check,
// staging, audit in memory) with one small real tool. Tests only.
package agentruntest

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

// Notes is a small real tool: Notes.write stores text under a name.
type Notes struct {
	mu      sync.Mutex
	written map[string]string
}

// Spec implements sb.Tool.
func (n *Notes) Spec() sb.ToolSpec {
	return sb.ToolSpec{Name: "Notes", Description: "Notes of the team.", Actions: []sb.ActionSpec{
		{Name: "write", Description: "Writes a note.", Parameters: map[string]any{
			"type": "object", "required": []any{"name", "text"}, "additionalProperties": false,
			"properties": map[string]any{"name": map[string]any{"type": "string"}, "text": map[string]any{"type": "string"}}}},
	}}
}

// Invoke implements sb.Tool.
func (n *Notes) Invoke(_ context.Context, call sb.ToolCall) sb.Envelope {
	var a struct{ Name, Text string }
	_ = json.Unmarshal(call.Args, &a)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.written[a.Name] = a.Text
	return sb.OK(map[string]any{"name": a.Name})
}

// Written is the note stored under name.
func (n *Notes) Written(name string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.written[name]
}

// Engine is agentrun.Engine over the real executor with the Notes tool
// (Notes.write runs without approval).
func Engine(t testing.TB) (*agentrun.Engine, *Notes) {
	t.Helper()
	n := &Notes{written: map[string]string{}}
	policy, err := staging.New(map[string]string{"Notes.write": "auto"})
	if err != nil {
		t.Fatal(err)
	}
	store := memstore.New()
	x, err := tools.New(tools.Options{Tools: []sb.Tool{n}, Policy: policy, Audit: store, Scrub: scrub.New(nil),
		Permits: func(string, string) bool { return true }, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return &agentrun.Engine{Tools: x, Receipts: store}, n
}

// WantNoteSaved checks the run Engine made for "please note: buy milk": it
// answered, the note was written through the tool, and the receipt has the
// provider's token counts.
func WantNoteSaved(t testing.TB, res agentrun.Result, err error, n *Notes, tokensIn, tokensOut int) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "answered" || res.Answer != `Saved the note "todo".` {
		t.Errorf("outcome %q answer %q", res.Outcome, res.Answer)
	}
	if got, want := n.Written("todo"), "buy milk"; got != want {
		t.Errorf("note todo = %q, want %q", got, want)
	}
	if res.Receipt.TokensIn != tokensIn || res.Receipt.TokensOut != tokensOut {
		t.Errorf("receipt tokens in/out = %d/%d, want %d/%d", res.Receipt.TokensIn, res.Receipt.TokensOut, tokensIn, tokensOut)
	}
}
