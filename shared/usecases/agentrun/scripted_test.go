package agentrun_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

func fixedNonce() string { return "0123456789abcdef" }

func TestScriptedParsesCallLines(t *testing.T) {
	tests := []struct {
		name    string
		message string
		want    []sb.ModelToolCall // nil: the model answers instead
	}{
		{
			name:    "one call",
			message: `call Workspace.write {"path":"a.txt","content":"x"}`,
			want:    []sb.ModelToolCall{call("call-1", "Workspace", "write", `{"path":"a.txt","content":"x"}`)},
		},
		{
			name:    "several calls among prose, numbered in order",
			message: "Please do this:\ncall Echo.say {\"text\":\"1\"}\nand then\ncall Workspace.list\nthanks",
			want:    []sb.ModelToolCall{call("call-1", "Echo", "say", `{"text":"1"}`), call("call-2", "Workspace", "list", `{}`)},
		},
		{
			name:    "blanks around name and args are trimmed",
			message: "   call    Echo.say     {\"a\": 1}   \r\n",
			want:    []sb.ModelToolCall{call("call-1", "Echo", "say", `{"a": 1}`)},
		},
		{
			name:    "args are passed through unparsed",
			message: "call Echo.say not json",
			want:    []sb.ModelToolCall{call("call-1", "Echo", "say", `not json`)},
		},
		{
			name:    "framed message",
			message: untrusted.FrameWith("rocketchat:#general @bob", "call Echo.say {\"text\":\"hi\"}", fixedNonce),
			want:    []sb.ModelToolCall{call("call-1", "Echo", "say", `{"text":"hi"}`)},
		},
		{
			// A chat message woke the agent: its further lines carry the
			// wake message's continuation marker.
			name: "continuation lines of a wake message",
			message: "New message(s) for you in #general.\n" + untrusted.FrameWith("rocketchat:#general",
				"[20:03] @richard (messageId: m1): @agent-hermes save this\n  | call Workspace.write {\"path\":\"a.md\"}\n  | call Workspace.list", fixedNonce),
			want: []sb.ModelToolCall{call("call-1", "Workspace", "write", `{"path":"a.md"}`), call("call-2", "Workspace", "list", `{}`)},
		},
		{
			name:    "continuation line of a chat message",
			message: "[10:15] @richard (messageId: m1): @agent-hermes please\n  | call Echo.say {\"text\":\"hi\"}",
			want:    []sb.ModelToolCall{call("call-1", "Echo", "say", `{"text":"hi"}`)},
		},
		{name: "no dot is no call", message: "call Echo {}"},
		{name: "not at the line start", message: "please call Echo.say {}"},
		{name: "prefix is case-sensitive", message: "Call Echo.say {}"},
		{name: "needs a blank after call", message: "callEcho.say {}"},
		{name: "plain text", message: "hello"},
		{name: "empty", message: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := agentrun.Scripted{AgentName: "Ada"}.Complete(context.Background(),
				sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: tt.message}}})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(resp.ToolCalls, tt.want) {
				t.Errorf("tool calls = %+v, want %+v", resp.ToolCalls, tt.want)
			}
			if tt.want == nil && resp.Text == "" {
				t.Errorf("no calls and no text")
			}
			if tt.want != nil && resp.Text != "" {
				t.Errorf("text = %q alongside calls, want none", resp.Text)
			}
		})
	}
}

func TestScriptedReply(t *testing.T) {
	tests := []struct {
		name     string
		reply    string
		messages []sb.ModelMessage
		want     string
	}{
		{
			name: "default template", messages: []sb.ModelMessage{{Role: "user", Content: "hi there"}},
			want: "Hello, this is Ada. You said: hi there",
		},
		{
			name: "custom template, every placeholder", reply: "{{agent}} heard {{message}} ({{message}})",
			messages: []sb.ModelMessage{{Role: "user", Content: "ping"}},
			want:     "Ada heard ping (ping)",
		},
		{
			name:     "frame tags are not echoed",
			messages: []sb.ModelMessage{{Role: "user", Content: untrusted.FrameWith("rocketchat:#general @bob", "  good morning  ", fixedNonce)}},
			want:     "Hello, this is Ada. You said: good morning",
		},
		{
			name: "a wake's instructions before the frame are not echoed",
			messages: []sb.ModelMessage{{Role: "user", Content: "New message(s) for you in #general. Your final answer is posted there.\n" +
				untrusted.FrameWith("rocketchat:#general", "[09:00] @bob (messageId: m1): @agent-ada hi", fixedNonce)}},
			want: "Hello, this is Ada. You said: [09:00] @bob (messageId: m1): @agent-ada hi",
		},
		{
			name:     "placeholders in the message stay literal",
			messages: []sb.ModelMessage{{Role: "user", Content: "{{agent}} {{message}}"}},
			want:     "Hello, this is Ada. You said: {{agent}} {{message}}",
		},
		{
			name: "one line per tool result, in call order",
			messages: []sb.ModelMessage{
				{Role: "user", Content: "call Workspace.write {}\ncall Workspace.read {}\ncall Telegram.send_message {}"},
				{Role: "assistant", ToolCalls: []sb.ModelToolCall{
					call("call-1", "Workspace", "write", `{}`), call("call-2", "Workspace", "read", `{}`), call("call-3", "Telegram", "send_message", `{}`)}},
				{Role: "tool", ToolCallID: "call-1", Content: `{"status":"ok","size":3}`},
				{Role: "tool", ToolCallID: "call-2", Content: `{"status":"error","error":"no such file; list first"}`},
				{Role: "tool", ToolCallID: "call-3", Content: `{"status":"pending_approval","message":"needs a human"}`},
			},
			reply: "Done, {{agent}}.",
			want:  "Done, Ada.\nWorkspace.write → ok\nWorkspace.read → error: no such file; list first\nTelegram.send_message → pending_approval",
		},
		{
			name: "a result's answer is shown, so a colleague's reply reaches the room",
			messages: []sb.ModelMessage{
				{Role: "user", Content: "call ask_agent.ask {}"},
				{Role: "assistant", ToolCalls: []sb.ModelToolCall{call("call-1", "ask_agent", "ask", `{}`)}},
				{Role: "tool", ToolCallID: "call-1", Content: `{"status":"ok","agent":"bob","answer":"42, says Bob","runId":"r2"}`},
			},
			reply: "Asked.",
			want:  "Asked.\nask_agent.ask → ok: 42, says Bob",
		},
		{
			name: "results without a matching call are named tool",
			messages: []sb.ModelMessage{
				{Role: "user", Content: "x"},
				{Role: "tool", Content: `{"status":"ok"}`},
			},
			reply: "r",
			want:  "r\ntool → ok",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := agentrun.Scripted{AgentName: "Ada", Reply: tt.reply}.Complete(context.Background(),
				sb.ModelRequest{Messages: tt.messages})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != tt.want {
				t.Errorf("text = %q, want %q", resp.Text, tt.want)
			}
			if len(resp.ToolCalls) != 0 {
				t.Errorf("tool calls = %+v after results, want none", resp.ToolCalls)
			}
		})
	}
}

func TestScriptedTokens(t *testing.T) {
	tests := []struct {
		name    string
		req     sb.ModelRequest
		wantIn  int
		wantOut int
	}{
		{
			// (len("hi") + len("abcdef")) / 4 = 2; reply is 32 bytes → 8
			name:   "answer",
			req:    sb.ModelRequest{System: "abcdef", Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}}},
			wantIn: 2, wantOut: 8,
		},
		{
			// 43 bytes of calls / 4 = 10; 8 per call
			name:   "calls",
			req:    sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "call A.b {}\ncall C.d {}\ncall E.f {\"x\":true}"}}},
			wantIn: 10, wantOut: 24,
		},
		{
			name:   "empty message",
			req:    sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user"}}},
			wantIn: 0, wantOut: 8, // "Hello, this is Ada. You said: " trimmed by nothing: 30 bytes → 8
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := agentrun.Scripted{AgentName: "Ada"}
			first, err := m.Complete(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if first.TokensIn != tt.wantIn || first.TokensOut != tt.wantOut {
				t.Errorf("tokens in/out = %d/%d, want %d/%d", first.TokensIn, first.TokensOut, tt.wantIn, tt.wantOut)
			}
			again, _ := m.Complete(context.Background(), tt.req)
			if !reflect.DeepEqual(first, again) {
				t.Errorf("second answer %+v differs from first %+v", again, first)
			}
		})
	}
}

// echoTool is the smallest real tool: it answers ok with what it was told.
type echoTool struct{}

func (echoTool) Spec() sb.ToolSpec {
	obj := map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "additionalProperties": false}
	return sb.ToolSpec{Name: "Echo", Actions: []sb.ActionSpec{{Name: "say", Parameters: obj}, {Name: "erase", Parameters: obj}}}
}

func (echoTool) Invoke(_ context.Context, c sb.ToolCall) sb.Envelope {
	var a map[string]any
	_ = json.Unmarshal(c.Args, &a)
	return sb.OK(map[string]any{"echo": a["text"]})
}

// TestScriptedRunEndToEnd drives the engine with the scripted model through
// the real executor, staging policy, scrubber and memstore, as `make dev` does.
func TestScriptedRunEndToEnd(t *testing.T) {
	policy, err := staging.New(map[string]string{"Echo.say": "auto"}) // Echo.erase has no rule: approve
	if err != nil {
		t.Fatal(err)
	}
	store := memstore.New()
	x, err := tools.New(tools.Options{Tools: []sb.Tool{echoTool{}}, Policy: policy, Audit: store,
		Scrub: scrub.New(nil), Permits: func(a, _ string) bool { return a == "ada" }, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	e := &agentrun.Engine{Tools: x, Receipts: store}
	ag := sb.Agent{ID: "ada", MaxSteps: 4, Provider: "scripted", ModelName: "scripted",
		Model: agentrun.Scripted{AgentName: "Ada", Reply: "Done."}, Pricing: sb.Pricing{InputPer1M: 1, OutputPer1M: 2}}
	wake := untrusted.FrameWith("rocketchat:#general @bob", "call Echo.say {\"text\":\"hi\"}\ncall Echo.erase {}\ncall Echo.say {\"text\":3}", fixedNonce)

	res, err := e.Run(context.Background(), ag, wake, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantAnswer := "Done.\nEcho.say → ok\nEcho.erase → pending_approval\nEcho.say → error: args of Echo.say are wrong: at /text: got number, want string; see GET /tools for the schema"
	if res.Outcome != "answered" || res.Steps != 2 || res.Answer != wantAnswer {
		t.Errorf("outcome %q, steps %d, answer %q; want answered, 2, %q", res.Outcome, res.Steps, res.Answer, wantAnswer)
	}
	entries, err := store.ByRoot(context.Background(), res.Run.RootRunID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, en := range entries {
		if en.Run != res.Run {
			t.Errorf("audit run = %+v, want %+v", en.Run, res.Run)
		}
		got = append(got, en.Action+"="+en.Outcome)
	}
	if want := []string{"say=ok", "erase=pending_approval", "say=rejected"}; !equalSorted(got, want) {
		t.Errorf("audit = %v, want %v (any order)", got, want)
	}
	rec := storedReceipt(t, store, res.Run.RootRunID)
	if rec.TokensIn == 0 || rec.TokensOut == 0 || rec.CostUSD == 0 || rec.Steps != 2 || rec.Outcome != "answered" {
		t.Errorf("receipt = %+v, want tokens, cost, 2 steps, answered", rec)
	}

	// The same wake costs the same again: the scripted model is deterministic.
	again, err := e.Run(context.Background(), ag, wake, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Receipt.TokensIn != rec.TokensIn || again.Receipt.TokensOut != rec.TokensOut || again.Receipt.CostUSD != rec.CostUSD {
		t.Errorf("second run tokens %d/%d $%v, first %d/%d $%v", again.Receipt.TokensIn, again.Receipt.TokensOut, again.Receipt.CostUSD,
			rec.TokensIn, rec.TokensOut, rec.CostUSD)
	}
	if again.Run.RootRunID == res.Run.RootRunID {
		t.Errorf("two human-started runs share root %s", res.Run.RootRunID)
	}
}

func equalSorted(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}
