package rocketchat

// Provisioning calls: what an administrator's client needs to create
// an agent user, and what the new user needs to mint its own personal access
// token. The chain that works on a live 8.7:
//
//	users.create (roles bot + user) → login as that user →
//	users.generatePersonalAccessToken
//
// An admin cannot mint a token for another user: generatePersonalAccessToken
// refuses a userId ("must NOT have additional properties") and
// users.createToken wants a secret no setting provides.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// adminHint is added to the messages of calls that need an administrator.
const adminHint = "this call needs an administrator's token (instance.rocketchat.adminUserId and adminAuthToken)"

// BaseURL is the server the client talks to, without credentials or a
// trailing slash.
func (c *Client) BaseURL() string { return c.where }

// GetSetting returns the value of the server setting id (GET
// /api/v1/settings/:_id; booleans come as bool, numbers as float64). This
// is the endpoint an administrator reads a private setting with:
// settings.public lists only settings marked public, and
// SettingEmail2FAAutoOptIn is not (apps/meteor/server/settings/accounts.ts;
// apps/meteor/app/api/server/v1/settings.ts).
// Errors: ENOTFOUND for an unknown or hidden setting (the server answers a
// bare 400); EFORBIDDEN without view-privileged-setting (403 on 8.x);
// EUNAUTHORIZED for a wrong token (older servers also answer 401 for the
// missing permission).
func (c *Client) GetSetting(ctx context.Context, id string) (any, error) {
	const op = "rocketchat.settings"
	if err := segment(op, "GET /api/v1/settings/:_id", "setting id", id); err != nil {
		return nil, err
	}
	cl := api(http.MethodGet, "settings", id)
	cl.hint = adminHint
	var w struct {
		Value any `json:"value"`
	}
	err := c.roundTrip(ctx, request{call: cl}, true, &w, adminAnswers(func(a answer) *mapped {
		if a.bare() {
			return &mapped{code: sb.ENOTFOUND, msg: fmt.Sprintf("no setting %q on this server (or it is hidden); check the id", id)}
		}
		return nil
	}))
	if err != nil {
		return nil, err
	}
	return w.Value, nil
}

// CreateUser creates a user (users.create, permission create-user) and
// returns its id. It sends sendWelcomeEmail false.
// Errors: ECONFLICT when the username or the e-mail address is taken (400
// error-field-unavailable); EFORBIDDEN when the caller may not create users
// or assign a role (400 error-action-not-allowed, or 403); EINVALID for an
// unknown role, a username Rocket.Chat refuses or a password its policy
// refuses.
func (c *Client) CreateUser(ctx context.Context, u sb.ChatNewUser) (string, error) {
	const op = "rocketchat.users.create"
	cl := api(http.MethodPost, "users.create")
	cl.user = u.Username
	cl.hint = adminHint
	for _, f := range []struct{ name, v string }{{"username", u.Username}, {"name", u.Name}, {"email", u.Email}, {"password", u.Password}} {
		if strings.TrimSpace(f.v) == "" {
			return "", sb.E(op, sb.EINVALID, fmt.Sprintf("Rocket.Chat %s: the %s is empty", cl.endpoint(), f.name))
		}
	}
	if strings.HasPrefix(u.Username, "@") {
		return "", sb.E(op, sb.EINVALID, fmt.Sprintf("Rocket.Chat %s: write the username without @ (%s)", cl.endpoint(), strings.TrimPrefix(u.Username, "@")))
	}
	in := createUserBody{Name: u.Name, Username: u.Username, Email: u.Email, Password: u.Password, Roles: u.Roles,
		Verified: u.Verified, RequirePasswordChange: u.RequirePasswordChange, JoinDefaultChannels: u.JoinDefaultChannels}
	body, n, err := jsonBody(in)
	if err != nil {
		return "", sb.Wrap(op, sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the request cannot be encoded as JSON", err)
	}
	var w struct {
		User struct {
			ID string `json:"_id"`
		} `json:"user"`
	}
	err = c.roundTrip(ctx, request{call: cl, body: body, length: n, contentType: "application/json"}, true, &w, adminAnswers(func(a answer) *mapped {
		switch {
		case a.codes["error-field-unavailable"]:
			// saveUser's validateUserData: "<value> is already in use :(",
			// details.field is the value, username before e-mail.
			what := fmt.Sprintf("username %q", u.Username)
			if a.details.Field != "" && strings.EqualFold(a.details.Field, u.Email) && !strings.EqualFold(a.details.Field, u.Username) {
				what = fmt.Sprintf("e-mail address %q", u.Email)
			}
			return &mapped{code: sb.ECONFLICT, msg: fmt.Sprintf("the %s is already taken; choose another one, or delete the existing user in Administration → Users", what)}
		case a.codes["error-action-not-allowed"] && a.details.Action == "Adding_user":
			return &mapped{code: sb.EFORBIDDEN, msg: "this user may not create users (permission create-user)"}
		case a.codes["error-action-not-allowed"] && a.details.Action == "Assign_admin":
			return &mapped{code: sb.EFORBIDDEN, msg: "this user may not assign the admin role"}
		case a.codes["error-action-not-allowed"] && a.details.Action == "Assign_role":
			return &mapped{code: sb.EINVALID, msg: fmt.Sprintf("the server does not know one of the roles %v", u.Roles)}
		}
		return nil
	}))
	if err != nil {
		return "", err
	}
	if w.User.ID == "" {
		return "", sb.E(op, sb.EINTERNAL, "Rocket.Chat "+cl.endpoint()+": the answer carries no user id")
	}
	return w.User.ID, nil
}

// UserInfo describes the user with this username (users.info). A leading
// "@" is ignored.
// Errors: ENOTFOUND for an unknown user.
func (c *Client) UserInfo(ctx context.Context, username string) (sb.ChatAccount, error) {
	cl := api(http.MethodGet, "users.info")
	name := strings.TrimPrefix(strings.TrimSpace(username), "@")
	cl.user = name
	if name == "" {
		return sb.ChatAccount{}, sb.E("rocketchat.users.info", sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the username is empty")
	}
	var w struct {
		User wireAccount `json:"user"`
	}
	err := c.roundTrip(ctx, request{call: cl, query: url.Values{"username": {name}}}, true, &w, func(a answer) *mapped {
		if strings.HasPrefix(a.reason, "User not found") { // API.v1.failure('User not found.')
			return &mapped{code: sb.ENOTFOUND, msg: fmt.Sprintf("unknown user %q; check the username", name)}
		}
		return nil
	})
	if err != nil {
		return sb.ChatAccount{}, err
	}
	if w.User.ID == "" {
		return sb.ChatAccount{}, sb.E("rocketchat.users.info", sb.EINTERNAL, "Rocket.Chat "+cl.endpoint()+": the answer carries no user id")
	}
	return toAccount(w.User), nil
}

// GeneratePersonalAccessToken creates a personal access token named tokenName
// for the client's own user (users.generatePersonalAccessToken) and returns
// it; Rocket.Chat shows it only this once. bypassTwoFactor lets the token
// call two-factor-protected endpoints without a code. The endpoint takes no
// userId: a token is always minted for the caller (measured on 8.7), so the
// client must act as the new user, e.g. with the token Login returned.
// Errors: EFORBIDDEN when the user lacks create-personal-access-tokens (400
// not-authorized; the role user carries it, bot does not), or, with
// ErrTwoFactorRequired in the chain, when the server wants a second factor;
// ECONFLICT when the user already has a token of that name.
func (c *Client) GeneratePersonalAccessToken(ctx context.Context, tokenName string, bypassTwoFactor bool) (string, error) {
	const op = "rocketchat.users.generatePersonalAccessToken"
	cl := api(http.MethodPost, "users.generatePersonalAccessToken")
	if strings.TrimSpace(tokenName) == "" {
		return "", sb.E(op, sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the token name is empty")
	}
	body, n, err := jsonBody(generateTokenBody{TokenName: tokenName, BypassTwoFactor: bypassTwoFactor})
	if err != nil {
		return "", sb.Wrap(op, sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the request cannot be encoded as JSON", err)
	}
	var w struct {
		Token string `json:"token"`
	}
	err = c.roundTrip(ctx, request{call: cl, body: body, length: n, contentType: "application/json"}, true, &w, func(a answer) *mapped {
		switch {
		case a.codes["not-authorized"]:
			return &mapped{code: sb.EFORBIDDEN, msg: "this user may not create personal access tokens (permission create-personal-access-tokens); give it the role user — bot alone does not carry it"}
		case a.codes["error-token-already-exists"]:
			return &mapped{code: sb.ECONFLICT, msg: fmt.Sprintf("the user already has a token named %q; choose another name or remove the old token under My Account → Personal Access Tokens", tokenName)}
		case a.codes["totp-required"]:
			// twoFactorRequired route: waived right after the user's
			// creation and after a login with the code (RememberFor).
			return &mapped{code: sb.EFORBIDDEN, twoFactor: true, msg: fmt.Sprintf("Rocket.Chat wants a second factor (method %s) before it creates a token; create the token right after the user was created and logged in, or once by hand in the UI", a.details.orUnknown())}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if w.Token == "" {
		return "", sb.E(op, sb.EINTERNAL, "Rocket.Chat "+cl.endpoint()+": the answer carries no token")
	}
	return w.Token, nil
}

// Logout ends the session of the client's token (POST /api/v1/logout). Use
// it for a login token from Login once it is no longer needed; a personal
// access token is removed in the user's account instead.
// Errors: EUNAUTHORIZED when the token is no longer valid.
func (c *Client) Logout(ctx context.Context) error {
	return c.roundTrip(ctx, request{call: api(http.MethodPost, "logout")}, true, nil, nil)
}

// Login signs in with a password (POST /api/v1/login, no auth headers) and
// returns the user's id and a new login token for X-User-Id/X-Auth-Token.
// user is a username, or an e-mail address when it contains "@".
// hc nil means a client with DefaultTimeout. Redirects are not followed:
// the body carries the password, and a redirect would send it elsewhere or
// drop it. The password never appears in an error.
// Errors: EFORBIDDEN with ErrTwoFactorRequired in the chain when the user
// has two-factor authentication (401 totp-required; a user created while
// SettingEmail2FAAutoOptIn was on); EUNAUTHORIZED for a wrong
// username or password (Rocket.Chat ≥ 8 may answer a bare 401 for every
// refused login, 2FA included); ERATELIMITED after too many attempts.
func Login(ctx context.Context, baseURL, user, password string, hc *http.Client) (userID, authToken string, err error) {
	const op = "rocketchat.login"
	cl := api(http.MethodPost, "login")
	base, perr := baseURLRule.Parse(baseURL)
	switch {
	case perr != nil:
		return "", "", sb.E(op, sb.EINVALID, perr.Error())
	case strings.TrimSpace(user) == "":
		return "", "", sb.E(op, sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the username is empty")
	case password == "":
		return "", "", sb.E(op, sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the password is empty")
	}
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	own := *hc
	own.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	anon := &Client{base: base, where: base.String(), hc: &own, scrubber: scrub.New([]string{password}),
		now: time.Now}

	body, n, jerr := jsonBody(loginBody{User: user, Password: password})
	if jerr != nil {
		return "", "", sb.Wrap(op, sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the request cannot be encoded as JSON", jerr)
	}
	var w struct {
		Status string `json:"status"`
		Data   struct {
			UserID    string `json:"userId"`
			AuthToken string `json:"authToken"`
		} `json:"data"`
	}
	err = anon.roundTrip(ctx, request{call: cl, body: body, length: n, contentType: "application/json"}, false, &w, func(a answer) *mapped {
		switch {
		case a.codes["totp-required"]:
			// The ≤ 7.x body, which Rocket.Chat 8.7 still sends: 401
			// {"status":"error","error":"totp-required","message":"TOTP Required",
			// "details":{"method":"email","codeGenerated":true,…}}.
			return &mapped{code: sb.EFORBIDDEN, twoFactor: true, msg: fmt.Sprintf(
				"user %q has two-factor authentication (method %s) and cannot log in without the code Rocket.Chat sends; a user created while %s was on keeps e-mail 2FA for good — delete it, switch the setting off and create it again",
				user, a.details.orUnknown(), sb.ChatSettingEmail2FAAutoOptIn)}
		case a.codes["error-too-many-requests"] || a.codes["too-many-requests"]:
			return nil // the shared table reads the wait
		case a.status == http.StatusUnauthorized:
			return &mapped{code: sb.EUNAUTHORIZED, msg: fmt.Sprintf(
				"login refused for %q (401): wrong username or password, a deactivated user, or a user that needs a two-factor code (Rocket.Chat ≥ 8 may not say which)", user)}
		}
		return nil
	})
	if err != nil {
		return "", "", err
	}
	if w.Data.UserID == "" || w.Data.AuthToken == "" {
		return "", "", sb.E(op, sb.EINTERNAL, "Rocket.Chat "+cl.endpoint()+": the answer carries no userId or authToken")
	}
	return w.Data.UserID, w.Data.AuthToken, nil
}

// Logins opens sessions on a Rocket.Chat server with HTTP (nil: a client
// with DefaultTimeout): Login, and a Client acting as the logged-in user.
type Logins struct{ HTTP *http.Client }

var (
	_ sb.ChatLogins  = Logins{}
	_ sb.ChatSession = (*Client)(nil)
	_ sb.ChatAdmin   = (*Client)(nil)
)

// Login is the package's Login with l's HTTP client.
func (l Logins) Login(ctx context.Context, baseURL, username, password string) (string, string, error) {
	return Login(ctx, baseURL, username, password, l.HTTP)
}

// Session is New with l's HTTP client.
func (l Logins) Session(baseURL, userID, authToken string) (sb.ChatSession, error) {
	c, err := New(baseURL, userID, authToken, l.HTTP)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// --- one exchange with per-endpoint readings ---

// answer is a failed answer as a mapper sees it.
type answer struct {
	status int
	codes  map[string]bool
	reason string
	// details is the Meteor error's details object, when there is one.
	details wireDetails
}

// bare is API.v1.failure() without arguments: 400 {"success":false}.
func (a answer) bare() bool {
	return a.status == http.StatusBadRequest && a.reason == "" && len(a.codes) == 0
}

// mapped is a mapper's reading of a failed answer.
type mapped struct {
	code, msg string
	twoFactor bool // put ErrTwoFactorRequired into the chain
}

// mapper reads a failed answer before the shared table in failure; nil
// leaves it to that table.
type mapper func(answer) *mapped

// adminAnswers is the reading shared by calls that need an administrator:
// the messages point at the admin token of the instance config, not at an
// agent's RocketChat block; then endpoint decides.
func adminAnswers(endpoint mapper) mapper {
	return func(a answer) *mapped {
		switch {
		case a.status == http.StatusUnauthorized:
			return &mapped{code: sb.EUNAUTHORIZED, msg: "not logged in (401): the admin userId/authToken are wrong or the token was revoked (older Rocket.Chat versions also answer 401 when the user lacks the permission); check instance.rocketchat.adminUserId and adminAuthToken"}
		case a.status == http.StatusForbidden || a.codes["error-forbidden"] || a.codes["error-unauthorized"]:
			// ≥ 8.0: permissionsRequired fails with 403 "User does not
			// have the permissions required for this action [error-forbidden]".
			return &mapped{code: sb.EFORBIDDEN, msg: "this user is not an administrator (it lacks the permission); use an administrator's userId/authToken in instance.rocketchat.adminUserId and adminAuthToken"}
		}
		if endpoint != nil {
			return endpoint(a)
		}
		return nil
	}
}

// roundTrip is do for calls that need more than the shared table: with
// auth false it sends no X-User-Id/X-Auth-Token (login), and read gets the
// first look at a failed answer (2xx with success:false included).
// Everything else is do's behaviour: counted, capped, the same messages.
func (c *Client) roundTrip(ctx context.Context, r request, auth bool, out any, read mapper) error {
	op := "rocketchat." + r.name
	c.calls.Add(r.name)
	req, err := http.NewRequestWithContext(ctx, r.method, c.url(r), r.body)
	if err != nil {
		return sb.Wrap(op, sb.EINTERNAL, "Rocket.Chat "+r.endpoint()+": the request could not be built", err)
	}
	if r.body != nil {
		req.ContentLength = r.length
		req.Header.Set("Content-Type", r.contentType)
	}
	if auth {
		req.Header.Set(headerUserID, c.userID)
		req.Header.Set(headerAuthToken, c.authToken)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.failure(r.call, nil, nil, c.cleanTransportError(err))
	}
	defer resp.Body.Close()
	limit := int64(maxErrorBody)
	if resp.StatusCode/100 == 2 {
		limit = maxAnswer + 1
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return c.failure(r.call, nil, nil, c.cleanTransportError(err))
	}
	failed := resp.StatusCode/100 != 2
	if !failed {
		if len(body) > maxAnswer {
			return sb.E(op, sb.EINTERNAL, fmt.Sprintf("Rocket.Chat %s: the answer is larger than %d MB; check RocketChat.baseUrl", r.endpoint(), maxAnswer>>20))
		}
		env, err := decodeEnvelope(body)
		if err != nil {
			return sb.Wrap(op, sb.EINTERNAL, fmt.Sprintf("Rocket.Chat %s: the answer is not Rocket.Chat JSON; check that the base URL (%s) points at Rocket.Chat", r.endpoint(), c.where), err)
		}
		failed = env.Success != nil && !*env.Success
	}
	if failed {
		if read != nil {
			if e := c.readAnswer(r.call, resp, body, read); e != nil {
				return e
			}
		}
		return c.failure(r.call, resp, body, nil)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return sb.Wrap(op, sb.EINTERNAL, fmt.Sprintf("Rocket.Chat %s: the answer has an unexpected shape", r.endpoint()), err)
	}
	return nil
}

// readAnswer asks read about a failed answer and builds the error when it
// has a reading; nil otherwise.
func (c *Client) readAnswer(cl call, resp *http.Response, body []byte, read mapper) error {
	se := c.readServerError(body)
	status := resp.StatusCode
	if status/100 == 2 {
		status = http.StatusBadRequest // success:false in a 2xx answer
	}
	a := answer{status: status, codes: se.codes, reason: se.reason}
	var d struct {
		Details wireDetails `json:"details"`
	}
	if json.Unmarshal(body, &d) == nil {
		a.details = d.Details
	}
	m := read(a)
	if m == nil {
		return nil
	}
	var cause error = &HTTPError{Status: resp.StatusCode, Endpoint: cl.endpoint(), Codes: keys(se.codes), Reason: se.reason}
	if m.twoFactor {
		cause = fmt.Errorf("%w: %w", sb.ErrTwoFactorRequired, cause)
	}
	msg := "Rocket.Chat " + cl.endpoint() + ": " + m.msg
	if cl.hint != "" && (m.code == sb.EUNAUTHORIZED || m.code == sb.EFORBIDDEN) && !strings.Contains(m.msg, "adminAuthToken") {
		msg += "; " + cl.hint
	}
	return sb.Wrap("rocketchat."+cl.name, m.code, msg, cause)
}

// --- wire shapes of the provisioning calls ---

// createUserBody is users.create's body (isUserCreateParamsPOST).
type createUserBody struct {
	Name                  string   `json:"name"`
	Username              string   `json:"username"`
	Email                 string   `json:"email"`
	Password              string   `json:"password"`
	Roles                 []string `json:"roles,omitempty"`
	Verified              bool     `json:"verified"`
	RequirePasswordChange bool     `json:"requirePasswordChange"`
	JoinDefaultChannels   bool     `json:"joinDefaultChannels"`
	SendWelcomeEmail      bool     `json:"sendWelcomeEmail"`
}

// generateTokenBody is all users.generatePersonalAccessToken accepts: any
// other property, userId included, is refused.
type generateTokenBody struct {
	TokenName       string `json:"tokenName"`
	BypassTwoFactor bool   `json:"bypassTwoFactor"`
}

// loginBody is the body of POST /api/v1/login with a password.
type loginBody struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

// wireDetails is the details object of a Meteor error: method and field of
// validateUserData, action of error-action-not-allowed, method of a
// totp-required ("email", "totp", "password").
type wireDetails struct {
	Method string `json:"method"`
	Field  string `json:"field"`
	Action string `json:"action"`
}

func (d wireDetails) orUnknown() string {
	if d.Method == "" {
		return "not named"
	}
	return d.Method
}

// wireAccount is the user of users.info (the field set is not
// verified, so everything is optional).
type wireAccount struct {
	ID       string   `json:"_id"`
	Username string   `json:"username"`
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Active   bool     `json:"active"`
	Roles    []string `json:"roles"`
	Emails   []struct {
		Address string `json:"address"`
	} `json:"emails"`
}

func toAccount(w wireAccount) sb.ChatAccount {
	a := sb.ChatAccount{ID: w.ID, Username: w.Username, Name: w.Name, Type: w.Type, Active: w.Active, Roles: w.Roles}
	if len(w.Emails) > 0 {
		a.Email = w.Emails[0].Address
	}
	return a
}
