package tests

import (
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
)

const consolePassword = "e2e-console-password-1234"

// startConsoleDev is switchboard dev with the console on (its password
// from the environment) and the config's extra lines under instance: and
// agents' tools added by the caller through config.
func startConsoleDev(t *testing.T, config string) *devServer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "console.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return startDevConfig(t, path, "E2E_CONSOLE_PASSWORD="+consolePassword)
}

// consoleClient is a browser on the loopback address ip: its connections
// to the dev listener come from ip (all of 127.0.0.0/8 is loopback on
// Linux), so the console sees ip as the client, as it sees an address on
// the Internet behind a function URL. It follows no redirects, so that a
// login answers its own 303.
func consoleClient(t *testing.T, ip string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{
		Jar:           jar,
		Timeout:       30 * time.Second,
		Transport:     &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// consoleLogin opens the login form and sends pw as c: the status of the
// POST and its Retry-After.
func consoleLogin(t *testing.T, d *devServer, c *http.Client, pw string) (int, string) {
	t.Helper()
	res, err := c.Get(d.base + "/console/login")
	if err != nil {
		t.Fatal(err)
	}
	form, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(string(form))
	if m == nil {
		t.Fatalf("no login form: %d\n%s", res.StatusCode, form)
	}
	res, err = c.PostForm(d.base+"/console/login", url.Values{"csrf": {m[1]}, "password": {pw}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Retry-After")
}

// The attack run's lockout, replayed on switchboard dev over real
// connections: 100 wrong passwords from 10 loopback addresses (10 each)
// spend the window's total of failures; the owner's right password from a
// fresh address still logs in, a guess from a fresh address is refused
// with 429 and a Retry-After, and the 10 guessing addresses get nothing
// more.
func TestConsoleLockoutAttackReplayedE2E(t *testing.T) {
	raw, err := os.ReadFile("testdata/e2e.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := startConsoleDev(t, strings.Replace(string(raw), "  approvals:\n", "  console:\n    password: env:E2E_CONSOLE_PASSWORD\n  approvals:\n", 1))
	if _, err := net.Listen("tcp", "127.0.0.77:0"); err != nil {
		t.Skipf("this machine cannot use loopback addresses besides 127.0.0.1: %v", err)
	}

	start := time.Now()
	refused := 0
	for a := range 10 {
		c := consoleClient(t, fmt.Sprintf("127.0.0.%d", 10+a))
		for range 10 {
			if st, _ := consoleLogin(t, d, c, "a wrong guess"); st != http.StatusUnauthorized {
				refused++
				t.Errorf("wrong password %d from 127.0.0.%d: %d, want 401 (the client's 10 and the total's 100 are not spent yet)", refused, 10+a, st)
			}
		}
	}
	t.Logf("100 wrong passwords from 10 addresses in %v", time.Since(start).Round(time.Millisecond))

	if st, _ := consoleLogin(t, d, consoleClient(t, "127.0.0.50"), consolePassword); st != http.StatusSeeOther {
		t.Errorf("the owner's right password from a fresh address after 100 failures: %d, want 303 (logged in)", st)
	}
	if st, retry := consoleLogin(t, d, consoleClient(t, "127.0.0.51"), "another guess"); st != http.StatusTooManyRequests || retry == "" {
		t.Errorf("a guess from a fresh address once the total is spent: %d (Retry-After %q), want 429 with a Retry-After", st, retry)
	}
	if st, _ := consoleLogin(t, d, consoleClient(t, "127.0.0.10"), "one more guess"); st != http.StatusTooManyRequests {
		t.Errorf("an 11th guess from a guessing address: %d, want 429", st)
	}
	// The owner who mistyped once from a fresh address still gets in.
	owner := consoleClient(t, "127.0.0.52")
	if st, _ := consoleLogin(t, d, owner, "typo"); st != http.StatusTooManyRequests {
		t.Errorf("a typo while the total is spent: %d, want 429", st)
	}
	if st, _ := consoleLogin(t, d, owner, consolePassword); st != http.StatusSeeOther {
		t.Errorf("the right password after one typo: %d, want 303", st)
	}
}

// The attack run's approvals page, replayed on switchboard dev: an agent
// stages calls with a link password, a bearer token and the instance's
// own tool token in their arguments; the console's approvals page and the
// chain page show the calls with every one of them masked. (The page's
// response scrubbing alone catches the token and the bearer, not a link
// password under its argument name: the renderer must mask that.)
func TestConsoleApprovalsPageMasksSecretsE2E(t *testing.T) {
	nc := ncfake.Start(t, ncfake.Options{User: "switchboard", Password: "app-pass-e2e-1234"})
	if err := nc.WriteFile("/Switchboard/Hermes/q3.pdf", []byte("%PDF q3")); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`instance:
  name: e2e-console
  toolApiToken: env:E2E_TOOL_TOKEN
  model: {provider: scripted, reply: "{{agent}} heard: {{message}}"}
  console:
    password: env:E2E_CONSOLE_PASSWORD
  approvals:
    signingKey: env:E2E_SIGNING_KEY
  staging:
    Workspace.write: approve
  dev: {scheduler: false}
agents:
  - id: hermes
    name: Hermes
    tools:
      Workspace: {}
      Nextcloud:
        baseUrl: %s
        username: switchboard
        appPassword: app-pass-e2e-1234
        rootPath: /Switchboard/Hermes
        allowPublicShares: true
`, nc.URL)
	d := startConsoleDev(t, config)

	const linkPassword = "LinkPw-Alpha-7781"
	const bearer = "eyJhbGciOiJIUzI1NiJ9.JulietKilo0008"
	secrets := []string{linkPassword, bearer, "JulietKilo0008", toolToken}
	if st, m := d.invoke("hermes", "Nextcloud", "share", map[string]any{"path": "q3.pdf", "shareType": 3, "password": linkPassword}); st != http.StatusAccepted {
		t.Fatalf("public link: %d %v, want 202 pending_approval", st, m)
	}
	if st, m := d.invoke("hermes", "Workspace", "write", map[string]any{"path": "creds.md",
		"content": "call it with Authorization: Bearer " + bearer + " or the tool token " + toolToken}); st != http.StatusAccepted {
		t.Fatalf("staged write: %d %v, want 202 pending_approval", st, m)
	}

	c := consoleClient(t, "127.0.0.1")
	if st, _ := consoleLogin(t, d, c, consolePassword); st != http.StatusSeeOther {
		t.Fatalf("login: %d, want 303", st)
	}
	get := func(path string) string {
		t.Helper()
		res, err := c.Get(d.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", path, res.StatusCode, b)
		}
		return string(b)
	}
	approvalsPage := get("/console/approvals")
	for _, want := range []string{"Hermes wants <code>Nextcloud.share</code>", "Hermes wants <code>Workspace.write</code>", "q3.pdf", "creds.md", scrub.Mask} {
		if !strings.Contains(approvalsPage, want) {
			t.Errorf("approvals page lacks %q:\n%s", want, approvalsPage)
		}
	}
	pages := map[string]string{"/console/approvals": approvalsPage, "/console/": get("/console/"), "/console/?a=hermes&b=all": get("/console/?a=hermes&b=all")}
	for _, root := range regexp.MustCompile(`/console/chain\?root=([^"&]+)`).FindAllStringSubmatch(approvalsPage+pages["/console/?a=hermes&b=all"], -1) {
		p := "/console/chain?root=" + html.UnescapeString(root[1])
		pages[p] = get(p)
	}
	for name, body := range pages {
		text := html.UnescapeString(body)
		for _, s := range secrets {
			if strings.Contains(body, s) || strings.Contains(text, s) {
				t.Errorf("%s shows the secret %q", name, s)
			}
		}
	}
	t.Logf("read %d console pages, %d planted secrets", len(pages), len(secrets))
}
