package askagent_test

import (
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/telemetry/telemetrytest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// The answering run runs behind the state machine, in another invocation
// than the asking one; the asking tool call's span id travels in the
// machine's input, so the answer's invoke_agent hangs under the
// execute_tool span that asked, in the chain's trace.
func TestAnsweringRunHangsUnderTheAskingToolCall(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 30*time.Second, map[string]agentSpec{
		"alice": {model: scripted("Alice", "Alice here.")},
		"bob":   {model: scripted("Bob", "Bob says 42.")},
	})
	spans := &telemetrytest.Spans{}
	w.engine.Telemetry = spans
	res := w.run(t, "alice", askLine("bob", "what is 6×7?"))
	if len(res.Calls) != 1 || res.Calls[0].Envelope.Status != "ok" {
		t.Fatalf("calls %+v, want one ok ask", res.Calls)
	}
	asks, answers := spans.Named("execute_tool ask_agent.ask"), spans.Named("invoke_agent bob")
	if len(asks) != 1 || len(answers) != 1 {
		t.Fatalf("spans %v, want one ask_agent.ask call and one run of bob", spans.All())
	}
	ask, answer := asks[0], answers[0]
	if ask.ID != sb.ToolSpan(res.Run.RunID, 0) || answer.Parent != ask.ID || answer.Trace != sb.ChainTrace(res.Run.RootRunID) {
		t.Errorf("bob's run: parent %s trace %s; want the asking call %s in the chain's trace %s",
			answer.Parent, answer.Trace, ask.ID, sb.ChainTrace(res.Run.RootRunID))
	}
}
