package telegram

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/retryafter"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// retryAfterText reads the wait from a 429 description: "Too Many
// Requests: retry after 5".
var retryAfterText = regexp.MustCompile(`(?i)retry after (\d+)`)

// failure maps every failed exchange to a *switchboard.Error: the one place
// that decides codes (one error vocabulary, translated in one table).
// resp is nil for transport failures (err set); env is nil when the answer
// was not Bot API JSON (a proxy's HTML page). Messages name the method and,
// where it helps, the chat, never the URL (it holds the token).
func (c *Client) failure(cl call, resp *http.Response, env *envelope, err error) error {
	op := "telegram." + cl.method
	where := "Telegram " + cl.method + ": "

	if resp == nil {
		var ne net.Error
		switch {
		case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
			return sb.Wrap(op, sb.EUNAVAILABLE, where+"no answer in time; Telegram is slow or unreachable, try again later", err)
		case errors.Is(err, context.Canceled):
			return sb.Wrap(op, sb.EUNAVAILABLE, where+"the request was cancelled", err)
		default:
			return sb.Wrap(op, sb.EUNAVAILABLE, where+fmt.Sprintf("cannot reach Telegram at %s; check telegram.apiBaseUrl or try again later", c.where), err)
		}
	}

	status := resp.StatusCode
	desc := ""
	var params wireParameters
	if env != nil {
		if env.ErrorCode != 0 {
			status = env.ErrorCode // a 200 that says ok:false carries its code here
		}
		desc = c.reason(env.Description)
		if env.Parameters != nil {
			params = *env.Parameters
		}
	}
	lower := strings.ToLower(desc)
	cause := fmt.Errorf("%s: HTTP %d: error_code %d: %s", cl.method, resp.StatusCode, status, desc)
	with := func(s string) string {
		if desc != "" {
			s += " (Telegram: " + desc + ")"
		}
		return where + s
	}
	chat := ""
	if cl.chat != "" {
		chat = fmt.Sprintf(" %q", cl.chat)
	}

	switch {
	case status == http.StatusUnauthorized:
		return sb.Wrap(op, sb.EUNAUTHORIZED, where+"Telegram rejected the bot token (401 Unauthorized); check telegram.botToken (a token revoked in @BotFather stops working at once)", cause)

	case status == http.StatusForbidden:
		return sb.Wrap(op, sb.EFORBIDDEN, with(fmt.Sprintf("the bot was blocked by the user or is not in the chat%s (403); the person must start (or unblock) the bot, or a group admin must add it", chat)), cause)

	case status == http.StatusNotFound:
		return sb.Wrap(op, sb.ENOTFOUND, where+"Telegram knows no such method (404 Not Found); check that telegram.apiBaseUrl is the Bot API base (https://api.telegram.org)", cause)

	case status == http.StatusConflict:
		switch {
		case strings.Contains(lower, "webhook is active"):
			return sb.Wrap(op, sb.ECONFLICT, with("getUpdates cannot run while a webhook is set (409); take updates from the webhook, or call DeleteWebhook before polling"), cause)
		case strings.Contains(lower, "terminated by other getupdates"):
			return sb.Wrap(op, sb.ECONFLICT, with("another getUpdates poller is running with this bot token (409); run only one poller per bot"), cause)
		}
		return sb.Wrap(op, sb.ECONFLICT, with("conflict (409)"), cause)

	case status == http.StatusTooManyRequests:
		wait := c.retryAfter(resp.Header, params, desc)
		msg := "rate limited (429); slow down"
		if wait > 0 {
			msg = fmt.Sprintf("rate limited (429); wait %ds before calling Telegram again", int(math.Ceil(wait.Seconds())))
		}
		e := sb.Wrap(op, sb.ERATELIMITED, where+msg, cause)
		e.RetryAfter = wait
		return e

	case status >= 500 || (env == nil && status == http.StatusRequestTimeout):
		e := sb.Wrap(op, sb.EUNAVAILABLE, with(fmt.Sprintf("Telegram failed (HTTP %d); try again later", status)), cause)
		e.RetryAfter = retryafter.Parse(resp.Header.Get("Retry-After"), c.now())
		return e

	case status == http.StatusBadRequest:
		switch {
		case params.MigrateToChatID != 0:
			return sb.Wrap(op, sb.EINVALID, where+fmt.Sprintf("the group%s was upgraded to a supergroup whose chat id is %d; update telegram.chatId", chat, params.MigrateToChatID), cause)
		case strings.Contains(lower, "chat not found"):
			return sb.Wrap(op, sb.ENOTFOUND, where+fmt.Sprintf("chat%s not found; a person must send /start to the bot first, a group must have the bot as a member; check telegram.chatId", chat), cause)
		case strings.Contains(lower, "message to edit not found"), strings.Contains(lower, "message to be replied not found"):
			return sb.Wrap(op, sb.ENOTFOUND, with(fmt.Sprintf("message %d not found in chat%s; it may have been deleted", cl.msgID, chat)), cause)
		case strings.Contains(lower, "message is not modified"):
			return sb.Wrap(op, sb.ECONFLICT, where+fmt.Sprintf("message %d already has this text and these buttons; nothing changed", cl.msgID), cause)
		case strings.Contains(lower, "query is too old") || strings.Contains(lower, "query id is invalid"):
			return sb.Wrap(op, sb.EINVALID, where+"the callback query is unknown, too old or already answered; nothing to do (Telegram stops the button's spinner by itself)", cause)
		case strings.Contains(lower, "button_data_invalid"):
			return sb.Wrap(op, sb.EINVALID, where+fmt.Sprintf("a button's callback_data is invalid; it must be 1–%d bytes", MaxCallbackDataBytes), cause)
		case strings.Contains(lower, "message is too long"):
			return sb.Wrap(op, sb.EINVALID, where+fmt.Sprintf("the text is longer than %d characters (after entity parsing); shorten it or send it with SendLong", MaxTextLength), cause)
		case strings.Contains(lower, "text is empty") || strings.Contains(lower, "text must be non-empty"):
			return sb.Wrap(op, sb.EINVALID, where+"the text is empty (after trimming spaces); send some text", cause)
		case strings.Contains(lower, "can't parse entities"):
			return sb.Wrap(op, sb.EINVALID, with("Telegram cannot parse the text's markup; fix it or send without a parse mode"), cause)
		}
		return sb.Wrap(op, sb.EINVALID, with("Telegram refused the request (400)"), cause)

	case status >= 400:
		return sb.Wrap(op, sb.EINVALID, with(fmt.Sprintf("Telegram refused the request (HTTP %d)", status)), cause)

	case status/100 == 3:
		return sb.Wrap(op, sb.EINTERNAL, where+fmt.Sprintf("unexpected redirect (HTTP %d); check telegram.apiBaseUrl", status), cause)

	default: // a 2xx with ok:false and no code, or a 1xx
		return sb.Wrap(op, sb.EINTERNAL, with(fmt.Sprintf("unexpected answer (HTTP %d, ok:false)", resp.StatusCode)), cause)
	}
}

// reason is Telegram's description made safe to pass on: control
// characters out, the token masked, capped.
func (c *Client) reason(s string) string {
	return c.scrubber.ServerText(strings.ReplaceAll(s, c.token, "<redacted>"), maxServerText)
}

// retryAfter is the wait after a 429: parameters.retry_after (seconds),
// else the Retry-After header (Telegram sends both), else the
// number in "retry after N".
func (c *Client) retryAfter(h http.Header, p wireParameters, desc string) time.Duration {
	if p.RetryAfter > 0 {
		return time.Duration(p.RetryAfter) * time.Second
	}
	if d := retryafter.Parse(h.Get("Retry-After"), c.now()); d > 0 {
		return d
	}
	if m := retryAfterText.FindStringSubmatch(desc); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	return 0
}
