package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// noEnv is an environment with nothing set.
var noEnv = EnvResolver{LookupEnv: func(string) (string, bool) { return "", false }}

// envOf is an environment with exactly vars set.
func envOf(vars map[string]string) EnvResolver {
	return EnvResolver{LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
}

func mustLoad(t *testing.T, path string, r SecretResolver) *Config {
	t.Helper()
	c, err := Load(context.Background(), path, r)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return c
}

func TestLoadExample(t *testing.T) {
	// The shipped example must run out of the box: no variables, no AWS.
	c := mustLoad(t, "../../../switchboard.example.yaml", noEnv)
	if got, want := c.Instance.Name, "demo"; got != want {
		t.Errorf("instance.name = %q, want %q", got, want)
	}
	if got, want := c.Instance.Model.Provider, ProviderScripted; got != want {
		t.Errorf("model.provider = %q, want %q", got, want)
	}
	if !strings.Contains(c.Instance.Model.Reply, "{{agent}}") || !strings.Contains(c.Instance.Model.Reply, "{{message}}") {
		t.Errorf("scripted reply %q should use {{agent}} and {{message}}", c.Instance.Model.Reply)
	}
	if got, want := c.Instance.ToolAPIToken, "dev-tool-token"; got != want {
		t.Errorf("toolApiToken = %q, want %q", got, want)
	}
	if !c.Instance.Dev.Scheduler {
		t.Error("dev.scheduler = false, want true")
	}
	var ids []string
	for _, a := range c.Agents {
		ids = append(ids, a.ID)
		if a.Tools.Workspace == nil {
			t.Errorf("agent %s: Workspace not enabled", a.ID)
		}
		if a.Tools.RocketChat != nil || a.Tools.Nextcloud != nil {
			t.Errorf("agent %s: RocketChat/Nextcloud should be commented out in the example", a.ID)
		}
	}
	if want := []string{"hermes", "atlas"}; !slices.Equal(ids, want) {
		t.Errorf("agents = %v, want %v", ids, want)
	}
}

// Every key of the configuration is explained in the example, at least as a
// commented-out line.
func TestExampleMentionsEveryKey(t *testing.T) {
	data, err := os.ReadFile("../../../switchboard.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(t2 reflect.Type, path string) {
		for t2.Kind() == reflect.Pointer || t2.Kind() == reflect.Slice {
			t2 = t2.Elem()
		}
		if t2.Kind() != reflect.Struct || seen[t2] {
			return
		}
		seen[t2] = true
		for i := range t2.NumField() {
			f := t2.Field(i)
			name := yamlName(f)
			if name == "" {
				continue
			}
			if !strings.Contains(text, name+":") {
				t.Errorf("switchboard.example.yaml does not mention %s (%s)", name, fieldPath(path, name))
			}
			walk(f.Type, fieldPath(path, name))
		}
	}
	walk(reflect.TypeFor[Config](), "")
}

// The commented-out tool blocks in the example are valid once uncommented.
func TestExampleToolBlocksUncommented(t *testing.T) {
	data, err := os.ReadFile("../../../switchboard.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		switch {
		case trimmed == "# RocketChat:" || trimmed == "# Nextcloud:":
			in = true
		case in && (!strings.HasPrefix(trimmed, "#   ") || indent != 6):
			in = false
		}
		if in {
			line = strings.Repeat(" ", indent) + strings.TrimPrefix(trimmed, "# ")
		}
		out = append(out, line)
	}
	uncommented := strings.Join(out, "\n")
	c, err := Parse(context.Background(), "uncommented.yaml", []byte(uncommented), envOf(map[string]string{
		"HERMES_RC_TOKEN": "x", "NC_APP_PASSWORD": "y", "COLLABORA_PROXY_KEY": "z",
	}))
	if err != nil {
		t.Fatalf("uncommented example: %v", err)
	}
	h, _ := c.Agent("hermes")
	if h.Tools.RocketChat == nil || h.Tools.Nextcloud == nil {
		t.Fatalf("uncommenting did not enable both blocks: %+v", h.Tools)
	}
}

func TestDefaults(t *testing.T) {
	c := mustLoad(t, "testdata/minimal.yaml", noEnv)
	in := c.Instance
	checks := []struct {
		name      string
		got, want any
	}{
		{"channels", in.Channels, []string{"RocketChat", "Telegram"}},
		{"telegram.apiBaseUrl", in.Telegram.APIBaseURL, "https://api.telegram.org"},
		{"approvals.ttlHours", in.Approvals.TTLHours, 24},
		{"console.sessionHours", in.Console.SessionHours, 12},
		{"auditRetentionDays", in.AuditRetentionDays, 365},
		{"logRetentionDays", in.LogRetentionDays, 30},
		{"agentMessageRetentionDays", in.AgentMessageRetentionDays, 0},
		{"askAgent.timeoutSeconds", in.AskAgent.TimeoutSeconds, 60},
		{"askAgent.maxSteps", in.AskAgent.MaxSteps, 5},
		{"ask_agent off", c.Agents[0].Tools.AskAgent == nil, true},
		{"taskboard.watchdogHours", in.Taskboard.WatchdogHours, 24},
		{"documents.shareLimitWaitSeconds", in.Documents.ShareLimitWaitSeconds, 60},
		{"Taskboard (not configured)", c.Agents[0].Tools.Taskboard == nil, true},
		{"dev.scheduler", in.Dev.Scheduler, true},
		{"dev.workers", in.Dev.Workers, 0},
		{"model.reply", in.Model.Reply, DefaultScriptedReply},
		{"agent.name", c.Agents[0].Name, "solo"},
		{"agent.maxSteps", c.Agents[0].MaxSteps, 8},
		{"RocketChat.baseUrl (trailing slash trimmed)", c.Agents[0].Tools.RocketChat.BaseURL, "https://chat.example.org"},
		{"RocketChat.mentionOnly", c.Agents[0].Tools.RocketChat.MentionOnly, true},
		{"RocketChat.maxWakesPerRoomPerHour", c.Agents[0].Tools.RocketChat.MaxWakesPerRoomPerHour, 12},
		{"RocketChat.maxMessagesPerRoom", c.Agents[0].Tools.RocketChat.MaxMessagesPerRoom, 20},
		{"RocketChat.initialLookbackMinutes", c.Agents[0].Tools.RocketChat.InitialLookbackMinutes, 5},
		{"RocketChat.maxUploadMb", c.Agents[0].Tools.RocketChat.MaxUploadMB, 25},
		{"RocketChat.maxDownloadMb", c.Agents[0].Tools.RocketChat.MaxDownloadMB, 25},
		{"RocketChat.allowDangerousDownloads", c.Agents[0].Tools.RocketChat.AllowDangerousDownloads, false},
		{"Nextcloud.rootPath (cleaned)", c.Agents[0].Tools.Nextcloud.RootPath, "/Switchboard/Solo"},
		{"Nextcloud.allowPublicShares", c.Agents[0].Tools.Nextcloud.AllowPublicShares, false},
		{"Nextcloud.shareDefaultExpireDays", c.Agents[0].Tools.Nextcloud.ShareDefaultExpireDays, 14},
		{"Nextcloud.reportsMaxAgeDays", c.Agents[0].Tools.Nextcloud.ReportsMaxAgeDays, 90},
		{"Workspace.maxFileMb", c.Agents[0].Tools.Workspace.MaxFileMB, 25},
		{"File", c.File, "testdata/minimal.yaml"},
	}
	for _, tc := range checks {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.name, tc.got, tc.want)
		}
	}
}

var fullEnv = map[string]string{
	"T_TOOL_TOKEN": "tool-secret", "T_MODEL_KEY": "model-secret", "T_RC_WEBHOOK_1": "webhook-secret-1",
	"T_RC_ADMIN": "admin-secret", "T_TG_BOT": "123:bot-secret", "T_TG_SECRET": "tg-webhook_secret",
	"T_APPROVAL_KEY": "approval-key-0123456789", "T_HERMES_RC": "hermes-rc-secret",
	"T_NC_PASSWORD": "nc-secret", "T_ATLAS_RC": "atlas-rc-secret",
}

func TestFullConfig(t *testing.T) {
	c := mustLoad(t, "testdata/full.yaml", envOf(fullEnv))
	in := c.Instance
	h, ok := c.Agent("hermes")
	if !ok {
		t.Fatal("Agent(hermes) not found")
	}
	a, _ := c.Agent("atlas")
	checks := []struct {
		name      string
		got, want any
	}{
		{"publicBaseUrl", in.PublicBaseURL, "https://abc.lambda-url.eu-central-1.on.aws"},
		{"toolApiToken resolved", in.ToolAPIToken, "tool-secret"},
		{"channels kept in order", in.Channels, []string{"Telegram", "RocketChat"}},
		{"human.telegramChatId", in.Human.TelegramChatID, "123456789"},
		{"webhookTokens resolved", in.RocketChat.WebhookTokens, []string{"webhook-secret-1", "rotated-inline-webhook"}},
		{"telegram.chatId", in.Telegram.ChatID, "-1001234567890"},
		{"approvals.ttlHours", in.Approvals.TTLHours, 48},
		{"auditRetentionDays explicit 0 wins over default", in.AuditRetentionDays, 0},
		{"staging", in.Staging, map[string]string{"Nextcloud.delete": "deny", "RocketChat.send_file": "auto"}},
		{"dev.scheduler explicit false", in.Dev.Scheduler, false},
		{"dev.workers", in.Dev.Workers, 3},
		{"hermes.name", h.Name, "Hermes"},
		{"hermes.maxSteps", h.MaxSteps, 12},
		{"hermes RocketChat.baseUrl falls back to instance", h.Tools.RocketChat.BaseURL, "https://chat.example.org"},
		{"hermes RocketChat.mentionOnly explicit false", h.Tools.RocketChat.MentionOnly, false},
		{"hermes RocketChat.initialLookbackMinutes explicit 0", h.Tools.RocketChat.InitialLookbackMinutes, 0},
		{"hermes RocketChat.authToken resolved", h.Tools.RocketChat.AuthToken, "hermes-rc-secret"},
		{"hermes RocketChat.respondToAllRooms", h.Tools.RocketChat.RespondToAllRooms, []string{"finanz-team"}},
		{"hermes Nextcloud.appPassword resolved", h.Tools.Nextcloud.AppPassword, "nc-secret"},
		{"hermes Workspace.maxFileMb", h.Tools.Workspace.MaxFileMB, 50},
		{"hermes Taskboard enabled by an empty block", h.Tools.Taskboard != nil, true},
		{"atlas has no Taskboard", a.Tools.Taskboard == nil, true},
		{"taskboard.watchdogHours explicit 0 (off)", in.Taskboard.WatchdogHours, 0},
		{"documents.shareLimitWaitSeconds", in.Documents.ShareLimitWaitSeconds, 2},
		{"atlas RocketChat.baseUrl own", a.Tools.RocketChat.BaseURL, "https://other-chat.example.org"},
		{"atlas has no Nextcloud", a.Tools.Nextcloud == nil, true},
		{"atlas has no Workspace", a.Tools.Workspace == nil, true},
	}
	for _, tc := range checks {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.name, tc.got, tc.want)
		}
	}
	if _, ok := c.Agent("nobody"); ok {
		t.Error("Agent(nobody) found")
	}
}

func TestEffectiveModel(t *testing.T) {
	c := mustLoad(t, "testdata/full.yaml", envOf(fullEnv))
	h, _ := c.Agent("hermes")
	a, _ := c.Agent("atlas")
	tests := []struct {
		name string
		got  Model
		want Model
	}{
		{"same provider: overlay", h.EffectiveModel(c.Instance), Model{Provider: "openai", BaseURL: "http://127.0.0.1:11434/v1",
			APIKey: "model-secret", Model: "llama3.1:70b", InputPer1M: 0.5, OutputPer1M: 1.5}},
		{"other provider: stands alone", a.EffectiveModel(c.Instance), Model{Provider: "bedrock",
			Model: "anthropic.claude-3-5-sonnet-20240620-v1:0", Region: "eu-central-1"}},
		{"no override: instance model", (&Agent{}).EffectiveModel(c.Instance), c.Instance.Model},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, tc.got, tc.want)
		}
	}
}

func TestSecrets(t *testing.T) {
	c := mustLoad(t, "testdata/full.yaml", envOf(fullEnv))
	got := c.Secrets()
	slices.Sort(got)
	want := []string{
		"123:bot-secret", "admin-secret", "approval-key-0123456789", "atlas-rc-secret", "hermes-rc-secret",
		"model-secret", "nc-secret", "rotated-inline-webhook", "tg-webhook_secret", "tool-secret", "webhook-secret-1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Secrets() = %q\nwant       %q", got, want)
	}
	for _, s := range got {
		if strings.HasPrefix(s, "env:") || strings.HasPrefix(s, "secretsmanager:") {
			t.Errorf("Secrets() holds an unresolved reference %q", s)
		}
	}
}

func TestJSON(t *testing.T) {
	c := mustLoad(t, "testdata/config.json", noEnv)
	if got, want := c.Instance.Name, "json-demo"; got != want {
		t.Errorf("name = %q, want %q", got, want)
	}
	a, _ := c.Agent("atlas")
	if a.DailyBudgetUSD != 2.5 || a.Tools.Workspace != nil {
		t.Errorf("atlas = %+v", a)
	}
	if h, _ := c.Agent("hermes"); h.Tools.Workspace == nil || h.Tools.Workspace.MaxFileMB != 25 {
		t.Errorf("hermes Workspace = %+v, want enabled with defaults", h.Tools.Workspace)
	}
}

func TestAnchorsAndMergeKeys(t *testing.T) {
	c := mustLoad(t, "testdata/anchors.yaml", noEnv)
	a, _ := c.Agent("atlas")
	rc := a.Tools.RocketChat
	if rc.BaseURL != "https://chat.example.org" || rc.MaxUploadMB != 10 || rc.Username != "agent-atlas" ||
		!slices.Equal(rc.AgentUsernames, []string{"agent-hermes", "agent-atlas"}) || rc.MaxDownloadMB != 25 {
		t.Errorf("merged block = %+v", rc)
	}
}

func TestLoadFileProblems(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		path string
		want []string
	}{
		{"missing", filepath.Join(dir, "nope.yaml"), []string{"nope.yaml", "does not exist", "copy switchboard.example.yaml"}},
		{"empty", write("empty.yaml", ""), []string{"empty.yaml", "is empty", "copy switchboard.example.yaml"}},
		{"blank", write("blank.yaml", "\n  \n"), []string{"blank.yaml", "is empty", "copy switchboard.example.yaml"}},
		{"comments only", write("comments.yaml", "# nothing here\n"), []string{"comments.yaml", "only comments", "copy switchboard.example.yaml"}},
		{"directory", dir, []string{"is a directory"}},
		{"no path", "", []string{"no configuration file given", "SWITCHBOARD_CONFIG"}},
		{"not a mapping", write("list.yaml", "- a\n- b\n"), []string{"list.yaml:1: the top level must be a mapping"}},
		{"syntax", write("bad.yaml", "instance:\n  name: [\n"), []string{"bad.yaml:", "not valid YAML"}},
		{"two documents", write("two.yaml", "instance: {name: a}\n---\nagents: []\n"), []string{"two.yaml:", "second document"}},
		{"too large", write("big.yaml", "# "+strings.Repeat("x", MaxFileBytes)+"\n"), []string{"big.yaml", "larger than"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(context.Background(), tc.path, noEnv)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("error %T is not *config.Error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}
