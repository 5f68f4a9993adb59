package tools_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// A panicking tool's report must go to the Executor's logger (which App wraps
// in scrub.NewHandler), not to slog.Default, which nobody configures and
// nothing scrubs.
func TestPanicIsLoggedScrubbedToTheExecutorsLogger(t *testing.T) {
	var global bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&global, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })

	f := newFixture(t)
	f.x.Invoke(context.Background(), sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "boom", Run: runCtx("r")})

	if !strings.Contains(f.logs.String(), "tool panicked") {
		t.Errorf("Executor log = %q, want the panic reported there", f.logs.String())
	}
	if strings.Contains(global.String(), secret) {
		t.Errorf("the panic value reached slog.Default unscrubbed: %q", global.String())
	}
}
