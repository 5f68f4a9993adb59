package tests

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestConsoleOnTheDevListener: `switchboard dev` serves the console from the
// same handler as the console function: off (404) without a password; with
// one, a login, the cost of a run, and a pending approval whose link (with
// its signed token intact through the response scrubbing) opens the
// confirmation page on the same listener.
func TestConsoleOnTheDevListener(t *testing.T) {
	off := startDev(t)
	res, err := http.Get(off.base + "/console/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("console without a password: %d, want 404", res.StatusCode)
	}

	raw, err := os.ReadFile("testdata/e2e.yaml")
	if err != nil {
		t.Fatal(err)
	}
	config := strings.Replace(string(raw), "  approvals:\n", "  console:\n    password: env:E2E_CONSOLE_PASSWORD\n  approvals:\n", 1)
	path := filepath.Join(t.TempDir(), "console.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	const password = "e2e-console-password-1234"
	d := startDevConfig(t, path, "E2E_CONSOLE_PASSWORD="+password)
	if status, m := d.invoke("hermes", "Workspace", "write", map[string]any{"path": "notes.md", "content": "x"}); status != 200 {
		t.Fatalf("write: %d %v", status, m)
	}
	if status, m := d.invoke("hermes", "Workspace", "delete", map[string]any{"path": "notes.md"}); status != http.StatusAccepted {
		t.Fatalf("delete: %d %v, want 202 pending_approval", status, m)
	}
	if status, _, m := d.do("POST", "/dev/agents/hermes/run", "", map[string]any{"message": "hello"}); status != 200 {
		t.Fatalf("run: %d %v", status, m)
	}

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	get := func(path string) (int, string) {
		t.Helper()
		res, err := c.Get(d.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	_, form := get("/console/login")
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(form)
	if m == nil {
		t.Fatalf("no login form:\n%s", form)
	}
	res, err = c.PostForm(d.base+"/console/login", url.Values{"csrf": {m[1]}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	start, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(start), "Cost today") || !strings.Contains(string(start), "Hermes") {
		t.Fatalf("after login: %d\n%s", res.StatusCode, start)
	}
	// Needs attention reads the tasks, receipts, state and messages tables
	// the console function is given.
	if status, page := get("/console/attention"); status != 200 || !strings.Contains(page, "No task is open or blocked.") {
		t.Fatalf("attention page: %d\n%s", status, page)
	}
	status, page := get("/console/approvals")
	if status != 200 || !strings.Contains(page, "Hermes wants <code>Workspace.delete</code>") {
		t.Fatalf("approvals page: %d\n%s", status, page)
	}
	link := regexp.MustCompile(`class="approve" href="([^"]+)"`).FindStringSubmatch(page)
	if link == nil || strings.Contains(link[1], "***") || !strings.HasPrefix(html.UnescapeString(link[1]), d.base+"/approvals/") {
		t.Fatalf("approve link %v: want the dev listener's confirmation page with its token", link)
	}
	res, err = http.Get(html.UnescapeString(link[1]))
	if err != nil {
		t.Fatal(err)
	}
	confirm, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(confirm), "Workspace") {
		t.Errorf("the approve link opens %d:\n%s", res.StatusCode, confirm)
	}
}
