// Package collabora converts documents through Collabora Online's convert-to
// endpoint: POST {collaboraUrl}/cool/convert-to/{format}, the file in
// the multipart field "data", the converted file back as the answer. Agents
// write what they write well (CSV, HTML, ODT) and Collabora makes the XLSX,
// PDF or DOCX, so the project carries no PDF or spreadsheet library.
//
// Conversions that work (LibreOffice import filter → LOK export map):
//
//	csv, xlsx, xls, ods             → xlsx, ods, pdf, html
//	html, htm, odt, docx, doc, rtf,
//	txt                             → pdf, docx, odt, html
//
// Markdown is not a LibreOffice input format: a .md file arrives as plain
// text, headings and all, so Convert refuses it; render Markdown to HTML
// first, or deliver the .md as it is (Nextcloud displays Markdown).
//
// When Collabora refuses (EFORBIDDEN: this host is not in net.post_allow),
// callers deliver Markdown or CSV instead.
package collabora

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/retryafter"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// DefaultTimeout bounds one conversion when New gets no *http.Client. It is a
// little above Collabora's own per_document.limit_convert_secs (default
// 100 s), so a slow conversion ends with Collabora's answer, not ours.
const DefaultTimeout = 110 * time.Second

// Endpoint prefixes: current Collabora serves /cool/; releases before the
// 2021 rename (and proxies configured for them) only /lool/. Current
// Collabora still routes /lool/convert-to to the same handler.
const (
	prefixCool = "cool"
	prefixLool = "lool"
)

// Client converts files through one Collabora Online server. It is safe for
// concurrent use.
type Client struct {
	base  *url.URL // collaboraUrl, without a trailing slash
	where string   // base without credentials, for messages and endpoints
	hc    *http.Client
	// header goes with every request: what a reverse proxy in front of
	// Collabora asks for (a shared secret), since Collabora's convert-to
	// itself checks only the caller's address.
	header http.Header

	mu     sync.Mutex
	prefix string // "cool" or "lool" once one has answered; "" before
}

// StatusError is the cause inside a Convert error when Collabora (or a proxy
// in front of it) answered with an HTTP error: the tool copies Status and
// Endpoint into the envelope's http_status and endpoint.
type StatusError struct {
	Status   int
	Endpoint string // without credentials
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("POST %s: HTTP %d", e.Endpoint, e.Status)
}

// HTTPStatusCode returns Status, in the shape the AWS SDK errors use too.
func (e *StatusError) HTTPStatusCode() int { return e.Status }

// RemoteStatus, RemoteEndpoint and RemoteCode make StatusError a
// switchboard.RemoteFailure (Collabora has no status of its own).
func (e *StatusError) RemoteStatus() int      { return e.Status }
func (e *StatusError) RemoteEndpoint() string { return e.Endpoint }
func (e *StatusError) RemoteCode() int        { return 0 }

var (
	_ sb.RemoteFailure = (*StatusError)(nil)
	_ sb.Converter     = (*Client)(nil)
)

// Option configures a Client.
type Option func(*Client)

// WithHeaders sends these headers (name → value; collaboraHeaders) with
// every request, e.g. the shared secret a reverse proxy in front of
// Collabora checks. The values are secrets: they appear in no message.
func WithHeaders(h map[string]string) Option {
	return func(c *Client) {
		for k, v := range h {
			c.header.Set(k, v)
		}
	}
}

// New returns a Client for the Collabora server at baseURL (collaboraUrl,
// for example https://office.example.org; a path prefix behind a reverse
// proxy is kept). hc nil means a client with DefaultTimeout.
// Returns EINVALID when baseURL is not an absolute http(s) URL.
func New(baseURL string, hc *http.Client, opts ...Option) (*Client, error) {
	const op = "collabora.new"
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, sb.E(op, sb.EINVALID, fmt.Sprintf("collaboraUrl %q is not an http(s) URL such as https://office.example.org", redact(baseURL)))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, sb.E(op, sb.EINVALID, fmt.Sprintf("collaboraUrl %q must not carry a query or fragment", redact(baseURL)))
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	bare := *u
	bare.User = nil
	c := &Client{base: u, where: bare.String(), hc: hc, header: http.Header{}}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Convert sends the file named fileName with content r to Collabora and
// returns the document converted to format (one of Formats), streaming both
// ways: r is read while the request is sent, the result is read from the
// answer. The caller closes the returned body. Convert never closes r and
// starts no read of r after it returns.
//
// When r can seek or reports its length (strings.Reader, bytes.Reader,
// bytes.Buffer, *os.File), the request carries a Content-Length, which lets Collabora
// spool the upload to disk instead of memory.
//
// The first call finds the endpoint: /cool/convert-to, and when that answers
// 404, /lool/convert-to once; the one that worked is remembered. With a
// reader that cannot seek, the search uses an empty request first (Collabora
// answers it with 400) so that r is sent only once.
//
// Errors: EINVALID for a format outside Formats, a Markdown or spreadsheet/
// text mismatch, a file too large (413) or an input Collabora cannot convert
// (400); EFORBIDDEN when Collabora refuses this host (403, net.post_allow);
// ENOTFOUND when neither path exists (404 twice); ERATELIMITED (429);
// EUNAVAILABLE for 5xx, timeouts and network failures; EUNAUTHORIZED when a
// proxy asks for credentials (401). A failure reading r is returned with r's
// own error code. HTTP failures carry a *StatusError.
func (c *Client) Convert(ctx context.Context, format, fileName string, r io.Reader) (io.ReadCloser, sb.Converted, error) {
	asked := format
	format = normalizeFormat(format)
	op := "collabora.convert " + format
	base := path.Base(strings.ReplaceAll(fileName, "\\", "/"))
	if err := checkConversion(op, asked, format, base); err != nil {
		return nil, sb.Converted{}, err
	}
	up, err := newUpload(base, r)
	if err != nil {
		return nil, sb.Converted{}, fmt.Errorf("collabora convert %s to %s: reading input: %w", base, format, err)
	}
	candidates := c.candidates()
	if len(candidates) > 1 && !up.replayable() {
		prefix, err := c.discover(ctx, op, format)
		if err != nil {
			return nil, sb.Converted{}, err
		}
		candidates = []string{prefix}
	}
	for i, prefix := range candidates {
		if i > 0 {
			if err := up.rewind(); err != nil {
				return nil, sb.Converted{}, fmt.Errorf("collabora convert %s to %s: rewinding input: %w", base, format, err)
			}
		}
		body, length := up.attempt()
		resp, err := c.post(ctx, prefix, format, up.contentType(), body, length)
		body.finish()
		if err != nil {
			if rerr := body.readErr(); rerr != nil {
				return nil, sb.Converted{}, fmt.Errorf("collabora convert %s to %s: reading input: %w", base, format, rerr)
			}
			return nil, sb.Converted{}, c.transportError(op, err)
		}
		if resp.StatusCode == http.StatusNotFound {
			discard(resp)
			continue
		}
		if resp.StatusCode != http.StatusOK {
			err := c.statusError(op, resp, prefix, format, base)
			discard(resp)
			return nil, sb.Converted{}, err
		}
		if resp.ContentLength == 0 {
			discard(resp)
			return nil, sb.Converted{}, sb.Wrap(op, sb.EINTERNAL, "Collabora answered with an empty document",
				&StatusError{Status: resp.StatusCode, Endpoint: c.endpoint(prefix, format)})
		}
		c.remember(prefix)
		return resp.Body, sb.Converted{ContentType: sb.ConvertContentType(format), FileName: resultName(resp.Header, base, format)}, nil
	}
	c.remember("") // the endpoint moved: search again next time
	return nil, sb.Converted{}, c.notFound(op, format)
}

// discover finds the endpoint prefix without sending a file: an empty
// multipart form reaches Collabora's convert-to handler, which answers 400
// (no file); a path that does not exist answers 404.
func (c *Client) discover(ctx context.Context, op, format string) (string, error) {
	for _, prefix := range []string{prefixCool, prefixLool} {
		probe := emptyForm()
		resp, err := c.post(ctx, prefix, format, probe.contentType, strings.NewReader(probe.body), int64(len(probe.body)))
		if err != nil {
			return "", c.transportError(op, err)
		}
		discard(resp)
		switch {
		case resp.StatusCode == http.StatusNotFound:
			continue
		case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized ||
			resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
			return "", c.statusError(op, resp, prefix, format, "")
		}
		c.remember(prefix)
		return prefix, nil
	}
	return "", c.notFound(op, format)
}

func (c *Client) post(ctx context.Context, prefix, format, contentType string, body io.Reader, length int64) (*http.Response, error) {
	u := c.base.JoinPath(prefix, "convert-to", format)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), body)
	if err != nil {
		return nil, err
	}
	req.ContentLength = length // -1: chunked
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/octet-stream")
	return c.hc.Do(req)
}

func (c *Client) knownPrefix() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.prefix
}

func (c *Client) remember(prefix string) {
	c.mu.Lock()
	c.prefix = prefix
	c.mu.Unlock()
}

// candidates lists the prefixes to try, in order.
func (c *Client) candidates() []string {
	if p := c.knownPrefix(); p != "" {
		return []string{p}
	}
	return []string{prefixCool, prefixLool}
}

func (c *Client) endpoint(prefix, format string) string {
	return c.where + "/" + prefix + "/convert-to/" + format
}

func (c *Client) notFound(op, format string) error {
	return sb.Wrap(op, sb.ENOTFOUND,
		fmt.Sprintf("no convert-to endpoint at collaboraUrl %s (tried /cool/convert-to and /lool/convert-to); check collaboraUrl, or deliver Markdown or CSV instead", c.where),
		&StatusError{Status: http.StatusNotFound, Endpoint: c.endpoint(prefixCool, format)})
}

// statusError maps a non-200 answer. Collabora sends empty bodies with its
// errors, so there is no server text to pass on.
func (c *Client) statusError(op string, resp *http.Response, prefix, format, fileName string) error {
	status := resp.StatusCode
	cause := &StatusError{Status: status, Endpoint: c.endpoint(prefix, format)}
	switch {
	case status == http.StatusForbidden:
		return sb.Wrap(op, sb.EFORBIDDEN, "Collabora refuses conversions from this host (not in its allowed hosts list / net.post_allow); deliver Markdown or CSV instead, or ask the admin to allow this host", cause)
	case status == http.StatusRequestEntityTooLarge:
		return sb.Wrap(op, sb.EINVALID, fmt.Sprintf("%s is too large for Collabora (HTTP 413); deliver a smaller file, or Markdown or CSV instead", fileName), cause)
	case status == http.StatusBadRequest:
		return sb.Wrap(op, sb.EINVALID, fmt.Sprintf("Collabora could not convert %s to %s (HTTP 400): the file is damaged or not in the format its name says; check its content and extension", fileName, format), cause)
	case status == http.StatusUnauthorized:
		return sb.Wrap(op, sb.EUNAUTHORIZED, "the server at collaboraUrl asks for credentials (HTTP 401); Collabora's convert-to needs none, so check collaboraUrl, or the proxy in front of it and the collaboraHeaders it wants", cause)
	case status == http.StatusTooManyRequests:
		e := sb.Wrap(op, sb.ERATELIMITED, "Collabora (or its proxy) is rate limiting conversions (HTTP 429); try again later", cause)
		e.RetryAfter = retryafter.Parse(resp.Header.Get("Retry-After"), time.Now())
		return e
	case status == http.StatusRequestTimeout || status >= 500:
		e := sb.Wrap(op, sb.EUNAVAILABLE, fmt.Sprintf("Collabora failed (HTTP %d); try again later, or deliver Markdown or CSV instead", status), cause)
		e.RetryAfter = retryafter.Parse(resp.Header.Get("Retry-After"), time.Now())
		return e
	default:
		return sb.Wrap(op, sb.EINTERNAL, fmt.Sprintf("Collabora gave an unexpected answer (HTTP %d)", status), cause)
	}
}

// transportError maps a failure without an answer: all of them are worth a
// later retry, so EUNAVAILABLE, with a message that says which one.
func (c *Client) transportError(op string, err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return sb.Wrap(op, sb.EUNAVAILABLE, fmt.Sprintf("Collabora at %s did not answer in time; try again later, or deliver Markdown or CSV instead", c.where), err)
	case errors.Is(err, context.Canceled):
		return sb.Wrap(op, sb.EUNAVAILABLE, "the conversion was cancelled", err)
	}
	return sb.Wrap(op, sb.EUNAVAILABLE, fmt.Sprintf("cannot reach Collabora at %s; check collaboraUrl and try again later, or deliver Markdown or CSV instead", c.where), err)
}

// resultName takes the file name from Content-Disposition
// (attachment; filename="<base>.<format>"), reduced to a base name.
func resultName(h http.Header, input, format string) string {
	if _, params, err := mime.ParseMediaType(h.Get("Content-Disposition")); err == nil {
		if name := path.Base(strings.ReplaceAll(params["filename"], "\\", "/")); name != "" && name != "." && name != "/" && name != ".." {
			return name
		}
	}
	return strings.TrimSuffix(input, path.Ext(input)) + "." + format
}

// discard drains a little of an unwanted answer so the connection can be
// reused, then closes it.
func discard(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	_ = resp.Body.Close()
}

// redact shows a URL without user info, for messages about a bad one.
func redact(s string) string {
	if u, err := url.Parse(strings.TrimSpace(s)); err == nil && u.User != nil {
		u.User = nil
		return u.String()
	}
	return s
}
