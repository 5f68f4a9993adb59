package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"
	"unicode/utf8"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// GetMe returns the bot's own user: a cheap check that the token works.
// Returns EUNAUTHORIZED when it does not.
func (c *Client) GetMe(ctx context.Context) (sb.TelegramUser, error) {
	var w wireUser
	if err := c.do(ctx, call{method: "getMe"}, struct{}{}, &w); err != nil {
		return sb.TelegramUser{}, err
	}
	return toUser(w), nil
}

// SendMessage sends one message, its text and buttons scrubbed (see New).
// The text must be 1–4096 characters after
// trimming (plain text is checked here; with a parse mode Telegram checks
// the parsed length); longer texts go through SendLong.
//
// Returns EINVALID for a bad chat id, text or keyboard (before sending);
// ENOTFOUND when the chat does not exist for the bot; EFORBIDDEN when the
// user blocked the bot or it is not in the group; ERATELIMITED with
// RetryAfter; EUNAUTHORIZED for a bad token; EUNAVAILABLE when Telegram
// cannot be reached.
func (c *Client) SendMessage(ctx context.Context, m sb.TelegramText) (sb.TelegramSent, error) {
	return c.sendMessage(ctx, c.scrubMessage(ctx, m))
}

// sendMessage is SendMessage for a message already scrubbed.
func (c *Client) sendMessage(ctx context.Context, m sb.TelegramText) (sb.TelegramSent, error) {
	const method = "sendMessage"
	op := "telegram." + method
	chatID, err := chatIDValue(op, method, m.ChatID)
	if err != nil {
		return sb.TelegramSent{}, err
	}
	if err := checkText(op, method, m.Text, m.ParseMode); err != nil {
		return sb.TelegramSent{}, err
	}
	if err := keyboardError(op, method, m.ReplyMarkup); err != nil {
		return sb.TelegramSent{}, err
	}
	in := wireSendMessage{ChatID: chatID, Text: m.Text, ParseMode: m.ParseMode,
		ReplyMarkup: fromKeyboard(m.ReplyMarkup), LinkPreview: linkPreview(m.DisableWebPagePreview)}
	if m.ReplyToMessageID != 0 {
		in.ReplyParameters = &wireReplyParameters{MessageID: m.ReplyToMessageID, AllowSendingWithoutReply: true}
	}
	var w wireMessage
	if err := c.do(ctx, call{method: method, chat: m.ChatID}, in, &w); err != nil {
		return sb.TelegramSent{}, err
	}
	return toSent(w), nil
}

// SendLong sends a text of any length as SplitText cuts it, one message per
// part, in order. The keyboard goes on the last part only (the message a
// callback will refer to), the reply on the first only. Everything is
// checked before the first request.
//
// A 429 is waited out once per call when Telegram asks for a short wait
// (the client's switchboard.TelegramWait, by default at most DefaultMaxWait); then the
// part that met it and the rest are sent, never a part that arrived. It
// stops at any other failure, or a second 429, and returns the parts sent
// so far with the error, whose message says which part failed: the caller
// may resend the rest later (SplitText is deterministic) or try another way.
// Errors are SendMessage's, or ctx's when it ends during the wait.
func (c *Client) SendLong(ctx context.Context, m sb.TelegramText) ([]sb.TelegramSent, error) {
	return c.SendLongWait(ctx, m, sb.TelegramWait{})
}

// SendLongWait is SendLong with w's wait instead of the client's (zero
// fields keep the client's).
func (c *Client) SendLongWait(ctx context.Context, m sb.TelegramText, w sb.TelegramWait) ([]sb.TelegramSent, error) {
	const method = "sendMessage"
	op := "telegram." + method
	if _, err := chatIDValue(op, method, m.ChatID); err != nil {
		return nil, err
	}
	if err := keyboardError(op, method, m.ReplyMarkup); err != nil {
		return nil, err
	}
	// Scrub the whole text before cutting it: a cut could split a secret
	// so that neither half is recognised.
	m = c.scrubMessage(ctx, m)
	parts := SplitText(m.Text, MaxTextLength, m.ParseMode)
	if len(parts) == 0 {
		return nil, checkText(op, method, m.Text, m.ParseMode)
	}
	for _, p := range parts {
		if err := checkText(op, method, p, m.ParseMode); err != nil {
			return nil, err
		}
	}
	wait := c.waiter(w)
	sent := make([]sb.TelegramSent, 0, len(parts))
	for i := 0; i < len(parts); {
		part := m
		part.Text = parts[i]
		if i < len(parts)-1 {
			part.ReplyMarkup = nil
		}
		if i > 0 {
			part.ReplyToMessageID = 0
		}
		s, err := c.sendMessage(ctx, part)
		if err != nil {
			again, werr := wait.retry(ctx, err)
			if werr != nil {
				return sent, werr
			}
			if again {
				continue // the same part: a 429 means it did not arrive
			}
			if len(parts) == 1 {
				return sent, err
			}
			return sent, partError(err, i, len(parts))
		}
		sent = append(sent, s)
		i++
	}
	return sent, nil
}

// partError says which part of a long text failed, keeping code and
// RetryAfter.
func partError(err error, i, n int) error {
	var e *sb.Error
	if !errors.As(err, &e) {
		return err
	}
	out := *e
	out.Message = fmt.Sprintf("%s [part %d of %d failed; parts 1–%d were sent]", e.Message, i+1, n, i)
	if i == 0 {
		out.Message = fmt.Sprintf("%s [part 1 of %d failed; nothing was sent]", e.Message, n)
	}
	return &out
}

// EditMessageText replaces the text of message messageID in chatID (plain
// text) and its buttons with markup; nil markup removes them (approvals
// drop their buttons once decided).
//
// A short 429 is waited out once, as in SendLong: an edit is safe to
// repeat (the message reads the same afterwards either way).
//
// Returns ENOTFOUND when the message is gone; ECONFLICT when it already
// reads exactly so ("message is not modified"), which a caller repeating an
// edit may treat as done; otherwise SendMessage's errors.
func (c *Client) EditMessageText(ctx context.Context, chatID string, messageID int64, text string, markup *sb.TelegramKeyboard) error {
	return c.EditMessage(ctx, Edit{ChatID: chatID, MessageID: messageID, Text: text, ReplyMarkup: markup})
}

// EditMessage is EditMessageText with a parse mode and link preview choice.
func (c *Client) EditMessage(ctx context.Context, e Edit) error {
	const method = "editMessageText"
	op := "telegram." + method
	e.Text, e.ParseMode = c.scrubText(ctx, e.Text, e.ParseMode)
	e.ReplyMarkup = c.scrubKeyboard(ctx, e.ReplyMarkup)
	chatID, err := chatIDValue(op, method, e.ChatID)
	if err != nil {
		return err
	}
	if e.MessageID <= 0 {
		return sb.E(op, sb.EINVALID, fmt.Sprintf("Telegram %s: message id %d is not valid; use the id SendMessage returned", method, e.MessageID))
	}
	if err := checkText(op, method, e.Text, e.ParseMode); err != nil {
		return err
	}
	if err := keyboardError(op, method, e.ReplyMarkup); err != nil {
		return err
	}
	in := wireEditMessageText{ChatID: chatID, MessageID: e.MessageID, Text: e.Text, ParseMode: e.ParseMode,
		ReplyMarkup: fromKeyboard(e.ReplyMarkup), LinkPreview: linkPreview(e.DisableWebPagePreview)}
	wait := c.waiter(sb.TelegramWait{})
	for {
		err := c.do(ctx, call{method: method, chat: e.ChatID, msgID: e.MessageID}, in, nil)
		again, werr := wait.retry(ctx, err)
		if werr != nil {
			return werr
		}
		if !again {
			return err
		}
	}
}

// AnswerCallbackQuery stops the spinner of a pressed button, optionally
// showing text (at most 200 characters) as a notification or, with
// showAlert, as an alert. Every callback query must be answered.
//
// Returns EINVALID when the query is unknown, too old or already answered
// (nothing left to do) or the text is too long.
func (c *Client) AnswerCallbackQuery(ctx context.Context, id, text string, showAlert bool) error {
	const method = "answerCallbackQuery"
	op := "telegram." + method
	if id == "" {
		return sb.E(op, sb.EINVALID, "Telegram "+method+": the callback query id is empty; take it from Update.CallbackQuery.ID")
	}
	text, _ = c.scrubText(ctx, text, "")
	if n := utf8.RuneCountInString(text); n > sb.TelegramMaxAnswerLength {
		return sb.E(op, sb.EINVALID, fmt.Sprintf("Telegram %s: the notification has %d characters; Telegram shows at most %d", method, n, sb.TelegramMaxAnswerLength))
	}
	in := wireAnswerCallbackQuery{CallbackQueryID: id, Text: text, ShowAlert: showAlert}
	return c.do(ctx, call{method: method}, in, nil)
}

// GetUpdates fetches pending updates. offset confirms every update below
// it (pass the last update's ID + 1; 0 confirms nothing; negative takes the
// last -offset updates and forgets the older ones). timeout > 0 long-polls:
// Telegram holds the request until an update arrives or timeout passes
// (whole seconds), then answers an empty list. allowed nil keeps the kinds
// set before; an empty non-nil list asks for the default kinds.
//
// Returns ECONFLICT while a webhook is set or when another poller took
// over; EINVALID when timeout is negative or not shorter than the HTTP
// client's own timeout (the poll would always fail).
func (c *Client) GetUpdates(ctx context.Context, offset int64, timeout time.Duration, allowed []string) ([]sb.TelegramUpdate, error) {
	const method = "getUpdates"
	op := "telegram." + method
	if timeout < 0 {
		return nil, sb.E(op, sb.EINVALID, "Telegram "+method+": the long-poll timeout is negative; use 0 for a short poll")
	}
	if c.hc.Timeout > 0 && timeout >= c.hc.Timeout {
		return nil, sb.E(op, sb.EINVALID, fmt.Sprintf("Telegram %s: the long-poll timeout %s is not shorter than the HTTP client's timeout %s; shorten the poll or lengthen the client's timeout", method, timeout, c.hc.Timeout))
	}
	secs := int(timeout / time.Second)
	in := wireGetUpdates{Offset: offset, Timeout: secs}
	if allowed != nil {
		in.AllowedUpdates = &allowed
	}
	var raw json.RawMessage
	if err := c.do(ctx, call{method: method}, in, &raw); err != nil {
		return nil, err
	}
	ups, err := decodeUpdates(raw)
	if err != nil {
		return nil, sb.Wrap(op, sb.EINTERNAL, "Telegram "+method+": the answer has an unexpected shape", err)
	}
	return ups, nil
}

// SetWebhook makes Telegram POST every update to webhookURL, with
// secretToken in the X-Telegram-Bot-Api-Secret-Token header ("" sends
// none; Switchboard's receiver requires one). allowed nil keeps the
// kinds set before. dropPending discards updates not yet delivered.
// Telegram itself wants an https URL on port 443, 80, 88 or 8443; a
// self-hosted Bot API server in --local mode and the fake accept http.
//
// Returns EINVALID for a URL that is not absolute http(s) or a secret
// outside [A-Za-z0-9_-]{1,256} (before sending), or when Telegram refuses
// the URL.
func (c *Client) SetWebhook(ctx context.Context, webhookURL, secretToken string, allowed []string, dropPending bool) error {
	const method = "setWebhook"
	op := "telegram." + method
	u, err := url.Parse(webhookURL)
	if webhookURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return sb.E(op, sb.EINVALID, "Telegram "+method+": the webhook URL must be an absolute https URL (to remove the webhook, use DeleteWebhook)")
	}
	if secretToken != "" {
		if err := ValidateSecretToken(secretToken); err != nil {
			return sb.E(op, sb.EINVALID, "Telegram "+method+": "+sb.ErrorMessage(err))
		}
	}
	var in any = wireSetWebhook{URL: webhookURL, SecretToken: secretToken, AllowedUpdates: allowed, DropPendingUpdates: dropPending}
	if allowed != nil && len(allowed) == 0 {
		in = wireSetWebhookAll{URL: webhookURL, SecretToken: secretToken, AllowedUpdates: []string{}, DropPendingUpdates: dropPending}
	}
	return c.do(ctx, call{method: method}, in, nil)
}

// DeleteWebhook removes the webhook so that GetUpdates works again;
// dropPending discards updates not yet delivered. Removing a webhook that
// is not set succeeds.
func (c *Client) DeleteWebhook(ctx context.Context, dropPending bool) error {
	return c.do(ctx, call{method: "deleteWebhook"}, wireDeleteWebhook{DropPendingUpdates: dropPending}, nil)
}

// GetWebhookInfo returns the webhook state: its URL ("" when none), how many
// updates wait, and the last delivery error.
func (c *Client) GetWebhookInfo(ctx context.Context) (WebhookInfo, error) {
	var w wireWebhookInfo
	if err := c.do(ctx, call{method: "getWebhookInfo"}, struct{}{}, &w); err != nil {
		return WebhookInfo{}, err
	}
	return toWebhookInfo(w), nil
}

// keyboardError is validateKeyboard with the method in op and message.
func keyboardError(op, method string, k *sb.TelegramKeyboard) error {
	if err := validateKeyboard(k); err != nil {
		return sb.Wrap(op, sb.EINVALID, "Telegram "+method+": "+sb.ErrorMessage(err), err)
	}
	return nil
}
