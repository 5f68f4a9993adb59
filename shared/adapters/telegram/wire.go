package telegram

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Wire shapes of the Bot API. They stay in this file; the rest of
// the package speaks the domain types of types.go.

// envelope is every answer: {"ok":true,"result":…} or
// {"ok":false,"error_code":400,"description":"…","parameters":{…}}.
type envelope struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  *wireParameters `json:"parameters"`
}

type wireParameters struct {
	RetryAfter      int   `json:"retry_after"`
	MigrateToChatID int64 `json:"migrate_to_chat_id"`
}

type wireUser struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	Username  string `json:"username,omitempty"`
}

type wireChat struct {
	ID        int64  `json:"id"`
	Type      string `json:"type"`
	Title     string `json:"title,omitempty"`
	Username  string `json:"username,omitempty"`
	FirstName string `json:"first_name,omitempty"`
}

type wireMessage struct {
	MessageID      int64        `json:"message_id"`
	From           *wireUser    `json:"from,omitempty"`
	Chat           wireChat     `json:"chat"`
	Date           int64        `json:"date"`
	Text           string       `json:"text,omitempty"`
	ReplyToMessage *wireMessage `json:"reply_to_message,omitempty"`
}

type wireCallbackQuery struct {
	ID              string       `json:"id"`
	From            wireUser     `json:"from"`
	Message         *wireMessage `json:"message,omitempty"`
	InlineMessageID string       `json:"inline_message_id,omitempty"`
	ChatInstance    string       `json:"chat_instance"`
	Data            string       `json:"data,omitempty"`
}

// wireUpdate lists the kinds this package reads; the others are found by
// their key (kindOf).
type wireUpdate struct {
	UpdateID      int64              `json:"update_id"`
	Message       *wireMessage       `json:"message,omitempty"`
	CallbackQuery *wireCallbackQuery `json:"callback_query,omitempty"`
}

type wireButton struct {
	Text         string  `json:"text"`
	URL          string  `json:"url,omitempty"`
	CallbackData *string `json:"callback_data,omitempty"` // a pointer: "" is invalid, not absent
}

type wireKeyboard struct {
	InlineKeyboard [][]wireButton `json:"inline_keyboard"`
}

type wireLinkPreview struct {
	IsDisabled bool `json:"is_disabled"`
}

type wireReplyParameters struct {
	MessageID                int64 `json:"message_id"`
	AllowSendingWithoutReply bool  `json:"allow_sending_without_reply"`
}

type wireSendMessage struct {
	ChatID          any                  `json:"chat_id"` // int64 or "@name"
	Text            string               `json:"text"`
	ParseMode       string               `json:"parse_mode,omitempty"`
	ReplyMarkup     *wireKeyboard        `json:"reply_markup,omitempty"`
	LinkPreview     *wireLinkPreview     `json:"link_preview_options,omitempty"`
	ReplyParameters *wireReplyParameters `json:"reply_parameters,omitempty"`
}

type wireEditMessageText struct {
	ChatID      any              `json:"chat_id"`
	MessageID   int64            `json:"message_id"`
	Text        string           `json:"text"`
	ParseMode   string           `json:"parse_mode,omitempty"`
	ReplyMarkup *wireKeyboard    `json:"reply_markup,omitempty"`
	LinkPreview *wireLinkPreview `json:"link_preview_options,omitempty"`
}

type wireAnswerCallbackQuery struct {
	CallbackQueryID string `json:"callback_query_id"`
	Text            string `json:"text,omitempty"`
	ShowAlert       bool   `json:"show_alert,omitempty"`
}

type wireGetUpdates struct {
	Offset  int64 `json:"offset,omitempty"`
	Timeout int   `json:"timeout,omitempty"`
	// AllowedUpdates is a pointer so that an empty list is sent: it means
	// "the default kinds", an absent one "as before".
	AllowedUpdates *[]string `json:"allowed_updates,omitempty"`
}

type wireSetWebhook struct {
	URL                string   `json:"url"`
	SecretToken        string   `json:"secret_token,omitempty"`
	AllowedUpdates     []string `json:"allowed_updates,omitempty"`
	DropPendingUpdates bool     `json:"drop_pending_updates,omitempty"`
}

type wireSetWebhookAll struct {
	URL                string   `json:"url"`
	SecretToken        string   `json:"secret_token,omitempty"`
	AllowedUpdates     []string `json:"allowed_updates"`
	DropPendingUpdates bool     `json:"drop_pending_updates,omitempty"`
}

type wireDeleteWebhook struct {
	DropPendingUpdates bool `json:"drop_pending_updates,omitempty"`
}

type wireWebhookInfo struct {
	URL                string   `json:"url"`
	PendingUpdateCount int      `json:"pending_update_count"`
	LastErrorDate      int64    `json:"last_error_date,omitempty"`
	LastErrorMessage   string   `json:"last_error_message,omitempty"`
	MaxConnections     int      `json:"max_connections,omitempty"`
	AllowedUpdates     []string `json:"allowed_updates,omitempty"`
}

// --- converters: wire → domain ---

func toUser(w wireUser) sb.TelegramUser {
	return sb.TelegramUser{ID: w.ID, IsBot: w.IsBot, Username: w.Username, FirstName: w.FirstName}
}

func toChat(w wireChat) sb.TelegramChat {
	return sb.TelegramChat{ID: w.ID, Type: w.Type, Title: w.Title, Username: w.Username}
}

func unixTime(sec int64) time.Time {
	if sec == 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

func toMsg(w *wireMessage) *sb.TelegramMessage {
	if w == nil {
		return nil
	}
	m := &sb.TelegramMessage{ID: w.MessageID, Chat: toChat(w.Chat), Date: unixTime(w.Date), Text: w.Text}
	if w.From != nil {
		m.From = toUser(*w.From)
	}
	if w.ReplyToMessage != nil {
		m.ReplyToMessageID = w.ReplyToMessage.MessageID
	}
	return m
}

func toSent(w wireMessage) sb.TelegramSent {
	return sb.TelegramSent{MessageID: w.MessageID, ChatID: w.Chat.ID, Date: unixTime(w.Date)}
}

func toWebhookInfo(w wireWebhookInfo) WebhookInfo {
	return WebhookInfo{URL: w.URL, PendingUpdateCount: w.PendingUpdateCount, LastErrorDate: unixTime(w.LastErrorDate),
		LastErrorMessage: w.LastErrorMessage, MaxConnections: w.MaxConnections, AllowedUpdates: w.AllowedUpdates}
}

// toUpdate converts one update; raw is its JSON, to find the kind of an
// update this package does not read.
func toUpdate(w wireUpdate, raw json.RawMessage) sb.TelegramUpdate {
	u := sb.TelegramUpdate{ID: w.UpdateID, Kind: kindOf(raw)}
	switch {
	case w.Message != nil:
		u.Kind, u.Message = sb.TelegramKindMessage, toMsg(w.Message)
	case w.CallbackQuery != nil:
		q := w.CallbackQuery
		u.Kind = sb.TelegramKindCallbackQuery
		u.CallbackQuery = &sb.TelegramCallback{ID: q.ID, From: toUser(q.From), Message: toMsg(q.Message),
			ChatInstance: q.ChatInstance, Data: q.Data}
	}
	return u
}

// kindOf is the key of an update object other than update_id: an Update
// carries "at most one" optional field.
func kindOf(raw json.RawMessage) string {
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil {
		return ""
	}
	for k, v := range keys {
		if k != "update_id" && !bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return k
		}
	}
	return ""
}

func decodeUpdates(result json.RawMessage) ([]sb.TelegramUpdate, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(result, &raws); err != nil {
		return nil, err
	}
	out := make([]sb.TelegramUpdate, 0, len(raws))
	for _, raw := range raws {
		var w wireUpdate
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, err
		}
		out = append(out, toUpdate(w, raw))
	}
	return out, nil
}

// ParseUpdate decodes the body of a webhook POST (one Update object, as
// Telegram sends it to the URL given to SetWebhook). It returns EINVALID
// when the body is not an Update.
func ParseUpdate(body []byte) (sb.TelegramUpdate, error) {
	const op = "telegram.parse_update"
	var w wireUpdate
	if err := json.Unmarshal(body, &w); err != nil {
		return sb.TelegramUpdate{}, sb.Wrap(op, sb.EINVALID, "the body is not a Telegram Update (JSON object expected)", err)
	}
	if w.UpdateID == 0 && w.Message == nil && w.CallbackQuery == nil {
		return sb.TelegramUpdate{}, sb.E(op, sb.EINVALID, "the body is not a Telegram Update (no update_id)")
	}
	return toUpdate(w, body), nil
}

// --- converters: domain → wire ---

// chatIDValue is chat_id on the wire: a number for numeric ids, the string
// for @channelusername. It returns EINVALID for anything else.
func chatIDValue(op, method, chatID string) (any, error) {
	if n, err := strconv.ParseInt(chatID, 10, 64); err == nil && n != 0 {
		return n, nil
	}
	if channelName.MatchString(chatID) {
		return chatID, nil
	}
	return nil, sb.E(op, sb.EINVALID, fmt.Sprintf("Telegram %s: chat id %q is neither a number nor @channelusername; check telegram.chatId", method, shorten(chatID)))
}

func fromKeyboard(k *sb.TelegramKeyboard) *wireKeyboard {
	if k == nil {
		return nil
	}
	w := &wireKeyboard{InlineKeyboard: make([][]wireButton, 0, len(k.Rows))}
	for _, row := range k.Rows {
		wr := make([]wireButton, 0, len(row))
		for _, b := range row {
			wb := wireButton{Text: b.Text, URL: b.URL}
			if b.CallbackData != "" || b.URL == "" {
				data := b.CallbackData
				wb.CallbackData = &data
			}
			wr = append(wr, wb)
		}
		w.InlineKeyboard = append(w.InlineKeyboard, wr)
	}
	return w
}

func linkPreview(disabled bool) *wireLinkPreview {
	if !disabled {
		return nil
	}
	return &wireLinkPreview{IsDisabled: true}
}

// decodeResult decodes a successful answer's result.
func decodeResult(result json.RawMessage, out any) error {
	if len(result) == 0 {
		return errors.New("no result")
	}
	return json.Unmarshal(result, out)
}
