package provision_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	"go.yaml.in/yaml/v3"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/secrets/smfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/secrets/smstore"
	"github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/platform/errtest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/provision"
)

// world is a fake Rocket.Chat with an administrator (root), a person
// (alice) and a channel, and a fake Secrets Manager.
type world struct {
	s       *rcfake.Server
	admin   *rocketchat.Client
	sm      *smfake.Fake
	general string
	aliceID string
	aliceT  string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	s := rcfake.New()
	t.Cleanup(s.Close)
	w := &world{s: s, sm: smfake.New(nil)}
	rootID, rootToken := s.AddUser("root", "admin", "user")
	w.aliceID, w.aliceT = s.AddUser("alice")
	w.general = s.AddChannel("general", "alice")
	var err error
	if w.admin, err = rocketchat.New(s.URL, rootID, rootToken, s.Client()); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) opts() provision.Options {
	return provision.Options{AdminClient: w.admin, Username: "agent-hermes", Name: "Hermes", Email: "hermes@agents.example.org",
		Store: &smstore.Store{Client: w.sm, Instance: "acme"}, Logins: rocketchat.Logins{HTTP: w.s.Client()}}
}

func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// nothingCreated asserts that the fake holds the same users as before and
// saw no creation, no login and no token, and that nothing was stored.
func (w *world) nothingCreated(t *testing.T, before []string) {
	t.Helper()
	if got := w.s.Usernames(); !reflect.DeepEqual(got, before) {
		t.Errorf("users = %v, want %v", got, before)
	}
	for _, route := range []string{"users.create", "login", "users.generatePersonalAccessToken"} {
		if n := w.s.Calls(route); n != 0 {
			t.Errorf("%d calls to %s", n, route)
		}
	}
	if calls := w.sm.Calls(); len(calls) != 0 {
		t.Errorf("Secrets Manager calls: %v", calls)
	}
}

func checkErr(t *testing.T, err error, wantCode string, wantMsg ...string) {
	t.Helper()
	errtest.Check(t, err, wantCode, wantMsg...)
}

func TestAgentHappyPath(t *testing.T) {
	w := newWorld(t)
	w.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, false)

	res, err := provision.Agent(ctx(t), w.opts())
	if err != nil {
		t.Fatal(err)
	}
	u, ok := w.s.User("agent-hermes")
	switch {
	case !ok:
		t.Fatal("no user agent-hermes")
	case u.ID != res.UserID:
		t.Errorf("UserID = %q, fake has %q", res.UserID, u.ID)
	case !reflect.DeepEqual(u.Roles, []string{"bot", "user"}):
		t.Errorf("roles = %v, want [bot user]", u.Roles)
	case u.Name != "Hermes" || u.Email != "hermes@agents.example.org" || !u.Verified || u.EmailTwoFactor:
		t.Errorf("user = %+v", u)
	case !reflect.DeepEqual(u.TokenNames, []string{provision.DefaultTokenName}):
		t.Errorf("tokens = %v", u.TokenNames)
	}
	want := provision.Result{BaseURL: w.s.URL, UserID: u.ID, Username: "agent-hermes",
		SecretRef: "secretsmanager:switchboard/acme/agent-hermes"}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("Result = %+v, want %+v (no token: it was stored)", res, want)
	}

	// The stored token is the agent's working identity.
	pat, ok := w.sm.Secret("switchboard/acme/agent-hermes")
	if !ok {
		t.Fatal("nothing stored")
	}
	if err := w.s.Join("agent-hermes", w.general); err != nil {
		t.Fatal(err)
	}
	agent, err := rocketchat.New(res.BaseURL, res.UserID, pat, nil)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := agent.PostMessage(ctx(t), w.general, "Hermes is here", "")
	if err != nil {
		t.Fatalf("PostMessage with the stored token: %v", err)
	}
	if sent.User.Username != "agent-hermes" {
		t.Errorf("posted as %q", sent.User.Username)
	}

	// The login session ended; the password went to users.create and login only.
	if n := w.s.Calls("logout"); n != 1 {
		t.Errorf("logout calls = %d, want 1", n)
	}
	var created struct{ Password string }
	for _, r := range w.s.Requests() {
		if r.Route == "users.create" {
			json.Unmarshal(r.Body, &created)
		}
	}
	if len(created.Password) < 32 {
		t.Fatalf("password %q is too short", created.Password)
	}
	for _, r := range w.s.Requests() {
		if r.Route != "users.create" && r.Route != "login" && strings.Contains(string(r.Body)+r.Header.Get("X-Auth-Token"), created.Password) {
			t.Errorf("the password reached %s", r.Route)
		}
	}
	if strings.Contains(res.ConfigBlock(), created.Password) || strings.Contains(res.ConfigBlock(), pat) {
		t.Error("ConfigBlock carries a secret")
	}
}

func TestAgentConfigBlockIsTheConfigsRocketChatBlock(t *testing.T) {
	for _, store := range []provision.SecretStore{nil, &smstore.Store{Instance: "acme"}} {
		w := newWorld(t)
		w.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, false)
		o := w.opts()
		o.Store = store
		if sm, ok := store.(*smstore.Store); ok {
			sm.Client = w.sm
		}
		res, err := provision.Agent(ctx(t), o)
		if err != nil {
			t.Fatal(err)
		}
		block := res.ConfigBlock()
		var got struct {
			RocketChat config.RocketChatTool `yaml:"RocketChat"`
		}
		if err := yaml.Unmarshal([]byte(block), &got); err != nil {
			t.Fatalf("block does not parse: %v\n%s", err, block)
		}
		want := config.RocketChatTool{BaseURL: w.s.URL, UserID: res.UserID, AuthToken: res.SecretRef, Username: "agent-hermes"}
		if !reflect.DeepEqual(got.RocketChat, want) {
			t.Errorf("block decodes to %+v, want %+v\n%s", got.RocketChat, want, block)
		}
	}
}

func TestAgentPrintOnceReturnsTheToken(t *testing.T) {
	w := newWorld(t)
	w.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, false)
	o := w.opts()
	o.Store = nil
	res, err := provision.Agent(ctx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.SecretRef != "env:AGENT_HERMES_RC_TOKEN" || res.Token == "" {
		t.Fatalf("Result = %+v", res)
	}
	agent, _ := rocketchat.New(res.BaseURL, res.UserID, res.Token, nil)
	if _, err := agent.Subscriptions(ctx(t), time.Time{}); err != nil {
		t.Errorf("the printed token does not work: %v", err)
	}
	if block := res.ConfigBlock(); !strings.HasPrefix(block, "# set AGENT_HERMES_RC_TOKEN to the token printed once above\n") ||
		!strings.Contains(block, "  authToken: env:AGENT_HERMES_RC_TOKEN\n") {
		t.Errorf("block:\n%s", block)
	}
}

func TestAgentRefusesWhileEmail2FAAutoOptInIsOn(t *testing.T) {
	w := newWorld(t) // the fake starts with the setting on, like a fresh install
	before := w.s.Usernames()
	_, err := provision.Agent(ctx(t), w.opts())
	checkErr(t, err, sb.ECONFLICT,
		sb.ChatSettingEmail2FAAutoOptIn, "Nothing was created",
		"A (recommended): switch the setting off", "then run provision-agent again", "new human users no longer get e-mail 2FA",
		"B: keep it on, give every agent a real mailbox", "IMAP",
		"C: create the user by API, then a person logs in as it once", "creates the personal access token", "manual work for every new agent")
	if !errors.Is(err, provision.ErrEmail2FAAutoOptIn) {
		t.Errorf("errors.Is(err, ErrEmail2FAAutoOptIn) = false")
	}
	w.nothingCreated(t, before)
	if n := w.s.Calls("settings"); n != 1 {
		t.Errorf("settings calls = %d, want 1 (read first)", n)
	}
}

func TestAgentRefusals(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(w *world, o *provision.Options)
		wantCode string
		wantMsg  []string
	}{
		{"username taken", func(w *world, o *provision.Options) {
			w.s.AddUser("agent-hermes", "bot", "user")
		}, sb.ECONFLICT, []string{`cannot create Rocket.Chat user "agent-hermes"`, "already taken"}},
		{"not an administrator", func(w *world, o *provision.Options) {
			o.AdminClient, _ = rocketchat.New(w.s.URL, w.aliceID, w.aliceT, w.s.Client())
		}, sb.EFORBIDDEN, []string{"needs an administrator's token", "not an administrator", "adminAuthToken"}},
		{"wrong admin token", func(w *world, o *provision.Options) {
			o.AdminClient, _ = rocketchat.New(w.s.URL, "root-id", "wrong", w.s.Client())
		}, sb.EUNAUTHORIZED, []string{"adminUserId"}},
		{"no admin client", func(w *world, o *provision.Options) { o.AdminClient = nil }, sb.EINVALID, []string{"no administrator client"}},
		{"no logins", func(w *world, o *provision.Options) { o.Logins = nil }, sb.EINVALID, []string{"Options.Logins"}},
		{"no username", func(w *world, o *provision.Options) { o.Username = " " }, sb.EINVALID, []string{"username is empty"}},
		{"username with @", func(w *world, o *provision.Options) { o.Username = "@agent-hermes" }, sb.EINVALID, []string{"without @"}},
		{"username with a space", func(w *world, o *provision.Options) { o.Username = "agent hermes" }, sb.EINVALID, []string{"only letters"}},
		{"no e-mail", func(w *world, o *provision.Options) { o.Email = "" }, sb.EINVALID, []string{"e-mail address is empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, false)
			o := w.opts()
			tt.setup(w, &o)
			before := w.s.Usernames()
			res, err := provision.Agent(ctx(t), o)
			checkErr(t, err, tt.wantCode, tt.wantMsg...)
			if res.UserID != "" || res.Token != "" {
				t.Errorf("Result = %+v", res)
			}
			if got := w.s.Usernames(); !reflect.DeepEqual(got, before) {
				t.Errorf("users = %v, want %v", got, before)
			}
			if calls := w.sm.Calls(); len(calls) != 0 {
				t.Errorf("Secrets Manager calls: %v", calls)
			}
		})
	}
}

func TestAgentFailuresAfterTheUserExists(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(w *world)
		wantCode string
		wantMsg  []string
		is       error
	}{
		{"the setting was switched on meanwhile", func(w *world) {
			w.s.FailNext("login", 401, `{"success":false,"status":"error","error":"totp-required","message":"TOTP Required","details":{"method":"email","codeGenerated":true,"availableMethods":["email"]}}`)
		}, sb.EFORBIDDEN, []string{"the login as the new user failed", "switched on meanwhile", "delete it in Administration → Users"}, sb.ErrTwoFactorRequired},
		{"no permission for tokens", func(w *world) {
			w.s.FailNext("users.generatePersonalAccessToken", 400, `{"success":false,"error":"Not Authorized [not-authorized]","errorType":"not-authorized","details":{"method":"personalAccessTokens:generateToken"}}`)
		}, sb.EFORBIDDEN, []string{"creating its personal access token failed", "create-personal-access-tokens"}, nil},
		{"the token does not work", func(w *world) {
			w.s.FailNext("users.info", 401, `{"success":false,"error":"You must be logged in to do this."}`)
		}, sb.EUNAUTHORIZED, []string{"checking the new token failed"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, false)
			tt.setup(w)
			res, err := provision.Agent(ctx(t), w.opts())
			checkErr(t, err, tt.wantCode, tt.wantMsg...)
			u, _ := w.s.User("agent-hermes")
			if res.UserID == "" || res.UserID != u.ID || !strings.Contains(sb.ErrorMessage(err), u.ID) {
				t.Errorf("the user's id is missing: Result %+v, message %q", res, sb.ErrorMessage(err))
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(err, %v) = false", tt.is)
			}
			if res.Token != "" || len(w.sm.Calls()) != 0 {
				t.Errorf("a token left the function: %+v, %v", res, w.sm.Calls())
			}
		})
	}
}

func TestAgentKeepsTheTokenWhenTheStoreFails(t *testing.T) {
	w := newWorld(t)
	w.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, false)
	w.sm.FailCreate = &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "denied"}
	res, err := provision.Agent(ctx(t), w.opts())
	checkErr(t, err, sb.EFORBIDDEN, "was created but not stored", "keep it now", "secretsmanager:CreateSecret")
	u, _ := w.s.User("agent-hermes")
	if res.Token == "" || res.UserID != u.ID || res.SecretRef != "" {
		t.Errorf("Result = %+v", res)
	}
	if strings.Contains(err.Error(), res.Token) {
		t.Error("the error text carries the token")
	}
}

func TestAgentWithoutTheSettingGoesOnWithAWarning(t *testing.T) {
	w := newWorld(t)
	w.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, false)
	w.s.FailNext("settings", 400, `{"success":false}`) // API.v1.failure(): no such setting
	res, err := provision.Agent(ctx(t), w.opts())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "no setting") {
		t.Errorf("Warnings = %v", res.Warnings)
	}
}

func TestAgentTokenOptions(t *testing.T) {
	w := newWorld(t)
	w.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, false)
	o := w.opts()
	o.TokenName, o.BypassTwoFactor, o.Name = "hermes-prod", true, ""
	if _, err := provision.Agent(ctx(t), o); err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	for _, r := range w.s.Requests() {
		if r.Route == "users.generatePersonalAccessToken" {
			json.Unmarshal(r.Body, &body)
		}
	}
	if want := map[string]any{"tokenName": "hermes-prod", "bypassTwoFactor": true}; !reflect.DeepEqual(body, want) {
		t.Errorf("body = %v, want %v", body, want)
	}
	if u, _ := w.s.User("agent-hermes"); u.Name != "agent-hermes" {
		t.Errorf("display name = %q, want the username", u.Name)
	}
}
