package nextcloud

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/shared/adapters/callcount"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Client talks to one Nextcloud account. It is safe for concurrent use.
type Client struct {
	origin   string // scheme://host[:port]
	basePath string // escaped path prefix of the installation ("" or "/nextcloud")
	user     string
	password string
	hc       *http.Client
	scrubber *scrub.Scrubber // masks the text of share notes and labels (scrub.go)

	// ocsPrefix is "/ocs/v2.php"; tests switch it to v1 to exercise the
	// HTTP-200-with-error-statuscode path.
	ocsPrefix string
	// ocsHeader is always true in production; tests turn it off to see the
	// server's CSRF answer.
	ocsHeader bool

	mu       sync.Mutex // guards chunking and caps
	calls    callcount.Counter
	chunking Chunking
	caps     *switchboard.FilesCapabilities // cached for the chunking decision only
}

var _ switchboard.Files = (*Client)(nil)

// New builds a client for the account username on the Nextcloud at baseURL
// (for example https://cloud.example.org or https://example.org/nextcloud).
// hc nil means http.DefaultClient. It returns EINVALID when the URL or the
// credentials are unusable. Text meant for people (share notes and labels)
// is scrubbed; see WithScrubber.
func New(baseURL, username, appPassword string, hc *http.Client, opts ...Option) (*Client, error) {
	const op = "nextcloud.new"
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, switchboard.Wrap(op, switchboard.EINVALID,
			fmt.Sprintf("Nextcloud baseUrl %q is not an http(s) URL; set it to the server address, e.g. https://cloud.example.org", baseURL), err)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, switchboard.E(op, switchboard.EINVALID,
			"Nextcloud baseUrl must not carry a query, fragment or credentials; put the account in username and appPassword")
	}
	if username == "" || strings.ContainsAny(username, "/:") {
		return nil, switchboard.E(op, switchboard.EINVALID,
			"Nextcloud username is empty or contains '/' or ':'; set it to the login name of the account")
	}
	if appPassword == "" {
		return nil, switchboard.E(op, switchboard.EINVALID,
			"Nextcloud appPassword is empty; create one under Settings → Security → Devices & sessions")
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	c := &Client{
		origin:    u.Scheme + "://" + u.Host,
		basePath:  strings.TrimRight(u.EscapedPath(), "/"),
		user:      username,
		password:  appPassword,
		hc:        hc,
		scrubber:  scrub.New([]string{appPassword}),
		ocsPrefix: "/ocs/v2.php",
		ocsHeader: true,
		chunking:  defaultChunking,
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Username returns the account the client acts as.
func (c *Client) Username() string { return c.user }

// Calls returns how many requests the client sent, by route. A route is the
// HTTP method and the API area: "PUT files", "PROPFIND files", "MKCOL uploads",
// "SEARCH dav", "PROPFIND versions", "MOVE trashbin", "GET capabilities",
// "POST shares", … (ncfake counts with the same names).
func (c *Client) Calls() map[string]int { return c.calls.Snapshot() }

func (c *Client) count(route string) { c.calls.Add(route) }

// request is one HTTP exchange before it is sent.
type request struct {
	method string
	area   string // route area for Calls: files, uploads, versions, trashbin, dav, capabilities, shares
	path   string // escaped path below the installation, starting with "/"
	query  url.Values
	header http.Header
	body   io.Reader
	size   int64 // ContentLength when body != nil; -1 = unknown
	ocs    bool
	// accept lists non-2xx statuses the caller handles itself (405 on MKCOL).
	accept []int
}

func (r *request) endpoint() string { return r.path }

// send performs rq and returns the response for a 2xx (or accepted) status;
// any other outcome is a classified error. The caller closes the body.
func (c *Client) send(ctx context.Context, op string, rq *request) (*http.Response, error) {
	target := c.origin + c.basePath + rq.path
	if len(rq.query) > 0 {
		target += "?" + rq.query.Encode()
	}
	body := rq.body
	req, err := http.NewRequestWithContext(ctx, rq.method, target, body)
	if err != nil {
		return nil, classify(op, &httpError{Method: rq.method, Endpoint: rq.endpoint(), OCS: rq.ocs, Err: err})
	}
	if body != nil {
		req.ContentLength = rq.size
		if rq.size == 0 {
			req.Body = http.NoBody
		}
	}
	for k, vs := range rq.header {
		req.Header[k] = vs
	}
	req.SetBasicAuth(c.user, c.password)
	if rq.ocs {
		if c.ocsHeader {
			req.Header.Set("OCS-APIRequest", "true")
		}
		req.Header.Set("Accept", "application/json")
	}
	c.count(rq.method + " " + rq.area)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, classify(op, &httpError{Method: rq.method, Endpoint: rq.endpoint(), OCS: rq.ocs, Err: err})
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	for _, s := range rq.accept {
		if resp.StatusCode == s {
			return resp, nil
		}
	}
	defer resp.Body.Close()
	return nil, classify(op, readHTTPError(rq, resp))
}

// do performs rq for its status alone: the answer is drained and closed.
func (c *Client) do(ctx context.Context, op string, rq *request) error {
	resp, err := c.send(ctx, op, rq)
	if err != nil {
		return err
	}
	discard(resp)
	return nil
}

// discard drains and closes a response body so the connection is reused.
func discard(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}

// cleanPath normalises a caller path to "/a/b" form relative to the user
// root. Clean with a leading slash cannot climb above the root.
func cleanPath(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	return path.Clean("/" + p), nil
}

// escapePath escapes each segment of a clean "/a/b" path.
func escapePath(p string) string {
	if p == "/" {
		return "/"
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

func (c *Client) escUser() string { return url.PathEscape(c.user) }

// filesPath is the escaped WebDAV path of a clean user path.
func (c *Client) filesPath(p string) string {
	if p == "/" {
		return "/remote.php/dav/files/" + c.escUser() + "/"
	}
	return "/remote.php/dav/files/" + c.escUser() + escapePath(p)
}

// filesURL is the absolute URL of a clean user path (for Destination headers).
func (c *Client) filesURL(p string) string { return c.origin + c.basePath + c.filesPath(p) }

// filesRoot is the decoded path prefix of hrefs in multistatus answers.
func (c *Client) filesRoot() string {
	base, _ := url.PathUnescape(c.basePath)
	return base + "/remote.php/dav/files/" + c.user
}

// relPath turns a multistatus href into a clean user path, or ok=false when
// the href lies outside the user's files.
func (c *Client) relPath(href string) (string, bool) {
	u, err := url.Parse(href)
	if err != nil {
		return "", false
	}
	rest, ok := strings.CutPrefix(u.Path, c.filesRoot())
	if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
		return "", false
	}
	return path.Clean("/" + rest), true
}

// errShortBody marks an upload whose reader ended before the announced size.
var errShortBody = errors.New("the reader ended before the announced size")

// sizedReader fails with errShortBody when r ends early, so that a caller's
// wrong size is not mistaken for a network failure.
type sizedReader struct {
	r    io.Reader
	left int64
}

func (s *sizedReader) Read(p []byte) (int, error) {
	if s.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	if err == io.EOF && s.left > 0 {
		return n, errShortBody
	}
	if err == io.EOF || s.left == 0 {
		return n, io.EOF
	}
	return n, err
}

// invalidPath builds the error for a path the client refuses to send.
func invalidPath(op string, err error) error {
	return switchboard.Wrap(op, switchboard.EINVALID, "the path contains a NUL byte; use a plain file name", err)
}
