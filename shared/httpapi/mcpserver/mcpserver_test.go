package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/shared/httpapi/mcpserver"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

const (
	laptopToken = "laptop-token-0123456789abcdef"
	ideToken    = "ide-token-0123456789abcdef"
)

// fakeTools is a two-agent catalogue that records every call.
type fakeTools struct {
	mu    sync.Mutex
	calls []sb.ToolCall
}

var workspace = sb.ToolSpec{Name: "Workspace", Description: "Files of the agent's workspace.", Actions: []sb.ActionSpec{
	{Name: "write", Description: "Write a file.", Parameters: map[string]any{"type": "object",
		"properties": map[string]any{"path": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}},
		"required":   []any{"path", "content"}, "additionalProperties": false}},
	{Name: "delete", Description: "Delete a file.", Parameters: map[string]any{"type": "object",
		"properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}}},
}}

var notify = sb.ToolSpec{Name: "notify_user", Description: "Tell the human.", Actions: []sb.ActionSpec{
	{Name: "send", Description: "Send a notice.", Parameters: map[string]any{"type": "object"}}}}

func (f *fakeTools) Specs(agent string) []sb.ToolSpec {
	if agent == "hermes" {
		return []sb.ToolSpec{workspace, notify}
	}
	return []sb.ToolSpec{notify}
}

func (f *fakeTools) Invoke(_ context.Context, call sb.ToolCall) sb.Envelope {
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	switch {
	case call.Action == "delete":
		return sb.Envelope{Status: sb.OutcomePending, Data: map[string]any{"approval_id": "ap1", "expires": "2026-12-04T10:00:00Z",
			"human_notified": true, "message": "you will be woken"}}
	case strings.Contains(string(call.Args), "bad"):
		return sb.Fail("args of Workspace.write are wrong: path must not be bad")
	}
	return sb.OK(map[string]any{"path": "notes.md", "note": "<untrusted_content nonce=\"1\">hi</untrusted_content nonce=\"1\">"})
}

func (f *fakeTools) recorded() []sb.ToolCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sb.ToolCall(nil), f.calls...)
}

type fakeApprovals map[string]sb.Approval

func (f fakeApprovals) Get(_ context.Context, id string) (sb.Approval, error) {
	a, ok := f[id]
	if !ok {
		return sb.Approval{}, sb.E("get", sb.ENOTFOUND, "no approval")
	}
	return a, nil
}

type world struct {
	url   string
	tools *fakeTools
	apps  fakeApprovals
	logs  *bytes.Buffer
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{tools: &fakeTools{}, logs: &bytes.Buffer{}, apps: fakeApprovals{
		"ap1": {ID: "ap1", AgentID: "hermes", Client: "laptop", Tool: "Workspace", Action: "delete", Status: sb.ApprovalPending,
			ExpiresAt: time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)},
		"ap2": {ID: "ap2", AgentID: "hermes", Client: "other", Tool: "Workspace", Action: "delete", Status: sb.ApprovalPending},
	}}
	h, err := mcpserver.New(mcpserver.Options{
		Clients: []mcpserver.Client{{Name: "laptop", Agent: "hermes", Token: laptopToken}, {Name: "ide", Agent: "atlas", Token: ideToken}},
		Tools:   w.tools, Approvals: w.apps,
		Shown: func(a sb.Approval) string { return "Hermes wants to run " + a.Tool + "." + a.Action },
		Log:   slog.New(slog.NewJSONHandler(w.logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	w.url = srv.URL
	return w
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connect(t *testing.T, w *world, token string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: w.url,
		HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func toolNames(t *testing.T, s *mcp.ClientSession) []string {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestClientSeesItsAgentsToolsOnly(t *testing.T) {
	w := newWorld(t)
	if got, want := strings.Join(toolNames(t, connect(t, w, laptopToken)), ","), "Workspace__delete,Workspace__write,approval_status,notify_user__send"; got != want {
		t.Errorf("laptop tools = %s, want %s", got, want)
	}
	if got, want := strings.Join(toolNames(t, connect(t, w, ideToken)), ","), "approval_status,notify_user__send"; got != want {
		t.Errorf("ide tools = %s, want %s", got, want)
	}
	res, _ := connect(t, w, laptopToken).ListTools(context.Background(), nil)
	raw, _ := json.Marshal(res.Tools[1].InputSchema) // Workspace__write: the SDK lists by name
	want, _ := json.Marshal(workspace.Actions[0].Parameters)
	if string(raw) != string(want) {
		t.Errorf("input schema = %s, want the catalogue's %s", raw, want)
	}
}

func TestCallRunsAsTheClientsAgent(t *testing.T) {
	w := newWorld(t)
	s := connect(t, w, laptopToken)
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "Workspace__write", Arguments: map[string]any{"path": "notes.md", "content": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("isError on an ok call: %+v", res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, `"status":"ok"`) || !strings.Contains(text, `\u003cuntrusted_content nonce=\"1\"`) {
		t.Errorf("text = %s, want the envelope with its framing", text)
	}
	if m, _ := res.StructuredContent.(map[string]any); m["path"] != "notes.md" {
		t.Errorf("structured = %v", res.StructuredContent)
	}
	calls := w.tools.recorded()
	if len(calls) != 1 {
		t.Fatalf("%d calls, want 1", len(calls))
	}
	c := calls[0]
	if c.AgentID != "hermes" || c.Tool != "Workspace" || c.Action != "write" || c.Origin != sb.OriginMCP || c.Client != "laptop" {
		t.Errorf("call = %+v, want hermes Workspace.write origin mcp client laptop", c)
	}
	if c.Run.RunID == "" || c.Run.AgentID != "hermes" || c.Run.ParentRunID != "" {
		t.Errorf("run = %+v, want a fresh run of hermes", c.Run)
	}
}

func TestRefusedCallIsAToolError(t *testing.T) {
	w := newWorld(t)
	s := connect(t, w, laptopToken)
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "Workspace__write", Arguments: map[string]any{"path": "bad"}})
	if err != nil {
		t.Fatalf("protocol error %v, want a tool result with isError", err)
	}
	if !res.IsError || res.Content[0].(*mcp.TextContent).Text != "args of Workspace.write are wrong: path must not be bad" {
		t.Errorf("result = %+v, want isError with the envelope's text first", res)
	}
}

func TestUnknownToolIsAProtocolErrorAndRunsNothing(t *testing.T) {
	w := newWorld(t)
	s := connect(t, w, ideToken)
	_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "Workspace__write", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("err = %v, want unknown tool (the ide client's agent has no Workspace)", err)
	}
	if n := len(w.tools.recorded()); n != 0 {
		t.Errorf("%d calls ran, want none", n)
	}
}

func TestPendingApprovalAndItsStatus(t *testing.T) {
	w := newWorld(t)
	s := connect(t, w, laptopToken)
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "Workspace__delete", Arguments: map[string]any{"path": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	for _, want := range []string{"pending approval", "ap1", "Hermes wants to run Workspace.delete", mcpserver.StatusTool} {
		mustContain(t, "pending text", text, want)
	}
	if strings.Contains(text, "woken") || res.IsError {
		t.Errorf("pending answer = %q (isError %v): an MCP client is not woken", text, res.IsError)
	}
	st, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.StatusTool, Arguments: map[string]any{"approval_id": "ap1"}})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := st.StructuredContent.(map[string]any); m["approval_status"] != "pending" {
		t.Errorf("status = %v, want pending", st.StructuredContent)
	}
	w.apps["ap1"] = sb.Approval{ID: "ap1", AgentID: "hermes", Client: "laptop", Tool: "Workspace", Action: "delete",
		Status: sb.ApprovalExecuted, DecidedBy: "link", Result: sb.OK(map[string]any{"deleted": "a"})}
	st, _ = s.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.StatusTool, Arguments: map[string]any{"approval_id": "ap1"}})
	m, _ := st.StructuredContent.(map[string]any)
	if r, _ := m["result"].(map[string]any); m["approval_status"] != "executed" || r["deleted"] != "a" {
		t.Errorf("status = %v, want executed with the result", st.StructuredContent)
	}
	// Another client's approval is not this client's business.
	st, _ = s.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.StatusTool, Arguments: map[string]any{"approval_id": "ap2"}})
	if !st.IsError {
		t.Errorf("status of another client's approval = %+v, want an error", st)
	}
}

// post sends one raw JSON-RPC body.
func post(t *testing.T, w *world, token, body string, header map[string]string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", w.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(raw)
}

func TestTokenRequired(t *testing.T) {
	w := newWorld(t)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	status, h, _ := post(t, w, "", list, nil)
	if status != http.StatusUnauthorized || h.Get("WWW-Authenticate") != `Bearer realm="switchboard-mcp"` {
		t.Errorf("no token: %d %q, want 401 with a bare Bearer challenge", status, h.Get("WWW-Authenticate"))
	}
	status, h, _ = post(t, w, "wrong-token-0123456789", list, nil)
	if status != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("wrong token: %d %q, want 401 invalid_token", status, h.Get("WWW-Authenticate"))
	}
	if strings.Contains(w.logs.String(), "wrong-token") {
		t.Errorf("the presented token was logged: %s", w.logs.String())
	}
}

func TestProtocolVersions(t *testing.T) {
	w := newWorld(t)
	for _, v := range []string{"2025-11-25", "2025-06-18"} {
		_, _, body := post(t, w, laptopToken, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+v+
			`","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`, nil)
		mustContain(t, "initialize "+v, body, `"protocolVersion":"`+v+`"`)
		_, _, body = post(t, w, laptopToken, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": v})
		mustContain(t, "tools/list at "+v, body, "Workspace__write")
	}
	// An initialize at a version nobody speaks is offered the newest that
	// uses initialize.
	_, _, body := post(t, w, laptopToken, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`, nil)
	mustContain(t, "initialize 1999", body, `"protocolVersion":"2025-11-25"`)

	_, _, body = post(t, w, laptopToken, `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{`+meta("2026-07-28")+`}}`,
		map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"})
	mustContain(t, "server/discover", body, `"2026-07-28"`)
	mustContain(t, "server/discover", body, `"2025-06-18"`)
	_, _, body = post(t, w, laptopToken, `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{`+meta("2030-01-01")+`}}`,
		map[string]string{"Mcp-Protocol-Version": "2030-01-01", "Mcp-Method": "tools/list"})
	mustContain(t, "unsupported version", body, `"code":-32022`)
	mustContain(t, "unsupported version", body, `"supported":["2026-07-28","2025-11-25","2025-06-18"]`)
	// Before 2026-07-28 the transport's answer: 400 for an unsupported
	// MCP-Protocol-Version header.
	status, _, body := post(t, w, laptopToken, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "1999-01-01"})
	if status != http.StatusBadRequest || !strings.Contains(body, "nsupported protocol version") {
		t.Errorf("header 1999-01-01: %d %s, want 400 unsupported protocol version", status, body)
	}
}

func TestBadInputRunsNothing(t *testing.T) {
	w := newWorld(t)
	// The Streamable HTTP transport's answer to input it cannot accept is an
	// HTTP error status; from 2026-07-28 an unknown method is a JSON-RPC
	// -32601 with 404; an unknown tool is always -32602.
	cases := []struct {
		name, version, body string
		wantStatus          int
		want                string
	}{
		{"malformed", "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":`, http.StatusBadRequest, "malformed"},
		{"not JSON-RPC", "2025-11-25", `{"id":1,"method":"tools/list"}`, http.StatusBadRequest, ""},
		{"unknown method", "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/frobnicate"}`, http.StatusBadRequest, "tools/frobnicate"},
		{"unknown method 2026", "2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"tools/frobnicate","params":{` + meta("2026-07-28") + `}}`,
			http.StatusNotFound, "-32601"},
		{"unknown tool", "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Nope__x","arguments":{}}}`, http.StatusOK, "-32602"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"Mcp-Protocol-Version": tc.version}
			if tc.version >= "2026" {
				h["Mcp-Method"] = "tools/frobnicate"
			}
			status, _, body := post(t, w, laptopToken, tc.body, h)
			if status != tc.wantStatus || !strings.Contains(body, tc.want) {
				t.Errorf("%d %s, want %d with %q", status, body, tc.wantStatus, tc.want)
			}
		})
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Workspace__write","arguments":{"path":"a","content":"` +
		strings.Repeat("x", 1<<20) + `"}}}`
	if status, _, _ := post(t, w, laptopToken, big, map[string]string{"Mcp-Protocol-Version": "2025-11-25"}); status != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over 1 MiB answered %d, want 413", status)
	}
	if n := len(w.tools.recorded()); n != 0 {
		t.Errorf("%d calls ran, want none", n)
	}
}

func meta(v string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + v + `","io.modelcontextprotocol/clientCapabilities":{}}`
}

func mustContain(t *testing.T, what, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Errorf("%s = %s, want it to contain %q", what, got, want)
	}
}

type badSchemaTools struct{ fakeTools }

func (*badSchemaTools) Specs(string) []sb.ToolSpec {
	return []sb.ToolSpec{{Name: "Odd", Actions: []sb.ActionSpec{{Name: "x", Parameters: map[string]any{"type": "string"}}}}}
}

// A catalogue the SDK would refuse is an error at start, not on a request.
func TestNewRefusesASchemaThatIsNoObject(t *testing.T) {
	_, err := mcpserver.New(mcpserver.Options{Clients: []mcpserver.Client{{Name: "c", Agent: "a", Token: laptopToken}},
		Tools: &badSchemaTools{}, Log: slog.New(slog.DiscardHandler)})
	if err == nil || !strings.Contains(err.Error(), "Odd.x") {
		t.Errorf("err = %v, want Odd.x refused", err)
	}
}
