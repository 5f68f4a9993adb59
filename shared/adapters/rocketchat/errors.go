package rocketchat

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/retryafter"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Rocket.Chat error codes (errorType, or the "[code]" at the end of error)
// that this client tells apart. Everything else in a 400 is EINVALID with
// the server's reason.
var (
	// The room does not exist or is not visible to the user: postMessage and
	// im.history answer invalid-channel, channels/groups.history
	// and rooms.info error-room-not-found, sendMessage
	// error-invalid-room, subscriptions.read error-invalid-subscription.
	unknownRoomCodes = codeSet("invalid-channel", "error-room-not-found", "error-invalid-room", "error-invalid-subscription")
	// Plain "not allowed" answers without a specific reason: posting into a
	// private group one is not a member of (error-not-allowed), rooms.info
	// without access (error "not-allowed", errorType "Not Allowed"),
	// chat.getMessage in a room without access ("Not allowed
	// [error-not-allowed]").
	notAllowedCodes = codeSet("error-not-allowed", "not-allowed")
)

func codeSet(codes ...string) map[string]bool {
	m := map[string]bool{}
	for _, c := range codes {
		m[c] = true
	}
	return m
}

var (
	// trailingCode finds the Meteor error code that ends error:
	// "The required \"roomId\" … [error-room-not-found]".
	trailingCode = regexp.MustCompile(`\s*\[([A-Za-z0-9_.:-]+)\]\s*$`)
	// bareCode is an error that is nothing but a code: "error-invalid-subscription".
	bareCode = regexp.MustCompile(`^[a-z0-9]+(?:[-_.][a-z0-9]+)+$`)
	// waitSeconds reads the wait from the 429 text.
	waitSeconds = regexp.MustCompile(`wait (\d+) seconds`)
)

// serverError is what a failed answer says.
type serverError struct {
	codes  map[string]bool
	reason string // human part, secret-masked and capped; may be ""
}

func (c *Client) readServerError(body []byte) serverError {
	se := serverError{codes: map[string]bool{}}
	env, err := decodeEnvelope(body)
	if err != nil {
		return se // an HTML page (rooms.upload in 8.x, a proxy): no reason
	}
	text := env.errorText()
	if env.ErrorType != "" {
		se.codes[env.ErrorType] = true
	}
	if m := trailingCode.FindStringSubmatch(text); m != nil {
		se.codes[m[1]] = true
		text = strings.TrimSpace(text[:len(text)-len(m[0])])
	}
	if bareCode.MatchString(text) {
		se.codes[text] = true
	}
	if text == "" {
		text = env.messageText() // pre-8.0 401 and Restivus bodies
	}
	se.reason = c.scrubber.ServerText(text, maxServerText)
	return se
}

func (se serverError) has(set map[string]bool) bool {
	for code := range se.codes {
		if set[code] {
			return true
		}
	}
	return false
}

// failure maps every failed exchange to a *switchboard.Error: the one place
// that decides codes (one error vocabulary, translated in one table).
// resp is nil for transport failures (err set). Messages name the endpoint,
// never the query or a header; the internal cause goes into Err.
// HTTPError is the cause inside every error the client returns: the
// endpoint (method and path, never the query) and, when the server answered,
// its status, error codes and reason. It is the error's
// switchboard.RemoteFailure: tools put Status and Endpoint into the
// envelope (switchboard.HTTPStatus, switchboard.Endpoint).
type HTTPError struct {
	Status   int // 0 when no answer arrived
	Endpoint string
	Codes    []string
	Reason   string
	Err      error // transport failure, when Status is 0
}

func (e *HTTPError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("%s: %v", e.Endpoint, e.Err)
	}
	return fmt.Sprintf("%s: HTTP %d: codes %v: %s", e.Endpoint, e.Status, e.Codes, e.Reason)
}

func (e *HTTPError) Unwrap() error { return e.Err }

func (e *HTTPError) RemoteStatus() int      { return e.Status }
func (e *HTTPError) RemoteEndpoint() string { return e.Endpoint }
func (e *HTTPError) RemoteCode() int        { return 0 } // Rocket.Chat's error codes are strings (Codes)

var _ sb.RemoteFailure = (*HTTPError)(nil)

func (c *Client) failure(cl call, resp *http.Response, body []byte, err error) error {
	op := "rocketchat." + cl.name
	where := "Rocket.Chat " + cl.endpoint() + ": "
	with := func(s string) string {
		if cl.hint != "" {
			s += "; " + cl.hint
		}
		return where + s
	}

	if resp == nil {
		err = &HTTPError{Endpoint: cl.endpoint(), Err: err}
		var ne net.Error
		switch {
		case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
			return sb.Wrap(op, sb.EUNAVAILABLE, with("no answer in time; Rocket.Chat is slow or unreachable, try again later"), err)
		case errors.Is(err, context.Canceled):
			return sb.Wrap(op, sb.EUNAVAILABLE, with("the request was cancelled"), err)
		case strings.Contains(err.Error(), "with Body length"):
			// net/http: "ContentLength=N with Body length M": the reader
			// yielded another number of bytes than the size given.
			return sb.Wrap(op, sb.EINVALID, with("the file yielded a different number of bytes than its size; it may have changed while being sent"), err)
		default:
			return sb.Wrap(op, sb.EUNAVAILABLE, with(fmt.Sprintf("cannot reach Rocket.Chat at %s; check RocketChat.baseUrl or try again later", c.where)), err)
		}
	}

	status := resp.StatusCode
	se := c.readServerError(body)
	cause := &HTTPError{Status: status, Endpoint: cl.endpoint(), Codes: keys(se.codes), Reason: se.reason}
	withReason := func(s string) string {
		if se.reason != "" {
			s += ": " + se.reason
		}
		return s
	}
	if status/100 == 2 { // success:false in a 2xx answer
		status = http.StatusBadRequest
	}

	switch {
	case status == http.StatusUnauthorized:
		return sb.Wrap(op, sb.EUNAUTHORIZED, with("not logged in (401); check RocketChat.userId and RocketChat.authToken, the personal access token may have been revoked"), cause)

	case status == http.StatusForbidden:
		msg := "forbidden (403); this user lacks the permission"
		switch {
		case cl.name == "file-upload":
			// Downloads answer 403 with an empty body for missing or wrong
			// credentials as well as for no access.
			msg = "forbidden (403); the file needs a valid userId/authToken and access to its room"
		case cl.room != "":
			msg = fmt.Sprintf("forbidden (403); this user has no access to room %q (or it does not exist)", cl.room)
		}
		return sb.Wrap(op, sb.EFORBIDDEN, with(msg), cause)

	case status == http.StatusNotFound:
		msg := "not found (404); this Rocket.Chat version does not offer this endpoint"
		if cl.name == "file-upload" {
			msg = fmt.Sprintf("no file with id %q (404); take the fileId from the message that carries the file", cl.file)
		}
		return sb.Wrap(op, sb.ENOTFOUND, with(msg), cause)

	case status == http.StatusTooManyRequests || se.codes["error-too-many-requests"]:
		wait := retryAfter(resp.Header, se.reason, c.now())
		msg := "rate limited (429); slow down"
		if wait > 0 {
			msg = fmt.Sprintf("rate limited (429); wait %ds before calling this endpoint again", int(math.Ceil(wait.Seconds())))
		}
		e := sb.Wrap(op, sb.ERATELIMITED, with(msg), cause)
		e.RetryAfter = wait
		return e

	case status == http.StatusRequestTimeout || status >= 500:
		e := sb.Wrap(op, sb.EUNAVAILABLE, with(withReason(fmt.Sprintf("Rocket.Chat failed (HTTP %d)", status))+"; try again later"), cause)
		e.RetryAfter = retryafter.Parse(resp.Header.Get("Retry-After"), c.now())
		return e

	case status == http.StatusRequestEntityTooLarge:
		return sb.Wrap(op, sb.EINVALID, with("the server refused the upload as too large (413); send a smaller file"), cause)

	case status == http.StatusBadRequest:
		switch {
		case se.has(unknownRoomCodes):
			room := ""
			if cl.room != "" {
				room = fmt.Sprintf(" %q", cl.room)
			}
			return sb.Wrap(op, sb.ENOTFOUND, with(fmt.Sprintf("unknown room%s: no room with this id or name is visible to this user; check the name (a DM is addressed by the counterpart's username)", room)), cause)
		case se.codes["error-message-not-found"]:
			return sb.Wrap(op, sb.ENOTFOUND, with(fmt.Sprintf("unknown message %q; take the messageId from read_room or the wake message", cl.message)), cause)
		case se.codes["error-invalid-user"]:
			return sb.Wrap(op, sb.ENOTFOUND, with(fmt.Sprintf("unknown user %q; check the username", cl.user)), cause)
		case se.codes["invalid-file"]:
			return sb.Wrap(op, sb.ENOTFOUND, with(fmt.Sprintf("unknown upload %q; upload the file again", cl.file)), cause)
		case se.has(notAllowedCodes) && (se.reason == "" || bareCode.MatchString(se.reason) || strings.EqualFold(se.reason, "not allowed")):
			msg := "not allowed; this user lacks the permission"
			if cl.room != "" {
				msg = fmt.Sprintf("not allowed in room %q; the agent's user is probably not a member", cl.room)
			}
			return sb.Wrap(op, sb.EFORBIDDEN, with(msg), cause)
		case se.codes["error-message-size-exceeded"]:
			return sb.Wrap(op, sb.EINVALID, with("the text is longer than the server allows (Message_MaxAllowedSize, 5000 characters by default); shorten it or send it as a file"), cause)
		}
		if se.reason == "" && len(se.codes) == 0 {
			// API.v1.failure() without arguments: chat.search for a room the
			// user cannot access, chat.getMessage for an unknown id.
			switch {
			case cl.message != "":
				return sb.Wrap(op, sb.ENOTFOUND, with(fmt.Sprintf("unknown message %q; take the messageId from read_room or the wake message", cl.message)), cause)
			case cl.room != "":
				return sb.Wrap(op, sb.ENOTFOUND, with(fmt.Sprintf("unknown room %q, or this user has no access to it", cl.room)), cause)
			}
			return sb.Wrap(op, sb.EINVALID, with("the server rejected the request (400) without a reason; check the arguments"), cause)
		}
		return sb.Wrap(op, sb.EINVALID, with(withReason("the server rejected the request (400)")), cause)

	case status >= 400:
		return sb.Wrap(op, sb.EINVALID, with(withReason(fmt.Sprintf("the server rejected the request (HTTP %d)", status))), cause)

	default: // 1xx/3xx that net/http did not resolve
		return sb.Wrap(op, sb.EINTERNAL, with(fmt.Sprintf("unexpected answer (HTTP %d); check RocketChat.baseUrl", status)), cause)
	}
}

// retryAfter is how long to wait after a 429. Rocket.Chat sends no
// Retry-After; X-RateLimit-Reset is the end of the window in epoch
// MILLISECONDS. When that is missing or already past (clock skew
// between us and the server), the "wait N seconds" of the error text, which
// the server computed against its own clock, decides.
func retryAfter(h http.Header, reason string, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("X-RateLimit-Reset")); v != "" {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			if d := time.UnixMilli(ms).Sub(now); d > 0 {
				return d
			}
		}
	}
	if m := waitSeconds.FindStringSubmatch(reason); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	return retryafter.Parse(h.Get("Retry-After"), now)
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
