// Package sandbox stands in for the servers a newcomer does not have yet:
// with instance.dev.sandbox on, `switchboard dev` starts loopback Rocket.Chat,
// Telegram and Nextcloud servers (the repository's faithful fakes, quirks
// included) for every part the config does not point at a real server,
// wires the configured agents to them, and serves a page under
// /dev/sandbox/ where a person writes into the chat, decides approvals in
// the Telegram chat and sees the files the agents delivered.
//
// Everything the person does enters Switchboard the way it would from the
// real servers: a chat message is stored in the fake Rocket.Chat and its
// outgoing-webhook payload is POSTed to /hooks/rocketchat; a Telegram
// message or button press is queued in the fake Telegram, which pushes it to
// /hooks/telegram with the webhook secret. The agents answer through their
// ordinary clients.
//
// Only the dev binary links this package; no Lambda does.
package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/switchboard-dev/switchboard/shared/adapters/collabora/cofake"
	"github.com/switchboard-dev/switchboard/shared/adapters/nextcloud/ncfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
)

// Fixed identities of the sandbox: the person and the general channel.
const (
	DefaultHuman  = "you"
	Channel       = "general"
	HumanTelegram = int64(424242) // the person's Telegram user id = private chat id
	NextcloudUser = "switchboard"
	ncRootBase    = "/Switchboard"
)

// Options say where the sandbox runs.
type Options struct {
	ConfigFile string // the user's config
	DataDir    string // the derived config is written below it
	DevURL     string // http://host:port of the dev listener (webhook target)
}

// Parts says which servers the sandbox stands in for.
type Parts struct {
	RocketChat bool `json:"rocketchat"`
	Telegram   bool `json:"telegram"`
	Nextcloud  bool `json:"nextcloud"`
}

// Agent is an agent as the sandbox shows it.
type Agent struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Username string `json:"username"` // its sandbox Rocket.Chat user
	RootPath string `json:"rootPath"` // its sandbox Nextcloud folder
}

// Sandbox is the running stand-ins.
type Sandbox struct {
	// ConfigFile is the derived config (the user's, with the sandbox
	// servers filled in); the App loads it.
	ConfigFile string
	Parts      Parts

	RC *rcfake.Server
	TG *tgfake.Server
	NC *ncfake.Server
	CO *cofake.Server // the Collabora the sandbox Nextcloud converts with

	ncSrv        *httptest.Server
	human        string
	agents       []Agent
	webhookToken string
	devURL       string
	// consolePassword is the console's password when the sandbox set one
	// (the user's config has none); "" when the config names its own.
	consolePassword string
	hc              *http.Client
}

// anyRef stands in for every secret while the user's config is only
// checked: the sandbox needs its shape, not its secrets, and the App
// resolves them for real.
type anyRef struct{}

func (anyRef) Resolve(context.Context, string) (string, error) {
	return "sandbox-check-0123456789abcdef0123456789", nil
}

// Start reads the user's config and, when it turns the sandbox on, starts
// the stand-ins and writes the derived config. It returns nil (and no
// error) when the config does not ask for a sandbox or every part points
// at a real server.
func Start(ctx context.Context, o Options) (*Sandbox, error) {
	cfg, err := swcfg.Load(ctx, o.ConfigFile, anyRef{})
	if err != nil {
		return nil, err
	}
	if !cfg.Instance.Dev.Sandbox {
		return nil, nil
	}
	parts := Parts{RocketChat: cfg.Instance.RocketChat.BaseURL == "", Telegram: cfg.Instance.Telegram.BotToken == "", Nextcloud: true}
	for _, a := range cfg.Agents {
		if a.Tools.RocketChat != nil {
			parts.RocketChat = false
		}
		if a.Tools.Nextcloud != nil {
			parts.Nextcloud = false
		}
	}
	if !parts.RocketChat && !parts.Telegram && !parts.Nextcloud {
		return nil, nil
	}
	raw, err := os.ReadFile(o.ConfigFile)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil || len(doc.Content) == 0 {
		return nil, fmt.Errorf("sandbox: %s: not a YAML mapping", o.ConfigFile)
	}
	root := doc.Content[0]

	s := &Sandbox{Parts: parts, devURL: o.DevURL, hc: &http.Client{Timeout: 10 * time.Second},
		human: cfg.Instance.Human.RocketChatUsername}
	if s.human == "" {
		s.human = DefaultHuman
	}
	for _, a := range cfg.Agents {
		name := a.Name
		if name == "" {
			name = a.ID
		}
		s.agents = append(s.agents, Agent{ID: a.ID, Name: name, Username: "agent-" + a.ID, RootPath: ncRootBase + "/" + name})
	}
	instance := child(root, "instance")
	agents := child(root, "agents")
	if cfg.Instance.Console.Password == "" {
		// The console shows the conversations the sandbox causes; it is
		// off without a password, so the sandbox sets one for this start.
		s.consolePassword = "sandbox-" + randomHex(8)
		set(ensureMap(instance, "console"), "password", scalar(s.consolePassword))
	}
	if parts.RocketChat {
		s.startRocketChat(instance, agents)
	}
	if parts.Telegram {
		if err := s.startTelegram(instance); err != nil {
			s.Close()
			return nil, err
		}
	}
	if parts.Nextcloud {
		if err := s.startNextcloud(agents); err != nil {
			s.Close()
			return nil, err
		}
	}

	out, err := yaml.Marshal(&doc)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	dir := filepath.Join(o.DataDir, "sandbox")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.Close()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	s.ConfigFile = filepath.Join(dir, "switchboard.yaml")
	header := fmt.Sprintf("# Written by `switchboard dev` from %s with the sandbox servers filled in;\n# edit that file, not this one (it is rewritten at every start).\n", o.ConfigFile)
	if err := os.WriteFile(s.ConfigFile, append([]byte(header), out...), 0o600); err != nil {
		s.Close()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return s, nil
}

// Close stops the stand-ins.
func (s *Sandbox) Close() {
	if s == nil {
		return
	}
	if s.RC != nil {
		s.RC.Close()
	}
	if s.TG != nil {
		s.TG.Close()
	}
	if s.ncSrv != nil {
		s.ncSrv.Close()
	}
	if s.CO != nil {
		s.CO.Close()
	}
}

// ConsoleURL is the console's start page on the dev listener.
func (s *Sandbox) ConsoleURL() string { return s.devURL + "/console/" }

// ConsolePassword is the console password the sandbox set for this start,
// "" when the user's config names its own.
func (s *Sandbox) ConsolePassword() string { return s.consolePassword }

// Announce writes where the console is and how to log in, for the
// person reading the dev log.
func (s *Sandbox) Announce(w io.Writer) {
	if s.consolePassword == "" {
		fmt.Fprintf(w, "sandbox: the console is at %s (your config's console.password)\n", s.ConsoleURL())
		return
	}
	fmt.Fprintf(w, "sandbox: the console is at %s, password %s (set for this start; a console.password in your config replaces it)\n", s.ConsoleURL(), s.consolePassword)
}

// Human is the person's Rocket.Chat username.
func (s *Sandbox) Human() string { return s.human }

// Agents are the configured agents with their sandbox identities.
func (s *Sandbox) Agents() []Agent { return s.agents }

func (s *Sandbox) startRocketChat(instance, agents *yaml.Node) {
	rc := rcfake.New()
	s.RC = rc
	// New ids every start: the wake claims outlive the process in
	// DynamoDB, keyed by message id, and a repeated id would be taken for
	// a message already answered.
	now := time.Now()
	rc.SetSeed(uint64(now.UnixNano()), uint64(now.Unix()))
	s.webhookToken = "sandbox-" + randomHex(12)
	rc.SetWebhookToken(s.webhookToken)
	// Room links in messages (/channel/…, /direct/…) open the room on the
	// sandbox page: the fake has no web client.
	rc.SetWebApp(s.devURL + "/dev/sandbox/")
	rc.AddUser(s.human, "user")
	usernames := make([]string, 0, len(s.agents))
	for _, a := range s.agents {
		usernames = append(usernames, a.Username)
	}
	creds := map[string][2]string{}
	for _, a := range s.agents {
		id, token := rc.AddUser(a.Username, "bot", "user")
		creds[a.ID] = [2]string{id, token}
	}
	rc.AddChannel(Channel, append([]string{s.human}, usernames...)...)
	for _, a := range s.agents {
		rc.AddDM(s.human, a.Username)
	}

	rcInst := ensureMap(instance, "rocketchat")
	set(rcInst, "baseUrl", scalar(rc.URL))
	tokens := child(rcInst, "webhookTokens")
	if tokens == nil || tokens.Kind != yaml.SequenceNode {
		tokens = &yaml.Node{Kind: yaml.SequenceNode}
		set(rcInst, "webhookTokens", tokens)
	}
	tokens.Content = append(tokens.Content, scalar(s.webhookToken))
	set(ensureMap(instance, "human"), "rocketchatUsername", scalar(s.human))
	for i, a := range s.agents {
		tools := ensureMap(agents.Content[i], "tools")
		block := &yaml.Node{Kind: yaml.MappingNode}
		set(block, "userId", scalar(creds[a.ID][0]))
		set(block, "authToken", scalar(creds[a.ID][1]))
		set(block, "username", scalar(a.Username))
		others := &yaml.Node{Kind: yaml.SequenceNode}
		for _, u := range usernames {
			others.Content = append(others.Content, scalar(u))
		}
		set(block, "agentUsernames", others)
		// Where a delivery posts its link when the call names no room.
		set(block, "defaultRoom", scalar(Channel))
		set(tools, "RocketChat", block)
	}
}

func (s *Sandbox) startTelegram(instance *yaml.Node) error {
	tg := tgfake.New()
	s.TG = tg
	// Update ids are claimed in DynamoDB across restarts too: start them
	// (and the message ids) where no earlier run has been.
	base := time.Now().Unix() - 1_700_000_000
	tg.SetFirstIDs(base*1000, base*1000)
	tg.AddUser(tgfake.User{ID: HumanTelegram, FirstName: "You", Username: s.human})
	secret := "sandbox_" + randomHex(12)
	form := url.Values{"url": {s.devURL + "/hooks/telegram"}, "secret_token": {secret}}
	resp, err := s.hc.PostForm(tg.URL+"/bot"+tgfake.DefaultToken+"/setWebhook", form)
	if err != nil {
		return fmt.Errorf("sandbox: telegram setWebhook: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("sandbox: telegram setWebhook: HTTP %d", resp.StatusCode)
	}
	tg.SetAutoPush(true) // every update goes to the webhook at once, as Telegram does

	chat := strconv.FormatInt(HumanTelegram, 10)
	t := ensureMap(instance, "telegram")
	set(t, "apiBaseUrl", scalar(tg.URL))
	set(t, "botToken", scalar(tgfake.DefaultToken))
	set(t, "chatId", quoted(chat))
	set(t, "allowedChatIds", seq(quoted(chat)))
	set(t, "webhookSecret", scalar(secret))
	set(ensureMap(instance, "approvals"), "approverTelegramIds", seq(quoted(chat)))
	set(ensureMap(instance, "human"), "telegramChatId", quoted(chat))
	return nil
}

func (s *Sandbox) startNextcloud(agents *yaml.Node) error {
	nc := ncfake.New(ncfake.Options{User: NextcloudUser, Password: "sandbox-" + randomHex(12)})
	s.NC = nc
	// The person is a Nextcloud user too, so that a delivery can share
	// with them; the conversions go to the repository's Collabora fake
	// (small real PDF, XLSX and DOCX files, no office suite needed).
	nc.AddUser(s.human)
	s.CO = cofake.New(cofake.Options{})
	s.ncSrv = httptest.NewServer(s.fileLinks(nc))
	nc.URL = s.ncSrv.URL
	for i, a := range s.agents {
		if err := nc.MkdirAll(a.RootPath); err != nil {
			return fmt.Errorf("sandbox: nextcloud folder %s: %w", a.RootPath, err)
		}
		block := &yaml.Node{Kind: yaml.MappingNode}
		set(block, "baseUrl", scalar(nc.URL))
		set(block, "username", scalar(nc.User()))
		set(block, "appPassword", scalar(nc.Password()))
		set(block, "rootPath", scalar(a.RootPath))
		set(block, "collaboraUrl", scalar(s.CO.URL))
		set(ensureMap(agents.Content[i], "tools"), "Nextcloud", block)
	}
	return nil
}

// fileLinks serves Nextcloud's file links (/f/<fileid>, which the
// agents post) by redirecting to the file on the sandbox page's API; the
// rest is the fake Nextcloud.
func (s *Sandbox) fileLinks(nc *ncfake.Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := strings.CutPrefix(r.URL.Path, "/f/")
		if !ok || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			nc.ServeHTTP(w, r)
			return
		}
		n, err := strconv.ParseInt(id, 10, 64)
		p := ""
		if err == nil {
			p = nc.PathOf(n)
		}
		if p == "" {
			http.Error(w, "no file with this id in the sandbox Nextcloud (it was deleted, or the sandbox restarted: its data lives in memory)", http.StatusNotFound)
			return
		}
		http.Redirect(w, r, s.devURL+"/dev/sandbox/api/nextcloud/file?path="+url.QueryEscape(p), http.StatusFound)
	})
}

// DeliverWebhook posts msg's outgoing-webhook payload to the dev listener,
// as Rocket.Chat's integration does after every message.
func (s *Sandbox) DeliverWebhook(ctx context.Context, msg rcfake.Message) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.devURL+"/hooks/rocketchat", bytes.NewReader(s.RC.OutgoingWebhookPayload(msg)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the webhook answered HTTP %d", resp.StatusCode)
	}
	return nil
}

// --- YAML editing: the derived config keeps the user's file as it is and
// only adds or replaces the keys the sandbox fills in.

func child(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, scalar(key), v)
}

// ensureMap returns m's mapping under key, creating it (or replacing an
// empty flow mapping such as `telegram: {}`).
func ensureMap(m *yaml.Node, key string) *yaml.Node {
	c := child(m, key)
	if c == nil || c.Kind != yaml.MappingNode {
		c = &yaml.Node{Kind: yaml.MappingNode}
		set(m, key, c)
	}
	c.Style = 0 // block style, also for a former `{}`
	return c
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

func quoted(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: v, Style: yaml.DoubleQuotedStyle}
}

func seq(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Content: items}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return hex.EncodeToString(b)
}

// text helpers for the API

func trimmed(s string) string { return strings.TrimSpace(s) }
