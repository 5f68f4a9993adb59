package main

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/provision"
)

// rcProvision is a fake Rocket.Chat with an administrator and a config
// whose instance.rocketchat block holds the admin's token.
type rcProvision struct {
	s   *rcfake.Server
	cfg string
}

func newRCProvision(t *testing.T) *rcProvision {
	t.Helper()
	s := rcfake.New()
	t.Cleanup(s.Close)
	rootID, rootToken := s.AddUser("root", "admin", "user")
	return &rcProvision{s: s, cfg: writeConfig(t, fmt.Sprintf(`instance:
  name: provtest
  model: {provider: scripted}
  rocketchat:
    baseUrl: %s
    adminUserId: %s
    adminAuthToken: %s
agents:
  - id: hermes
    tools:
      Workspace: {}
`, s.URL, rootID, rootToken))}
}

// nothingCreated asserts that the fake saw no user creation, login or token.
func (w *rcProvision) nothingCreated(t *testing.T) {
	t.Helper()
	if got := w.s.Usernames(); !reflect.DeepEqual(got, []string{"root"}) {
		t.Errorf("users = %v, want only root", got)
	}
	for _, route := range []string{"users.create", "login", "users.generatePersonalAccessToken"} {
		if n := w.s.Calls(route); n != 0 {
			t.Errorf("%d calls to %s", n, route)
		}
	}
}

var tokenLine = regexp.MustCompile(`(?m)^personal access token \(shown once, store it now\): (\S+)$`)

func TestProvisionAgentHappyPath(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantName string
	}{
		{"with a display name", []string{"--name", "Hermes"}, "Hermes"},
		{"name defaults to the username", nil, "agent-hermes"},
		{"explicit print store", []string{"--store", "print", "--name", "Hermes"}, "Hermes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newRCProvision(t)
			w.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, false)
			args := append([]string{"provision-agent", "--config", w.cfg, "--username", "agent-hermes",
				"--email", "hermes@agents.example.org"}, tt.args...)
			out, err := runCLI(t, args...)
			if err != nil {
				t.Fatalf("provision-agent: %v\n%s", err, out)
			}
			u, ok := w.s.User("agent-hermes")
			if !ok {
				t.Fatal("no user agent-hermes")
			}
			if !reflect.DeepEqual(u.Roles, []string{"bot", "user"}) || u.Name != tt.wantName ||
				u.Email != "hermes@agents.example.org" || !u.Verified || u.EmailTwoFactor {
				t.Errorf("user = %+v", u)
			}

			// The token is printed exactly once, and it works.
			m := tokenLine.FindAllStringSubmatch(out, -1)
			if len(m) != 1 {
				t.Fatalf("%d token lines, want 1:\n%s", len(m), out)
			}
			token := m[0][1]
			if n := strings.Count(out, token); n != 1 {
				t.Errorf("the token appears %d times in the output, want once", n)
			}
			agent, err := rocketchat.New(w.s.URL, u.ID, token, w.s.Client())
			if err != nil {
				t.Fatal(err)
			}
			me, err := agent.UserInfo(context.Background(), "agent-hermes")
			if err != nil || me.ID != u.ID {
				t.Errorf("the printed token does not act as agent-hermes: %+v, %v", me, err)
			}

			// Then the config block, which never holds the token.
			wantBlock := fmt.Sprintf("created agent-hermes (%s). Add to the agent's tools in %s:\n\n"+
				"# set AGENT_HERMES_RC_TOKEN to the token printed once above\n"+
				"RocketChat:\n  baseUrl: %s\n  userId: %s\n  authToken: env:AGENT_HERMES_RC_TOKEN\n  username: agent-hermes\n\n",
				u.ID, w.cfg, w.s.URL, u.ID)
			if !strings.HasSuffix(out, wantBlock) {
				t.Errorf("output:\n%s\nwant it to end with:\n%s", out, wantBlock)
			}
			if i := strings.Index(out, token); i > strings.Index(out, "RocketChat:") {
				t.Error("the token is printed inside the config block")
			}
			if strings.Contains(out, "warning:") {
				t.Errorf("unexpected warning:\n%s", out)
			}
		})
	}
}

func TestProvisionAgentRefusesWithEmail2FA(t *testing.T) {
	w := newRCProvision(t) // the fake starts with the auto opt-in on, as a fresh install
	out, err := runCLI(t, "provision-agent", "--config", w.cfg, "--username", "agent-hermes", "--email", "hermes@agents.example.org")
	if err == nil || isUsage(err) {
		t.Fatalf("err = %v, want a refusal (exit 1)", err)
	}
	if !errors.Is(err, provision.ErrEmail2FAAutoOptIn) || sb.ErrorCode(err) != sb.ECONFLICT {
		t.Errorf("err = %v, want ECONFLICT with ErrEmail2FAAutoOptIn in the chain", err)
	}
	msg := sb.ErrorMessage(err)
	for _, want := range []string{rcfake.SettingEmail2FAAutoOptIn, "Nothing was created", "Three ways out",
		"\n  A (recommended): switch the setting off", "\n  B: ", "\n  C: "} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if tokenLine.MatchString(out) || strings.Contains(out, "created") {
		t.Errorf("printed %q although nothing was created", out)
	}
	w.nothingCreated(t)
}

func TestProvisionAgentUsage(t *testing.T) {
	w := newRCProvision(t)
	w.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, false)
	noAdmin := writeConfig(t, `instance:
  name: provtest
  model: {provider: scripted}
agents:
  - id: hermes
    tools:
      Workspace: {}
`)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no username", []string{"--config", w.cfg, "--email", "hermes@agents.example.org"}, "provision-agent needs --username and --email"},
		{"no email", []string{"--config", w.cfg, "--username", "agent-hermes"}, "provision-agent needs --username and --email"},
		{"neither", []string{"--config", w.cfg}, "provision-agent needs --username and --email"},
		{"empty username", []string{"--config", w.cfg, "--username", "", "--email", "x@example.org"}, "provision-agent needs --username and --email"},
		{"unknown store", []string{"--config", w.cfg, "--username", "agent-hermes", "--email", "x@example.org", "--store", "vault"},
			`--store "vault": use print, secretsmanager (one secret per agent) or secretsmanager:<json-secret>`},
		{"JSON secret without a name", []string{"--config", w.cfg, "--username", "agent-hermes", "--email", "x@example.org", "--store", "secretsmanager:"},
			`--store "secretsmanager:": use print, secretsmanager`},
		{"JSON secret with a key", []string{"--config", w.cfg, "--username", "agent-hermes", "--email", "x@example.org", "--store", "secretsmanager:switchboard/instance#x"},
			`e.g. secretsmanager:switchboard/instance`},
		{"no admin in the config", []string{"--config", noAdmin, "--username", "agent-hermes", "--email", "x@example.org"},
			"instance.rocketchat needs baseUrl, adminUserId and adminAuthToken"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runCLI(t, append([]string{"provision-agent"}, tt.args...)...)
			if !isUsage(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a usageError containing %q", err, tt.want)
			}
			if out != "" {
				t.Errorf("printed %q", out)
			}
		})
	}
	w.nothingCreated(t)
}

func TestProvisionAgentErrors(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(*rcfake.Server)
		username string
		wantCode string
	}{
		{name: "username taken", setup: func(s *rcfake.Server) { s.AddUser("agent-hermes", "user") },
			username: "agent-hermes", wantCode: sb.ECONFLICT},
		{name: "username with @", setup: func(*rcfake.Server) {}, username: "@agent-hermes", wantCode: sb.EINVALID},
		{name: "Rocket.Chat down", setup: func(s *rcfake.Server) { s.SetDown(true) }, username: "agent-hermes", wantCode: sb.EUNAVAILABLE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newRCProvision(t)
			w.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, false)
			tt.setup(w.s)
			out, err := runCLI(t, "provision-agent", "--config", w.cfg, "--username", tt.username, "--email", "hermes@agents.example.org")
			if err == nil || isUsage(err) || sb.ErrorCode(err) != tt.wantCode {
				t.Fatalf("err = %v (code %q), want code %q", err, sb.ErrorCode(err), tt.wantCode)
			}
			if tokenLine.MatchString(out) {
				t.Errorf("printed a token: %q", out)
			}
			if n := w.s.Calls("users.generatePersonalAccessToken"); n != 0 {
				t.Errorf("%d token calls", n)
			}
		})
	}
}
