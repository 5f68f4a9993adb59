package rcfake_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
)

// admWorld is a fake with an admin (root) and a plain user (alice).
type admWorld struct {
	s                   *rcfake.Server
	rootID, rootToken   string
	aliceID, aliceToken string
}

func newAdmWorld(t *testing.T) *admWorld {
	t.Helper()
	s := rcfake.New()
	t.Cleanup(s.Close)
	w := &admWorld{s: s}
	w.rootID, w.rootToken = s.AddUser("root", "admin", "user")
	w.aliceID, w.aliceToken = s.AddUser("alice")
	return w
}

// call sends a JSON request (body nil: none) with credentials when uid is
// set and returns the status and the decoded answer.
func (w *admWorld) call(t *testing.T, method, path, uid, token string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, w.s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if uid != "" {
		req.Header.Set("X-User-Id", uid)
		req.Header.Set("X-Auth-Token", token)
	}
	resp, err := w.s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: answer %q is not JSON: %v", method, path, raw, err)
	}
	return resp.StatusCode, out
}

func (w *admWorld) create(t *testing.T, username string, roles ...string) string {
	t.Helper()
	status, out := w.call(t, "POST", "/api/v1/users.create", w.rootID, w.rootToken, map[string]any{
		"name": strings.ToUpper(username), "username": username, "email": username + "@example.org",
		"password": "pw-" + username, "roles": roles, "verified": true})
	if status != 200 {
		t.Fatalf("users.create %s: %d %v", username, status, out)
	}
	return out["user"].(map[string]any)["_id"].(string)
}

func (w *admWorld) login(t *testing.T, username string) (int, map[string]any) {
	t.Helper()
	return w.call(t, "POST", "/api/v1/login", "", "", map[string]any{"user": username, "password": "pw-" + username})
}

func wantBody(t *testing.T, got map[string]any, want string) {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, w) {
		gb, _ := json.Marshal(got)
		t.Errorf("body = %s, want %s", gb, want)
	}
}

func TestSettingByID(t *testing.T) {
	w := newAdmWorld(t)
	tests := []struct {
		name, uid, token, id string
		wantStatus           int
		want                 string
	}{
		{"admin reads the private setting", w.rootID, w.rootToken, rcfake.SettingEmail2FAAutoOptIn, 200,
			`{"_id":"Accounts_TwoFactorAuthentication_By_Email_Auto_Opt_In","value":true,"success":true}`},
		{"unknown setting is a bare 400", w.rootID, w.rootToken, "No_Such_Setting", 400, `{"success":false}`},
		{"a user without view-privileged-setting", w.aliceID, w.aliceToken, rcfake.SettingEmail2FAAutoOptIn, 403,
			`{"success":false,"error":"User does not have the permissions required for this action [error-forbidden]"}`},
		{"no credentials", "", "", rcfake.SettingEmail2FAAutoOptIn, 401, `{"success":false,"error":"You must be logged in to do this."}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := w.call(t, "GET", "/api/v1/settings/"+tt.id, tt.uid, tt.token, nil)
			if status != tt.wantStatus {
				t.Errorf("status = %d, want %d", status, tt.wantStatus)
			}
			wantBody(t, out, tt.want)
		})
	}
	w.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, false)
	_, out := w.call(t, "GET", "/api/v1/settings/"+rcfake.SettingEmail2FAAutoOptIn, w.rootID, w.rootToken, nil)
	if out["value"] != false {
		t.Errorf("after SetSetting(false): value = %v", out["value"])
	}
}

func TestUsersCreate(t *testing.T) {
	w := newAdmWorld(t)
	id := w.create(t, "agent-hermes", "bot", "user")
	u, ok := w.s.User("agent-hermes")
	if !ok || u.ID != id || !reflect.DeepEqual(u.Roles, []string{"bot", "user"}) || u.Email != "agent-hermes@example.org" || !u.Verified {
		t.Errorf("User = %+v, %v", u, ok)
	}
	if !u.EmailTwoFactor {
		t.Error("created while Auto_Opt_In was on: EmailTwoFactor = false, want true")
	}

	tests := []struct {
		name, uid, token string
		body             map[string]any
		wantStatus       int
		want             string
	}{
		{"duplicate username (any case)", w.rootID, w.rootToken,
			map[string]any{"name": "X", "username": "Agent-Hermes", "email": "x@example.org", "password": "p"}, 400,
			`{"success":false,"error":"Agent-Hermes is already in use :( [error-field-unavailable]","errorType":"error-field-unavailable","details":{"method":"insertOrUpdateUser","field":"Agent-Hermes"}}`},
		{"duplicate e-mail", w.rootID, w.rootToken,
			map[string]any{"name": "X", "username": "x", "email": "agent-hermes@example.org", "password": "p"}, 400,
			`{"success":false,"error":"agent-hermes@example.org is already in use :( [error-field-unavailable]","errorType":"error-field-unavailable","details":{"method":"insertOrUpdateUser","field":"agent-hermes@example.org"}}`},
		{"not an admin", w.aliceID, w.aliceToken,
			map[string]any{"name": "X", "username": "x", "email": "x@example.org", "password": "p"}, 400,
			`{"success":false,"error":"Adding user is not allowed [error-action-not-allowed]","errorType":"error-action-not-allowed","details":{"method":"insertOrUpdateUser","action":"Adding_user"}}`},
		{"unknown role", w.rootID, w.rootToken,
			map[string]any{"name": "X", "username": "x", "email": "x@example.org", "password": "p", "roles": []string{"robot"}}, 400,
			`{"success":false,"error":"The field Roles consist invalid role id [error-action-not-allowed]","errorType":"error-action-not-allowed","details":{"method":"insertOrUpdateUser","action":"Assign_role"}}`},
		{"missing e-mail", w.rootID, w.rootToken,
			map[string]any{"name": "X", "username": "x", "password": "p"}, 400,
			`{"success":false,"error":"must have required property 'email' [invalid-params]","errorType":"invalid-params"}`},
		{"no credentials", "", "",
			map[string]any{"name": "X", "username": "x", "email": "x@example.org", "password": "p"}, 401,
			`{"success":false,"error":"You must be logged in to do this."}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := w.s.Usernames()
			status, out := w.call(t, "POST", "/api/v1/users.create", tt.uid, tt.token, tt.body)
			if status != tt.wantStatus {
				t.Errorf("status = %d, want %d", status, tt.wantStatus)
			}
			wantBody(t, out, tt.want)
			if got := w.s.Usernames(); !reflect.DeepEqual(got, before) {
				t.Errorf("users = %v, want unchanged %v", got, before)
			}
		})
	}
}

func TestLoginAndEmailTwoFactor(t *testing.T) {
	w := newAdmWorld(t)
	w.create(t, "early", "bot", "user") // Auto_Opt_In on: e-mail 2FA for good
	w.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, false)
	lateID := w.create(t, "late", "bot", "user")

	t.Run("a user created while Auto_Opt_In was on gets totp-required, also after the switch", func(t *testing.T) {
		status, out := w.login(t, "early")
		if status != 401 {
			t.Errorf("status = %d, want 401", status)
		}
		wantBody(t, out, `{"success":false,"status":"error","error":"totp-required","message":"TOTP Required",
			"details":{"method":"email","codeGenerated":true,"emailOrUsername":"early","availableMethods":["email"]}}`)
	})
	t.Run("a user created after the switch logs in and the token works", func(t *testing.T) {
		status, out := w.login(t, "late")
		if status != 200 || out["status"] != "success" || out["success"] != true {
			t.Fatalf("login: %d %v", status, out)
		}
		data := out["data"].(map[string]any)
		if data["userId"] != lateID {
			t.Errorf("userId = %v, want %s", data["userId"], lateID)
		}
		me := data["me"].(map[string]any)
		if me["username"] != "late" {
			t.Errorf("me = %v", me)
		}
		token := data["authToken"].(string)
		if status, out := w.call(t, "GET", "/api/v1/subscriptions.get", lateID, token, nil); status != 200 {
			t.Errorf("subscriptions.get with the login token: %d %v", status, out)
		}
		if status, _ := w.call(t, "POST", "/api/v1/logout", lateID, token, nil); status != 200 {
			t.Errorf("logout: %d", status)
		}
		if status, _ := w.call(t, "GET", "/api/v1/subscriptions.get", lateID, token, nil); status != 401 {
			t.Errorf("after logout: status %d, want 401", status)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		status, out := w.call(t, "POST", "/api/v1/login", "", "", map[string]any{"user": "late", "password": "nope"})
		if status != 401 || out["success"] != false || out["message"] != "Incorrect password" {
			t.Errorf("%d %v", status, out)
		}
	})
	t.Run("unknown user", func(t *testing.T) {
		status, out := w.call(t, "POST", "/api/v1/login", "", "", map[string]any{"user": "nobody", "password": "x"})
		if status != 401 {
			t.Errorf("status = %d", status)
		}
		wantBody(t, out, `{"success":false,"status":"error","error":"Unauthorized","message":"Unauthorized"}`)
	})
	t.Run("by e-mail address", func(t *testing.T) {
		status, out := w.call(t, "POST", "/api/v1/login", "", "", map[string]any{"user": "late@example.org", "password": "pw-late"})
		if status != 200 {
			t.Errorf("%d %v", status, out)
		}
	})
	t.Run("an unverified address gets no e-mail code (EmailCheck.isEnabled)", func(t *testing.T) {
		w.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, true)
		w.call(t, "POST", "/api/v1/users.create", w.rootID, w.rootToken, map[string]any{
			"name": "U", "username": "unverified", "email": "u@example.org", "password": "pw-unverified", "verified": false})
		if status, out := w.login(t, "unverified"); status != 200 {
			t.Errorf("%d %v", status, out)
		}
	})
}

func TestGeneratePersonalAccessToken(t *testing.T) {
	w := newAdmWorld(t)
	w.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, false)
	hermesID := w.create(t, "agent-hermes", "bot", "user")
	botID := w.create(t, "bot-only", "bot")
	general := w.s.AddChannel("general", "alice", "agent-hermes")
	loginToken := func(name string) string {
		t.Helper()
		_, out := w.login(t, name)
		return out["data"].(map[string]any)["authToken"].(string)
	}
	hermesLogin := loginToken("agent-hermes")

	status, out := w.call(t, "POST", "/api/v1/users.generatePersonalAccessToken", hermesID, hermesLogin,
		map[string]any{"tokenName": "switchboard", "bypassTwoFactor": false})
	if status != 200 || out["success"] != true {
		t.Fatalf("generate: %d %v", status, out)
	}
	pat := out["token"].(string)
	if len(pat) != 43 {
		t.Errorf("token %q has %d characters, want 43 like Random.secret()", pat, len(pat))
	}
	status, out = w.call(t, "POST", "/api/v1/chat.postMessage", hermesID, pat, map[string]any{"roomId": general, "text": "hello"})
	if status != 200 {
		t.Fatalf("postMessage with the PAT: %d %v", status, out)
	}
	if msgs := w.s.Messages(general); len(msgs) != 1 || msgs[0].Username != "agent-hermes" {
		t.Errorf("messages = %+v", msgs)
	}
	if u, _ := w.s.User("agent-hermes"); !reflect.DeepEqual(u.TokenNames, []string{"switchboard"}) {
		t.Errorf("TokenNames = %v", u.TokenNames)
	}

	tests := []struct {
		name, uid, token string
		body             map[string]any
		wantStatus       int
		want             string
	}{
		{"same name again", hermesID, hermesLogin, map[string]any{"tokenName": "switchboard"}, 400,
			`{"success":false,"error":"A token with this name already exists [error-token-already-exists]","errorType":"error-token-already-exists","details":{"method":"personalAccessTokens:generateToken"}}`},
		{"bot role alone lacks create-personal-access-tokens", botID, loginToken("bot-only"), map[string]any{"tokenName": "t"}, 400,
			`{"success":false,"error":"Not Authorized [not-authorized]","errorType":"not-authorized","details":{"method":"personalAccessTokens:generateToken"}}`},
		{"an admin cannot name another user (checked before auth)", "", "", map[string]any{"tokenName": "t", "userId": hermesID}, 400,
			`{"success":false,"errorType":"error-invalid-params","error":"must NOT have additional properties"}`},
		{"no credentials", "", "", map[string]any{"tokenName": "t"}, 401, `{"success":false,"error":"You must be logged in to do this."}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out := w.call(t, "POST", "/api/v1/users.generatePersonalAccessToken", tt.uid, tt.token, tt.body)
			if status != tt.wantStatus {
				t.Errorf("status = %d, want %d", status, tt.wantStatus)
			}
			wantBody(t, out, tt.want)
		})
	}
}

func TestUsersInfo(t *testing.T) {
	w := newAdmWorld(t)
	w.s.SetSetting(rcfake.SettingEmail2FAAutoOptIn, false)
	id := w.create(t, "agent-hermes", "bot", "user")

	_, out := w.call(t, "GET", "/api/v1/users.info?username=agent-hermes", w.rootID, w.rootToken, nil)
	u := out["user"].(map[string]any)
	if u["_id"] != id || u["roles"] == nil || u["emails"] == nil {
		t.Errorf("admin's view = %v", u)
	}
	_, out = w.call(t, "GET", "/api/v1/users.info?username=agent-hermes", w.aliceID, w.aliceToken, nil)
	if u := out["user"].(map[string]any); u["roles"] != nil || u["emails"] != nil {
		t.Errorf("another user's view shows roles or e-mails: %v", u)
	}
	status, out := w.call(t, "GET", "/api/v1/users.info?username=nobody", w.rootID, w.rootToken, nil)
	if status != 400 {
		t.Errorf("status = %d", status)
	}
	wantBody(t, out, `{"success":false,"error":"User not found."}`)
}

func TestSetPasswordLetsAnAddUserUserLogIn(t *testing.T) {
	w := newAdmWorld(t)
	w.s.SetPassword("alice", "pw-alice")
	status, out := w.login(t, "alice")
	if status != 200 || out["data"].(map[string]any)["userId"] != w.aliceID {
		t.Errorf("%d %v", status, out)
	}
}
