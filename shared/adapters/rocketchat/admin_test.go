package rocketchat

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// admFixture is a fake Rocket.Chat with an administrator (root, whose
// client is admin) and a plain user (alice, client user).
type admFixture struct {
	s                 *rcfake.Server
	admin, user       *Client
	rootToken, aliceT string
}

func newAdmFixture(t *testing.T) *admFixture {
	t.Helper()
	s := rcfake.New()
	t.Cleanup(s.Close)
	f := &admFixture{s: s}
	var rootID, aliceID string
	rootID, f.rootToken = s.AddUser("root", "admin", "user")
	aliceID, f.aliceT = s.AddUser("alice")
	var err error
	if f.admin, err = New(s.URL, rootID, f.rootToken, s.Client()); err != nil {
		t.Fatal(err)
	}
	if f.user, err = New(s.URL, aliceID, f.aliceT, s.Client()); err != nil {
		t.Fatal(err)
	}
	return f
}

// agent creates agent-hermes (bot + user) with the setting off and returns
// its id.
func (f *admFixture) agent(t *testing.T, roles ...string) string {
	t.Helper()
	f.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, false)
	id, err := f.admin.CreateUser(ctx(t), sb.ChatNewUser{Name: "Hermes", Username: "agent-hermes", Email: "hermes@example.org",
		Password: "Secret-Pass-1", Roles: roles, Verified: true})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestGetSetting(t *testing.T) {
	f := newAdmFixture(t)
	v, err := f.admin.GetSetting(ctx(t), sb.ChatSettingEmail2FAAutoOptIn)
	if err != nil || v != true {
		t.Fatalf("GetSetting = %v, %v; want true (the fake's default, like a fresh install)", v, err)
	}
	f.s.SetSetting(sb.ChatSettingEmail2FAAutoOptIn, false)
	if v, _ := f.admin.GetSetting(ctx(t), sb.ChatSettingEmail2FAAutoOptIn); v != false {
		t.Errorf("after switching off: %v", v)
	}
	if r := lastRequest(t, f.s, "settings"); r.Path != "/api/v1/settings/"+sb.ChatSettingEmail2FAAutoOptIn || r.Method != "GET" {
		t.Errorf("request = %s %s", r.Method, r.Path)
	}

	bad, err := New(f.s.URL, "nobody", "wrong-token", f.s.Client())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		c        *Client
		id       string
		wantCode string
		wantMsg  []string
	}{
		{"unknown setting", f.admin, "No_Such_Setting", sb.ENOTFOUND, []string{`no setting "No_Such_Setting"`}},
		{"not an administrator", f.user, sb.ChatSettingEmail2FAAutoOptIn, sb.EFORBIDDEN, []string{"not an administrator", "adminAuthToken"}},
		{"wrong admin token", bad, sb.ChatSettingEmail2FAAutoOptIn, sb.EUNAUTHORIZED, []string{"instance.rocketchat.adminUserId"}},
		{"empty id", f.admin, "", sb.EINVALID, []string{"setting id"}},
		{"id that would change the endpoint", f.admin, "..", sb.EINVALID, []string{"setting id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.c.GetSetting(ctx(t), tt.id)
			checkErr(t, err, tt.c.authToken, tt.wantCode, tt.wantMsg...)
		})
	}
}

func TestCreateUser(t *testing.T) {
	f := newAdmFixture(t)
	id, err := f.admin.CreateUser(ctx(t), sb.ChatNewUser{Name: "Hermes", Username: "agent-hermes", Email: "hermes@example.org",
		Password: "Secret-Pass-1", Roles: []string{"bot", "user"}, Verified: true})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "users.create.golden.json", lastRequest(t, f.s, "users.create").Body)
	u, ok := f.s.User("agent-hermes")
	if !ok || u.ID != id || !reflect.DeepEqual(u.Roles, []string{"bot", "user"}) || !u.Verified {
		t.Errorf("stored user = %+v", u)
	}

	tests := []struct {
		name     string
		c        *Client
		u        sb.ChatNewUser
		wantCode string
		wantMsg  []string
	}{
		{"username taken", f.admin, sb.ChatNewUser{Name: "X", Username: "agent-hermes", Email: "x@example.org", Password: "p"},
			sb.ECONFLICT, []string{`username "agent-hermes" is already taken`}},
		{"e-mail taken", f.admin, sb.ChatNewUser{Name: "X", Username: "x", Email: "hermes@example.org", Password: "p"},
			sb.ECONFLICT, []string{`e-mail address "hermes@example.org" is already taken`}},
		{"not an administrator", f.user, sb.ChatNewUser{Name: "X", Username: "x", Email: "x@example.org", Password: "p"},
			sb.EFORBIDDEN, []string{"may not create users", "adminAuthToken"}},
		{"unknown role", f.admin, sb.ChatNewUser{Name: "X", Username: "x", Email: "x@example.org", Password: "p", Roles: []string{"robot"}},
			sb.EINVALID, []string{"roles [robot]"}},
		{"no e-mail", f.admin, sb.ChatNewUser{Name: "X", Username: "x", Password: "p"}, sb.EINVALID, []string{"email is empty"}},
		{"username with @", f.admin, sb.ChatNewUser{Name: "X", Username: "@x", Email: "x@example.org", Password: "p"}, sb.EINVALID, []string{"without @"}},
		{"username Rocket.Chat refuses", f.admin, sb.ChatNewUser{Name: "X", Username: "a b", Email: "x@example.org", Password: "p"},
			sb.EINVALID, []string{"is not a valid username"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.c.CreateUser(ctx(t), tt.u)
			checkErr(t, err, tt.c.authToken, tt.wantCode, tt.wantMsg...)
		})
	}
}

func TestLogin(t *testing.T) {
	f := newAdmFixture(t)
	early, err := f.admin.CreateUser(ctx(t), sb.ChatNewUser{Name: "Early", Username: "early", Email: "early@example.org",
		Password: "Early-Pass-1", Roles: []string{"bot", "user"}, Verified: true}) // Auto_Opt_In on
	if err != nil {
		t.Fatal(err)
	}
	_ = early
	id := f.agent(t, "bot", "user")

	uid, token, err := Login(ctx(t), f.s.URL, "agent-hermes", "Secret-Pass-1", f.s.Client())
	if err != nil || uid != id || token == "" {
		t.Fatalf("Login = %q, %q, %v", uid, token, err)
	}
	r := lastRequest(t, f.s, "login")
	golden(t, "login.golden.json", r.Body)
	if r.Header.Get("X-User-Id") != "" || r.Header.Get("X-Auth-Token") != "" {
		t.Errorf("login sent credentials headers: %v", r.Header)
	}
	c, err := New(f.s.URL, uid, token, f.s.Client())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Subscriptions(ctx(t), t0); err != nil {
		t.Errorf("the login token does not work: %v", err)
	}

	t.Run("totp-required is its own error", func(t *testing.T) {
		_, _, err := Login(ctx(t), f.s.URL, "early", "Early-Pass-1", f.s.Client())
		checkErr(t, err, "Early-Pass-1", sb.EFORBIDDEN, `user "early" has two-factor authentication (method email)`, sb.ChatSettingEmail2FAAutoOptIn, "create it again")
		if !errors.Is(err, sb.ErrTwoFactorRequired) {
			t.Errorf("errors.Is(err, ErrTwoFactorRequired) = false: %v", err)
		}
		if status := sb.HTTPStatus(err); status != 401 {
			t.Errorf("HTTP status = %d, want 401", status)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		_, _, err := Login(ctx(t), f.s.URL, "agent-hermes", "Wrong-Pass-9", f.s.Client())
		checkErr(t, err, "Wrong-Pass-9", sb.EUNAUTHORIZED, `login refused for "agent-hermes"`)
		if errors.Is(err, sb.ErrTwoFactorRequired) {
			t.Error("a wrong password reads as 2FA")
		}
	})
	t.Run("the bare 401 of a ≥ 8.0 server", func(t *testing.T) {
		// ApiClass.ts with applyBreakingChanges: unauthorized() only.
		f.s.FailNext("login", 401, `{"success":false,"error":"unauthorized"}`)
		_, _, err := Login(ctx(t), f.s.URL, "agent-hermes", "Secret-Pass-1", f.s.Client())
		checkErr(t, err, "Secret-Pass-1", sb.EUNAUTHORIZED, "two-factor code")
	})
	t.Run("a server that echoes the password", func(t *testing.T) {
		f.s.FailNext("login", 400, `{"success":false,"error":"bad password Secret-Pass-1 [error-x]","errorType":"error-x"}`)
		_, _, err := Login(ctx(t), f.s.URL, "agent-hermes", "Secret-Pass-1", f.s.Client())
		checkErr(t, err, "Secret-Pass-1", sb.EINVALID)
	})
	t.Run("rate limited", func(t *testing.T) {
		f.s.FailNext("login", 429, `{"success":false,"error":"Error, too many requests. Please slow down. You must wait 7 seconds before trying this endpoint again. [error-too-many-requests]"}`)
		_, _, err := Login(ctx(t), f.s.URL, "agent-hermes", "Secret-Pass-1", f.s.Client())
		if e := checkErr(t, err, "", sb.ERATELIMITED); e.RetryAfter.Seconds() != 7 {
			t.Errorf("RetryAfter = %v", e.RetryAfter)
		}
	})
	t.Run("a redirect is not followed with the password", func(t *testing.T) {
		var got int
		elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got++ }))
		t.Cleanup(elsewhere.Close)
		redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
		}))
		t.Cleanup(redirect.Close)
		_, _, err := Login(ctx(t), redirect.URL, "agent-hermes", "Secret-Pass-1", nil)
		checkErr(t, err, "Secret-Pass-1", sb.EINTERNAL, "HTTP 307")
		if got != 0 {
			t.Errorf("the redirect target got %d requests", got)
		}
	})
	for _, tt := range []struct{ name, base, user, pw, want string }{
		{"no base URL", "", "u", "p", "not an http(s) URL"},
		{"no user", f.s.URL, " ", "p", "username is empty"},
		{"no password", f.s.URL, "u", "", "password is empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Login(ctx(t), tt.base, tt.user, tt.pw, nil)
			checkErr(t, err, "", sb.EINVALID, tt.want)
		})
	}
}

func TestGeneratePersonalAccessToken(t *testing.T) {
	f := newAdmFixture(t)
	id := f.agent(t, "bot", "user")
	general := f.s.AddChannel("general", "alice", "agent-hermes")
	_, login, err := Login(ctx(t), f.s.URL, "agent-hermes", "Secret-Pass-1", f.s.Client())
	if err != nil {
		t.Fatal(err)
	}
	asAgent, err := New(f.s.URL, id, login, f.s.Client())
	if err != nil {
		t.Fatal(err)
	}
	pat, err := asAgent.GeneratePersonalAccessToken(ctx(t), "switchboard", false)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "users.generatePersonalAccessToken.golden.json", lastRequest(t, f.s, "users.generatePersonalAccessToken").Body)

	withPAT, err := New(f.s.URL, id, pat, f.s.Client())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := withPAT.PostMessage(ctx(t), general, "hello from the PAT", ""); err != nil {
		t.Fatalf("PostMessage with the PAT: %v", err)
	}
	if err := asAgent.Logout(ctx(t)); err != nil {
		t.Fatalf("Logout: %v", err)
	}
	_, err = asAgent.Subscriptions(ctx(t), t0)
	checkErr(t, err, login, sb.EUNAUTHORIZED)
	if _, err := withPAT.Subscriptions(ctx(t), t0); err != nil {
		t.Errorf("the PAT stopped working after the login token's logout: %v", err)
	}

	t.Run("same name again", func(t *testing.T) {
		_, err := withPAT.GeneratePersonalAccessToken(ctx(t), "switchboard", false)
		checkErr(t, err, pat, sb.ECONFLICT, `token named "switchboard"`)
	})
	t.Run("bot role alone", func(t *testing.T) {
		botID, err := f.admin.CreateUser(ctx(t), sb.ChatNewUser{Name: "B", Username: "bot-only", Email: "b@example.org", Password: "Bot-Pass-1", Roles: []string{"bot"}, Verified: true})
		if err != nil {
			t.Fatal(err)
		}
		_, tok, err := Login(ctx(t), f.s.URL, "bot-only", "Bot-Pass-1", f.s.Client())
		if err != nil {
			t.Fatal(err)
		}
		bot, _ := New(f.s.URL, botID, tok, f.s.Client())
		_, err = bot.GeneratePersonalAccessToken(ctx(t), "t", false)
		checkErr(t, err, tok, sb.EFORBIDDEN, "create-personal-access-tokens", "role user")
	})
	t.Run("a second factor is wanted", func(t *testing.T) {
		f.s.FailNext("users.generatePersonalAccessToken", 400, `{"success":false,"error":"TOTP Required [totp-required]","errorType":"totp-required","details":{"method":"password","codeGenerated":false,"availableMethods":[]}}`)
		_, err := withPAT.GeneratePersonalAccessToken(ctx(t), "other", false)
		checkErr(t, err, pat, sb.EFORBIDDEN, "second factor (method password)")
		if !errors.Is(err, sb.ErrTwoFactorRequired) {
			t.Errorf("errors.Is(err, ErrTwoFactorRequired) = false: %v", err)
		}
	})
	t.Run("empty name", func(t *testing.T) {
		_, err := withPAT.GeneratePersonalAccessToken(ctx(t), " ", false)
		checkErr(t, err, pat, sb.EINVALID, "token name is empty")
	})
}

func TestUserInfo(t *testing.T) {
	f := newAdmFixture(t)
	id := f.agent(t, "bot", "user")
	a, err := f.admin.UserInfo(ctx(t), "@agent-hermes")
	if err != nil {
		t.Fatal(err)
	}
	want := sb.ChatAccount{ID: id, Username: "agent-hermes", Name: "Hermes", Email: "hermes@example.org", Roles: []string{"bot", "user"}, Active: true, Type: "user"}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("UserInfo = %+v, want %+v", a, want)
	}
	if q := lastRequest(t, f.s, "users.info").Query.Get("username"); q != "agent-hermes" {
		t.Errorf("username query = %q", q)
	}
	_, err = f.admin.UserInfo(ctx(t), "nobody")
	checkErr(t, err, f.rootToken, sb.ENOTFOUND, `unknown user "nobody"`)
	_, err = f.admin.UserInfo(ctx(t), "")
	checkErr(t, err, f.rootToken, sb.EINVALID)
}

func TestAdminCallsAreCountedAndShareTheTable(t *testing.T) {
	f := newAdmFixture(t)
	f.admin.GetSetting(ctx(t), sb.ChatSettingEmail2FAAutoOptIn)
	f.admin.UserInfo(ctx(t), "alice")
	if got := f.admin.Calls(); got["settings"] != 1 || got["users.info"] != 1 {
		t.Errorf("Calls = %v", got)
	}
	f.s.SetDown(true)
	_, err := f.admin.GetSetting(ctx(t), sb.ChatSettingEmail2FAAutoOptIn)
	checkErr(t, err, f.rootToken, sb.EUNAVAILABLE, "HTTP 503")
	if !strings.HasPrefix(f.admin.BaseURL(), "http://127.0.0.1:") {
		t.Errorf("BaseURL = %q", f.admin.BaseURL())
	}
}
