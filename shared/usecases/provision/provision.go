// Package provision creates an agent's Rocket.Chat user and its personal
// access token: an operator command, never an agent tool, run with
// the administrator's token from the instance config.
//
// Agent follows the chain measured against a live Rocket.Chat 8.7: read
// Accounts_TwoFactorAuthentication_By_Email_Auto_Opt_In first and stop before
// anything exists when it is on; otherwise users.create with the roles bot
// and user and a random password, login as the new user,
// users.generatePersonalAccessToken (an admin cannot mint a token for another
// user), check the token, log the session out, forget the password, and hand
// the token to a SecretStore: Secrets Manager in a deployment, or nothing
// (PrintOnce) for a local setup, where the operator copies it once.
package provision

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// DefaultTokenName names the personal access token when Options.TokenName
// is empty; it is what the user sees under My Account → Personal Access
// Tokens.
const DefaultTokenName = "switchboard"

// AgentRoles are the roles of an agent user: bot marks it as a machine
// (loop protection, seat counting), user carries
// create-personal-access-tokens, which bot alone lacks.
var AgentRoles = []string{"bot", "user"}

// ErrEmail2FAAutoOptIn is in the chain of Agent's error when the server
// gives new users e-mail two-factor authentication; nothing was created.
var ErrEmail2FAAutoOptIn = errors.New("provision: " + sb.ChatSettingEmail2FAAutoOptIn + " is on")

// Options says which agent user to create where.
type Options struct {
	// AdminClient acts as an administrator (instance.rocketchat.adminUserId
	// and adminAuthToken). Required.
	AdminClient sb.ChatAdmin
	// Logins logs the new user in and acts as it. Required.
	Logins sb.ChatLogins
	// BaseURL is the server the agent will use; "" means AdminClient's.
	BaseURL string

	Username string // required, without "@", e.g. agent-hermes
	Name     string // display name; "" means Username
	// Email is required by Rocket.Chat. It is stored as verified and needs
	// no mailbox.
	Email string
	// TokenName names the personal access token; "" means DefaultTokenName.
	TokenName string
	// BypassTwoFactor creates the token with "ignore two factor
	// authentication", for endpoints that ask for a second factor. Agents'
	// calls need none, so the default is off.
	BypassTwoFactor bool
	// Store keeps the token and returns the reference the config uses.
	// nil means PrintOnce{}.
	Store SecretStore
}

// Result is a provisioned agent user.
type Result struct {
	BaseURL  string
	UserID   string
	Username string
	// SecretRef is what the config's RocketChat.authToken takes:
	// secretsmanager:… or env:….
	SecretRef string
	// Token is the personal access token, set only when the store kept
	// nothing (PrintOnce) or failed: show it once, Rocket.Chat never shows
	// it again.
	Token string
	// Warnings are things that went wrong without harming the result.
	Warnings []string
}

// tokenReturner marks a store that keeps nothing: Agent then returns the
// token itself.
type tokenReturner interface{ returnsToken() }

var validUsername = regexp.MustCompile(`^[0-9A-Za-z._-]+$`)

// Agent creates the agent user described by opts and its personal access
// token; see the package doc for the steps.
//
// Errors (every message says what to do):
//   - ECONFLICT with ErrEmail2FAAutoOptIn in the chain when
//     Accounts_TwoFactorAuthentication_By_Email_Auto_Opt_In is on; the
//     message explains the three ways out, and nothing was created;
//   - ECONFLICT when the username or e-mail address is taken;
//   - EFORBIDDEN or EUNAUTHORIZED when AdminClient is not an administrator
//     or its token is wrong;
//   - EINVALID for missing options;
//   - after the user was created, the code of the step that failed, with
//     the user's id and the advice to delete it before trying again;
//   - when the store fails, its error, and Result carries the token so that
//     it is not lost.
func Agent(ctx context.Context, opts Options) (Result, error) {
	const op = "provision.agent"
	if err := check(&opts); err != nil {
		return Result{}, err
	}
	res := Result{BaseURL: opts.BaseURL, Username: opts.Username}

	// 1. The 2FA trap, before anything exists.
	v, err := opts.AdminClient.GetSetting(ctx, sb.ChatSettingEmail2FAAutoOptIn)
	switch {
	case sb.ErrorCode(err) == sb.ENOTFOUND:
		// A server without the setting has no e-mail 2FA to opt into.
		res.Warnings = append(res.Warnings, fmt.Sprintf("Rocket.Chat has no setting %s; going on without the 2FA check", sb.ChatSettingEmail2FAAutoOptIn))
	case err != nil:
		return Result{}, wrap(op, err, "cannot check "+sb.ChatSettingEmail2FAAutoOptIn+" (provision-agent needs an administrator's token)", nil)
	case isOn(v):
		return Result{}, sb.Wrap(op, sb.ECONFLICT, waysOut(opts.Username), ErrEmail2FAAutoOptIn)
	}

	// 2. The user, with a password nobody will ever know.
	password, err := randomPassword()
	if err != nil {
		return Result{}, sb.Wrap(op, sb.EINTERNAL, "cannot generate a password", err)
	}
	// Should a server echo the password, it leaves no message.
	hide := strings.NewReplacer(password, "***")
	uid, err := opts.AdminClient.CreateUser(ctx, sb.ChatNewUser{Name: opts.Name, Username: opts.Username, Email: opts.Email,
		Password: password, Roles: slices.Clone(AgentRoles), Verified: true})
	if err != nil {
		return Result{}, wrap(op, err, fmt.Sprintf("cannot create Rocket.Chat user %q", opts.Username), hide)
	}
	res.UserID = uid
	created := func(step string, err error) error {
		extra := ""
		if errors.Is(err, sb.ErrTwoFactorRequired) {
			extra = fmt.Sprintf(" (%s must have been switched on meanwhile; such a user keeps e-mail 2FA for good)", sb.ChatSettingEmail2FAAutoOptIn)
		}
		return wrap(op, err, fmt.Sprintf("user %q (id %s) was created, but %s failed%s; without a token it is of no use: delete it in Administration → Users, fix the cause and run provision-agent again",
			opts.Username, uid, step, extra), hide)
	}

	// 3. Log in as the new user and let it mint its own token.
	// The password is used for this one login and kept nowhere.
	_, loginToken, err := opts.Logins.Login(ctx, opts.BaseURL, opts.Username, password)
	if err != nil {
		return res, created("the login as the new user", err)
	}
	session, err := opts.Logins.Session(opts.BaseURL, uid, loginToken)
	if err != nil {
		return res, created("building its client", err)
	}
	pat, err := session.GeneratePersonalAccessToken(ctx, opts.TokenName, opts.BypassTwoFactor)
	if err != nil {
		return res, created("creating its personal access token", err)
	}

	// 4. The token must work on its own before anyone relies on it.
	agent, err := opts.Logins.Session(opts.BaseURL, uid, pat)
	if err == nil {
		var me sb.ChatAccount
		me, err = agent.UserInfo(ctx, opts.Username)
		if err == nil && me.ID != uid {
			err = sb.E(op, sb.EINTERNAL, fmt.Sprintf("users.info with the new token names user id %s, not %s", me.ID, uid))
		}
	}
	if err != nil {
		return res, created("checking the new token", err)
	}
	if err := session.Logout(ctx); err != nil {
		res.Warnings = append(res.Warnings, "the login session of the new user could not be ended ("+sb.ErrorMessage(err)+"); it expires by itself (Accounts_LoginExpiration)")
	}

	// 5. Keep the token.
	ref, err := opts.Store.Put(ctx, opts.Username, pat)
	if err != nil {
		res.Token = pat
		return res, wrap(op, err, fmt.Sprintf("the token of user %q (id %s) was created but not stored; it is in this result only — keep it now, Rocket.Chat will not show it again", opts.Username, uid), nil)
	}
	res.SecretRef = ref
	if _, ok := opts.Store.(tokenReturner); ok {
		res.Token = pat
	}
	return res, nil
}

// check validates opts and fills in the defaults.
func check(o *Options) error {
	const op = "provision.agent"
	if o.AdminClient == nil {
		return sb.E(op, sb.EINVALID, "no administrator client; build one from instance.rocketchat.baseUrl, adminUserId and adminAuthToken")
	}
	if o.Logins == nil {
		return sb.E(op, sb.EINVALID, "no way to log the new user in (Options.Logins)")
	}
	if o.BaseURL == "" {
		o.BaseURL = o.AdminClient.BaseURL()
	}
	o.BaseURL = strings.TrimRight(strings.TrimSpace(o.BaseURL), "/")
	o.Username = strings.TrimSpace(o.Username)
	switch {
	case o.Username == "":
		return sb.E(op, sb.EINVALID, "the username is empty; name the agent's Rocket.Chat user, e.g. agent-hermes")
	case strings.HasPrefix(o.Username, "@"):
		return sb.E(op, sb.EINVALID, "write the username without @, e.g. "+strings.TrimPrefix(o.Username, "@"))
	case !validUsername.MatchString(o.Username):
		return sb.E(op, sb.EINVALID, fmt.Sprintf("username %q: use only letters, digits, dots, hyphens and underscores", o.Username))
	case strings.TrimSpace(o.Email) == "":
		return sb.E(op, sb.EINVALID, "the e-mail address is empty; Rocket.Chat needs one (no mailbox is needed), e.g. "+o.Username+"@agents.example.org")
	}
	if strings.TrimSpace(o.Name) == "" {
		o.Name = o.Username
	}
	if strings.TrimSpace(o.TokenName) == "" {
		o.TokenName = DefaultTokenName
	}
	if o.Store == nil {
		o.Store = PrintOnce{}
	}
	return nil
}

// wrap puts what failed in front of err's caller-safe message, keeping its
// code, RetryAfter and chain; hide masks the password should a server echo
// it.
func wrap(op string, err error, what string, hide *strings.Replacer) error {
	msg := sb.ErrorMessage(err)
	if hide != nil {
		msg = hide.Replace(msg)
	}
	e := sb.Wrap(op, sb.ErrorCode(err), what+": "+msg, err)
	var inner *sb.Error
	if errors.As(err, &inner) {
		e.RetryAfter = inner.RetryAfter
	}
	return e
}

// isOn reads a setting's value as Rocket.Chat stores booleans.
func isOn(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		b, err := strconv.ParseBool(v)
		return err == nil && b
	}
	return false
}

// waysOut is the refusal when new users get e-mail 2FA: the three ways
// out, and what each costs.
func waysOut(username string) string {
	return fmt.Sprintf(`Rocket.Chat has %[1]s switched on: every new user gets e-mail two-factor authentication and cannot log in without a code from its mailbox, so user %[2]q could not get a token. Nothing was created. Three ways out:
  A (recommended): switch the setting off (Administration → Settings → Accounts → Two Factor Authentication, "auto opt in" for e-mail), then run provision-agent again. Cost: new human users no longer get e-mail 2FA automatically; existing accounts and authenticator-app 2FA stay as they are.
  B: keep it on, give every agent a real mailbox and fetch each login code by IMAP. Works, but fragile; Switchboard does not do it.
  C: create the user by API, then a person logs in as it once (the code goes to the e-mail address it was given) and creates the personal access token under My Account → Personal Access Tokens; put userId and token into the config. Cost: manual work for every new agent.`,
		sb.ChatSettingEmail2FAAutoOptIn, username)
}

// Password alphabet: all four classes a password policy may ask for.
const (
	lowers  = "abcdefghijkmnopqrstuvwxyz"
	uppers  = "ABCDEFGHJKLMNPQRSTUVWXYZ"
	digits  = "23456789"
	symbols = "-_.!+=#%"
)

// randomPassword returns 32 characters (≈ 190 bits) from crypto/rand with
// every class present and no character three times in a row, so that
// Rocket.Chat's password policy accepts it when it is switched on.
func randomPassword() (string, error) {
	const n = 32
	alphabet := lowers + uppers + digits + symbols
	size := big.NewInt(int64(len(alphabet)))
	for {
		b := make([]byte, n)
		for i := range b {
			k, err := rand.Int(rand.Reader, size)
			if err != nil {
				return "", err
			}
			b[i] = alphabet[k.Int64()]
		}
		if acceptable(string(b)) {
			return string(b), nil
		}
	}
}

func acceptable(p string) bool {
	for _, class := range []string{lowers, uppers, digits, symbols} {
		if !strings.ContainsAny(p, class) {
			return false
		}
	}
	for i := 2; i < len(p); i++ {
		if p[i] == p[i-1] && p[i] == p[i-2] {
			return false
		}
	}
	return true
}

// ConfigBlock is the agent's RocketChat tool block, ready to paste under
// agents[].tools in the Switchboard config: baseUrl, userId, the
// authToken reference and username. It never contains the token.
func (r Result) ConfigBlock() string {
	var b strings.Builder
	if v, ok := strings.CutPrefix(r.SecretRef, "env:"); ok {
		fmt.Fprintf(&b, "# set %s to the token printed once above\n", v)
	}
	b.WriteString("RocketChat:\n")
	for _, kv := range [][2]string{{"baseUrl", r.BaseURL}, {"userId", r.UserID}, {"authToken", r.SecretRef}, {"username", r.Username}} {
		fmt.Fprintf(&b, "  %s: %s\n", kv[0], yamlScalar(kv[1]))
	}
	return b.String()
}

// plainSafe is what YAML reads as the same string without quotes.
var plainSafe = regexp.MustCompile(`^[A-Za-z0-9_./][A-Za-z0-9_./:@+=-]*$`)

// yamlScalar writes s plain when YAML reads it back as this string, and
// double-quoted (JSON escapes are valid YAML) otherwise.
func yamlScalar(s string) string {
	if plainSafe.MatchString(s) || isURL(s) {
		switch strings.ToLower(s) {
		case "true", "false", "yes", "no", "on", "off", "null", "y", "n":
			return strconv.Quote(s)
		}
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return strconv.Quote(s)
		}
		return s
	}
	return strconv.Quote(s)
}

// isURL is a plain http(s) URL without spaces or characters YAML treats
// specially.
func isURL(s string) bool {
	return (strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")) && !strings.ContainsAny(s, " #,[]{}\"'`|>&*!%")
}
