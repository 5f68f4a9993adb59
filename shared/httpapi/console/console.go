// Package console is the operator's web console under /console/: the
// conversations between agents, a run chain with its tool calls and costs,
// what needs attention (where work stands still), the approvals waiting
// for a human and the health of the scheduled jobs.
// It is server-rendered HTML (written with safehtml, which escapes
// everything others wrote) with one small script and one stylesheet served from the same
// route, behind a password login with a signed session cookie, CSRF tokens
// on every POST, a strict Content-Security-Policy and no caching. It only
// reads, except for its own sessions and login-attempt counters and the
// operator's pause, resume and stop (each confirmed first). Without a
// password every console route answers 404.
package console

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"log/slog"
	"net/http"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Reader is what the console reads: messages, the audit trail, receipts and
// the last job runs. The dynamo Store satisfies it.
type Reader interface {
	sb.AgentMessageReader
	ByRoot(ctx context.Context, rootRunID string) ([]sb.AuditEntry, error)
	ChainCost(ctx context.Context, rootRunID string) (sb.ChainCost, error)
	AgentCostSince(ctx context.Context, agentID string, since time.Time) (float64, error)
	// AgentRunsSince lists the runs charged to agentID from since on,
	// oldest first, with their start, cost, outcome and chain.
	AgentRunsSince(ctx context.Context, agentID string, since time.Time) ([]sb.Receipt, error)
	LastRuns(ctx context.Context) ([]sb.JobRun, error)
}

// OpenApprovals lists the approvals that still wait (sb.ApprovalStore's
// ListOpen).
type OpenApprovals interface {
	ListOpen(ctx context.Context) ([]sb.Approval, error)
}

// SessionStore keeps login sessions: a KV with Delete (the console's own
// table in AWS).
type SessionStore interface {
	Get(ctx context.Context, key string) (value string, found bool, err error)
	Put(ctx context.Context, key, value string, expires time.Time) error
	Delete(ctx context.Context, key string) error
}

// Agent is one configured agent as the console shows it.
type Agent struct {
	ID             string
	Name           string
	DailyBudgetUSD float64 // 0 = no daily limit
}

// Job is one scheduled job of the deploy catalogue.
type Job struct {
	Name, Schedule, Description string
}

// Options configure the console. Password empty = the console is off.
type Options struct {
	Password     string
	SessionHours int // default 12

	Reader    Reader
	Tasks     TaskReader    // nil: no tasks on the attention and chain pages
	Approvals OpenApprovals // nil: the approvals page says approvals are not set up
	// ApprovalLink is the signed link to the confirmation page of one
	// decision ("approve" or "deny"); the console links to it and adds no
	// way of its own to decide. Nil: no links.
	ApprovalLink func(a sb.Approval, decision string) string
	// Allowances are the "approve, and allow for N hours" grants: the
	// approvals page lists the active ones with a revoke button (a POST
	// with the CSRF token). Nil: the page lists none. Audit receives the
	// revoke's entry (in the chain the allowance was granted in).
	Allowances sb.AllowanceStore
	Audit      sb.AuditStore
	// Health reads the Rocket.Chat health state (HealthKey).
	Health interface {
		Get(ctx context.Context, key string) (string, bool, error)
	}
	HealthKey string

	// Control pauses and resumes agents and stops chains (a confirmation
	// page, then a POST with the CSRF token); nil: the console offers none.
	Control Controller

	Sessions SessionStore
	Attempts sb.Counters

	// Scrubber masks the secrets in what the console shows of tool-call
	// arguments (the instance's, with every configured secret); nil masks
	// secret-looking keys and well-known patterns only.
	Scrubber *scrub.Scrubber

	Agents []Agent
	Jobs   []Job

	Now func() time.Time
	Log *slog.Logger
}

// Login limits, per window: failed logins per client (an IPv4 address or
// an IPv6 /64) and in total. They slow down online guessing of the
// password. Only failures count, and a right password is checked before
// the total is looked at, so other people's failures never refuse it:
// while the total is spent a wrong password is refused with 429 and each
// client has attemptsUnderAttack failures instead of attemptsPerClient
// (a guesser with many addresses gets fewer guesses from each). A client
// that has used up its own failures is refused without the password being
// checked, even the right one: otherwise the 429 for a wrong password and
// the session for the right one would tell a guesser which guess was right,
// and the limit would limit nothing. So only failures from the owner's own
// address (or /64, or NAT) can keep the owner out, for one window at most.
const (
	attemptWindow       = 15 * time.Minute
	attemptsPerClient   = 10
	attemptsUnderAttack = 3
	attemptsTotal       = 100
)

// Cookie names. The login cookie carries the nonce the login form's CSRF
// token is bound to, before there is a session.
const (
	sessionCookie = "sb_console"
	loginCookie   = "sb_console_login"
	cookiePath    = "/console/"
)

// MaxPage is the number of messages per page (the newest 200, then "load
// older").
const MaxPage = 200

//go:embed assets/app.js assets/app.css
var assetFS embed.FS

// Console is the console's http.Handler.
type Console struct {
	o    Options
	key  []byte // signs session ids and CSRF tokens; derived from the password
	pass [32]byte
	mux  *http.ServeMux
}

// New builds the console once per cold start.
func New(o Options) (*Console, error) {
	if o.SessionHours <= 0 {
		o.SessionHours = 12
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	c := &Console{o: o, pass: sha256.Sum256([]byte(o.Password))}
	// A key of the console's own, derived from the password: changing the
	// password ends every session and invalidates every form.
	m := hmac.New(sha256.New, []byte(o.Password))
	m.Write([]byte("switchboard console v1"))
	c.key = m.Sum(nil)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /console/{$}", c.authed(c.conversations))
	mux.HandleFunc("GET /console/chain", c.authed(c.chain))
	mux.HandleFunc("GET /console/attention", c.authed(c.attention))
	mux.HandleFunc("GET /console/approvals", c.authed(c.approvals))
	mux.HandleFunc("POST /console/approvals", c.authed(c.revokeAllowance))
	mux.HandleFunc("GET /console/health", c.authed(c.health))
	mux.HandleFunc("GET /console/control", c.authed(c.controlConfirm))
	mux.HandleFunc("POST /console/control", c.authed(c.controlDo))
	mux.HandleFunc("GET /console/login", c.loginForm)
	mux.HandleFunc("POST /console/login", c.login)
	mux.HandleFunc("POST /console/logout", c.authed(c.logout))
	mux.HandleFunc("GET /console/app.js", c.asset("assets/app.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET /console/app.css", c.asset("assets/app.css", "text/css; charset=utf-8"))
	c.mux = mux
	return c, nil
}

// Enabled reports whether a password is configured.
func (c *Console) Enabled() bool { return c.o.Password != "" }

// csp allows the console's own script and stylesheet only: no inline
// script or style, no frames, forms post back to the console.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// ServeHTTP sets the headers every console answer carries and routes.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// Approval links carry tokens: never leak a URL to another site.
	// (Not no-referrer: with it Chromium sends "Origin: null" on the
	// console's own forms, and the origin check would refuse them.)
	h.Set("Referrer-Policy", "same-origin")
	if !c.Enabled() {
		http.NotFound(w, r)
		return
	}
	c.mux.ServeHTTP(w, r)
}

// asset serves an embedded file.
func (c *Console) asset(name, ctype string) http.HandlerFunc {
	body, err := assetFS.ReadFile(name)
	if err != nil {
		panic("console: missing asset " + name) // embedded at build time
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		_, _ = w.Write(body)
	}
}

// passwordMatches compares in constant time over SHA-256 digests, so the
// length leaks nothing either.
func (c *Console) passwordMatches(got string) bool {
	g := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(c.pass[:], g[:]) == 1
}
