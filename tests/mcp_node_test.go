package tests

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// nodeTool runs a Node program of the repository's pinned packages
// (package-lock.json) in tests/ and returns its stdout.
func nodeTool(t *testing.T, timeout time.Duration, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed; make test installs the pinned Node packages and needs it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\nstderr: %s\nstdout: %s", strings.Join(args, " "), err, stderr.String(), out)
	}
	return string(out)
}

// The official TypeScript SDK (@modelcontextprotocol/sdk, pinned) over
// Streamable HTTP: it initializes at its own newest version, lists hermes's
// tools and calls one.
func TestMCPTypeScriptSDKClient(t *testing.T) {
	_, d := startMCPWorld(t)
	out := nodeTool(t, time.Minute, "../scripts/mcp-client.cjs", d.base+"/mcp", mcpLaptopToken, "Workspace__write",
		`{"path":"personal:node.md","content":"from the TypeScript SDK"}`)
	var got struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Tools           []string                   `json:"tools"`
		SchemaOf        map[string]json.RawMessage `json:"schemaOf"`
		IsError         bool                       `json:"isError"`
		Text            []string                   `json:"text"`
		Structured      map[string]any             `json:"structured"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("script output %q: %v", out, err)
	}
	if got.ProtocolVersion != "2025-11-25" {
		t.Errorf("negotiated %q, want 2025-11-25 (the SDK's newest)", got.ProtocolVersion)
	}
	if tools := strings.Join(got.Tools, ","); !strings.Contains(tools, "Workspace__write") || !strings.Contains(tools, "approval_status") {
		t.Errorf("tools = %s", tools)
	}
	if !strings.Contains(string(got.SchemaOf["Workspace__write"]), `"path"`) {
		t.Errorf("Workspace__write schema = %s", got.SchemaOf["Workspace__write"])
	}
	if got.IsError || got.Structured["status"] != "ok" || len(got.Text) != 1 || !strings.Contains(got.Text[0], `"status":"ok"`) {
		t.Errorf("call = isError %v, text %q, structured %v", got.IsError, got.Text, got.Structured)
	}
	if _, m := d.invoke("hermes", "Workspace", "read", map[string]any{"path": "personal:node.md"}); m["content"] != "from the TypeScript SDK" {
		t.Errorf("the file reads %v", m)
	}
}

// The MCP Inspector's CLI (@modelcontextprotocol/inspector-cli, pinned)
// lists the tools.
func TestMCPInspectorCLIListsTools(t *testing.T) {
	_, d := startMCPWorld(t)
	// Its CLI looks for "../package.json" from the working directory but
	// imports it relative to its own build/: from tests/ the check holds
	// and it finds its own package.json.
	out := nodeTool(t, time.Minute, "../node_modules/@modelcontextprotocol/inspector-cli/build/cli.js", "--cli",
		d.base+"/mcp", "--transport", "http", "--method", "tools/list", "--header", "Authorization: Bearer "+mcpIDEToken)
	var got struct {
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("inspector output %q: %v", out, err)
	}
	var names []string
	for _, tl := range got.Tools {
		names = append(names, tl.Name)
	}
	// The ide client acts as atlas, which has no tools of its own.
	if got, want := strings.Join(names, ","), "approval_status,notify_user__send"; got != want {
		t.Errorf("inspector lists %s, want %s", got, want)
	}
}
