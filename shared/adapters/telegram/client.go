package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/callcount"
	"github.com/switchboard-dev/switchboard/shared/platform/baseurl"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	"github.com/switchboard-dev/switchboard/shared/platform/tgtoken"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// DefaultTimeout bounds one request when New gets no *http.Client. It is
// longer than the long-poll timeouts GetUpdates is meant for (≤ 50 s).
const DefaultTimeout = 60 * time.Second

const (
	userAgent = "switchboard-telegram"
	// maxAnswer caps a JSON answer read into memory: 100 updates of 4096
	// characters stay far below.
	maxAnswer = 8 << 20
	// maxServerText caps Telegram's description passed on to a caller.
	maxServerText = 300
)

// channelName is a public channel or supergroup address (the same rule as
// config's telegramChatRe).
var channelName = regexp.MustCompile(`^@[A-Za-z][A-Za-z0-9_]{3,}$`)

// Client talks to the Bot API as one bot. It is safe for concurrent use.
type Client struct {
	base     *url.URL // scheme://host[/prefix], no trailing slash
	where    string   // base for messages (never holds the token)
	token    string
	botID    string // the part of the token before ":", public (getMe's id)
	hc       *http.Client
	scrubber *scrub.Scrubber
	now      func() time.Time // turns an HTTP-date Retry-After into a wait
	wait     sb.TelegramWait  // SendLong's and EditMessage's 429 waits; zero: defaults

	calls callcount.Counter
}

var (
	_ sb.TelegramSender  = (*Client)(nil)
	_ sb.TelegramEditor  = (*Client)(nil)
	_ sb.TelegramUpdates = (*Client)(nil)
)

// New returns a client for the Bot API at apiBaseURL (https://api.telegram.org,
// a self-hosted telegram-bot-api server, or a fake) acting as the bot with
// botToken. hc nil means a client with DefaultTimeout; when GetUpdates long
// polls, hc.Timeout must be longer than the poll.
//
// New copies hc and turns redirects off in the copy: the Bot API does not
// redirect, and following one would resend the request (and its URL, which
// carries the token) somewhere else.
//
// Every text the client sends for a person to read (message and edit
// texts, button labels and URLs, callback answers) passes its Scrubber
// first, so no caller can send a secret by forgetting to scrub. Without
// WithScrubber that Scrubber masks the well-known secret shapes and the bot
// token; production clients get the instance's Scrubber (every configured
// secret) through WithScrubber, which a test of the module checks for every
// client built outside tests.
//
// Returns EINVALID when apiBaseURL is not an absolute http(s) URL without
// credentials, query or fragment, or when botToken does not look like
// <bot id>:<secret>.
func New(apiBaseURL, botToken string, hc *http.Client, opts ...Option) (*Client, error) {
	const op = "telegram.new"
	base, err := parseBaseURL(apiBaseURL)
	if err != nil {
		return nil, sb.E(op, sb.EINVALID, err.Error())
	}
	if err := checkToken(botToken); err != nil {
		return nil, sb.E(op, sb.EINVALID, err.Error())
	}
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	own := *hc
	own.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	id, _, _ := strings.Cut(botToken, ":")
	c := &Client{
		base:     base,
		where:    base.String(),
		token:    botToken,
		botID:    id,
		hc:       &own,
		scrubber: scrub.New([]string{botToken}),
		now:      time.Now,
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Option changes how New builds a Client.
type Option func(*Client)

// WithScrubber makes s (plus the bot token) the Scrubber every outbound
// text passes. Give the instance's Scrubber, built from every configured
// secret.
func WithScrubber(s *scrub.Scrubber) Option {
	return func(c *Client) { c.scrubber = s.With(c.token) }
}

func checkToken(t string) error {
	if strings.TrimSpace(t) == "" {
		return errors.New("telegram.botToken is empty; set the token @BotFather gave the bot")
	}
	if !tgtoken.IsBotToken(t) {
		// Never quote the value: it is (nearly) a secret.
		return errors.New("telegram.botToken does not look like a bot token (<bot id>:<secret> from @BotFather); check for spaces, quotes or a missing part")
	}
	return nil
}

// String describes the client without its token.
func (c *Client) String() string {
	return fmt.Sprintf("telegram client for bot %s at %s", c.botID, c.where)
}

// GoString is String, for %#v.
func (c *Client) GoString() string { return c.String() }

// Calls returns how many requests the client sent per method since it was
// built: "sendMessage", "getUpdates", … Failed requests count too; local
// validation failures do not (nothing was sent).
func (c *Client) Calls() map[string]int {
	return c.calls.Snapshot()
}

// apiBaseURL is how telegram.apiBaseUrl is checked.
var apiBaseURL = baseurl.Rule{
	Key:         "telegram.apiBaseUrl",
	NotHTTP:     "use https://api.telegram.org",
	Credentials: "remove them",
	Redact:      redactURL,
}

func parseBaseURL(raw string) (*url.URL, error) {
	u, err := apiBaseURL.Parse(raw)
	if err != nil {
		return nil, err
	}
	if strings.Contains(u.Path, "/bot") {
		return nil, fmt.Errorf("telegram.apiBaseUrl %q contains /bot…; give only the base (https://api.telegram.org), the token goes into telegram.botToken", redactURL(strings.TrimSpace(raw)))
	}
	return u, nil
}

// redactURL keeps a URL-ish string readable for messages while dropping
// user info and the path segment after /bot (where the token is).
func redactURL(s string) string {
	if i := strings.Index(s, "/bot"); i >= 0 {
		rest := ""
		if j := strings.IndexAny(s[i+4:], "/?#"); j >= 0 {
			rest = s[i+4+j:]
		}
		s = s[:i] + "/bot<redacted>" + rest
	}
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = nil
		return u.String()
	}
	return s
}

// methodURL is {base}/bot{token}/{method}.
func (c *Client) methodURL(method string) string {
	return c.where + "/bot" + c.token + "/" + method
}

// call describes one request for messages. Nothing in it is secret.
type call struct {
	method string // Bot API method: "sendMessage"
	chat   string // the chat id the caller named, for "chat not found"
	msgID  int64  // the message an edit names
}

// do POSTs in as JSON to method and decodes the result into out (nil: only
// check that ok is true).
func (c *Client) do(ctx context.Context, cl call, in, out any) error {
	op := "telegram." + cl.method
	body, err := jsonBody(in)
	if err != nil {
		return sb.Wrap(op, sb.EINVALID, "Telegram "+cl.method+": the request cannot be encoded as JSON", err)
	}
	c.calls.Add(cl.method)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.methodURL(cl.method), bytes.NewReader(body))
	if err != nil {
		return sb.Wrap(op, sb.EINTERNAL, "Telegram "+cl.method+": the request could not be built", c.cleanError(err))
	}
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.failure(cl, nil, nil, c.cleanError(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return c.failure(cl, nil, nil, c.cleanError(err))
	}
	if len(raw) > maxAnswer {
		return sb.E(op, sb.EINTERNAL, fmt.Sprintf("Telegram %s: the answer is larger than %d MB; check telegram.apiBaseUrl", cl.method, maxAnswer>>20))
	}
	var env envelope
	jsonErr := json.Unmarshal(raw, &env)
	if resp.StatusCode/100 != 2 || (jsonErr == nil && !env.OK) {
		var e *envelope
		if jsonErr == nil {
			e = &env
		}
		return c.failure(cl, resp, e, nil)
	}
	if jsonErr != nil {
		return sb.Wrap(op, sb.EINTERNAL, fmt.Sprintf("Telegram %s: the answer is not Bot API JSON; check that telegram.apiBaseUrl (%s) points at the Bot API", cl.method, c.where), jsonErr)
	}
	if out == nil {
		return nil
	}
	if err := decodeResult(env.Result, out); err != nil {
		return sb.Wrap(op, sb.EINTERNAL, "Telegram "+cl.method+": the answer has an unexpected shape", err)
	}
	return nil
}

// jsonBody encodes v. HTML escaping stays off so that "<b>" reaches
// Telegram as typed (it would decode \u003c too, but bodies stay readable).
func jsonBody(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// cleanError keeps the error chain (errors.Is still finds
// context.DeadlineExceeded) but replaces the URL of a *url.Error, which
// carries the token, and masks the token anywhere else in the text.
func (c *Client) cleanError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return &url.Error{Op: ue.Op, URL: redactURL(ue.URL), Err: c.maskErr(ue.Err)}
	}
	return c.maskErr(err)
}

// maskErr returns err unchanged unless its text holds the token; then an
// error with the masked text that still unwraps to err.
func (c *Client) maskErr(err error) error {
	if err == nil || !strings.Contains(err.Error(), c.token) {
		return err
	}
	return &maskedError{text: strings.ReplaceAll(err.Error(), c.token, "<redacted>"), err: err}
}

type maskedError struct {
	text string
	err  error
}

func (e *maskedError) Error() string { return e.text }
func (e *maskedError) Unwrap() error { return e.err }
