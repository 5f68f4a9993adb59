package config

import (
	"fmt"
	"maps"
	"math"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
	"github.com/switchboard-dev/switchboard/shared/platform/tgtoken"
)

var (
	slugRe         = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	stagingKeyRe   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*\.[a-z][a-z0-9_]*$`)
	telegramIDRe   = regexp.MustCompile(`^-?[0-9]+$`)
	telegramChatRe = regexp.MustCompile(`^(-?[0-9]+|@[A-Za-z][A-Za-z0-9_]{3,})$`)
	// Telegram accepts only these characters in a webhook secret_token.
)

const maxSlug = 40

// normalize fills derived values: trailing slashes off base URLs, agent
// names, the scripted reply, and the Rocket.Chat base URL fallback.
//
// An agent's RocketChat.baseUrl falls back to instance.rocketchat.baseUrl:
// all agents usually live on one chat server. Nextcloud.baseUrl has no
// fallback (there is no instance-wide Nextcloud block, and a chat server's
// URL is never a Nextcloud), so it is required in every Nextcloud block.
func normalize(c *Config) {
	in := &c.Instance
	trim := func(s *string) { *s = strings.TrimRight(strings.TrimSpace(*s), "/") }
	trim(&in.PublicBaseURL)
	trim(&in.Model.BaseURL)
	trim(&in.RocketChat.BaseURL)
	trim(&in.Telegram.APIBaseURL)
	defaultReply(&in.Model)
	for i := range c.Agents {
		a := &c.Agents[i]
		if a.Name == "" {
			a.Name = a.ID
		}
		if a.Model != nil {
			trim(&a.Model.BaseURL)
			if a.Model.Provider != "" {
				defaultReply(a.Model)
			}
		}
		if rc := a.Tools.RocketChat; rc != nil {
			trim(&rc.BaseURL)
			if rc.BaseURL == "" {
				rc.BaseURL = in.RocketChat.BaseURL
			}
		}
		if nc := a.Tools.Nextcloud; nc != nil {
			trim(&nc.BaseURL)
			trim(&nc.CollaboraURL)
		}
	}
}

func defaultReply(m *Model) {
	if m.Provider == ProviderScripted && m.Reply == "" {
		m.Reply = DefaultScriptedReply
	}
}

// validate checks everything that does not need secret values.
func validate(c *Config, ps *problems) {
	in := &c.Instance

	switch {
	case in.Name == "":
		ps.at("instance.name", "is required", `name this installation, e.g. name: acme (lower-case letters, digits and "-")`)
	case !isSlug(in.Name):
		ps.at("instance.name", fmt.Sprintf("%q is not a valid name", shorten(in.Name)), slugFix(in.Name))
	}
	checkURL(ps, "instance.publicBaseUrl", in.PublicBaseURL, false, "the function URL or the dev listener, e.g. https://abc.lambda-url.eu-central-1.on.aws")

	if len(in.Channels) == 0 {
		ps.at("instance.channels", "is empty, so nothing could reach the human", "list at least one of RocketChat, Telegram (or remove the key for the default [RocketChat, Telegram])")
	}
	seenCh := map[string]bool{}
	for i, ch := range in.Channels {
		p := indexPath("instance.channels", i)
		switch {
		case ch != ChannelRocketChat && ch != ChannelTelegram:
			fix := "use RocketChat or Telegram"
			if s, ok := closest(ch, []string{ChannelRocketChat, ChannelTelegram}); ok {
				fix = fmt.Sprintf("did you mean %q?", s)
			}
			ps.at(p, fmt.Sprintf("unknown channel %q", shorten(ch)), fix)
		case seenCh[ch]:
			ps.at(p, fmt.Sprintf("channel %s is listed twice", ch), "list each channel once, in the order to try them")
		}
		seenCh[ch] = true
	}

	if u := in.Human.RocketChatUsername; strings.HasPrefix(u, "@") {
		ps.at("instance.human.rocketchatUsername", "starts with @", "write the username without @, e.g. "+strings.TrimPrefix(u, "@"))
	}
	checkChatID(ps, "instance.human.telegramChatId", in.Human.TelegramChatID)

	validateModel(ps, "instance.model", in.Model, true)

	checkURL(ps, "instance.rocketchat.baseUrl", in.RocketChat.BaseURL, false, "the Rocket.Chat server, e.g. https://chat.example.org")
	for i, t := range in.RocketChat.WebhookTokens {
		if t == "" {
			ps.at(indexPath("instance.rocketchat.webhookTokens", i), "is empty", "give the outgoing webhook's token (e.g. env:RC_WEBHOOK_TOKEN) or remove the entry")
		}
	}
	if n := in.RocketChat.MaxMessageLength; n != 0 && (n < 500 || n > 1000000) {
		ps.at("instance.rocketchat.maxMessageLength", fmt.Sprintf("is %d", n), "give the server's Message_MaxAllowedSize (Administration → Message), between 500 and 1000000; default 5000")
	}
	if n := in.RocketChat.MaxReplyParts; n < 0 || n > 50 {
		ps.at("instance.rocketchat.maxReplyParts", fmt.Sprintf("is %d", n), "give 1 to 50 (default 4): longer answers go as a Markdown file")
	}
	if (in.RocketChat.AdminUserID == "") != (in.RocketChat.AdminAuthToken == "") {
		missing := "instance.rocketchat.adminAuthToken"
		if in.RocketChat.AdminUserID == "" {
			missing = "instance.rocketchat.adminUserId"
		}
		ps.at(missing, "is required together with the other admin field", "set both adminUserId and adminAuthToken (provisioning only), or neither")
	}

	checkURL(ps, "instance.telegram.apiBaseUrl", in.Telegram.APIBaseURL, true, "https://api.telegram.org, or a local fake for tests")
	checkChatID(ps, "instance.telegram.chatId", in.Telegram.ChatID)
	for i, id := range in.Telegram.AllowedChatIDs {
		// Incoming updates carry the numeric chat id; a @username can change
		// hands, so the allow list takes numeric ids only.
		if id != "" && !telegramNumericChatRe.MatchString(id) {
			ps.at(indexPath("instance.telegram.allowedChatIds", i), fmt.Sprintf("%q is not a numeric Telegram chat id", shorten(id)),
				`write the numeric chat id in quotes, e.g. "123456789" (groups start with -100); usernames are not accepted here`)
		}
	}

	checkUSD(ps, "instance.chainBudgetUsd", in.ChainBudgetUSD, "use a USD amount from 0 to 100000 (0 = no chain budget)")
	checkRange(ps, "instance.console.sessionHours", in.Console.SessionHours, 1, 168, "a console login lasts this many hours")
	checkRange(ps, "instance.approvals.ttlHours", in.Approvals.TTLHours, 1, 720, "approval links expire after this many hours")
	seenHours := map[float64]bool{}
	for i, h := range in.Approvals.AllowForHours {
		switch {
		case h <= 0 || h > 168:
			ps.at(indexPath("instance.approvals.allowForHours", i), fmt.Sprintf("%v is out of range", h),
				"use hours above 0 and at most 168 (fractions are fine: 0.5 is 30 minutes)")
		case seenHours[h]:
			ps.at(indexPath("instance.approvals.allowForHours", i), fmt.Sprintf("%v is listed twice", h), "list each choice once")
		}
		seenHours[h] = true
	}
	for i, id := range in.Approvals.ApproverTelegramIDs {
		if !telegramIDRe.MatchString(id) {
			ps.at(indexPath("instance.approvals.approverTelegramIds", i), fmt.Sprintf("%q is not a Telegram user id", shorten(id)),
				`write the numeric user id in quotes, e.g. "123456789" (ask @userinfobot)`)
		}
	}

	checkRange(ps, "instance.agentMessageRetentionDays", in.AgentMessageRetentionDays, 0, 36500, "0 keeps agent messages forever")
	checkRange(ps, "instance.askAgent.timeoutSeconds", in.AskAgent.TimeoutSeconds, 1, MaxAskTimeoutSeconds, "seconds an asking agent waits for the answer")
	checkRange(ps, "instance.askAgent.maxSteps", in.AskAgent.MaxSteps, 1, 100, "model turns of a run that answers a question")
	checkRange(ps, "instance.auditRetentionDays", in.AuditRetentionDays, 0, 36500, "0 keeps audit entries forever")
	if err := deploy.CheckLogRetentionDays(in.LogRetentionDays); err != nil {
		what, fix, _ := strings.Cut(err.Error(), "; ")
		ps.at("instance.logRetentionDays", what, fix)
	}
	checkRange(ps, "instance.taskboard.watchdogHours", in.Taskboard.WatchdogHours, 0, 8760, "0 turns the task watchdog off")
	checkRange(ps, "instance.documents.shareLimitWaitSeconds", in.Documents.ShareLimitWaitSeconds, 1, MaxShareLimitWaitSeconds,
		"seconds a delivery's share first waits for Nextcloud's share limit; then twice, four and four times that")

	keys := make([]string, 0, len(in.Staging))
	for k := range in.Staging {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := mapPath("instance.staging", k)
		if !stagingKeyRe.MatchString(k) {
			ps.at(p, fmt.Sprintf("%q is not a Tool.action", shorten(k)), `write the tool and the action, e.g. "Nextcloud.delete" or "RocketChat.send_file"`)
		}
		switch v := in.Staging[k]; v {
		case "auto", "approve", "deny":
		default:
			ps.at(p, fmt.Sprintf("unknown decision %q", shorten(v)), "use auto, approve or deny")
		}
	}

	checkRange(ps, "instance.dev.workers", in.Dev.Workers, 0, 64, "0 lets the dev runtime choose")
	validateTelemetry(ps, in.Telemetry)

	validateAgents(c, ps)
	validateMCP(c, ps)
	checkSecretRefs(c, ps)
}

func validateAgents(c *Config, ps *problems) {
	if len(c.Agents) == 0 {
		if _, written := ps.lines["agents"]; written || len(ps.list) == 0 {
			ps.at("agents", "no agent is configured", "add at least one agent under agents: with an id (see switchboard.example.yaml)")
		}
		return
	}
	ids := map[string]string{}     // id → path of its first use
	rcUsers := map[string]string{} // Rocket.Chat username → agent path
	for i := range c.Agents {
		a := &c.Agents[i]
		ap := indexPath("agents", i)
		switch {
		case a.ID == "":
			ps.at(ap+".id", "is required", `give the agent an id, e.g. id: hermes (lower-case letters, digits and "-")`)
		case !isSlug(a.ID):
			ps.at(ap+".id", fmt.Sprintf("%q is not a valid agent id", shorten(a.ID)), slugFix(a.ID))
		default:
			if first, dup := ids[a.ID]; dup {
				ps.at(ap+".id", fmt.Sprintf("agent id %q is already used by %s", a.ID, first), "give every agent its own id")
			} else {
				ids[a.ID] = ap
			}
		}
		if b := a.ChainBudgetUSD; b != nil {
			checkUSD(ps, ap+".chainBudgetUsd", *b, "use a USD amount from 0 to 100000 (0 = no chain budget for this agent; leave it out for the instance's)")
		}
		if a.DailyBudgetUSD < 0 || a.DailyBudgetUSD > 100000 {
			ps.at(ap+".dailyBudgetUsd", fmt.Sprintf("%g is out of range", a.DailyBudgetUSD), "use a USD amount from 0 to 100000 (0 = no daily limit)")
		}
		checkRange(ps, ap+".maxSteps", a.MaxSteps, 1, 100, "model turns per run")
		if a.Model != nil {
			// Checked as the agent will run it, reported at the override.
			validateModel(ps, ap+".model", a.EffectiveModel(c.Instance), false)
		}

		t := a.Tools
		if rc := t.RocketChat; rc != nil {
			p := ap + ".tools.RocketChat"
			if rc.BaseURL == "" {
				ps.at(p+".baseUrl", "no Rocket.Chat server is configured for this agent", "set baseUrl here or instance.rocketchat.baseUrl (e.g. https://chat.example.org)")
			} else if _, written := ps.lines[p+".baseUrl"]; written {
				checkURL(ps, p+".baseUrl", rc.BaseURL, true, "the Rocket.Chat server, e.g. https://chat.example.org")
			}
			required(ps, p+".userId", rc.UserID, "the agent user's id (switchboard provision-agent prints it)")
			required(ps, p+".authToken", rc.AuthToken, "the agent's personal access token, e.g. env:HERMES_RC_TOKEN or secretsmanager:switchboard/hermes-rc")
			switch {
			case rc.Username == "":
				required(ps, p+".username", rc.Username, "the agent's Rocket.Chat username, e.g. agent-"+a.ID+" (the mention filter needs it)")
			case strings.HasPrefix(rc.Username, "@"):
				ps.at(p+".username", "starts with @", "write the username without @, e.g. "+strings.TrimPrefix(rc.Username, "@"))
			default:
				if other, dup := rcUsers[rc.Username]; dup {
					ps.at(p+".username", fmt.Sprintf("Rocket.Chat user %q is already used by %s", rc.Username, other), "give every agent its own Rocket.Chat user")
				} else {
					rcUsers[rc.Username] = ap
				}
			}
			nonEmptyItems(ps, p+".allowedRooms", rc.AllowedRooms, "a room name, room id or a DM partner's username")
			nonEmptyItems(ps, p+".agentUsernames", rc.AgentUsernames, "an agent's Rocket.Chat username")
			nonEmptyItems(ps, p+".respondToAllRooms", rc.RespondToAllRooms, "a room name or id")
			if rc.DefaultRoom != "" && len(rc.AllowedRooms) > 0 && !slices.Contains(rc.AllowedRooms, rc.DefaultRoom) {
				ps.at(p+".defaultRoom", fmt.Sprintf("%q is not in allowedRooms, so the agent could not post there", shorten(rc.DefaultRoom)), "add it to allowedRooms or choose a room from that list")
			}
			checkRange(ps, p+".maxWakesPerRoomPerHour", rc.MaxWakesPerRoomPerHour, 1, 3600, "wakes per room and hour before the agent stays silent")
			checkRange(ps, p+".maxMessagesPerRoom", rc.MaxMessagesPerRoom, 1, 1000, "messages read per room and tick")
			checkRange(ps, p+".initialLookbackMinutes", rc.InitialLookbackMinutes, 0, 10080, "how far the first fetch of a room looks back")
			checkRange(ps, p+".maxUploadMb", rc.MaxUploadMB, 1, 1024, "upload limit in MB")
			checkRange(ps, p+".maxDownloadMb", rc.MaxDownloadMB, 1, 1024, "download limit in MB")
		}
		if nc := t.Nextcloud; nc != nil {
			p := ap + ".tools.Nextcloud"
			if nc.BaseURL == "" {
				required(ps, p+".baseUrl", nc.BaseURL, "the Nextcloud server, e.g. https://cloud.example.org")
			} else {
				checkURL(ps, p+".baseUrl", nc.BaseURL, true, "the Nextcloud server, e.g. https://cloud.example.org")
			}
			required(ps, p+".username", nc.Username, "the Nextcloud account the agent writes as, e.g. switchboard")
			required(ps, p+".appPassword", nc.AppPassword, "an app password (Nextcloud → Settings → Security), e.g. env:NC_APP_PASSWORD")
			checkRootPath(ps, p+".rootPath", &nc.RootPath, a.Name)
			if nc.SharedReportsPath != "" {
				checkRootPath(ps, p+".sharedReportsPath", &nc.SharedReportsPath, a.Name)
				if nc.SharedReportsPath == "/" {
					ps.at(p+".sharedReportsPath", "is the whole account", "name the shared reports folder, e.g. /Switchboard/Berichte")
				}
			}
			checkURL(ps, p+".collaboraUrl", nc.CollaboraURL, false, "the Collabora Online server, e.g. https://office.example.org")
			checkCollaboraHeaders(ps, p, nc)
			checkRange(ps, p+".shareDefaultExpireDays", nc.ShareDefaultExpireDays, 1, 3650, "days until a new public link expires")
			checkRange(ps, p+".reportsMaxAgeDays", nc.ReportsMaxAgeDays, 1, 36500, "reports older than this are cleaned up")
		}
		if ws := t.Workspace; ws != nil {
			checkRange(ps, ap+".tools.Workspace.maxFileMb", ws.MaxFileMB, 1, 1024, "file size limit in MB")
		}
	}
	// After the loop: an ask_agent list may name agents defined below it.
	for i := range c.Agents {
		a := &c.Agents[i]
		if t := a.Tools.AskAgent; t != nil {
			p := indexPath("agents", i) + ".tools.ask_agent.agents"
			for j, id := range t.Agents {
				switch _, known := ids[id]; {
				case id == a.ID:
					ps.at(indexPath(p, j), "an agent cannot ask itself", "remove "+id+" from the list")
				case !known:
					ps.at(indexPath(p, j), fmt.Sprintf("no agent %q", shorten(id)), "name the id of another agent of this file, or leave the list empty to allow asking every other agent")
				}
			}
		}
	}
}

// validateModel checks a model block. top marks the instance model, which
// must name a provider; an agent override is checked as merged.
func validateModel(ps *problems, p string, m Model, top bool) {
	switch m.Provider {
	case "":
		if top {
			ps.at(p+".provider", "is required", "use openai, bedrock or scripted (scripted needs no credentials)")
		}
		return
	case ProviderOpenAI:
		if m.BaseURL == "" {
			ps.at(p+".baseUrl", "is required for provider openai", "give the chat-completions base URL, e.g. http://127.0.0.1:11434/v1")
		} else {
			checkURL(ps, p+".baseUrl", m.BaseURL, true, "e.g. https://api.openai.com/v1")
		}
		required(ps, p+".model", m.Model, "the model name, e.g. gpt-4o-mini or llama3.1")
	case ProviderBedrock:
		required(ps, p+".model", m.Model, "the Bedrock model id, e.g. anthropic.claude-3-5-sonnet-20240620-v1:0")
		checkURL(ps, p+".baseUrl", m.BaseURL, false, "a Bedrock runtime endpoint, or leave it empty")
	case ProviderScripted:
	default:
		fix := "use openai, bedrock or scripted"
		if s, ok := closest(m.Provider, []string{ProviderOpenAI, ProviderBedrock, ProviderScripted}); ok {
			fix = fmt.Sprintf("did you mean %q?", s)
		}
		ps.at(p+".provider", fmt.Sprintf("unknown provider %q", shorten(m.Provider)), fix)
	}
	if m.InputPer1M < 0 || m.InputPer1M > 10000 {
		ps.at(p+".inputPer1M", fmt.Sprintf("%g is out of range", m.InputPer1M), "give the USD price per million input tokens, 0 to 10000")
	}
	if m.OutputPer1M < 0 || m.OutputPer1M > 10000 {
		ps.at(p+".outputPer1M", fmt.Sprintf("%g is out of range", m.OutputPer1M), "give the USD price per million output tokens, 0 to 10000")
	}
}

// validateResolved checks secret values after resolution.
func validateResolved(c *Config, ps *problems) {
	validateMCPResolved(c, ps)
	if p := c.Instance.Console.Password; p != "" && len(p) < 12 {
		ps.at("instance.console.password", "is shorter than 12 characters, too weak for a login on the internet",
			"use at least 16 random characters, e.g. from: openssl rand -base64 18")
	}
	if k := c.Instance.Approvals.SigningKey; k != "" && len(k) < 16 {
		ps.at("instance.approvals.signingKey", "is shorter than 16 characters, too weak to sign approval links",
			"use at least 32 random characters, e.g. from: openssl rand -hex 32")
	}
	if s := c.Instance.Telegram.WebhookSecret; s != "" && !tgtoken.IsSecret(s) {
		ps.at("instance.telegram.webhookSecret", "Telegram accepts only A-Z, a-z, 0-9, _ and - (1 to 256 characters) in a webhook secret",
			"generate one with: openssl rand -hex 32")
	}
}

func isSlug(s string) bool { return len(s) <= maxSlug && slugRe.MatchString(s) }

func slugFix(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	sug := strings.Trim(b.String(), "-")
	if len(sug) > maxSlug {
		sug = strings.Trim(sug[:maxSlug], "-")
	}
	fix := fmt.Sprintf("use up to %d lower-case letters, digits and \"-\", starting and ending with a letter or digit", maxSlug)
	if sug != "" {
		fix += fmt.Sprintf(", e.g. %q", sug)
	}
	return fix
}

func required(ps *problems, p, v, what string) {
	if v == "" {
		ps.at(p, "is required", "give "+what)
	}
}

func checkRange(ps *problems, p string, v, lo, hi int, meaning string) {
	if v < lo || v > hi {
		ps.at(p, fmt.Sprintf("%d is out of range", v), fmt.Sprintf("use a value from %d to %d (%s)", lo, hi, meaning))
	}
}

func nonEmptyItems(ps *problems, p string, list []string, what string) {
	for i, s := range list {
		if strings.TrimSpace(s) == "" {
			ps.at(indexPath(p, i), "is empty", "give "+what+" or remove the entry")
		}
	}
}

var telegramNumericChatRe = regexp.MustCompile(`^-?[0-9]{1,20}$`)

func checkChatID(ps *problems, p, id string) {
	if id != "" && !telegramChatRe.MatchString(id) {
		ps.at(p, fmt.Sprintf("%q is not a Telegram chat id", shorten(id)),
			`write the numeric chat id in quotes, e.g. "123456789" (groups start with -100), or @channelname`)
	}
}

// checkURL requires an absolute http(s) URL with a host and without
// credentials (those belong in secret fields, never in a URL that is logged).
func checkURL(ps *problems, p, raw string, requiredHere bool, example string) {
	if raw == "" {
		if requiredHere {
			ps.at(p, "is required", "give "+example)
		}
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		ps.at(p, fmt.Sprintf("%q is not a URL", shorten(raw)), "give "+example)
	case u.Scheme != "http" && u.Scheme != "https":
		ps.at(p, fmt.Sprintf("%q does not start with http:// or https://", shorten(raw)), "give "+example)
	case u.Host == "" || u.Hostname() == "":
		ps.at(p, fmt.Sprintf("%q has no host name", shorten(raw)), "give "+example)
	case u.User != nil:
		ps.at(p, "contains a user name or password", "remove them from the URL and use the credential fields (they are secrets)")
	case u.RawQuery != "" || u.Fragment != "":
		ps.at(p, "contains a query or fragment", "give only scheme, host, port and path, e.g. "+strings.SplitN(raw, "?", 2)[0])
	}
}

// checkRootPath requires an absolute path without ".." and stores its
// cleaned form (trailing and doubled slashes removed), so that the
// Nextcloud scoping compares like with like.
func checkRootPath(ps *problems, p string, root *string, agentName string) {
	r := *root
	example := "/Switchboard/" + agentName
	switch {
	case r == "":
		ps.at(p, "is required", "give the agent's folder, e.g. "+example)
	case !strings.HasPrefix(r, "/"):
		fix := "start it with /, e.g. " + example
		if !slices.Contains(strings.Split(r, "/"), "..") {
			fix = "start it with /, e.g. " + path.Clean("/"+r)
		}
		ps.at(p, fmt.Sprintf("%q is not absolute", shorten(r)), fix)
	case slices.Contains(strings.Split(r, "/"), ".."):
		ps.at(p, fmt.Sprintf("%q contains ..", shorten(r)), "give the folder itself, e.g. "+example)
	case strings.ContainsAny(r, "\\\x00"):
		ps.at(p, "contains a backslash or NUL character", "use / as separator, e.g. "+example)
	default:
		*root = path.Clean(r)
	}
}

// checkCollaboraHeaders: header names only, and only with a collaboraUrl
// to send them to. p is the Nextcloud block's path.
func checkCollaboraHeaders(ps *problems, p string, nc *NextcloudTool) {
	if len(nc.CollaboraHeaders) > 0 && nc.CollaboraURL == "" {
		ps.at(p+".collaboraHeaders", "are set but there is no collaboraUrl to send them to", "set collaboraUrl, or remove the headers")
	}
	names := slices.Sorted(maps.Keys(nc.CollaboraHeaders))
	for _, k := range names {
		if !validHeaderName(k) {
			ps.at(mapPath(p+".collaboraHeaders", k), fmt.Sprintf("%q is not an HTTP header name", shorten(k)), "use letters, digits and -, e.g. X-Switchboard-Key")
		}
	}
}

// checkUSD checks a budget in USD: a number from 0 to 100000.
func checkUSD(ps *problems, path string, v float64, fix string) {
	if math.IsNaN(v) || v < 0 || v > 100000 {
		ps.at(path, fmt.Sprintf("%g is out of range", v), fix)
	}
}
