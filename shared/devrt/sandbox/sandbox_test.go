package sandbox

import (
	"context"
	"fmt"
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
