package config

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// base is a valid configuration; cases append to or replace parts of it.
const base = `instance:
  name: acme
  model: {provider: scripted}
agents:
  - id: hermes
`

// withRC is base plus a valid RocketChat block for hermes (lines 6–11).
const withRC = base + `    tools:
      RocketChat:
        baseUrl: https://chat.example.org
        userId: u
        authToken: tok
        username: agent-hermes
`

// withNC is base plus a valid Nextcloud block for hermes (lines 6–11).
const withNC = base + `    tools:
      Nextcloud:
        baseUrl: https://cloud.example.org
        username: sb
        appPassword: pw
        rootPath: /Switchboard/Hermes
`

func TestValidationErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // substrings of the error, each "t.yaml:<line>: <field>: <what>; <fix>" or a part of it
	}{
		{"name required", "instance:\n  model: {provider: scripted}\nagents:\n  - id: a\n",
			[]string{"t.yaml:1: instance.name: is required; name this installation"}},
		{"name not a slug", strings.Replace(base, "name: acme", "name: Acme Corp", 1),
			[]string{`t.yaml:2: instance.name: "Acme Corp" is not a valid name; use up to 40 lower-case letters`, `e.g. "acme-corp"`}},
		{"unknown key with suggestion", strings.Replace(base, "name: acme", "nmae: acme", 1),
			[]string{`t.yaml:2: instance.nmae: unknown key; did you mean "name"?`}},
		{"unknown key case", withRC + "        baseURL: https://x.example.org\n",
			[]string{`t.yaml:12: agents[0].tools.RocketChat.baseURL: unknown key; did you mean "baseUrl"?`}},
		{"unknown tool lists the known ones", base + "    tools:\n      Telegram: {}\n",
			[]string{"t.yaml:7: agents[0].tools.Telegram: unknown key; remove it; the keys allowed here are AgentCommAnalysis, Nextcloud, RocketChat, Taskboard, Workspace, ask_agent"}},
		{"the analysis block takes no keys", base + "    tools:\n      AgentCommAnalysis: {raw: true}\n",
			[]string{"t.yaml:7: agents[0].tools.AgentCommAnalysis.raw: unknown key"}},
		{"log retention CloudWatch does not offer", strings.Replace(base, "name: acme", "name: acme\n  logRetentionDays: 31", 1),
			[]string{"t.yaml:3: instance.logRetentionDays: 31 days is not a retention CloudWatch Logs offers; use one of 1, 3, 5, 7, 14, 30, 60,", "(default 30)"}},
		{"unknown top-level key", base + "agent: x\n",
			[]string{`t.yaml:6: agent: unknown key; did you mean "agents"?`}},
		{"duplicate key", strings.Replace(base, "  name: acme\n", "  name: acme\n  name: other\n", 1),
			[]string{"t.yaml:3: instance.name: appears twice (first at line 2); keep only one of them"}},
		{"wrong type: text for number", withRC + "        maxUploadMb: lots\n",
			[]string{`t.yaml:12: agents[0].tools.RocketChat.maxUploadMb: expected a whole number, got the text "lots"; write a number such as 25`}},
		{"wrong type: quoted number", withRC + "        maxUploadMb: \"25\"\n",
			[]string{`t.yaml:12: agents[0].tools.RocketChat.maxUploadMb: expected a whole number, got the text "25"; write the number without quotes`}},
		{"wrong type: fraction for int", withRC + "        maxUploadMb: 2.5\n",
			[]string{`t.yaml:12: agents[0].tools.RocketChat.maxUploadMb: expected a whole number, got "2.5"`}},
		{"wrong type: bool", withRC + "        mentionOnly: yes\n",
			[]string{`t.yaml:12: agents[0].tools.RocketChat.mentionOnly: expected true or false, got the text "yes"; write true or false`}},
		{"wrong type: list for text", strings.Replace(base, "name: acme", "name: [a, b]", 1),
			[]string{"t.yaml:2: instance.name: expected a text value, got a list; write a single value"}},
		{"wrong type: scalar for block", base + "    tools: yes\n",
			[]string{"t.yaml:6: agents[0].tools: expected a mapping (key: value pairs), got"}},
		{"wrong type: scalar for list", strings.Replace(base, "model:", "channels: RocketChat\n  model:", 1),
			[]string{"t.yaml:3: instance.channels: expected a list"}},
		{"maxUploadMb out of range", withRC + "        maxUploadMb: 2048\n",
			[]string{"t.yaml:12: agents[0].tools.RocketChat.maxUploadMb: 2048 is out of range; use a value from 1 to 1024 (upload limit in MB)"}},
		{"maxDownloadMb out of range", withRC + "        maxDownloadMb: 0\n",
			[]string{"t.yaml:12: agents[0].tools.RocketChat.maxDownloadMb: 0 is out of range; use a value from 1 to 1024"}},
		{"maxWakes out of range", withRC + "        maxWakesPerRoomPerHour: -1\n",
			[]string{"t.yaml:12: agents[0].tools.RocketChat.maxWakesPerRoomPerHour: -1 is out of range"}},
		{"maxSteps out of range", base + "    maxSteps: 0\n",
			[]string{"t.yaml:6: agents[0].maxSteps: 0 is out of range; use a value from 1 to 100"}},
		{"task watchdog beyond a year", strings.Replace(base, "model:", "taskboard: {watchdogHours: 9000}\n  model:", 1),
			[]string{"t.yaml:3: instance.taskboard.watchdogHours: 9000 is out of range; use a value from 0 to 8760 (0 turns the task watchdog off)"}},
		{"negative agent message retention", strings.Replace(base, "model:", "agentMessageRetentionDays: -1\n  model:", 1),
			[]string{"t.yaml:3: instance.agentMessageRetentionDays: -1 is out of range; use a value from 0 to 36500 (0 keeps agent messages forever)"}},
		{"share-limit wait zero", strings.Replace(base, "model:", "documents: {shareLimitWaitSeconds: 0}\n  model:", 1),
			[]string{"t.yaml:3: instance.documents.shareLimitWaitSeconds: 0 is out of range; use a value from 1 to 3600 (seconds a delivery's share first waits"}},
		{"share-limit wait negative", strings.Replace(base, "model:", "documents: {shareLimitWaitSeconds: -5}\n  model:", 1),
			[]string{"t.yaml:3: instance.documents.shareLimitWaitSeconds: -5 is out of range; use a value from 1 to 3600"}},
		{"share-limit wait not a whole number", strings.Replace(base, "model:", "documents: {shareLimitWaitSeconds: 1.5}\n  model:", 1),
			[]string{"t.yaml:3: instance.documents.shareLimitWaitSeconds: expected a whole number"}},
		{"askAgent timeout out of range", strings.Replace(base, "model:", "askAgent: {timeoutSeconds: 600}\n  model:", 1),
			[]string{"t.yaml:3: instance.askAgent.timeoutSeconds: 600 is out of range; use a value from 1 to 240"}},
		{"askAgent maxSteps out of range", strings.Replace(base, "model:", "askAgent: {maxSteps: 0}\n  model:", 1),
			[]string{"t.yaml:3: instance.askAgent.maxSteps: 0 is out of range; use a value from 1 to 100"}},
		{"ask_agent names an unknown agent", base + "    tools:\n      ask_agent: {agents: [nobody]}\n",
			[]string{`t.yaml:7: agents[0].tools.ask_agent.agents[0]: no agent "nobody"`}},
		{"ask_agent names the agent itself", base + "    tools:\n      ask_agent:\n        agents: [hermes]\n",
			[]string{`t.yaml:8: agents[0].tools.ask_agent.agents[0]: an agent cannot ask itself`}},
		{"negative budget", base + "    dailyBudgetUsd: -1\n",
			[]string{"t.yaml:6: agents[0].dailyBudgetUsd: -1 is out of range; use a USD amount from 0 to 100000"}},
		{"ttlHours out of range", strings.Replace(base, "model:", "approvals: {ttlHours: 0}\n  model:", 1),
			[]string{"t.yaml:3: instance.approvals.ttlHours: 0 is out of range; use a value from 1 to 720"}},
		{"workspace maxFileMb", base + "    tools:\n      Workspace: {maxFileMb: 5000}\n",
			[]string{"t.yaml:7: agents[0].tools.Workspace.maxFileMb: 5000 is out of range"}},
		{"unknown channel", strings.Replace(base, "model:", "channels: [RocketChat, Telegramm]\n  model:", 1),
			[]string{`t.yaml:3: instance.channels[1]: unknown channel "Telegramm"; did you mean "Telegram"?`}},
		{"duplicate channel", strings.Replace(base, "model:", "channels: [Telegram, Telegram]\n  model:", 1),
			[]string{"t.yaml:3: instance.channels[1]: channel Telegram is listed twice"}},
		{"empty channels", strings.Replace(base, "model:", "channels: []\n  model:", 1),
			[]string{"t.yaml:3: instance.channels: is empty, so nothing could reach the human; list at least one"}},
		{"model provider missing", "instance:\n  name: a\nagents:\n  - id: a\n",
			[]string{"t.yaml:1: instance.model.provider: is required; use openai, bedrock or scripted"}},
		{"model provider unknown", strings.Replace(base, "provider: scripted", "provider: opnai", 1),
			[]string{`t.yaml:3: instance.model.provider: unknown provider "opnai"; did you mean "openai"?`}},
		{"openai needs baseUrl and model", strings.Replace(base, "provider: scripted", "provider: openai", 1),
			[]string{"t.yaml:3: instance.model.baseUrl: is required for provider openai; give the chat-completions base URL",
				"t.yaml:3: instance.model.model: is required; give the model name"}},
		{"bedrock needs model", strings.Replace(base, "{provider: scripted}", "{provider: bedrock, region: eu-central-1}", 1),
			[]string{"t.yaml:3: instance.model.model: is required; give the Bedrock model id"}},
		{"agent override checked as merged", base + "    model: {provider: openai, model: m}\n",
			[]string{"t.yaml:6: agents[0].model.baseUrl: is required for provider openai"}},
		{"negative price", strings.Replace(base, "{provider: scripted}", "{provider: scripted, inputPer1M: -3}", 1),
			[]string{"t.yaml:3: instance.model.inputPer1M: -3 is out of range"}},
		{"url scheme", strings.Replace(base, "model:", "publicBaseUrl: ftp://x.example.org\n  model:", 1),
			[]string{`t.yaml:3: instance.publicBaseUrl: "ftp://x.example.org" does not start with http:// or https://; give`}},
		{"url without host", strings.Replace(base, "model:", "publicBaseUrl: https://\n  model:", 1),
			[]string{`t.yaml:3: instance.publicBaseUrl: "https:" has no host name`}},
		{"url with credentials", strings.Replace(withNC, "https://cloud.example.org", "https://sb:pw@cloud.example.org", 1),
			[]string{"t.yaml:8: agents[0].tools.Nextcloud.baseUrl: contains a user name or password; remove them from the URL"}},
		{"staging key and value", strings.Replace(base, "model:", "staging: {delete: maybe}\n  model:", 1),
			[]string{`t.yaml:3: instance.staging["delete"]: "delete" is not a Tool.action; write the tool and the action, e.g. "Nextcloud.delete"`,
				`t.yaml:3: instance.staging["delete"]: unknown decision "maybe"; use auto, approve or deny`}},
		{"agents missing", "instance:\n  name: a\n  model: {provider: scripted}\n",
			[]string{"t.yaml:1: agents: no agent is configured; add at least one agent"}},
		{"agent id required", base + "  - name: Nobody\n",
			[]string{"t.yaml:6: agents[1].id: is required; give the agent an id"}},
		{"agent id slug", strings.Replace(base, "id: hermes", "id: Hermes_1", 1),
			[]string{`t.yaml:5: agents[0].id: "Hermes_1" is not a valid agent id; use up to 40 lower-case letters`, `e.g. "hermes-1"`}},
		{"agent id unique", base + "  - id: hermes\n",
			[]string{`t.yaml:6: agents[1].id: agent id "hermes" is already used by agents[0]; give every agent its own id`}},
		{"RocketChat without any baseUrl", strings.Replace(withRC, "        baseUrl: https://chat.example.org\n", "", 1),
			[]string{"t.yaml:7: agents[0].tools.RocketChat.baseUrl: no Rocket.Chat server is configured for this agent; set baseUrl here or instance.rocketchat.baseUrl"}},
		{"RocketChat required fields", base + "    tools:\n      RocketChat: {baseUrl: https://chat.example.org}\n",
			[]string{"t.yaml:7: agents[0].tools.RocketChat.userId: is required",
				"t.yaml:7: agents[0].tools.RocketChat.authToken: is required; give the agent's personal access token",
				"t.yaml:7: agents[0].tools.RocketChat.username: is required"}},
		{"RocketChat username with @", strings.Replace(withRC, "username: agent-hermes", "username: \"@agent-hermes\"", 1),
			[]string{"t.yaml:11: agents[0].tools.RocketChat.username: starts with @; write the username without @, e.g. agent-hermes"}},
		{"RocketChat username unique", withRC + "  - id: atlas\n    tools:\n      RocketChat: {baseUrl: https://chat.example.org, userId: a, authToken: t, username: agent-hermes}\n",
			[]string{`t.yaml:14: agents[1].tools.RocketChat.username: Rocket.Chat user "agent-hermes" is already used by agents[0]`}},
		{"defaultRoom not allowed", withRC + "        allowedRooms: [a, b]\n        defaultRoom: c\n",
			[]string{`t.yaml:13: agents[0].tools.RocketChat.defaultRoom: "c" is not in allowedRooms, so the agent could not post there; add it to allowedRooms`}},
		{"empty room entry", withRC + "        allowedRooms: [a, \"\"]\n",
			[]string{`t.yaml:12: agents[0].tools.RocketChat.allowedRooms[1]: is empty; give a room name`}},
		{"Nextcloud required fields", base + "    tools:\n      Nextcloud: {}\n",
			[]string{"t.yaml:7: agents[0].tools.Nextcloud.baseUrl: is required; give the Nextcloud server",
				"t.yaml:7: agents[0].tools.Nextcloud.username: is required",
				"t.yaml:7: agents[0].tools.Nextcloud.appPassword: is required",
				"t.yaml:7: agents[0].tools.Nextcloud.rootPath: is required; give the agent's folder, e.g. /Switchboard/hermes"}},
		{"Nextcloud baseUrl does not fall back to Rocket.Chat", strings.Replace(
			strings.Replace(withNC, "        baseUrl: https://cloud.example.org\n", "", 1),
			"model:", "rocketchat: {baseUrl: https://chat.example.org}\n  model:", 1),
			[]string{"t.yaml:8: agents[0].tools.Nextcloud.baseUrl: is required"}},
		{"sharedReportsPath relative", withNC + "        sharedReportsPath: Switchboard/Berichte\n",
			[]string{`t.yaml:12: agents[0].tools.Nextcloud.sharedReportsPath: "Switchboard/Berichte" is not absolute`}},
		{"sharedReportsPath whole account", withNC + "        sharedReportsPath: /\n",
			[]string{`t.yaml:12: agents[0].tools.Nextcloud.sharedReportsPath: is the whole account`}},
		{"rootPath relative", strings.Replace(withNC, "/Switchboard/Hermes", "Switchboard/Hermes", 1),
			[]string{`t.yaml:11: agents[0].tools.Nextcloud.rootPath: "Switchboard/Hermes" is not absolute; start it with /, e.g. /Switchboard/Hermes`}},
		{"rootPath dot-dot", strings.Replace(withNC, "/Switchboard/Hermes", "/Switchboard/../Hermes", 1),
			[]string{`t.yaml:11: agents[0].tools.Nextcloud.rootPath: "/Switchboard/../Hermes" contains ..; give the folder itself`}},
		{"collaboraUrl", withNC + "        collaboraUrl: office.example.org\n",
			[]string{`t.yaml:12: agents[0].tools.Nextcloud.collaboraUrl: "office.example.org" does not start with http:// or https://`}},
		{"shareDefaultExpireDays", withNC + "        shareDefaultExpireDays: 0\n",
			[]string{"t.yaml:12: agents[0].tools.Nextcloud.shareDefaultExpireDays: 0 is out of range; use a value from 1 to 3650"}},
		{"admin pair", strings.Replace(base, "model:", "rocketchat: {adminUserId: x}\n  model:", 1),
			[]string{"t.yaml:3: instance.rocketchat.adminAuthToken: is required together with the other admin field; set both"}},
		{"telegram chat id", strings.Replace(base, "model:", "telegram: {chatId: richard}\n  model:", 1),
			[]string{`t.yaml:3: instance.telegram.chatId: "richard" is not a Telegram chat id; write the numeric chat id in quotes`}},
		{"allowed chat by username", strings.Replace(base, "model:", "telegram: {allowedChatIds: [\"@teamchat\"]}\n  model:", 1),
			[]string{`t.yaml:3: instance.telegram.allowedChatIds[0]: "@teamchat" is not a numeric Telegram chat id`}},
		{"approver id", strings.Replace(base, "model:", "approvals: {approverTelegramIds: [\"@richard\"]}\n  model:", 1),
			[]string{`t.yaml:3: instance.approvals.approverTelegramIds[0]: "@richard" is not a Telegram user id`}},
		{"signing key too short", strings.Replace(base, "model:", "approvals: {signingKey: short}\n  model:", 1),
			[]string{"t.yaml:3: instance.approvals.signingKey: is shorter than 16 characters, too weak to sign approval links; use at least 32 random characters"}},
		{"console password too short", strings.Replace(base, "model:", "console: {password: short}\n  model:", 1),
			[]string{"t.yaml:3: instance.console.password: is shorter than 12 characters"}},
		{"console session hours", strings.Replace(base, "model:", "console: {sessionHours: 0}\n  model:", 1),
			[]string{"t.yaml:3: instance.console.sessionHours: 0 is out of range; use a value from 1 to 168"}},
		{"webhook secret charset", strings.Replace(base, "model:", "telegram: {webhookSecret: \"not allowed!\"}\n  model:", 1),
			[]string{"t.yaml:3: instance.telegram.webhookSecret: Telegram accepts only A-Z"}},
		{"merge of a scalar", strings.Replace(base, "  - id: hermes\n", "  - id: hermes\n    <<: 5\n", 1),
			[]string{"t.yaml:6: agents[0]: a merge key (<<) can only merge mappings"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(context.Background(), "t.yaml", []byte(tc.yaml), noEnv)
			if err == nil {
				t.Fatalf("Parse succeeded (%+v), want an error containing %q", c, tc.want)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is not *config.Error: %v", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error:\n%v\ndoes not contain:\n%s", err, w)
				}
			}
			wantN := 0
			for _, w := range tc.want {
				if strings.HasPrefix(w, "t.yaml:") {
					wantN++
				}
			}
			if got, want := len(ce.Problems), wantN; got != want {
				t.Errorf("got %d problems, want %d:\n%v", got, want, err)
			}
		})
	}
}

// An empty AgentCommAnalysis block enables the tool; no block, no tool.
func TestAgentCommAnalysisBlock(t *testing.T) {
	doc := base + "    tools:\n      AgentCommAnalysis: {}\n  - id: atlas\n"
	c, err := Parse(context.Background(), "t.yaml", []byte(doc), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := c.Agent("hermes"); h.Tools.AgentCommAnalysis == nil {
		t.Error("hermes: AgentCommAnalysis: {} did not enable the tool")
	}
	if a, _ := c.Agent("atlas"); a.Tools.AgentCommAnalysis != nil {
		t.Error("atlas has the analysis tool without a block")
	}
}

func TestValidBaseVariants(t *testing.T) {
	for _, doc := range []string{base, withRC, withNC} {
		if _, err := Parse(context.Background(), "t.yaml", []byte(doc), noEnv); err != nil {
			t.Errorf("Parse(%q): %v", doc, err)
		}
	}
}

// All problems come at once, sorted by line, each naming file and line.
func TestManyProblemsAtOnce(t *testing.T) {
	_, err := Load(context.Background(), "testdata/many_problems.yaml", noEnv)
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error = %v, want *config.Error", err)
	}
	want := []string{
		"testdata/many_problems.yaml:2: instance.name:",
		"testdata/many_problems.yaml:3: instance.channels[1]: unknown channel \"Email\"",
		"testdata/many_problems.yaml:3: instance.channels[2]: channel RocketChat is listed twice",
		"testdata/many_problems.yaml:5: instance.model.provider: unknown provider \"opnai\"; did you mean \"openai\"?",
		"testdata/many_problems.yaml:7: instance.approvals.ttlHours: 0 is out of range",
		"testdata/many_problems.yaml:9: instance.staging[\"delete\"]: \"delete\" is not a Tool.action",
		"testdata/many_problems.yaml:9: instance.staging[\"delete\"]: unknown decision \"maybe\"",
		"testdata/many_problems.yaml:13: agents[0].tools.RocketChat.baseUrl: no Rocket.Chat server",
		"testdata/many_problems.yaml:17: agents[0].tools.RocketChat.maxUploadMb: 2048 is out of range",
		"testdata/many_problems.yaml:19: agents[0].tools.Nextcloud.baseUrl: \"ftp://cloud.example.org\" does not start with http:// or https://",
		"testdata/many_problems.yaml:22: agents[0].tools.Nextcloud.rootPath: \"Switchboard/../Hermes\" is not absolute",
		"testdata/many_problems.yaml:23: agents[1].id: agent id \"hermes\" is already used by agents[0]",
		"testdata/many_problems.yaml:24: agents[1].maxSteps: expected a whole number, got the text \"8\"; write the number without quotes",
		"testdata/many_problems.yaml:26: agents[1].tools.Telegram: unknown key",
	}
	if got := len(ce.Problems); got != len(want) {
		t.Errorf("got %d problems, want %d:\n%v", got, len(want), err)
	}
	for i, w := range want {
		if i < len(ce.Problems) && !strings.HasPrefix(ce.Problems[i].String(), w) {
			t.Errorf("problem %d = %q\nwant prefix  %q", i, ce.Problems[i].String(), w)
		}
	}
	if !strings.HasPrefix(err.Error(), "config: testdata/many_problems.yaml has 14 problems:") {
		t.Errorf("error header = %q", strings.SplitN(err.Error(), "\n", 2)[0])
	}
}

func TestSuggestions(t *testing.T) {
	known := []string{"baseUrl", "userId", "authToken", "username", "allowedRooms", "maxUploadMb"}
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"case only", "baseURL", "baseUrl", true},
		{"one letter off", "usrname", "username", true},
		{"transposed", "authTokne", "authToken", true},
		{"lowercase", "maxuploadmb", "maxUploadMb", true},
		{"nothing close", "colour", "", false},
	}
	for _, tc := range tests {
		got, ok := closest(tc.in, known)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%s: closest(%q) = %q, %v; want %q, %v", tc.name, tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// Aliases cannot blow a small file up into a huge configuration.
func TestAliasExpansionIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("instance: {name: x, model: {provider: scripted}}\nagents:\n  - &a {id: a, tools: {RocketChat: {allowedRooms: [")
	b.WriteString(strings.Repeat("r, ", 5000) + "r")
	b.WriteString("]}}}\n")
	b.WriteString(strings.Repeat("  - *a\n", 5000))
	_, err := Parse(context.Background(), "bomb.yaml", []byte(b.String()), noEnv)
	if err == nil || !strings.Contains(err.Error(), "bomb.yaml:3: agents[") || !strings.Contains(err.Error(), "expands to too many values") {
		t.Fatalf("err = %.500v", err)
	}
	var ce *Error
	if errors.As(err, &ce) && len(ce.Problems) != 1 {
		t.Errorf("got %d problems, want only the expansion", len(ce.Problems))
	}
}
