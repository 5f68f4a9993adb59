package ncfake

import (
	"bytes"
	"crypto/subtle"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/webdav"

	"github.com/switchboard-dev/switchboard/shared/platform/waittest"
)

// Options configure a fake. Zero values take the defaults noted.
type Options struct {
	User     string // "alice"
	Password string // "app-password"
	Version  string // "30.0.2"
	// BaseURL is the public address used in share URLs; empty = the
	// request's own scheme and host.
	BaseURL string
	// Now is the clock for the share rate limit, expiry dates and mtimes of
	// versions and trash items; nil = time.Now.
	Now func() time.Time
}

// Request is one recorded request. The Authorization header is not kept.
type Request struct {
	Method string
	Path   string // escaped
	Query  string
	Route  string // "PUT files", "SEARCH dav", "POST shares", …
	User   string // Basic-auth user, "" when none
	Header http.Header
	Body   []byte // bodies of non-PUT requests, up to 64 KiB
	Status int
}

// Server is the fake. Create it with New (an http.Handler) or Start (a
// running httptest server on 127.0.0.1).
type Server struct {
	URL string // set by Start

	opts Options
	mem  webdav.FileSystem // the memory FS behind ncFS
	fs   *ncFS
	dav  *webdav.Handler

	served waittest.Signal // notified after every request

	mu sync.Mutex
	// switches
	chunking         bool
	publicLinks      bool
	passwordEnforced bool
	expireEnabled    bool
	expireDays       int
	expireEnforced   bool
	quota            int64 // -1 = unlimited
	locks            map[string]bool
	adminOnly        bool
	down             bool
	now              func() time.Time
	rateLimit        int
	rateWindow       time.Duration
	shareAttempts    []time.Time
	minChunk         int64
	users            map[string]bool
	groups           map[string]bool
	version          string
	// state
	ids         map[string]int64
	nextID      int64
	versions    map[int64][]*version
	mtimes      map[int64]time.Time // stated with X-OC-Mtime
	trash       []*trashItem
	uploads     map[string]*upload
	shares      []*share
	nextShareID int
	requests    []Request
	calls       map[string]int
	faults      map[string][]fault
}

// fault is a failure injected by FailNext or FailNextAfter.
type fault struct {
	status int
	after  bool // serve the request, then answer status instead
}

// New builds a fake with one account and an empty home folder.
func New(opts Options) *Server {
	if opts.User == "" {
		opts.User = "alice"
	}
	if opts.Password == "" {
		opts.Password = "app-password"
	}
	if opts.Version == "" {
		opts.Version = "30.0.2"
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	s := &Server{
		opts:        opts,
		mem:         webdav.NewMemFS(),
		chunking:    true,
		publicLinks: true,
		quota:       -1,
		locks:       map[string]bool{},
		now:         now,
		rateLimit:   20,
		rateWindow:  10 * time.Minute,
		minChunk:    5 << 20,
		users:       map[string]bool{opts.User: true},
		groups:      map[string]bool{},
		version:     opts.Version,
		ids:         map[string]int64{},
		nextID:      100,
		versions:    map[int64][]*version{},
		mtimes:      map[int64]time.Time{},
		uploads:     map[string]*upload{},
		nextShareID: 1,
		calls:       map[string]int{},
		faults:      map[string][]fault{},
	}
	s.fs = &ncFS{s: s, inner: s.mem}
	s.dav = &webdav.Handler{
		Prefix:     "/remote.php/dav/files/" + opts.User,
		FileSystem: s.fs,
		LockSystem: webdav.NewMemLS(),
	}
	s.assignID("/")
	return s
}

// Start runs a fake on 127.0.0.1 until the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s := New(opts)
	ts := httptest.NewServer(s)
	tb.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

// User and Password are the account's credentials.
func (s *Server) User() string     { return s.opts.User }
func (s *Server) Password() string { return s.opts.Password }

// SetChunking switches chunked upload (dav.chunking, files.bigfilechunking
// in capabilities, and the uploads collection) on or off.
func (s *Server) SetChunking(on bool) { s.set(func() { s.chunking = on }) }

// SetPublicLinks allows or forbids link shares.
func (s *Server) SetPublicLinks(on bool) { s.set(func() { s.publicLinks = on }) }

// SetPasswordEnforced makes link shares without a password fail with 403.
func (s *Server) SetPasswordEnforced(on bool) { s.set(func() { s.passwordEnforced = on }) }

// SetLinkExpiry sets the default expiry of link shares in days (0 = none);
// enforced makes it the maximum too.
func (s *Server) SetLinkExpiry(days int, enforced bool) {
	s.set(func() { s.expireEnabled, s.expireDays, s.expireEnforced = days > 0, days, enforced && days > 0 })
}

// SetVersion sets the version string capabilities report ("31.0.1").
func (s *Server) SetVersion(v string) { s.set(func() { s.version = v }) }

// SetQuota limits the account to bytes; negative means unlimited. Uploads
// beyond it get 507.
func (s *Server) SetQuota(bytes int64) { s.set(func() { s.quota = bytes }) }

// Lock makes PUT, DELETE, MOVE and COPY onto p (relative to the user root)
// answer 423 with Nextcloud's FileLocked exception, as when a file is open
// in Collabora.
func (s *Server) Lock(p string) { s.set(func() { s.locks[clean(p)] = true }) }

// Unlock undoes Lock.
func (s *Server) Unlock(p string) { s.set(func() { delete(s.locks, clean(p)) }) }

// SetAdminOnly makes admin-only endpoints answer OCS 997 for the account
// (today: creating group shares).
func (s *Server) SetAdminOnly(on bool) { s.set(func() { s.adminOnly = on }) }

// SetDown makes every request answer 503 (maintenance mode).
func (s *Server) SetDown(down bool) { s.set(func() { s.down = down }) }

// FailNext makes the next request to route (as Calls names it: "PUT
// uploads", "MOVE uploads", …) fail with status and the HTML error page of
// the reverse proxy in front of Nextcloud, without reaching Nextcloud:
// nothing the request asked for happens. Calls stack (FailNextAfter too).
func (s *Server) FailNext(route string, status int) {
	s.set(func() { s.faults[route] = append(s.faults[route], fault{status: status}) })
}

// FailNextChunk makes the next PUT of chunk n (1, 2, …) of any chunked
// upload fail as FailNext does: the chunks before it arrive, it does not.
func (s *Server) FailNextChunk(n, status int) {
	s.set(func() {
		k := fmt.Sprintf("PUT uploads #%05d", n)
		s.faults[k] = append(s.faults[k], fault{status: status})
	})
}

// FailNextAfter serves the next request to route, then answers status with
// the proxy's error page instead of Nextcloud's answer: the proxy gave up
// (502, 504) while Nextcloud finished the work, so what the request asked
// for happened and the client is told it failed.
func (s *Server) FailNextAfter(route string, status int) {
	s.set(func() { s.faults[route] = append(s.faults[route], fault{status: status, after: true}) })
}

func (s *Server) takeFault(route string) (fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.faults[route]
	if len(q) == 0 {
		return fault{}, false
	}
	s.faults[route] = q[1:]
	return q[0], true
}

// proxyError is nginx's error page for status.
func proxyError(w http.ResponseWriter, status int) {
	text := fmt.Sprintf("%d %s", status, http.StatusText(status))
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<html>\r\n<head><title>%s</title></head>\r\n<body>\r\n<center><h1>%s</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n", text, text)
}

// SetClock replaces the clock.
func (s *Server) SetClock(now func() time.Time) { s.set(func() { s.now = now }) }

// SetShareRateLimit changes the share-creation limit (default 20 per 10 minutes).
func (s *Server) SetShareRateLimit(n int, window time.Duration) {
	s.set(func() { s.rateLimit, s.rateWindow, s.shareAttempts = n, window, nil })
}

// SetMinChunkSize changes the minimum size of non-last chunks (default 5 MiB).
func (s *Server) SetMinChunkSize(n int64) { s.set(func() { s.minChunk = n }) }

// AddUser adds share recipients.
func (s *Server) AddUser(names ...string) {
	s.set(func() {
		for _, n := range names {
			s.users[n] = true
		}
	})
}

// AddGroup adds groups to share with.
func (s *Server) AddGroup(names ...string) {
	s.set(func() {
		for _, n := range names {
			s.groups[n] = true
		}
	})
}

func (s *Server) set(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

func (s *Server) clock() time.Time {
	s.mu.Lock()
	now := s.now
	s.mu.Unlock()
	return now()
}

// Requests returns the recorded requests in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Calls returns how many requests went to route ("PUT files", "MOVE uploads", …).
func (s *Server) Calls(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[route]
}

// ResetRequests forgets recorded requests and counts.
func (s *Server) ResetRequests() {
	s.set(func() { s.requests, s.calls = nil, map[string]int{} })
}

// route names the API area of a request, as nextcloud.Client counts it.
func route(r *http.Request) string {
	p := r.URL.Path
	area := "other"
	switch {
	case strings.HasPrefix(p, "/remote.php/dav/files/"):
		area = "files"
	case strings.HasPrefix(p, "/remote.php/dav/uploads/"):
		area = "uploads"
	case strings.HasPrefix(p, "/remote.php/dav/versions/"):
		area = "versions"
	case strings.HasPrefix(p, "/remote.php/dav/trashbin/"):
		area = "trashbin"
	case p == "/remote.php/dav" || p == "/remote.php/dav/":
		area = "dav"
	case ocsRoute(p) == "/cloud/capabilities":
		area = "capabilities"
	case strings.HasPrefix(ocsRoute(p), "/apps/files_sharing/api/v1/shares"):
		area = "shares"
	}
	return r.Method + " " + area
}

// ocsRoute strips /ocs/v1.php or /ocs/v2.php; "" when p is not OCS.
func ocsRoute(p string) string {
	for _, pre := range []string{"/ocs/v1.php", "/ocs/v2.php"} {
		if rest, ok := strings.CutPrefix(p, pre); ok {
			return rest
		}
	}
	return ""
}

// Until waits until cond holds, checking it now and after every request
// the fake has answered, and fails t, naming what, after timeout. Tests
// wait with it for what a request does to the fake's state instead of
// sleeping.
func (s *Server) Until(t waittest.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	s.served.Until(t, timeout, what, cond)
}

// ServeHTTP serves the fake Nextcloud.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt := route(r)
	rec := Request{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Route: rt, Header: r.Header.Clone()}
	rec.Header.Del("Authorization")
	rec.User, _, _ = r.BasicAuth()
	if r.Method != http.MethodPut && r.Body != nil {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		rec.Body = b
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), r.Body))
	}
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		rec.Status = sw.status
		s.mu.Lock()
		s.requests = append(s.requests, rec)
		s.calls[rt]++
		s.mu.Unlock()
		s.served.Notify()
	}()
	f, ok := s.takeFault(rt)
	if !ok && rt == "PUT uploads" {
		f, ok = s.takeFault(rt + " #" + path.Base(r.URL.Path))
	}
	if ok {
		if f.after {
			s.serve(httptest.NewRecorder(), r, rt)
		} else {
			io.Copy(io.Discard, r.Body)
		}
		proxyError(sw, f.status)
		return
	}
	s.serve(sw, r, rt)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, rt string) {
	area := rt[strings.IndexByte(rt, ' ')+1:]
	isOCS := ocsRoute(r.URL.Path) != ""
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		w.Header().Set("Retry-After", "60")
		if isOCS {
			writeOCS(w, r, 503, "Service unavailable", nil)
			return
		}
		sabre(w, http.StatusServiceUnavailable, `Sabre\DAV\Exception\ServiceUnavailable`, "System is in maintenance mode.")
		return
	}
	if area == "other" && !isOCS {
		http.NotFound(w, r)
		return
	}
	user, pass, ok := r.BasicAuth()
	if !ok || user != s.opts.User || subtle.ConstantTimeCompare([]byte(pass), []byte(s.opts.Password)) != 1 {
		if isOCS {
			writeOCS(w, r, ocsUnauthorised, "Current user is not logged in", nil)
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="Nextcloud", charset="UTF-8"`)
		sabre(w, http.StatusUnauthorized, `Sabre\DAV\Exception\NotAuthenticated`, "No public access to this resource., Username or password was incorrect")
		return
	}
	if isOCS {
		// SecurityMiddleware: API clients pass the CSRF check only with this
		// header; the answer is not an OCS envelope.
		if r.Header.Get("OCS-APIRequest") != "true" {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusPreconditionFailed)
			io.WriteString(w, `{"message":"CSRF check failed"}`)
			return
		}
		s.serveOCS(w, r, area)
		return
	}
	switch area {
	case "files":
		s.serveFiles(w, r)
	case "uploads":
		s.serveUploads(w, r)
	case "versions":
		s.serveVersions(w, r)
	case "trashbin":
		s.serveTrash(w, r)
	case "dav":
		if r.Method != "SEARCH" {
			sabre(w, http.StatusMethodNotAllowed, `Sabre\DAV\Exception\MethodNotAllowed`, "Only SEARCH is served here")
			return
		}
		s.serveSearch(w, r)
	}
}

// statusWriter remembers the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// sabre writes Sabre's XML error body.
func sabre(w http.ResponseWriter, status int, exception, message string) {
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?>
<d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns">
  <s:exception>%s</s:exception>
  <s:message>%s</s:message>
</d:error>
`, xmlText(exception), xmlText(message))
}

// sabreException names Sabre's exception for a status x/net answered.
func sabreException(status int) string {
	switch status {
	case http.StatusBadRequest:
		return `Sabre\DAV\Exception\BadRequest`
	case http.StatusForbidden:
		return `Sabre\DAV\Exception\Forbidden`
	case http.StatusNotFound:
		return `Sabre\DAV\Exception\NotFound`
	case http.StatusMethodNotAllowed:
		return `Sabre\DAV\Exception\MethodNotAllowed`
	case http.StatusConflict:
		return `Sabre\DAV\Exception\Conflict`
	case http.StatusPreconditionFailed:
		return `Sabre\DAV\Exception\PreconditionFailed`
	case http.StatusLocked:
		return `Sabre\DAV\Exception\Locked`
	case http.StatusUnsupportedMediaType:
		return `Sabre\DAV\Exception\UnsupportedMediaType`
	case http.StatusInsufficientStorage:
		return `Sabre\DAV\Exception\InsufficientStorage`
	}
	return `Sabre\DAV\Exception`
}

// davWriter sits between x/net's handler and the client: it lets a hook
// adjust status and headers just before they are sent, and turns x/net's
// plain-text errors into Sabre XML bodies.
type davWriter struct {
	http.ResponseWriter
	before  func(status int) int // may set headers and change the status
	status  int
	swallow bool
}

func (w *davWriter) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	if w.before != nil {
		code = w.before(code)
	}
	w.status = code
	if code >= 400 {
		w.swallow = true
		w.Header().Del("Content-Length")
		sabre(w.ResponseWriter, code, sabreException(code), http.StatusText(code))
		return
	}
	if code == http.StatusNoContent || code == http.StatusCreated {
		w.swallow = true // Nextcloud sends these without a body
		w.Header().Set("Content-Length", "0")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *davWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.swallow {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}
