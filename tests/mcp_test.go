package tests

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
	"github.com/switchboard-dev/switchboard/shared/httpapi/mcpserver"
)

const (
	mcpLaptopToken = "e2e-mcp-laptop-token-77c1"
	mcpIDEToken    = "e2e-mcp-ide-token-0b3e9d"
)

// startMCPWorld is the approval world (Workspace.delete needs approval,
// Telegram decides) with two MCP clients: laptop acts as hermes, ide as
// atlas.
func startMCPWorld(t testing.TB) (*tgfake.Server, *devServer) {
	t.Helper()
	return startApprovalWorldWith(t, "e2e-mcp", `  mcp:
    clients:
      - {name: laptop, agent: hermes, token: env:E2E_MCP_LAPTOP}
      - {name: ide, agent: atlas, token: env:E2E_MCP_IDE}
`, `  - id: atlas
    name: Atlas
    systemPrompt: You are Atlas.
    tools: {}
`, "E2E_MCP_LAPTOP="+mcpLaptopToken, "E2E_MCP_IDE="+mcpIDEToken)
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects the Go SDK's client to the dev listener's /mcp.
func mcpSession(t testing.TB, d *devServer, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-go-client", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: d.base + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{token}, Timeout: 30 * time.Second}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func callTool(t testing.TB, s *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	m, _ := res.StructuredContent.(map[string]any)
	return res, m
}

func firstText(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// chainAudit is the audit of the chain a tool result names in its _meta.
func chainAudit(t testing.TB, d *devServer, res *mcp.CallToolResult) []map[string]any {
	t.Helper()
	root, _ := res.Meta[mcpserver.MetaRunID].(string)
	if root == "" {
		t.Fatalf("the result's _meta names no run: %+v", res.Meta)
	}
	_, _, chain := d.do("GET", "/dev/chains/"+root, "", nil)
	var out []map[string]any
	entries, _ := chain["audit"].([]any)
	for _, e := range entries {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func TestMCPGoClientListsAndCallsAsItsAgent(t *testing.T) {
	_, d := startMCPWorld(t)
	s := mcpSession(t, d, mcpLaptopToken)
	if v := s.InitializeResult(); v != nil && v.ProtocolVersion != "" && v.ProtocolVersion != "2026-07-28" {
		t.Errorf("negotiated %s, want the stateless 2026-07-28", v.ProtocolVersion)
	}
	list, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	got := strings.Join(names, ",")
	for _, want := range []string{"Workspace__write", "Workspace__delete", "notify_user__send", mcpserver.StatusTool} {
		if !strings.Contains(got, want) {
			t.Errorf("tools = %s, want %s among them", got, want)
		}
	}
	if strings.Contains(got, "Nextcloud") || strings.Contains(got, "RocketChat") {
		t.Errorf("tools = %s: hermes has only Workspace", got)
	}

	res, m := callTool(t, s, "Workspace__write", map[string]any{"path": "personal:mcp.md", "content": "from an MCP client"})
	if res.IsError || m["status"] != "ok" {
		t.Fatalf("write = %s (isError %v)", firstText(res), res.IsError)
	}
	audit := chainAudit(t, d, res)
	if len(audit) != 1 || audit[0]["origin"] != "mcp" || audit[0]["client"] != "laptop" || audit[0]["agentId"] != "hermes" {
		t.Errorf("audit = %v, want one entry of hermes with origin mcp, client laptop", audit)
	}
	if _, m := d.invoke("hermes", "Workspace", "read", map[string]any{"path": "personal:mcp.md"}); m["content"] != "from an MCP client" {
		t.Errorf("the file reads %v", m)
	}

	// Wrong arguments: a tool result with isError, audited as rejected.
	res, _ = callTool(t, s, "Workspace__write", map[string]any{"path": "personal:x.md", "nope": 1})
	if !res.IsError || !strings.Contains(firstText(res), "args of Workspace.write are wrong") {
		t.Errorf("bad args = %q (isError %v), want the executor's refusal", firstText(res), res.IsError)
	}
	if a := chainAudit(t, d, res); len(a) != 1 || a[0]["outcome"] != "rejected" || a[0]["origin"] != "mcp" {
		t.Errorf("audit of a refused call = %v", a)
	}

	// The other client acts as atlas, which has no Workspace.
	ide := mcpSession(t, d, mcpIDEToken)
	if _, err := ide.CallTool(context.Background(), &mcp.CallToolParams{Name: "Workspace__write",
		Arguments: map[string]any{"path": "personal:a.md", "content": "x"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("atlas's client calling Workspace: %v, want unknown tool", err)
	}
}

func TestMCPApprovalPendingThenApprovedThroughTheLink(t *testing.T) {
	tg, d := startMCPWorld(t)
	s := mcpSession(t, d, mcpLaptopToken)
	callTool(t, s, "Workspace__write", map[string]any{"path": "personal:old.md", "content": "delete me once approved"})
	before := len(tg.Messages(tgChat))

	res, m := callTool(t, s, "Workspace__delete", map[string]any{"path": "personal:old.md"})
	id, _ := m["approval_id"].(string)
	text := firstText(res)
	if res.IsError || m["status"] != "pending_approval" || id == "" || !strings.HasPrefix(text, "pending approval") {
		t.Fatalf("delete = %q %v, want pending approval with an id", text, m)
	}
	msgs := tg.Messages(tgChat)
	if len(msgs) != before+1 {
		t.Fatalf("Telegram got %d new messages, want the approval request", len(msgs)-before)
	}
	shown := msgs[len(msgs)-1].Text
	if sh, _ := m["shown_to_human"].(string); sh == "" || !strings.Contains(shown, sh) || !strings.Contains(text, sh) {
		t.Errorf("shown_to_human = %q; the human saw %q", sh, shown)
	}
	if !fileExists(t, d, "personal:old.md") {
		t.Fatal("the delete ran before anyone approved")
	}
	_, st := callTool(t, s, mcpserver.StatusTool, map[string]any{"approval_id": id})
	if st["approval_status"] != "pending" {
		t.Errorf("status before the decision = %v", st)
	}
	// Another client does not see this client's approval.
	if r, _ := callTool(t, mcpSession(t, d, mcpIDEToken), mcpserver.StatusTool, map[string]any{"approval_id": id}); !r.IsError {
		t.Errorf("ide asked for laptop's approval: %q, want an error", firstText(r))
	}

	var approve string
	for _, l := range linkRE.FindAllStringSubmatch(shown, -1) {
		if l[2] == "approve" {
			approve = l[1]
		}
	}
	if code := postDecision(t, approve, "approve", nil); code != http.StatusOK {
		t.Fatalf("approve = %d", code)
	}
	var final map[string]any
	if !eventually(15*time.Second, func() bool {
		_, final = callTool(t, s, mcpserver.StatusTool, map[string]any{"approval_id": id})
		return final["approval_status"] == "executed"
	}) {
		t.Fatalf("status after approving = %v, want executed", final)
	}
	if r, _ := final["result"].(map[string]any); r["status"] != "ok" {
		t.Errorf("result = %v, want the delete's ok", final["result"])
	}
	if fileExists(t, d, "personal:old.md") {
		t.Error("the approved delete did not run")
	}
	var approved map[string]any
	for _, e := range chainAudit(t, d, res) {
		if e["decision"] == "approved" {
			approved = e
		}
	}
	if approved == nil || approved["origin"] != "mcp" || approved["client"] != "laptop" || approved["approvalId"] != id || approved["decidedBy"] != "link" {
		t.Errorf("audit of the executed delete = %v, want decision approved, origin mcp, client laptop, approval %s by link", approved, id)
	}
	// No follow-up run: nobody but the client waits for the outcome.
	root, _ := res.Meta[mcpserver.MetaRunID].(string)
	if _, _, chain := d.do("GET", "/dev/chains/"+root, "", nil); fmt.Sprint(chain["cost"].(map[string]any)["runs"]) != "0" {
		t.Errorf("chain cost = %v, want no agent run (no follow-up)", chain["cost"])
	}
}

func TestMCPRefusesWithoutTheClientsToken(t *testing.T) {
	_, d := startMCPWorld(t)
	for _, token := range []string{"", "e2e-mcp-wrong-token-123456", toolToken} {
		status, h, _ := d.do("POST", "/mcp", token, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
		if status != http.StatusUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer ") {
			t.Errorf("token %q: %d %q, want 401 with a Bearer challenge", token, status, h.Get("WWW-Authenticate"))
		}
	}
	// Stateless: no standalone SSE stream, no session to delete.
	for _, method := range []string{"GET", "DELETE"} {
		req, _ := http.NewRequest(method, d.base+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+mcpLaptopToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s /mcp = %d, want 405", method, resp.StatusCode)
		}
	}
	if strings.Contains(d.logs.String(), "e2e-mcp-wrong-token") || strings.Contains(d.logs.String(), mcpLaptopToken) {
		t.Error("a token reached the log")
	}
}
