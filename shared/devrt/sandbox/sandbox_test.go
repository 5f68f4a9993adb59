package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
)

func start(t *testing.T, config string) (*Sandbox, error) {
	t.Helper()
	s, err := Start(context.Background(), Options{ConfigFile: config, DataDir: t.TempDir(), DevURL: "http://127.0.0.1:1"})
	t.Cleanup(s.Close)
	return s, err
}

func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "switchboard.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// With the example config every part runs, and the config the App loads
// has each agent wired to the sandbox servers, the example's own webhook
// token kept beside the sandbox's.
func TestStartWiresTheExampleAgents(t *testing.T) {
	before, _ := os.ReadFile("../../../switchboard.example.yaml")
	s, err := start(t, "../../../switchboard.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s == nil || !s.Parts.RocketChat || !s.Parts.Telegram || !s.Parts.Nextcloud {
		t.Fatalf("sandbox = %+v, want every part", s)
	}
	cfg, err := swcfg.Load(context.Background(), s.ConfigFile, nil)
	if err != nil {
		t.Fatalf("the derived config does not load: %v", err)
	}
	in := cfg.Instance
	if in.RocketChat.BaseURL != s.RC.URL || !slices.Contains(in.RocketChat.WebhookTokens, "dev-webhook-token") || len(in.RocketChat.WebhookTokens) != 2 {
		t.Errorf("instance.rocketchat = %+v", in.RocketChat)
	}
	if in.Telegram.APIBaseURL != s.TG.URL || in.Telegram.ChatID != "424242" || in.Telegram.WebhookSecret == "" ||
		!slices.Equal(in.Approvals.ApproverTelegramIDs, []string{"424242"}) {
		t.Errorf("telegram = %+v, approvers %v", in.Telegram, in.Approvals.ApproverTelegramIDs)
	}
	for _, a := range cfg.Agents {
		rc, nc := a.Tools.RocketChat, a.Tools.Nextcloud
		if rc == nil || rc.Username != "agent-"+a.ID || rc.UserID == "" || rc.AuthToken == "" {
			t.Errorf("%s: RocketChat = %+v", a.ID, rc)
		}
		if nc == nil || nc.BaseURL != s.NC.URL || !strings.HasPrefix(nc.RootPath, "/Switchboard/") {
			t.Errorf("%s: Nextcloud = %+v", a.ID, nc)
		}
		// Documents.deliver needs a room for its link and a Collabora for
		// a format.
		if rc != nil && rc.DefaultRoom != Channel {
			t.Errorf("%s: defaultRoom = %q, want %q", a.ID, rc.DefaultRoom, Channel)
		}
		if nc != nil && nc.CollaboraURL != s.CO.URL {
			t.Errorf("%s: collaboraUrl = %q, want the sandbox's Collabora %q", a.ID, nc.CollaboraURL, s.CO.URL)
		}
	}
	if in.Console.Password == "" || in.Console.Password != s.ConsolePassword() {
		t.Errorf("console.password = %q, want the sandbox's (%q)", in.Console.Password, s.ConsolePassword())
	}
	if after, _ := os.ReadFile("../../../switchboard.example.yaml"); string(after) != string(before) {
		t.Error("the user's config file was changed")
	}
}

func TestStartParts(t *testing.T) {
	base := "instance:\n  name: x\n  toolApiToken: t\n  model: {provider: scripted}\n  dev: {sandbox: %s}\n%sagents:\n  - id: hermes\n    tools:\n%s"
	cases := []struct {
		name, sandbox, instance, tools string
		want                           *Parts // nil: no sandbox
	}{
		{"off without the key", "false", "", "      Workspace: {}\n", nil},
		{"all parts", "true", "", "      Workspace: {}\n", &Parts{true, true, true}},
		{"a real Telegram bot", "true", "  telegram: {botToken: \"123:abc\"}\n", "      Workspace: {}\n", &Parts{RocketChat: true, Nextcloud: true}},
		{"a real Nextcloud", "true", "",
			"      Nextcloud: {baseUrl: \"https://cloud.example.org\", username: u, appPassword: p, rootPath: /A}\n", &Parts{RocketChat: true, Telegram: true}},
		{"every part real", "true", "  telegram: {botToken: \"123:abc\"}\n  rocketchat: {baseUrl: \"https://chat.example.org\"}\n",
			"      Nextcloud: {baseUrl: \"https://cloud.example.org\", username: u, appPassword: p, rootPath: /A}\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := writeConfig(t, fmt.Sprintf(base, c.sandbox, c.instance, c.tools))
			s, err := start(t, cfg)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.want == nil && s != nil:
				t.Errorf("sandbox started with parts %+v, want none", s.Parts)
			case c.want != nil && (s == nil || s.Parts != *c.want):
				t.Errorf("sandbox = %+v, want parts %+v", s, *c.want)
			}
		})
	}
}

// A mistake in the user's config is reported against the user's file,
// not against the derived one.
func TestStartReportsTheUsersFile(t *testing.T) {
	cfg := writeConfig(t, "instance:\n  name: x\n  toolApiToken: t\n  model: {provider: scripted}\n  dev: {sandbox: true, schedular: false}\nagents: []\n")
	_, err := start(t, cfg)
	if err == nil || !strings.Contains(err.Error(), cfg) || !strings.Contains(err.Error(), "schedular") {
		t.Errorf("err = %v, want the problem in %s", err, cfg)
	}
}

// A console password in the user's config is kept; the sandbox sets none.
func TestStartKeepsTheUsersConsolePassword(t *testing.T) {
	cfg := writeConfig(t, "instance:\n  name: x\n  toolApiToken: t\n  model: {provider: scripted}\n  console: {password: my-own-console-pw}\n  dev: {sandbox: true}\nagents:\n  - id: hermes\n    tools:\n      Workspace: {}\n")
	s, err := start(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	derived, err := swcfg.Load(context.Background(), s.ConfigFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := derived.Instance.Console.Password; got != "my-own-console-pw" || s.ConsolePassword() != "" {
		t.Errorf("console.password = %q (sandbox's %q), want the user's kept", got, s.ConsolePassword())
	}
}

// When the sandbox Rocket.Chat refuses an agent's calls for its rate
// limit, the page's state names them; the file links the agents post
// (/f/<fileid>) open the file, and a room link opens the room.
func TestStateShowsRateLimitsAndLinksResolve(t *testing.T) {
	s, err := start(t, "../../../switchboard.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	s.Mount(mux)
	state := func() map[string]any {
		t.Helper()
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", "/dev/sandbox/api/state", nil))
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if hits := state()["rateLimited"].([]any); len(hits) != 0 {
		t.Fatalf("rateLimited = %v before any call", hits)
	}
	id, token := s.RC.AddUser("agent-busy", "bot", "user")
	for i := range 11 {
		req, _ := http.NewRequest("GET", s.RC.URL+"/api/v1/subscriptions.get", nil)
		req.Header.Set("X-User-Id", id)
		req.Header.Set("X-Auth-Token", token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := http.StatusOK; i == 10 {
			want = http.StatusTooManyRequests
			if resp.StatusCode != want {
				t.Fatalf("call %d = %d, want %d", i+1, resp.StatusCode, want)
			}
		}
	}
	hits := state()["rateLimited"].([]any)
	if len(hits) != 1 || hits[0].(map[string]any)["user"] != "agent-busy" || hits[0].(map[string]any)["route"] != "subscriptions.get" {
		t.Errorf("rateLimited = %v, want the refused call of agent-busy", hits)
	}

	if err := s.NC.MkdirAll("/Switchboard/Hermes/reports"); err != nil {
		t.Fatal(err)
	}
	if err := s.NC.WriteFile("/Switchboard/Hermes/reports/q3.md", []byte("# Q3")); err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	links := map[string]string{
		fmt.Sprintf("%s/f/%d", s.NC.URL, s.NC.FileID("/Switchboard/Hermes/reports/q3.md")): s.devURL + "/dev/sandbox/api/nextcloud/file?path=%2FSwitchboard%2FHermes%2Freports%2Fq3.md",
		s.RC.URL + "/channel/general": s.devURL + "/dev/sandbox/#room=general",
	}
	for link, want := range links {
		resp, err := noFollow.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || got != want {
			t.Errorf("GET %s = %d → %q, want a redirect to %q", link, resp.StatusCode, got, want)
		}
	}
	resp, err := noFollow.Get(s.NC.URL + "/f/424242")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a link to no file = %d, want 404", resp.StatusCode)
	}
}
