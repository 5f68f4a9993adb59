package tests

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
)

// startNCWorld runs a fake Nextcloud (a real WebDAV server with Nextcloud's
// quirks) and `switchboard dev` with an agent whose Nextcloud block points at it.
func startNCWorld(t *testing.T, allowPublic bool) (*ncfake.Server, *devServer) {
	t.Helper()
	nc := ncfake.Start(t, ncfake.Options{User: "switchboard", Password: "app-pass-e2e-1234"})
	nc.AddUser("richard")
	config := fmt.Sprintf(`instance:
  name: e2e-nc
  toolApiToken: env:E2E_TOOL_TOKEN
  model: {provider: scripted}
  approvals: {signingKey: env:E2E_SIGNING_KEY}
  dev: {scheduler: false}
agents:
  - id: hermes
    name: Hermes
    systemPrompt: You are Hermes.
    tools:
      Workspace: {}
      Nextcloud:
        baseUrl: %s
        username: switchboard
        appPassword: app-pass-e2e-1234
        rootPath: /Switchboard/Hermes
        allowPublicShares: %t
        shareDefaultExpireDays: 14
`, nc.URL, allowPublic)
	path := filepath.Join(t.TempDir(), "nc.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return nc, startDevConfig(t, path)
}

func TestNextcloudUploadShareAndCleanup(t *testing.T) {
	nc, d := startNCWorld(t, true)
	if _, m := d.invoke("hermes", "Workspace", "write", map[string]any{"path": "personal:q3.md", "content": "# Q3\nup 4 %\n"}); m["status"] != "ok" {
		t.Fatalf("workspace write = %v", m)
	}
	status, m := d.invoke("hermes", "Nextcloud", "upload", map[string]any{"localPath": "personal:q3.md", "remotePath": "reports/q3.md"})
	if status != http.StatusOK || m["status"] != "ok" {
		t.Fatalf("upload = %d %v", status, m)
	}
	got, err := nc.File("/Switchboard/Hermes/reports/q3.md")
	if err != nil || string(got) != "# Q3\nup 4 %\n" {
		t.Fatalf("file on the server = %q, %v", got, err)
	}

	// Escapes stay inside rootPath.
	_, m = d.invoke("hermes", "Nextcloud", "stat", map[string]any{"path": "../../etc"})
	if m["status"] != "error" {
		t.Errorf("stat ../../etc = %v, want an error", m)
	}

	// A user share is auto; a public link needs approval.
	_, m = d.invoke("hermes", "Nextcloud", "share", map[string]any{"path": "reports/q3.md", "shareWith": "richard"})
	if m["status"] != "ok" {
		t.Errorf("user share = %v", m)
	}
	status, m = d.invoke("hermes", "Nextcloud", "share", map[string]any{"path": "reports/q3.md", "shareType": 3})
	if status != http.StatusAccepted || m["status"] != "pending_approval" {
		t.Errorf("public link = %d %v, want 202 pending_approval", status, m)
	}

	// A locked report (open in Collabora) is saved under a timestamped name.
	nc.Lock("/Switchboard/Hermes/reports/q3.md")
	_, m = d.invoke("hermes", "Nextcloud", "upload", map[string]any{"localPath": "personal:q3.md", "remotePath": "reports/q3.md"})
	if m["status"] != "ok" || !strings.Contains(fmt.Sprint(m), "q3-") {
		t.Errorf("upload onto a locked report = %v, want ok under a timestamped name", m)
	}

	// Cleanup: dry run lists and keeps; nothing is older than 90 days here.
	status, _, run := d.do("POST", "/dev/jobs/nextcloud-cleanup?dryRun=true", "", nil)
	if status != http.StatusOK || run["outcome"] != "ok" || !strings.Contains(str(run["detail"]), "dry run") {
		t.Errorf("cleanup dry run = %d %v", status, run)
	}
	if _, err := nc.File("/Switchboard/Hermes/reports/q3.md"); err != nil {
		t.Errorf("dry run deleted a file: %v", err)
	}
}

func TestNextcloudPublicLinksRefusedWhenNotAllowed(t *testing.T) {
	_, d := startNCWorld(t, false)
	d.invoke("hermes", "Workspace", "write", map[string]any{"path": "personal:a.md", "content": "a"})
	d.invoke("hermes", "Nextcloud", "upload", map[string]any{"localPath": "personal:a.md", "remotePath": "a.md"})
	_, m := d.invoke("hermes", "Nextcloud", "share", map[string]any{"path": "a.md", "shareType": 3})
	if m["status"] != "error" {
		t.Errorf("public link with allowPublicShares false = %v, want refused", m)
	}
}
