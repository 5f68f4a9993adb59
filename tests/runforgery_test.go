package tests

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/runtoken"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// forgeryConfig: Hermes and Atlas may both write files and ask each other,
// so that nothing but the run context stands between a forged call and
// the other agent's chain.
const forgeryConfig = `instance:
  name: e2e-forgery
  toolApiToken: env:E2E_TOOL_TOKEN
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}", inputPer1M: 3, outputPer1M: 15}
  approvals: {signingKey: env:E2E_SIGNING_KEY}
  askAgent: {timeoutSeconds: 30, maxSteps: 3}
  dev: {scheduler: false}
agents:
  - id: hermes
    name: Hermes
    tools:
      Workspace: {}
      ask_agent: {}
  - id: atlas
    name: Atlas
    tools:
      Workspace: {}
      ask_agent: {}
`

func startForgeryWorld(t *testing.T) *devServer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "forgery.yaml")
	if err := os.WriteFile(path, []byte(forgeryConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return startDevConfig(t, path)
}

// chainOf is the audit entries and receipts of root, as /dev/chains shows them.
func chainOf(t *testing.T, d *devServer, root string) (audit, receipts []map[string]any) {
	t.Helper()
	status, _, chain := d.do("GET", "/dev/chains/"+root, "", nil)
	if status == http.StatusNotFound {
		return nil, nil // no run, audit entry or receipt names this root
	}
	if status != http.StatusOK {
		t.Fatalf("GET /dev/chains/%s = %d %v", root, status, chain)
	}
	for _, x := range chain["audit"].([]any) {
		audit = append(audit, x.(map[string]any))
	}
	cost, _ := chain["cost"].(map[string]any)
	rs, _ := cost["receipts"].([]any)
	for _, x := range rs {
		receipts = append(receipts, x.(map[string]any))
	}
	return audit, receipts
}

// agentsOf lists the agent of each audit entry.
func agentsOf(audit []map[string]any) []string {
	var out []string
	for _, e := range audit {
		out = append(out, fmt.Sprintf("%v:%v.%v", e["agentId"], e["tool"], e["action"]))
	}
	return out
}

// hermesRun runs Hermes once with one Workspace.write and answers its run
// ids; its chain then holds one audit entry and one receipt, both Hermes's.
func hermesRun(t *testing.T, d *devServer) (runID, root string) {
	t.Helper()
	status, _, m := d.do("POST", "/dev/agents/hermes/run", "", map[string]any{
		"message": "note it\ncall Workspace.write {\"path\":\"personal:n.md\",\"content\":\"n\"}"})
	if status != http.StatusOK || m["outcome"] != "answered" {
		t.Fatalf("hermes's run = %d %v", status, m)
	}
	run := m["run"].(map[string]any)
	return str(run["runId"]), str(run["rootRunId"])
}

// The attack run's calls: a call as Atlas carrying Hermes's run ids, and a
// call under a parentRunId that never existed. Run ids sent as a bare
// object are refused (400) before any tool runs, so nothing lands in
// Hermes's chain or in the made-up one.
func TestToolInvokeBareRunIsRefusedE2E(t *testing.T) {
	d := startForgeryWorld(t)
	runID, root := hermesRun(t, d)

	for _, tt := range []struct {
		name string
		body map[string]any
	}{
		{"atlas with hermes's run", map[string]any{"agent": "atlas", "tool": "Workspace", "action": "write",
			"args": map[string]any{"path": "personal:x.md", "content": "x"},
			"run":  map[string]any{"runId": runID, "rootRunId": root}}},
		{"atlas as a child of hermes's run", map[string]any{"agent": "atlas", "tool": "Workspace", "action": "list",
			"args": map[string]any{}, "run": map[string]any{"runId": "attack-child", "parentRunId": runID, "rootRunId": root}}},
		{"a parentRunId that never existed", map[string]any{"agent": "hermes", "tool": "Workspace", "action": "list",
			"args": map[string]any{}, "run": map[string]any{"runId": "attack-run", "parentRunId": "never-existed", "rootRunId": "attack-root"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, _, m := d.do("POST", "/tools/invoke", toolToken, tt.body)
			if status != http.StatusBadRequest || !strings.Contains(str(m["error"]), `"run" must be {"token"`) {
				t.Errorf("POST /tools/invoke = %d %v, want 400 saying run ids are taken only as the engine's token", status, m)
			}
		})
	}
	audit, receipts := chainOf(t, d, root)
	if got := agentsOf(audit); len(got) != 1 || got[0] != "hermes:Workspace.write" || len(receipts) != 1 {
		t.Errorf("hermes's chain %s: audit %v, %d receipts; want only hermes's own write and run", root, got, len(receipts))
	}
	for _, r := range []string{"attack-root", "never-existed"} {
		if audit, receipts := chainOf(t, d, r); len(audit) != 0 || len(receipts) != 0 {
			t.Errorf("made-up chain %s: audit %v, receipts %v; want nothing", r, agentsOf(audit), receipts)
		}
	}
}

// A asks B asks A: Atlas asks Hermes, and Hermes's answering run (call
// path "atlas") tries to ask Atlas back. Through the engine the guard
// refuses it; through the tool API with the call path left out or
// forged, the run is refused before the question reaches the machine.
func TestAskCallPathFromTheRequestIsRefusedE2E(t *testing.T) {
	d := startForgeryWorld(t)
	status, _, m := d.do("POST", "/dev/agents/atlas/run", "", map[string]any{
		"message": `call ask_agent.ask {"agent":"hermes","question":"call ask_agent.ask {\"agent\":\"atlas\",\"question\":\"and you?\"}"}`})
	if status != http.StatusOK {
		t.Fatalf("atlas's run = %d %v", status, m)
	}
	mustContain(t, "atlas's answer", str(m["answer"]), "atlas was not asked: atlas is already in this chain of questions (atlas → hermes)")
	run := m["run"].(map[string]any)
	root := str(run["rootRunId"])

	for _, tt := range []struct {
		name string
		run  map[string]any
	}{
		{"call path left out", map[string]any{"runId": "hermes-answering", "parentRunId": str(run["runId"]), "rootRunId": root}},
		{"call path forged empty", map[string]any{"runId": "hermes-answering", "parentRunId": str(run["runId"]), "rootRunId": root, "callPath": ""}},
		{"call path forged", map[string]any{"runId": "hermes-answering", "rootRunId": root, "callPath": "nobody"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, _, m := d.do("POST", "/tools/invoke", toolToken, map[string]any{"agent": "hermes", "tool": "ask_agent", "action": "ask",
				"args": map[string]any{"agent": "atlas", "question": "and you?"}, "run": tt.run})
			if status != http.StatusBadRequest || m["answer"] != nil {
				t.Errorf("ask = %d %v, want 400 and no answer", status, m)
			}
		})
	}
	audit, _ := chainOf(t, d, root)
	for _, e := range audit {
		erun, _ := e["run"].(map[string]any)
		if e["agentId"] == "hermes" && e["tool"] == "ask_agent" && (e["outcome"] != "error" || erun["runId"] == "hermes-answering") {
			t.Errorf("hermes's ask in atlas's chain %s: %v; want only the answering run's refused one (the forged ones never ran)", root, e)
		}
	}
}

// engineKeys are the run-token keys the dev server derives from the
// signing key; the test signs with them as the engine would (a leaked or
// replayed token), on clock now.
func engineKeys(t *testing.T, now func() time.Time) *runtoken.Keys {
	t.Helper()
	k, err := runtoken.New(signingKey)
	if err != nil {
		t.Fatal(err)
	}
	k.Now = now
	return k
}

func mint(t *testing.T, k *runtoken.Keys, run sb.RunContext, expires time.Time) string {
	t.Helper()
	tok, err := k.Issue(run, expires)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// With tokens: Hermes's token used as Atlas, a tampered token, an expired
// one (signed on a clock an hour behind), one signed with another key and
// the token of Hermes's run that has ended are all refused (403); nothing
// lands in Hermes's chain. A live run's token of the right agent is taken
// and its call lands in that run's chain, as that agent.
func TestToolInvokeRunTokensE2E(t *testing.T) {
	d := startForgeryWorld(t)
	runID, root := hermesRun(t, d)
	keys := engineKeys(t, time.Now)
	ended := sb.RunContext{RunID: runID, RootRunID: root, AgentID: "hermes"}
	// A run of Hermes still going: no receipt yet.
	live := sb.RunContext{RunID: sb.NewID(time.Now()), ParentRunID: runID, RootRunID: root, AgentID: "hermes"}
	liveToken := mint(t, keys, live, time.Now().Add(5*time.Minute))
	parts := strings.Split(liveToken, ".")
	atlasPayload := strings.Split(mint(t, keys, sb.RunContext{RunID: "a", RootRunID: root, AgentID: "atlas"}, time.Now().Add(time.Minute)), ".")[1]
	behind := engineKeys(t, func() time.Time { return time.Now().Add(-time.Hour) })
	otherKeys, err := runtoken.New("another-instance-signing-key")
	if err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name, agent, token, want string
	}{
		{"atlas with hermes's live token", "atlas", liveToken, "the run token names a run of hermes, not of atlas"},
		{"tampered: atlas's payload, hermes's signature", "atlas", parts[0] + "." + atlasPayload + "." + parts[2], "signature does not match"},
		{"expired", "hermes", mint(t, behind, live, behind.Now().Add(time.Minute)), "the run token expired at"},
		{"another key", "hermes", mint(t, otherKeys, live, time.Now().Add(time.Minute)), "signature does not match"},
		{"the run has ended", "hermes", mint(t, keys, ended, time.Now().Add(time.Minute)), "has ended"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, _, m := d.do("POST", "/tools/invoke", toolToken, map[string]any{"agent": tt.agent, "tool": "Workspace", "action": "write",
				"args": map[string]any{"path": "personal:x.md", "content": "x"}, "run": map[string]any{"token": tt.token}})
			if status != http.StatusForbidden || !strings.Contains(str(m["error"]), tt.want) {
				t.Errorf("POST /tools/invoke = %d %v, want 403 saying %q", status, m, tt.want)
			}
		})
	}
	audit, receipts := chainOf(t, d, root)
	if got := agentsOf(audit); len(got) != 1 || got[0] != "hermes:Workspace.write" || len(receipts) != 1 {
		t.Fatalf("hermes's chain %s after the refused calls: audit %v, %d receipts; want only hermes's own write", root, got, len(receipts))
	}

	status, _, m := d.do("POST", "/tools/invoke", toolToken, map[string]any{"agent": "hermes", "tool": "Workspace", "action": "list",
		"args": map[string]any{}, "run": map[string]any{"token": liveToken}})
	if status != http.StatusOK || m["status"] != "ok" {
		t.Fatalf("hermes with its live run's token = %d %v, want 200", status, m)
	}
	audit, _ = chainOf(t, d, root)
	last := audit[len(audit)-1]
	erun, _ := last["run"].(map[string]any)
	if got := agentsOf(audit); len(got) != 2 || got[1] != "hermes:Workspace.list" || str(erun["runId"]) != live.RunID || str(erun["parentRunId"]) != runID {
		t.Errorf("hermes's chain after the live token's call: %v, last run %v; want the list on run %s under %s", got, erun, live.RunID, runID)
	}
}

// The same A→B→A through the tool API with a token: Hermes's answering
// run's token carries its call path ("atlas"), so asking Atlas back is
// refused by the guard, whatever the request says.
func TestAskWithAnAnsweringRunsTokenE2E(t *testing.T) {
	d := startForgeryWorld(t)
	keys := engineKeys(t, time.Now)
	answering := sb.RunContext{RunID: sb.NewID(time.Now()), ParentRunID: "atlas-run", RootRunID: "atlas-root", AgentID: "hermes", CallPath: "atlas"}
	status, _, m := d.do("POST", "/tools/invoke", toolToken, map[string]any{"agent": "hermes", "tool": "ask_agent", "action": "ask",
		"args": map[string]any{"agent": "atlas", "question": "and you?"},
		"run":  map[string]any{"token": mint(t, keys, answering, time.Now().Add(time.Minute))}})
	if status != http.StatusOK || m["answer"] != nil || !strings.Contains(str(m["error"]), "atlas was not asked: atlas is already in this chain of questions (atlas → hermes)") {
		t.Errorf("ask = %d %v, want the guard's refusal naming the circle", status, m)
	}
}
