package agentrun_test

import (
	"context"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

// Complete guards req.Messages for the first message but then slices
// req.Messages[1:] unconditionally, which panics on an empty request.
func TestScriptedEmptyRequestDoesNotPanic(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Complete(empty request) panicked: %v", r)
		}
	}()
	resp, err := agentrun.Scripted{AgentName: "Ada"}.Complete(context.Background(), sb.ModelRequest{System: "x"})
	if err != nil || resp.Text != "Hello, this is Ada. You said: " || len(resp.ToolCalls) != 0 {
		t.Errorf("Complete(empty) = %+v, %v; want the bare reply", resp, err)
	}
}
