package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// The audit says where a call came from, and for an MCP client's call
// which client made it.
func TestAuditRecordsOriginAndClient(t *testing.T) {
	f := newFixture(t)
	f.x.Invoke(context.Background(), sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(`{"text":"hi"}`),
		Run: runCtx("mcp-root"), Origin: sb.OriginMCP, Client: "laptop"})
	if e := f.only(t, "mcp-root"); e.Origin != sb.OriginMCP || e.Client != "laptop" {
		t.Errorf("audit origin %q client %q, want mcp and laptop", e.Origin, e.Client)
	}
	f.x.Invoke(context.Background(), sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(`{"text":"hi"}`),
		Run: runCtx("agent-root"), Origin: sb.OriginAgent})
	if e := f.only(t, "agent-root"); e.Origin != sb.OriginAgent || e.Client != "" {
		t.Errorf("audit origin %q client %q, want agent and no client", e.Origin, e.Client)
	}
}
