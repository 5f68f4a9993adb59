package openai_test

import (
	"context"
	"encoding/json"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun/agentruntest"
	"strings"
	"testing"
)

// toolMessages returns the request's "tool" messages by tool_call_id.
func toolMessages(body map[string]any) map[string]string {
	out := map[string]string{}
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		m, _ := m.(map[string]any)
		if m["role"] == "tool" {
			id, _ := m["tool_call_id"].(string)
			out[id], _ = m["content"].(string)
		}
	}
	return out
}

// TestToolCallRoundTrip runs a whole agent run through the provider: the
// model calls Notes.write (once with arguments that are not JSON, once
// right), sees both executor answers under the ids it chose, and answers.
func TestToolCallRoundTrip(t *testing.T) {
	step1 := `{"id":"chatcmpl-1","object":"chat.completion","created":1735000000,"model":"gpt-4o-mini",
	  "choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[
	    {"id":"call_bad","type":"function","function":{"name":"Notes__write","arguments":"{name: 'todo'"}},
	    {"id":"call_good","type":"function","function":{"name":"Notes__write","arguments":"{\"name\":\"todo\",\"text\":\"buy milk\"}"}}]},
	  "finish_reason":"tool_calls"}],
	  "usage":{"prompt_tokens":100,"completion_tokens":30,"total_tokens":130}}`
	step2 := `{"id":"chatcmpl-2","object":"chat.completion","created":1735000001,"model":"gpt-4o-mini",
	  "choices":[{"index":0,"message":{"role":"assistant","content":"Saved the note \"todo\"."},"finish_reason":"stop"}],
	  "usage":{"prompt_tokens":180,"completion_tokens":8,"total_tokens":188}}`

	f := newFake(t, apiKey,
		reply{body: step1, check: func(t *testing.T, body map[string]any) {
			tools, _ := body["tools"].([]any)
			if len(tools) != 1 || !strings.Contains(mustJSON(tools[0]), `"name":"Notes__write"`) {
				t.Errorf("step 1 tools = %s", mustJSON(tools))
			}
		}},
		reply{body: step2, check: func(t *testing.T, body map[string]any) {
			msgs, _ := body["messages"].([]any)
			// system, user, assistant (2 calls), tool, tool
			if len(msgs) != 5 {
				t.Fatalf("step 2 has %d messages, want 5: %s", len(msgs), mustJSON(msgs))
			}
			asst := mustJSON(msgs[2])
			for _, want := range []string{`"role":"assistant"`, `"content":null`, `"id":"call_bad"`, `"arguments":"{name: 'todo'"`, `"id":"call_good"`, `"name":"Notes__write"`} {
				if !strings.Contains(asst, want) {
					t.Errorf("assistant turn %s lacks %s", asst, want)
				}
			}
			results := toolMessages(body)
			if got := results["call_bad"]; !strings.Contains(got, "args of Notes.write are not valid JSON; send a JSON object") {
				t.Errorf("result of call_bad = %q, want the executor's not-valid-JSON answer", got)
			}
			if got := results["call_good"]; !strings.Contains(got, `"status":"ok"`) {
				t.Errorf("result of call_good = %q, want ok", got)
			}
		}},
	)
	e, n := agentruntest.Engine(t)
	res, err := e.Run(context.Background(), sb.Agent{ID: "ada", SystemPrompt: "You are Ada.", Model: f.model(t, apiKey),
		Provider: "openai", ModelName: "gpt-4o-mini"}, "please note: buy milk", nil)
	agentruntest.WantNoteSaved(t, res, err, n, 280, 38)
	if n := f.requests(); n != 2 {
		t.Errorf("server got %d requests, want 2", n)
	}
}

// TestUnknownFunctionIsAnsweredByTheExecutor: a name the model made up does
// not fail the run; the executor's answer goes back and the model recovers.
func TestUnknownFunctionIsAnsweredByTheExecutor(t *testing.T) {
	step1 := `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[
	    {"id":"call_1","type":"function","function":{"name":"multi_tool_use.parallel","arguments":"{\"tool_uses\":[]}"}}]},
	  "finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`
	step2 := `{"choices":[{"index":0,"message":{"role":"assistant","content":"Sorry, I cannot do that."},"finish_reason":"stop"}],
	  "usage":{"prompt_tokens":20,"completion_tokens":5,"total_tokens":25}}`
	f := newFake(t, apiKey, reply{body: step1}, reply{body: step2, check: func(t *testing.T, body map[string]any) {
		msgs := mustJSON(body["messages"])
		// The replayed name is made acceptable to the API's name pattern.
		if !strings.Contains(msgs, `"name":"multi_tool_use_parallel"`) {
			t.Errorf("replayed call name not sanitised: %s", msgs)
		}
		if got := toolMessages(body)["call_1"]; !strings.Contains(got, `unknown tool \"multi_tool_use.parallel\"; available tools: Notes`) {
			t.Errorf("result = %q, want the executor's unknown-tool answer", got)
		}
	}})
	e, _ := agentruntest.Engine(t)
	res, err := e.Run(context.Background(), sb.Agent{ID: "ada", Model: f.model(t, apiKey)}, "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "answered" {
		t.Errorf("outcome = %q, want answered", res.Outcome)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
