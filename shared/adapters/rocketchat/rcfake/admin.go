package rcfake

// Provisioning endpoints: settings/:_id, users.create, users.info,
// login, logout and users.generatePersonalAccessToken, with the e-mail 2FA
// trap measured on a live Rocket.Chat 8.7:
//
//   - a user created while Accounts_TwoFactorAuthentication_Enabled,
//     …_By_Email_Enabled and …_By_Email_Auto_Opt_In are all on carries
//     e-mail 2FA for good (saveUser, newest source; older versions look at
//     Auto_Opt_In alone). Auto_Opt_In is on by default, as on a fresh
//     install, so SetSetting(SettingEmail2FAAutoOptIn, false) first where a
//     test wants provisioning to work;
//   - such a user with a verified e-mail address (EmailCheck.isEnabled
//     needs one) cannot log in: 401 totp-required with the body measured
//     on 8.7. No code is ever mailed, so the fake has no way
//     through with a code;
//   - users.generatePersonalAccessToken needs create-personal-access-tokens,
//     which the roles admin and user carry and bot does not, and
//     accepts only tokenName and bypassTwoFactor ("must NOT have additional
//     properties", so no userId). The twoFactorRequired check of the route
//     is not modelled: Rocket.Chat waives it right after a user's creation,
//     which is when provisioning calls it.
//
// Permissions the fake knows: the role admin has them all; user has
// create-personal-access-tokens; bot and the others none of these.

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// SettingEmail2FAAutoOptIn is the setting that gives new users e-mail 2FA.
const SettingEmail2FAAutoOptIn = "Accounts_TwoFactorAuthentication_By_Email_Auto_Opt_In"

// Other settings the fake starts with, at Rocket.Chat's defaults.
const (
	Setting2FAEnabled      = "Accounts_TwoFactorAuthentication_Enabled"
	SettingEmail2FAEnabled = "Accounts_TwoFactorAuthentication_By_Email_Enabled"
)

// adminState is what the provisioning endpoints add to the server; lazily
// built under s.mu (see admin()).
type adminState struct {
	settings map[string]any
	accounts map[string]*account          // by user id; users from users.create or SetPassword
	pats     map[string]map[string]string // user id → token name → token
}

// account is the part of a user that logging in needs.
type account struct {
	password, email       string
	verified, email2fa    bool
	requirePasswordChange bool
	createdAt             time.Time
}

// admin returns the provisioning state; the caller holds s.mu.
func (s *Server) admin() *adminState {
	if s.adm == nil {
		s.adm = &adminState{
			settings: map[string]any{
				Setting2FAEnabled:                              true,
				SettingEmail2FAEnabled:                         true,
				SettingEmail2FAAutoOptIn:                       true, // a fresh install's default; on in the 8.7 measured
				"API_Enable_Personal_Access_Tokens":            true,
				"Accounts_TwoFactorAuthentication_RememberFor": 1800,
			},
			accounts: map[string]*account{},
			pats:     map[string]map[string]string{},
		}
	}
	return s.adm
}

// knownRoles are the roles users.create accepts (Rocket.Chat's built-in ones).
var knownRoles = map[string]bool{"admin": true, "user": true, "bot": true, "guest": true, "moderator": true,
	"owner": true, "leader": true, "app": true, "anonymous": true, "livechat-agent": true, "livechat-manager": true,
	"livechat-monitor": true, "livechat-guest": true}

// can reports whether u holds permission.
func (u *user) can(permission string) bool {
	if u.has("admin") {
		return true
	}
	return permission == "create-personal-access-tokens" && u.has("user")
}

// --- setup and inspection ---

// SetSetting sets a server setting, e.g. SetSetting(SettingEmail2FAAutoOptIn,
// false). It affects users created afterwards, as in Rocket.Chat.
func (s *Server) SetSetting(id string, value any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.admin().settings[id] = value
}

// Setting returns a setting's value.
func (s *Server) Setting(id string) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.admin().settings[id]
	return v, ok
}

// SetPassword gives a user from AddUser a password, so that it can log in.
// It panics for an unknown username.
func (s *Server) SetPassword(username, password string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.mustUser(username)
	a := s.admin().accounts[u.id]
	if a == nil {
		a = &account{email: username + "@rcfake.invalid", verified: true, createdAt: s.clock()}
		s.admin().accounts[u.id] = a
	}
	a.password = password
}

// User is a user as tests inspect it.
type User struct {
	ID, Username, Name, Email string
	Roles                     []string
	Verified                  bool
	// EmailTwoFactor is the e-mail 2FA flag set at creation while
	// SettingEmail2FAAutoOptIn was on.
	EmailTwoFactor        bool
	RequirePasswordChange bool
	// TokenNames are the user's personal access tokens, sorted.
	TokenNames []string
}

// User returns the user named username.
func (s *Server) User(username string) (User, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.byName[username]
	if u == nil {
		return User{}, false
	}
	out := User{ID: u.id, Username: u.username, Name: u.name, Roles: slices.Clone(u.roles)}
	if a := s.admin().accounts[u.id]; a != nil {
		out.Email, out.Verified, out.EmailTwoFactor, out.RequirePasswordChange = a.email, a.verified, a.email2fa, a.requirePasswordChange
	}
	for name := range s.admin().pats[u.id] {
		out.TokenNames = append(out.TokenNames, name)
	}
	sort.Strings(out.TokenNames)
	return out, true
}

// Usernames returns every user's username, sorted.
func (s *Server) Usernames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.byName))
	for name := range s.byName {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// --- routing ---

// serveAdmin answers the provisioning routes and reports whether it did.
// The caller holds s.mu and has authenticated x.user (nil without valid
// headers).
func (x *exchange) serveAdmin() bool {
	switch x.route {
	case "login", "logout", "settings", "users.create", "users.info", "users.generatePersonalAccessToken":
	default:
		return false
	}
	method := http.MethodPost
	if x.route == "settings" || x.route == "users.info" {
		method = http.MethodGet // POST settings/:_id (edit) is not served
	}
	if x.r.Method != method {
		x.htmlNotFound()
		return true
	}
	if !x.rateLimit() {
		return true
	}
	switch x.route {
	case "login":
		x.login()
		return true
	case "users.generatePersonalAccessToken":
		// A typed route (ajv body schema): input is checked before the
		// login.
		if !x.checkGenerateTokenBody() {
			return true
		}
	}
	if x.user == nil {
		x.json(http.StatusUnauthorized, map[string]any{"success": false, "error": "You must be logged in to do this."})
		return true
	}
	switch x.route {
	case "logout":
		x.logout()
	case "settings":
		x.getSetting()
	case "users.create":
		x.usersCreate()
	case "users.info":
		x.usersInfo()
	case "users.generatePersonalAccessToken":
		x.generatePersonalAccessToken()
	}
	return true
}

// typedInvalid is a typed route's ajv failure.
func (x *exchange) typedInvalid(reason string) {
	x.json(http.StatusBadRequest, map[string]any{"success": false, "errorType": "error-invalid-params", "error": reason})
}

// meteorErrorDetails is meteorError with a details object.
func (x *exchange) meteorErrorDetails(code, reason string, details map[string]any) {
	x.json(http.StatusBadRequest, map[string]any{"success": false, "error": reason + " [" + code + "]", "errorType": code, "details": details})
}

// --- settings/:_id (apps/meteor/app/api/server/v1/settings.ts) ---

func (x *exchange) getSetting() {
	id := strings.TrimPrefix(x.r.URL.Path, "/api/v1/settings/")
	if id == "" || strings.Contains(id, "/") || id == x.r.URL.Path {
		x.htmlNotFound()
		return
	}
	if !x.user.can("view-privileged-setting") {
		// ≥ 8.0: permissionsRequired → Meteor error-forbidden → 403 with its message.
		x.json(http.StatusForbidden, map[string]any{"success": false,
			"error": "User does not have the permissions required for this action [error-forbidden]"})
		return
	}
	v, ok := x.s.admin().settings[id]
	if !ok {
		x.json(http.StatusBadRequest, map[string]any{"success": false}) // API.v1.failure()
		return
	}
	x.ok(map[string]any{"_id": id, "value": v})
}

// --- users.create (saveUser / validateUserData) ---

var createUserKeys = map[string]bool{"email": true, "name": true, "password": true, "username": true, "active": true,
	"bio": true, "nickname": true, "statusText": true, "roles": true, "joinDefaultChannels": true,
	"requirePasswordChange": true, "setRandomPassword": true, "sendWelcomeEmail": true, "verified": true,
	"customFields": true, "fields": true}

// validUsername is UTF8_User_Names_Validation's default.
var validUsername = regexp.MustCompile(`^[0-9a-zA-Z-_.]+$`)

func (x *exchange) usersCreate() {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(x.body, &raw); err != nil || raw == nil {
		x.invalidParams("must be object")
		return
	}
	for k := range raw {
		if !createUserKeys[k] {
			x.invalidParams("must NOT have additional properties")
			return
		}
	}
	for _, k := range []string{"email", "name", "password", "username"} {
		if _, ok := raw[k]; !ok {
			x.invalidParams("must have required property '" + k + "'")
			return
		}
	}
	var in struct {
		Email, Name, Password, Username string
		Roles                           []string
		Verified, RequirePasswordChange bool
	}
	if err := json.Unmarshal(x.body, &in); err != nil {
		x.invalidParams("must be object")
		return
	}
	const method = "insertOrUpdateUser"
	switch {
	case !x.user.can("create-user"):
		x.meteorErrorDetails("error-action-not-allowed", "Adding user is not allowed", map[string]any{"method": method, "action": "Adding_user"})
		return
	case slices.ContainsFunc(in.Roles, func(r string) bool { return !knownRoles[r] }):
		x.meteorErrorDetails("error-action-not-allowed", "The field Roles consist invalid role id", map[string]any{"method": method, "action": "Assign_role"})
		return
	case strings.TrimSpace(in.Name) == "":
		x.meteorErrorDetails("error-the-field-is-required", "The field Name is required", map[string]any{"method": method, "field": "Name"})
		return
	case !validUsername.MatchString(in.Username):
		x.meteorErrorDetails("error-input-is-not-a-valid-field", in.Username+" is not a valid username",
			map[string]any{"method": method, "input": in.Username, "field": "Username"})
		return
	case x.s.usernameTaken(in.Username):
		x.meteorErrorDetails("error-field-unavailable", in.Username+" is already in use :(", map[string]any{"method": method, "field": in.Username})
		return
	case x.s.emailTaken(in.Email):
		x.meteorErrorDetails("error-field-unavailable", in.Email+" is already in use :(", map[string]any{"method": method, "field": in.Email})
		return
	}
	roles := in.Roles
	if len(roles) == 0 {
		roles = []string{"user"}
	}
	st := x.s.admin()
	now := x.s.clock()
	u := &user{id: x.s.newID(), username: in.Username, name: in.Name, roles: slices.Clone(roles)}
	a := &account{password: in.Password, email: in.Email, verified: in.Verified, requirePasswordChange: in.RequirePasswordChange,
		createdAt: now, email2fa: st.on(Setting2FAEnabled) && st.on(SettingEmail2FAEnabled) && st.on(SettingEmail2FAAutoOptIn)}
	x.s.users[u.id], x.s.byName[u.username] = u, u
	st.accounts[u.id] = a
	x.ok(map[string]any{"user": x.s.wireAccount(u, true)})
}

func (st *adminState) on(id string) bool { v, _ := st.settings[id].(bool); return v }

func (s *Server) usernameTaken(name string) bool {
	for n := range s.byName {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

func (s *Server) emailTaken(email string) bool {
	for _, a := range s.admin().accounts {
		if strings.EqualFold(a.email, email) {
			return true
		}
	}
	return false
}

// wireAccount is the user object of users.create, users.info and login's
// "me" (not verified field by field); full adds roles and e-mails,
// which only the user itself and admins see.
func (s *Server) wireAccount(u *user, full bool) map[string]any {
	typ := "user"
	if u.has("bot") && !u.has("user") {
		typ = "bot"
	}
	w := map[string]any{"_id": u.id, "username": u.username, "name": u.name, "status": "offline",
		"active": true, "type": typ, "utcOffset": 0}
	if full {
		w["roles"] = slices.Clone(u.roles)
		if a := s.admin().accounts[u.id]; a != nil {
			w["emails"] = []any{map[string]any{"address": a.email, "verified": a.verified}}
			w["createdAt"] = iso(a.createdAt)
			w["requirePasswordChange"] = a.requirePasswordChange
		}
	}
	return w
}

// --- users.info ---

func (x *exchange) usersInfo() {
	q := x.r.URL.Query()
	var u *user
	switch {
	case q.Get("userId") != "":
		u = x.s.users[q.Get("userId")]
	case q.Get("username") != "":
		u = x.s.byName[q.Get("username")]
	default:
		x.plainError("Invalid search query.")
		return
	}
	if u == nil {
		x.plainError("User not found.")
		return
	}
	x.ok(map[string]any{"user": x.s.wireAccount(u, u.id == x.user.id || x.user.has("admin"))})
}

// --- login / logout (ApiClass.ts _initAuth) ---

func (x *exchange) login() {
	var in struct {
		User     string `json:"user"`
		Username string `json:"username"`
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	if err := json.Unmarshal(x.body, &in); err != nil {
		x.loginRefused(400, "Unrecognized options for login request")
		return
	}
	var u *user
	switch {
	case in.Password == "":
		x.loginRefused(400, "Unrecognized options for login request")
		return
	case in.User != "" && strings.Contains(in.User, "@"):
		u = x.s.userByEmail(in.User)
	case in.User != "":
		u = x.s.byName[in.User]
	case in.Username != "":
		u = x.s.byName[in.Username]
	case in.Email != "":
		u = x.s.userByEmail(in.Email)
	}
	st := x.s.admin()
	var a *account
	if u != nil {
		a = st.accounts[u.id]
	}
	switch {
	case u == nil || a == nil:
		// "User not found" is reported as Unauthorized.
		x.json(http.StatusUnauthorized, map[string]any{"success": false, "status": "error", "error": "Unauthorized", "message": "Unauthorized"})
		return
	case a.password != in.Password:
		x.loginRefused(403, "Incorrect password") // [U] the reason text
		return
	case st.on(Setting2FAEnabled) && st.on(SettingEmail2FAEnabled) && a.email2fa && a.verified:
		// checkCodeForUser → Meteor.Error('totp-required', 'TOTP Required',
		// {method, codeGenerated, emailOrUsername, availableMethods}); the
		// body 8.7 was measured to send (the ≤ 7.x login error shape).
		x.json(http.StatusUnauthorized, map[string]any{"success": false, "status": "error", "error": "totp-required",
			"message": "TOTP Required", "details": map[string]any{"method": "email", "codeGenerated": true,
				"emailOrUsername": u.username, "availableMethods": []string{"email"}}})
		return
	}
	token := x.s.newToken()
	x.s.byToken[token] = u
	x.ok(map[string]any{"status": "success", "data": map[string]any{"userId": u.id, "authToken": token,
		"me": x.s.wireAccount(u, true)}})
}

// loginRefused is the login route's catch for a Meteor.Error with a numeric
// error (the pre-8.0 shape, like totp-required above).
func (x *exchange) loginRefused(code int, reason string) {
	x.json(http.StatusUnauthorized, map[string]any{"success": false, "status": "error", "error": code, "message": reason})
}

func (s *Server) userByEmail(email string) *user {
	for id, a := range s.admin().accounts {
		if strings.EqualFold(a.email, email) {
			return s.users[id]
		}
	}
	return nil
}

// newToken is a login or personal access token like Random.secret().
func (s *Server) newToken() string {
	return s.randomString("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", 43)
}

// logout removes the token of the request, whatever its kind (a personal
// access token too, as Rocket.Chat's logout pulls any login token).
func (x *exchange) logout() {
	delete(x.s.byToken, x.r.Header.Get("X-Auth-Token"))
	for _, names := range x.s.admin().pats {
		for name, tok := range names {
			if tok == x.r.Header.Get("X-Auth-Token") {
				delete(names, name)
			}
		}
	}
	x.json(http.StatusOK, map[string]any{"status": "success", "data": map[string]any{"message": "You've been logged out!"}})
}

// --- users.generatePersonalAccessToken ---

func (x *exchange) checkGenerateTokenBody() bool {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(x.body, &raw); err != nil || raw == nil {
		x.typedInvalid("must be object")
		return false
	}
	for k := range raw {
		if k != "tokenName" && k != "bypassTwoFactor" {
			x.typedInvalid("must NOT have additional properties") // userId is refused
			return false
		}
	}
	if _, ok := raw["tokenName"]; !ok {
		x.typedInvalid("must have required property 'tokenName'")
		return false
	}
	return true
}

func (x *exchange) generatePersonalAccessToken() {
	var in struct {
		TokenName string `json:"tokenName"`
	}
	json.Unmarshal(x.body, &in)
	details := map[string]any{"method": "personalAccessTokens:generateToken"}
	st := x.s.admin()
	switch {
	case in.TokenName == "":
		x.plainError("The 'tokenName' param is required")
		return
	case !x.user.can("create-personal-access-tokens"):
		x.meteorErrorDetails("not-authorized", "Not Authorized", details)
		return
	case st.pats[x.user.id][in.TokenName] != "":
		x.meteorErrorDetails("error-token-already-exists", "A token with this name already exists", details)
		return
	}
	token := x.s.newToken()
	if st.pats[x.user.id] == nil {
		st.pats[x.user.id] = map[string]string{}
	}
	st.pats[x.user.id][in.TokenName] = token
	x.s.byToken[token] = x.user
	x.ok(map[string]any{"token": token})
}
