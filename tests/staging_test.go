package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

// stagingWorld is `switchboard dev` with every tool that can wait for a
// human: Rocket.Chat, Nextcloud and the workspace (whose delete is made to
// need approval), approvals through a fake Telegram, and a handle on the
// approvals table.
type stagingWorld struct {
	tg        *tgfake.Server
	rc        *rcfake.Server
	nc        *ncfake.Server
	dev       *devServer
	approvals func() int // open approvals in the table
}

func startStagingWorld(t *testing.T) *stagingWorld {
	t.Helper()
	tg := tgfake.New()
	t.Cleanup(tg.Close)
	tg.AddUser(tgfake.User{ID: tgApprover, FirstName: "Richard", Username: "richard"})
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	rc.SetRateLimit(0, 0)
	rc.AddUser("richard", "user")
	agentID, agentToken := rc.AddUser("agent-hermes", "bot", "user")
	rc.AddChannel("finanz-team", "richard", "agent-hermes")
	nc := ncfake.Start(t, ncfake.Options{User: "switchboard", Password: "app-pass-e2e-1234"})
	nc.AddUser("richard")
	if err := nc.WriteFile("/Switchboard/Hermes/reports/old.md", []byte("old")); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`instance:
  name: e2e-staging
  toolApiToken: env:E2E_TOOL_TOKEN
  channels: [Telegram]
  model: {provider: scripted}
  telegram:
    apiBaseUrl: %s
    botToken: %s
    chatId: "%d"
    allowedChatIds: ["%d"]
  approvals: {signingKey: env:E2E_SIGNING_KEY, ttlHours: 24, approverTelegramIds: ["%d"]}
  staging: {Workspace.delete: approve}
  dev: {scheduler: false}
agents:
  - id: hermes
    name: Hermes
    systemPrompt: You are Hermes.
    tools:
      Workspace: {}
      RocketChat:
        baseUrl: %s
        userId: %s
        authToken: %s
        username: agent-hermes
        allowedRooms: [finanz-team]
      Nextcloud:
        baseUrl: %s
        username: switchboard
        appPassword: app-pass-e2e-1234
        rootPath: /Switchboard/Hermes
        allowPublicShares: true
`, tg.URL, tgfake.DefaultToken, tgChat, tgChat, tgApprover, rc.URL, agentID, agentToken, nc.URL)
	path := filepath.Join(t.TempDir(), "staging.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("e2estaging%d-", time.Now().UnixNano())
	d := startDevConfig(t, path, deploy.EnvTablePrefix+"="+prefix)
	store := dynamo.New(dynamotest.Client(t), func(k string) string {
		if k == deploy.EnvTablePrefix {
			return prefix
		}
		return ""
	})
	return &stagingWorld{tg: tg, rc: rc, nc: nc, dev: d, approvals: func() int {
		open, err := store.Approvals().ListOpen(context.Background())
		if err != nil {
			t.Fatalf("ListOpen: %v", err)
		}
		return len(open)
	}}
}

// TestInvalidCallsAreRefusedBeforeStaging: a call that can only fail gets
// the error envelope at once; no approval is stored, nobody is asked in
// Telegram, nothing reaches Rocket.Chat or Nextcloud. The valid call is
// still staged.
func TestInvalidCallsAreRefusedBeforeStaging(t *testing.T) {
	w := startStagingWorld(t)
	if _, m := w.dev.invoke("hermes", "Workspace", "write", map[string]any{"path": "personal:q3.md", "content": "# Q3"}); m["status"] != "ok" {
		t.Fatalf("workspace write = %v", m)
	}
	tests := []struct {
		name, tool, action string
		args               map[string]any
		want               string
	}{
		{"send_file climbing out of the workspace", "RocketChat", "send_file", map[string]any{"room": "finanz-team", "localPath": "../etc/passwd"}, ".."},
		{"send_file of an absolute path", "RocketChat", "send_file", map[string]any{"room": "finanz-team", "localPath": "/etc/passwd"}, ""},
		{"send_file of a file that does not exist", "RocketChat", "send_file", map[string]any{"room": "finanz-team", "localPath": "personal:nope.md"}, "no file personal:nope.md"},
		{"Nextcloud delete climbing out", "Nextcloud", "delete", map[string]any{"path": "../../etc/passwd"}, "climbs out"},
		{"Nextcloud delete of a missing file", "Nextcloud", "delete", map[string]any{"path": "reports/nope.md"}, "nope.md"},
		{"Nextcloud public link with a recipient", "Nextcloud", "share", map[string]any{"path": "reports/old.md", "shareType": 3, "shareWith": "richard"}, "has no shareWith"},
		{"Workspace delete of a missing file", "Workspace", "delete", map[string]any{"path": "personal:nope.md"}, "no file"},
		{"Workspace delete outside", "Workspace", "delete", map[string]any{"path": "../x.md"}, ""},
	}
	rcBefore, ncBefore := len(w.rc.Requests()), len(w.nc.Requests())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(w.tg.Messages(tgChat))
			_, m := w.dev.invoke("hermes", tt.tool, tt.action, tt.args)
			if m["status"] != "error" || !strings.Contains(str(m["error"]), tt.want) {
				t.Errorf("%s.%s = %v, want an error envelope containing %q", tt.tool, tt.action, m, tt.want)
			}
			if n := len(w.tg.Messages(tgChat)) - before; n != 0 {
				t.Errorf("%d Telegram messages were sent, want none", n)
			}
			if n := w.approvals(); n != 0 {
				t.Errorf("%d open approvals, want none", n)
			}
		})
	}
	for _, r := range w.rc.Requests()[rcBefore:] {
		t.Errorf("Rocket.Chat got %s %s from a refused call", r.Method, r.Path)
	}
	for _, r := range w.nc.Requests()[ncBefore:] {
		if r.Method != "PROPFIND" {
			t.Errorf("Nextcloud got %s %s from a refused call", r.Method, r.Path)
		}
	}

	// The valid call still waits for a human.
	before := len(w.tg.Messages(tgChat))
	_, m := w.dev.invoke("hermes", "RocketChat", "send_file", map[string]any{"room": "finanz-team", "localPath": "personal:q3.md"})
	if m["status"] != "pending_approval" {
		t.Fatalf("valid send_file = %v, want pending_approval", m)
	}
	if n := len(w.tg.Messages(tgChat)) - before; n != 1 {
		t.Errorf("%d Telegram messages for the valid call, want the approval request", n)
	}
	if n := w.approvals(); n != 1 {
		t.Errorf("%d open approvals after the valid call, want 1", n)
	}
}
