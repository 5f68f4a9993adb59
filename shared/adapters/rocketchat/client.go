package rocketchat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/callcount"
	"github.com/switchboard-dev/switchboard/shared/platform/baseurl"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// DefaultTimeout bounds one request when New gets no *http.Client. The
// caller's context (a Lambda deadline) bounds it too.
const DefaultTimeout = 30 * time.Second

const (
	headerUserID    = "X-User-Id"
	headerAuthToken = "X-Auth-Token"
	userAgent       = "switchboard-rocketchat"

	// maxAnswer caps a JSON answer read into memory: a history page of 100
	// messages with attachments is far below; a wrong baseUrl streaming a
	// big file is not.
	maxAnswer = 32 << 20
	// maxErrorBody caps the part of an error answer that is read.
	maxErrorBody = 64 << 10
	// maxServerText caps the server's reason passed on to a caller.
	maxServerText = 300
)

// Client talks to one Rocket.Chat server as one user. It is safe for
// concurrent use.
type Client struct {
	base      *url.URL // scheme://host[/prefix], no trailing slash, no query
	where     string   // base without credentials, for messages
	userID    string
	authToken string
	hc        *http.Client
	scrubber  *scrub.Scrubber  // masks every text sent to a person, and the token in server errors
	now       func() time.Time // turns X-RateLimit-Reset into a wait

	calls callcount.Counter
}

var _ sb.Chat = (*Client)(nil)

// New returns a client for the Rocket.Chat server at baseURL (for example
// https://chat.example.org, or https://example.org/chat when it is served
// under a path), acting as the user userID with the personal access token
// authToken. hc nil means a client with DefaultTimeout.
//
// New copies hc and adds one rule to the copy's redirect policy: a redirect
// to another origin (a file store's signed URL, a misconfigured proxy) loses
// X-User-Id and X-Auth-Token, which net/http would otherwise forward. The
// caller's own CheckRedirect still runs afterwards.
//
// Every text the client sends for a person to read (message texts, file
// names and descriptions) passes its Scrubber first, so no caller can send
// a secret by forgetting to scrub. Without WithScrubber that Scrubber masks
// the well-known secret shapes and the client's own token; production
// clients get the instance's Scrubber (every configured secret) through
// WithScrubber, which a test of the module checks for every client built
// outside tests.
//
// Returns EINVALID when baseURL is not an absolute http(s) URL without
// credentials, query or fragment, or when userID or authToken is empty.
func New(baseURL string, userID, authToken string, hc *http.Client, opts ...Option) (*Client, error) {
	return newClient(baseURL, userID, authToken, hc, false, opts)
}

// NewAnonymous is a client without an identity, for the endpoints that need
// none (Info: GET /api/info for the health check). Calls that need a
// login fail with the server's 401.
func NewAnonymous(baseURL string, hc *http.Client, opts ...Option) (*Client, error) {
	return newClient(baseURL, "", "", hc, true, opts)
}

// Option changes how New builds a Client.
type Option func(*Client)

// WithScrubber makes s (plus the client's own token) the Scrubber every
// outbound text passes. Give the instance's Scrubber, built from every
// configured secret.
func WithScrubber(s *scrub.Scrubber) Option {
	return func(c *Client) { c.scrubber = s.With(c.authToken) }
}

// scrub is the one place outbound text passes; values the caller allowed
// on ctx (scrub.Allow) stay as they are.
func (c *Client) scrub(ctx context.Context, text string) string {
	return c.scrubber.StringContext(ctx, text)
}

func newClient(baseURL string, userID, authToken string, hc *http.Client, anonymous bool, opts []Option) (*Client, error) {
	const op = "rocketchat.new"
	base, err := baseURLRule.Parse(baseURL)
	if err != nil {
		return nil, sb.E(op, sb.EINVALID, err.Error())
	}
	if !anonymous && strings.TrimSpace(userID) == "" {
		return nil, sb.E(op, sb.EINVALID, "RocketChat.userId is empty; set the agent user's id (provision-agent prints it)")
	}
	if !anonymous && strings.TrimSpace(authToken) == "" {
		return nil, sb.E(op, sb.EINVALID, "RocketChat.authToken is empty; set the agent's personal access token")
	}
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	own := *hc
	next := hc.CheckRedirect
	own.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		// net/http has copied the original headers into req by now; only
		// Authorization and Cookie are dropped across hosts by itself.
		if !sameOrigin(req.URL, base) {
			req.Header.Del(headerUserID)
			req.Header.Del(headerAuthToken)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	c := &Client{
		base:      base,
		where:     base.String(),
		userID:    userID,
		authToken: authToken,
		hc:        &own,
		scrubber:  scrub.New([]string{authToken}),
		now:       time.Now,
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// String describes the client without its token.
func (c *Client) String() string {
	return fmt.Sprintf("rocketchat client for user %s at %s", c.userID, c.where)
}

// GoString is String, for %#v.
func (c *Client) GoString() string { return c.String() }

// Calls returns how many requests the client sent per endpoint since it was
// built, keyed by the endpoint's name: "subscriptions.get",
// "channels.history", "chat.postMessage", "rooms.media",
// "rooms.mediaConfirm", "file-upload", "info", … Failed requests count too.
func (c *Client) Calls() map[string]int {
	return c.calls.Snapshot()
}

// baseURLRule is how RocketChat.baseUrl is checked.
var baseURLRule = baseurl.Rule{
	Key:         "RocketChat.baseUrl",
	NotHTTP:     "use e.g. https://chat.example.org",
	Credentials: "put them in userId/authToken instead",
	Redact:      redact,
}

// redact removes credentials from a URL-ish string for messages.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		if at := strings.LastIndex(s, "@"); at >= 0 && strings.Contains(s[:at], "://") {
			return s[:strings.Index(s, "://")+3] + "…@" + s[at+1:]
		}
		return s
	}
	u.User = nil
	return u.String()
}

func sameOrigin(u, base *url.URL) bool {
	return strings.EqualFold(u.Scheme, base.Scheme) && strings.EqualFold(u.Host, base.Host)
}

// call describes one request for counting and for messages. Nothing in it is
// secret: the path never includes the query, and headers are not part of it.
type call struct {
	name   string // Calls key: "chat.postMessage", "file-upload"
	method string
	path   string // readable path below baseURL: /api/v1/rooms.media/GENERAL
	epath  string // the same, escaped for the URL

	// What the caller named, for "unknown …" messages.
	room, message, user, file string
	// hint is added to every failure message of this call.
	hint string
}

// api builds a call for /api/v1/<name>[/<segment>…]. Segments must be
// checked with segment first.
func api(method, name string, segs ...string) call {
	c := call{name: name, method: method, path: "/api/v1/" + name, epath: "/api/v1/" + name}
	for _, s := range segs {
		c.path += "/" + s
		c.epath += "/" + url.PathEscape(s)
	}
	return c
}

func (cl call) endpoint() string { return cl.method + " " + cl.path }

// segment checks a value that becomes one path segment of endpoint: "",
// "." and ".." would change which endpoint is called.
func segment(op, endpoint, what, v string) error {
	if v == "" || v == "." || v == ".." || strings.ContainsAny(v, "\x00\r\n") {
		return sb.E(op, sb.EINVALID, fmt.Sprintf("Rocket.Chat %s: %s %q is not valid; give the %s as Rocket.Chat shows it", endpoint, what, v, what))
	}
	return nil
}

// request is one HTTP exchange.
type request struct {
	call
	query       url.Values
	body        io.Reader
	length      int64 // Content-Length; -1 unknown (chunked)
	contentType string
}

func (c *Client) url(r request) string {
	u := *c.base
	u.RawPath = c.base.EscapedPath() + r.epath
	u.Path = c.base.Path + r.path
	u.RawQuery = r.query.Encode()
	return u.String()
}

// send performs r and returns the response for a 2xx status; any other
// status, and any transport failure, becomes the mapped error with the
// response closed.
func (c *Client) send(ctx context.Context, r request, accept string) (*http.Response, error) {
	c.calls.Add(r.name)
	req, err := http.NewRequestWithContext(ctx, r.method, c.url(r), r.body)
	if err != nil {
		return nil, sb.Wrap("rocketchat."+r.name, sb.EINTERNAL, "Rocket.Chat "+r.endpoint()+": the request could not be built", err)
	}
	if r.body != nil {
		req.ContentLength = r.length
		req.Header.Set("Content-Type", r.contentType)
	}
	if c.userID != "" {
		req.Header.Set(headerUserID, c.userID)
		req.Header.Set(headerAuthToken, c.authToken)
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", userAgent)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.failure(r.call, nil, nil, c.cleanTransportError(err))
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return nil, c.failure(r.call, resp, body, nil)
}

// do performs r and decodes a JSON answer into out (nil: only check it).
func (c *Client) do(ctx context.Context, r request, out any) error {
	resp, err := c.send(ctx, r, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return c.failure(r.call, nil, nil, c.cleanTransportError(err))
	}
	op := "rocketchat." + r.name
	if len(body) > maxAnswer {
		return sb.E(op, sb.EINTERNAL, fmt.Sprintf("Rocket.Chat %s: the answer is larger than %d MB; check RocketChat.baseUrl", r.endpoint(), maxAnswer>>20))
	}
	env, err := decodeEnvelope(body)
	if err != nil {
		return sb.Wrap(op, sb.EINTERNAL, fmt.Sprintf("Rocket.Chat %s: the answer is not Rocket.Chat JSON; check that RocketChat.baseUrl (%s) points at Rocket.Chat", r.endpoint(), c.where), err)
	}
	if env.Success != nil && !*env.Success {
		// A 2xx that says it failed: map it like the 400 it should have been.
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

// jsonBody encodes v for a request. HTML escaping stays off so that "<" and
// "&" in a message reach the server as typed.
func jsonBody(v any) (io.Reader, int64, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, 0, err
	}
	s := strings.TrimSuffix(b.String(), "\n")
	return strings.NewReader(s), int64(len(s)), nil
}

// postJSON is do for a JSON body.
func (c *Client) postJSON(ctx context.Context, cl call, in, out any) error {
	body, n, err := jsonBody(in)
	if err != nil {
		return sb.Wrap("rocketchat."+cl.name, sb.EINVALID, "Rocket.Chat "+cl.endpoint()+": the request cannot be encoded as JSON", err)
	}
	return c.do(ctx, request{call: cl, body: body, length: n, contentType: "application/json"}, out)
}

// cleanTransportError keeps the error chain (errors.Is still finds
// context.DeadlineExceeded) but drops the query from *url.Error, which
// carries search text and timestamps, and never a header.
func (c *Client) cleanTransportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		u, perr := url.Parse(ue.URL)
		if perr == nil {
			u.RawQuery, u.User = "", nil
			return &url.Error{Op: ue.Op, URL: u.String(), Err: ue.Err}
		}
	}
	return err
}
