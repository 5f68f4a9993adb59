package tests

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestHealthzReportsVersions(t *testing.T) {
	d := startDev(t)
	status, _, m := d.do("GET", "/healthz", "", nil)
	if status != http.StatusOK || m["status"] != "ok" {
		t.Fatalf("healthz = %d %v, want 200 ok", status, m)
	}
	comps, _ := m["components"].(map[string]any)
	for _, name := range []string{"dynamodb", "s3"} {
		c, _ := comps[name].(map[string]any)
		if c["ok"] != true || str(c["endpoint"]) == "" {
			t.Errorf("component %s = %v, want ok with an endpoint", name, c)
		}
	}
	libs, _ := m["libraries"].(map[string]any)
	if !strings.HasPrefix(str(libs["aws-sdk-go-v2"]), "v1.") || !strings.HasPrefix(str(libs["aws-lambda-go"]), "v1.") {
		t.Errorf("libraries = %v, want the AWS SDK's and aws-lambda-go's versions", libs)
	}
	if str(m["go"]) == "" || str(m["version"]) == "" {
		t.Errorf("healthz lacks go/version: %v", m)
	}
}

func TestToolAPIAuth(t *testing.T) {
	d := startDev(t)
	for _, token := range []string{"", "wrong", toolToken + "x", strings.ToUpper(toolToken)} {
		status, _, m := d.do("GET", "/tools", token, nil)
		if status != http.StatusUnauthorized || m["status"] != "error" {
			t.Errorf("GET /tools with token %q = %d %v, want 401 error envelope", token, status, m)
		}
		status, _, _ = d.do("POST", "/tools/invoke", token, map[string]any{"agent": "hermes", "tool": "Workspace", "action": "list"})
		if status != http.StatusUnauthorized {
			t.Errorf("POST /tools/invoke with token %q = %d, want 401", token, status)
		}
	}
	status, _, m := d.do("GET", "/tools", toolToken, nil)
	if status != http.StatusOK {
		t.Fatalf("GET /tools = %d %v", status, m)
	}
	all, _ := m["tools"].([]any)
	var names []string
	for _, x := range all {
		names = append(names, str(x.(map[string]any)["name"]))
	}
	if strings.Join(names, ",") != "AgentCommAnalysis,Documents,Nextcloud,RocketChat,Taskboard,Workspace,ask_agent,notify_user" {
		t.Errorf("all tools = %v, want AgentCommAnalysis,Documents,Nextcloud,RocketChat,Taskboard,Workspace,ask_agent,notify_user", names)
	}
	// hermes has only the Workspace block (notify_user is every agent's).
	_, _, m = d.do("GET", "/tools?agent=hermes", toolToken, nil)
	list, _ := m["tools"].([]any)
	if len(list) != 2 || str(list[0].(map[string]any)["name"]) != "Workspace" {
		t.Fatalf("tools for hermes = %v, want Workspace and notify_user", list)
	}
	ws, _ := list[0].(map[string]any)
	actions, _ := ws["actions"].([]any)
	actionNames := map[string]bool{}
	for _, a := range actions {
		am, _ := a.(map[string]any)
		actionNames[str(am["name"])] = true
		if params, _ := am["parameters"].(map[string]any); params["type"] != "object" {
			t.Errorf("action %v has no object schema", am["name"])
		}
	}
	for _, want := range []string{"write", "read", "list", "delete"} {
		if !actionNames[want] {
			t.Errorf("Workspace lacks action %s: %v", want, actionNames)
		}
	}
	// An agent without tool blocks sees only notify_user.
	_, _, m = d.do("GET", "/tools?agent=atlas", toolToken, nil)
	if l, _ := m["tools"].([]any); len(l) != 1 {
		t.Errorf("tools for atlas = %v, want only notify_user", l)
	}
	status, _, _ = d.do("GET", "/tools?agent=nobody", toolToken, nil)
	if status != http.StatusNotFound {
		t.Errorf("tools for unknown agent = %d, want 404", status)
	}
}

func TestToolInvokeWritesAndAudits(t *testing.T) {
	d := startDev(t)
	status, _, m := d.do("POST", "/tools/invoke", toolToken, map[string]any{
		"agent": "hermes", "tool": "Workspace", "action": "write",
		"args": map[string]any{"path": "personal:reports/q3.md", "content": "# Q3\nrevenue up\n"}})
	if status != http.StatusOK || m["status"] != "ok" {
		t.Fatalf("write = %d %v", status, m)
	}
	_, m = d.invoke("hermes", "Workspace", "read", map[string]any{"path": "personal:reports/q3.md"})
	if m["status"] != "ok" || str(m["content"]) != "# Q3\nrevenue up\n" {
		t.Fatalf("read = %v", m)
	}

	// Bad input: each answer is an error envelope that says what to fix.
	tests := []struct {
		name       string
		body       any
		wantStatus int
		wantText   string
	}{
		{"unknown tool", map[string]any{"agent": "hermes", "tool": "Shell", "action": "run"}, 200, "unknown tool"},
		{"unknown action", map[string]any{"agent": "hermes", "tool": "Workspace", "action": "format"}, 200, "no action"},
		{"missing argument", map[string]any{"agent": "hermes", "tool": "Workspace", "action": "write", "args": map[string]any{"path": "personal:x.md"}}, 200, "content"},
		{"escaping path", map[string]any{"agent": "hermes", "tool": "Workspace", "action": "read", "args": map[string]any{"path": "../atlas/secret.md"}}, 200, ".."},
		{"tool not configured", map[string]any{"agent": "atlas", "tool": "Workspace", "action": "list"}, 200, "not configured"},
		{"unknown agent", map[string]any{"agent": "nobody", "tool": "Workspace", "action": "list"}, 404, "no agent"},
		{"missing agent", map[string]any{"tool": "Workspace", "action": "list"}, 400, `"agent" is required`},
		{"unknown field", map[string]any{"agent": "hermes", "tool": "Workspace", "action": "list", "runid": "x"}, 400, "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, m := d.do("POST", "/tools/invoke", toolToken, tt.body)
			if status != tt.wantStatus || m["status"] != "error" {
				t.Fatalf("= %d %v, want %d and an error envelope", status, m, tt.wantStatus)
			}
			mustContain(t, "error", str(m["error"]), tt.wantText)
		})
	}
}

func TestApprovalPolicyHoldsTheAction(t *testing.T) {
	d := startDev(t)
	d.invoke("hermes", "Workspace", "write", map[string]any{"path": "keep.md", "content": "x"})
	status, m := d.invoke("hermes", "Workspace", "delete", map[string]any{"path": "keep.md"})
	if status != http.StatusAccepted || m["status"] != "pending_approval" {
		t.Fatalf("delete = %d %v, want 202 pending_approval", status, m)
	}
	_, m = d.invoke("hermes", "Workspace", "read", map[string]any{"path": "keep.md"})
	if m["status"] != "ok" {
		t.Fatalf("the file is gone although the delete waits for approval: %v", m)
	}
}

func TestAgentRunAnswersCallsToolsAndCostsAChain(t *testing.T) {
	d := startDev(t)
	status, _, m := d.do("POST", "/dev/agents/hermes/run", "", map[string]any{"message": "hello there"})
	if status != http.StatusOK || m["outcome"] != "answered" {
		t.Fatalf("run = %d %v", status, m)
	}
	mustContain(t, "answer", str(m["answer"]), "Hermes heard: hello there")

	msg := "please file it\ncall Workspace.write {\"path\":\"shared:minutes.md\",\"content\":\"minutes\"}"
	_, _, m = d.do("POST", "/dev/agents/hermes/run", "", map[string]any{"message": msg})
	if m["outcome"] != "answered" {
		t.Fatalf("run with tool call = %v", m)
	}
	mustContain(t, "answer", str(m["answer"]), "Workspace.write → ok")
	run, _ := m["run"].(map[string]any)
	root := str(run["rootRunId"])
	if root == "" || root != str(run["runId"]) || run["parentRunId"] != nil {
		t.Fatalf("run context = %v, want a root run", run)
	}

	_, _, chain := d.do("GET", "/dev/chains/"+root, "", nil)
	cost, _ := chain["cost"].(map[string]any)
	if cost["runs"] != float64(1) || cost["costUsd"].(float64) <= 0 || cost["tokensIn"].(float64) <= 0 {
		t.Errorf("chain cost = %v, want one run with tokens and a cost", cost)
	}
	audit, _ := chain["audit"].([]any)
	if len(audit) != 1 {
		t.Fatalf("audit of chain = %v, want the one tool call", audit)
	}
	e, _ := audit[0].(map[string]any)
	erun, _ := e["run"].(map[string]any)
	if e["tool"] != "Workspace" || e["action"] != "write" || e["outcome"] != "ok" || e["decision"] != "auto" || str(erun["runId"]) != root {
		t.Errorf("audit entry = %v", e)
	}

	// The file the agent wrote is in the shared workspace.
	_, m = d.invoke("hermes", "Workspace", "read", map[string]any{"path": "shared:minutes.md"})
	if str(m["content"]) != "minutes" {
		t.Errorf("shared:minutes.md = %v", m)
	}

	status, _, m = d.do("POST", "/dev/agents/nobody/run", "", map[string]any{"message": "hi"})
	if status != http.StatusNotFound {
		t.Errorf("run of unknown agent = %d %v, want 404", status, m)
	}
	status, _, _ = d.do("POST", "/dev/agents/hermes/run", "", map[string]any{"message": ""})
	if status != http.StatusBadRequest {
		t.Errorf("run without message = %d, want 400", status)
	}
}

func TestLoopGuardAndStepBudget(t *testing.T) {
	d := startDev(t)
	line := "call Workspace.list {\"prefix\":\"personal:\"}"
	_, _, m := d.do("POST", "/dev/agents/hermes/run", "", map[string]any{"message": strings.Repeat(line+"\n", 3)})
	if m["outcome"] != "loop_guard" {
		t.Errorf("three identical calls: outcome = %v, want loop_guard", m["outcome"])
	}
}

func TestSecretsNeverReachAuditOrLogs(t *testing.T) {
	d := startDev(t)
	content := "token " + toolToken + " key " + signingKey + " aws AKIAIOSFODNN7EXAMPLE"
	_, _, m := d.do("POST", "/dev/agents/hermes/run", "", map[string]any{
		"message": "call Workspace.write {\"path\":\"s.md\",\"content\":\"" + content + "\"}"})
	run, _ := m["run"].(map[string]any)
	_, _, chain := d.do("GET", "/dev/chains/"+str(run["rootRunId"]), "", nil)
	audit, _ := chain["audit"].([]any)
	if len(audit) != 1 {
		t.Fatalf("audit = %v", audit)
	}
	args := str(audit[0].(map[string]any)["args"])
	for _, secret := range []string{toolToken, signingKey, "AKIAIOSFODNN7EXAMPLE"} {
		if strings.Contains(args, secret) {
			t.Errorf("audit args %q contain a secret", args)
		}
		if strings.Contains(d.logs.String(), secret) {
			t.Errorf("server log contains secret %q", secret)
		}
	}
}

func TestJobsRunOnDemandAndAreRecorded(t *testing.T) {
	d := startDev(t)
	status, _, m := d.do("POST", "/dev/jobs/heartbeat", "", nil)
	if status != http.StatusOK || m["outcome"] != "ok" || m["trigger"] != "dev-route" {
		t.Fatalf("heartbeat = %d %v", status, m)
	}
	_, _, m = d.do("GET", "/dev/jobs", "", nil)
	runs, _ := m["lastRuns"].([]any)
	if len(runs) != 1 || runs[0].(map[string]any)["job"] != "heartbeat" {
		t.Errorf("last runs = %v", runs)
	}
	status, _, m = d.do("POST", "/dev/jobs/nope", "", nil)
	if status != http.StatusNotFound {
		t.Errorf("unknown job = %d %v, want 404", status, m)
	}
	mustContain(t, "error", str(m["error"]), "heartbeat")
}

func TestInterruptStopsCleanly(t *testing.T) {
	d := startDev(t)
	if err := d.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-d.done:
		if err != nil {
			t.Errorf("switchboard dev exited with %v after SIGINT, want 0", err)
		}
		d.done <- err // let the cleanup see it
	case <-time.After(10 * time.Second):
		t.Fatal("switchboard dev did not stop within 10 s of SIGINT")
	}
}
