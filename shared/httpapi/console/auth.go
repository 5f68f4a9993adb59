package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambdaurl"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// session is the logged-in session of a request.
type session struct {
	id   string
	csrf string
}

func (c *Console) mac(parts ...string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(strings.Join(parts, "|")))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func randomID() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand never fails on Linux
	return base64.RawURLEncoding.EncodeToString(b)
}

// sessionValue is what the cookie holds: the id and its MAC, so that a
// forged cookie is refused without a database read.
func (c *Console) sessionValue(id string) string { return id + "." + c.mac("session", id) }

func (c *Console) sessionID(value string) (string, bool) {
	id, sig, ok := strings.Cut(value, ".")
	if !ok || id == "" || !hmac.Equal([]byte(sig), []byte(c.mac("session", id))) {
		return "", false
	}
	return id, true
}

func sessionRow(id string) string { return "session#" + id }

// authed serves next for a live session; anyone else goes to the login
// form (a GET) or gets 403 (a POST: a form without a session is a stale or
// forged one).
func (c *Console) authed(next func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := c.currentSession(r)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		if s == nil {
			if r.Method == http.MethodPost {
				c.forbidden(w, r, "Your session has ended. Log in again.")
				return
			}
			http.Redirect(w, r, "/console/login", http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost && !c.sameOriginPost(r, s.csrf) {
			c.forbidden(w, r, "The form was not sent from this console (CSRF token missing or wrong). Reload the page and try again.")
			return
		}
		next(w, r, s)
	}
}

// currentSession checks the cookie's MAC, then the session row (a
// strongly consistent read, so a logout is final at once).
func (c *Console) currentSession(r *http.Request) (*session, error) {
	value, ok := cookieValue(r, sessionCookie)
	if !ok {
		return nil, nil
	}
	id, ok := c.sessionID(value)
	if !ok {
		return nil, nil
	}
	_, found, err := c.o.Sessions.Get(r.Context(), sessionRow(id))
	if err != nil || !found {
		return nil, err
	}
	return &session{id: id, csrf: c.mac("csrf", id)}, nil
}

// cookieValue reads a cookie from the Cookie header or, behind a function
// URL, from the event's cookies list: the payload format carries cookies
// there, and lambdaurl copies only the headers into the request.
func cookieValue(r *http.Request, name string) (string, bool) {
	if ck, err := r.Cookie(name); err == nil {
		return ck.Value, true
	}
	ev, ok := lambdaurl.RequestFromContext(r.Context())
	if !ok {
		return "", false
	}
	cks, err := http.ParseCookie(strings.Join(ev.Cookies, "; "))
	if err != nil {
		return "", false
	}
	for _, ck := range cks {
		if ck.Name == name {
			return ck.Value, true
		}
	}
	return "", false
}

// sameOriginPost checks a POST's CSRF token and, where the browser says
// where the form came from, that it came from this console.
func (c *Console) sameOriginPost(r *http.Request, want string) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return false
		}
	}
	got := r.PostFormValue("csrf")
	return got != "" && hmac.Equal([]byte(got), []byte(want))
}

// secure says whether cookies get the Secure flag: everywhere but on a
// loopback address (the dev listener speaks plain HTTP there).
func secure(r *http.Request) bool {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

func cookie(r *http.Request, name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: cookiePath, MaxAge: maxAge,
		HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteStrictMode}
}

type loginView struct {
	CSRF    string
	Problem string
}

// loginForm shows the password form with a CSRF token bound to a fresh
// nonce cookie.
func (c *Console) loginForm(w http.ResponseWriter, r *http.Request) {
	c.renderLogin(w, r, http.StatusOK, "")
}

func (c *Console) renderLogin(w http.ResponseWriter, r *http.Request, status int, problem string) {
	nonce := randomID()
	http.SetCookie(w, cookie(r, loginCookie, nonce, int(time.Hour/time.Second)))
	c.render(w, r, status, page{Title: "Log in", Body: loginView{CSRF: c.mac("login", nonce), Problem: problem}})
}

// login checks the form's token, counts the attempt against the client,
// checks the password and starts a session. Only failures stay counted: a
// right password takes its attempt back, so logging in never uses up the
// client's attempts or the window's total, and other people's failures
// never refuse it (see Options' limits).
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	nonce, ok := cookieValue(r, loginCookie)
	if !ok || !c.sameOriginPost(r, c.mac("login", nonce)) {
		c.forbidden(w, r, "The login form was not sent from this console (CSRF token missing or wrong). Reload the login page and try again.")
		return
	}
	client := clientOf(clientAddr(r))
	at, err := c.admit(ctx, client)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	if !at.admitted {
		c.tooMany(w, r, at, fmt.Sprintf("Too many failed logins from your address. Try again in %s.", minutes(at.wait)))
		return
	}
	if !c.passwordMatches(r.PostFormValue("password")) {
		c.o.Log.WarnContext(ctx, "console: wrong password", "client", client, "totalSpent", !at.inTotal)
		if !at.inTotal {
			c.tooMany(w, r, at, fmt.Sprintf("Wrong password. Too many wrong passwords were tried on this console: "+
				"each address has %d tries until the limits start again in %s.", attemptsUnderAttack, minutes(at.wait)))
			return
		}
		c.renderLogin(w, r, http.StatusUnauthorized, "Wrong password.")
		return
	}
	c.giveBack(ctx, at)
	id := randomID()
	life := time.Duration(c.o.SessionHours) * time.Hour
	if err := c.o.Sessions.Put(ctx, sessionRow(id), "1", c.o.Now().Add(life)); err != nil {
		c.fail(w, r, err)
		return
	}
	http.SetCookie(w, cookie(r, sessionCookie, c.sessionValue(id), int(life/time.Second)))
	http.SetCookie(w, cookie(r, loginCookie, "", -1))
	http.Redirect(w, r, "/console/", http.StatusSeeOther)
}

func (c *Console) tooMany(w http.ResponseWriter, r *http.Request, at attempt, msg string) {
	w.Header().Set("Retry-After", fmt.Sprint(int(math.Ceil(at.wait.Seconds()))))
	c.renderLogin(w, r, http.StatusTooManyRequests, msg)
}

// minutes says a wait in whole minutes, rounded up.
func minutes(d time.Duration) string {
	n := int(math.Ceil(d.Minutes()))
	if n == 1 {
		return "1 minute"
	}
	return fmt.Sprintf("%d minutes", n)
}

// attempt is one login attempt as the limits count it.
type attempt struct {
	clientKey, totalKey string
	admitted            bool          // the client had an attempt left; it is counted
	inTotal             bool          // it is counted in the window's total, which was not spent
	wait                time.Duration // until the window ends
}

// admit counts an attempt of client before the password is checked, so
// that concurrent guesses cannot get past the limit: first in the
// window's total (where only an attempt that fails stays), then against
// the client, which has attemptsPerClient failures while the total is not
// spent and attemptsUnderAttack while it is. A client without attempts
// left is not admitted (and its attempt counts nowhere).
func (c *Console) admit(ctx context.Context, client string) (attempt, error) {
	now := c.o.Now()
	start := now.Truncate(attemptWindow)
	end := start.Add(attemptWindow)
	window := "login#" + start.UTC().Format("20060102T1504")
	at := attempt{totalKey: window, clientKey: window + "#" + client, wait: end.Sub(now)}
	var err error
	if _, at.inTotal, err = c.o.Attempts.Incr(ctx, at.totalKey, attemptsTotal, end); err != nil {
		return at, err
	}
	limit := attemptsPerClient
	if !at.inTotal {
		limit = attemptsUnderAttack
	}
	if _, at.admitted, err = c.o.Attempts.Incr(ctx, at.clientKey, limit, end); err != nil || !at.admitted {
		c.giveBack(ctx, attempt{totalKey: at.totalKey, inTotal: at.inTotal})
		return at, err
	}
	return at, nil
}

// giveBack takes back the counts of an attempt that did not fail. It
// runs even when the request was cancelled; a count it cannot take back
// only makes the limit stricter until the window ends, so it is logged and
// the login goes on.
func (c *Console) giveBack(ctx context.Context, at attempt) {
	ctx = context.WithoutCancel(ctx)
	for _, k := range []struct {
		key     string
		counted bool
	}{{at.clientKey, at.admitted}, {at.totalKey, at.inTotal}} {
		if !k.counted {
			continue
		}
		if err := c.o.Attempts.Decr(ctx, k.key); err != nil {
			c.o.Log.WarnContext(ctx, "console: a login attempt could not be given back", "key", k.key, "err", err)
		}
	}
}

// clientAddr is the caller's address: the function URL's source IP in AWS
// (lambdaurl sets RemoteAddr to requestContext.http.sourceIp, which AWS
// fills in; X-Forwarded-For is the caller's to write and is never read),
// the TCP peer locally.
func clientAddr(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// clientOf is who the per-client limit counts: an IPv4 address (also when
// written as an IPv4-mapped IPv6 address), or the /64 of an IPv6 address,
// because one host (one customer line) gets a whole /64 and can pick a new
// address for every guess. Anything else counts as written.
func clientOf(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.Prefix(64) // cannot fail for an IPv6 address
	return p.String()
}

// logout ends the session (its row goes, so the cookie is worthless even
// if it was copied) and clears the cookie.
func (c *Console) logout(w http.ResponseWriter, r *http.Request, s *session) {
	if err := c.o.Sessions.Delete(r.Context(), sessionRow(s.id)); err != nil {
		c.fail(w, r, err)
		return
	}
	http.SetCookie(w, cookie(r, sessionCookie, "", -1))
	http.Redirect(w, r, "/console/login", http.StatusSeeOther)
}

func (c *Console) forbidden(w http.ResponseWriter, r *http.Request, msg string) {
	c.render(w, r, http.StatusForbidden, page{Title: "Refused", Body: errorView{"Refused", msg}})
}

// fail shows a caller-safe page; the detail goes to the log.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	msg := "Something went wrong on our side; the details are in the log. Try again in a minute."
	switch sb.ErrorCode(err) {
	case sb.EINVALID:
		status, msg = http.StatusBadRequest, sb.ErrorMessage(err)
	case sb.ENOTFOUND:
		status, msg = http.StatusNotFound, sb.ErrorMessage(err)
	case sb.EUNAVAILABLE:
		status, msg = http.StatusServiceUnavailable, "The database is not answering right now. Try again in a minute."
	}
	if status >= 500 {
		c.o.Log.ErrorContext(r.Context(), "console: request failed", "path", r.URL.Path, "err", err)
	}
	c.render(w, r, status, page{Title: "Error", Body: errorView{"Error", msg}})
}
