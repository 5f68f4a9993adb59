package tgfake

import (
	"net/http"
	"time"
)

// The Bot API objects the fake serves, in their wire shape. Tests
// build and inspect them directly; fields tagged "-" are what the fake
// remembers beyond the wire.

// User is a Telegram user or the bot.
type User struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	Username  string `json:"username,omitempty"`
}

// Chat as it appears in a Message.
type Chat struct {
	ID        int64  `json:"id"`
	Type      string `json:"type"`
	Title     string `json:"title,omitempty"`
	Username  string `json:"username,omitempty"`
	FirstName string `json:"first_name,omitempty"`
}

// InlineKeyboardButton is a button of an inline keyboard. The fake keeps
// only the fields Switchboard uses.
type InlineKeyboardButton struct {
	Text         string `json:"text"`
	URL          string `json:"url,omitempty"`
	CallbackData string `json:"callback_data,omitempty"`
}

// InlineKeyboardMarkup is a message's reply_markup.
type InlineKeyboardMarkup struct {
	InlineKeyboard [][]InlineKeyboardButton `json:"inline_keyboard"`
}

// Message is a message in a chat: sent by the bot or injected as a user's.
type Message struct {
	MessageID      int64                 `json:"message_id"`
	From           *User                 `json:"from,omitempty"`
	Chat           Chat                  `json:"chat"`
	Date           int64                 `json:"date"`
	EditDate       int64                 `json:"edit_date,omitempty"`
	ReplyToMessage *Message              `json:"reply_to_message,omitempty"`
	Text           string                `json:"text,omitempty"` // after entity parsing, as Telegram returns it
	ReplyMarkup    *InlineKeyboardMarkup `json:"reply_markup,omitempty"`

	RawText             string `json:"-"` // the text parameter as sent
	ParseMode           string `json:"-"`
	LinkPreviewDisabled bool   `json:"-"`
}

// CallbackQuery is a pressed inline button.
type CallbackQuery struct {
	ID           string   `json:"id"`
	From         User     `json:"from"`
	Message      *Message `json:"message,omitempty"`
	ChatInstance string   `json:"chat_instance"`
	Data         string   `json:"data,omitempty"`
}

// Update is one incoming update; at most one of its optional fields is set.
type Update struct {
	UpdateID      int64          `json:"update_id"`
	Message       *Message       `json:"message,omitempty"`
	EditedMessage *Message       `json:"edited_message,omitempty"`
	ChannelPost   *Message       `json:"channel_post,omitempty"`
	CallbackQuery *CallbackQuery `json:"callback_query,omitempty"`
}

// Kind names the update's type as allowed_updates does: "message",
// "edited_message", "channel_post", "callback_query"; "" when none is set.
func (u Update) Kind() string {
	switch {
	case u.Message != nil:
		return "message"
	case u.EditedMessage != nil:
		return "edited_message"
	case u.ChannelPost != nil:
		return "channel_post"
	case u.CallbackQuery != nil:
		return "callback_query"
	}
	return ""
}

// Edit is one successful editMessageText.
type Edit struct {
	ChatID      int64
	MessageID   int64
	Text        string // after entity parsing
	RawText     string
	ParseMode   string
	ReplyMarkup *InlineKeyboardMarkup // nil: the buttons were removed
	At          time.Time
}

// Answer is one successful answerCallbackQuery.
type Answer struct {
	CallbackQueryID string
	Text            string
	ShowAlert       bool
	URL             string
	CacheTime       int
	At              time.Time
}

// Delivery is one webhook POST made by PushUpdate or PushPending.
type Delivery struct {
	UpdateID    int64
	URL         string
	SecretToken string // the X-Telegram-Bot-Api-Secret-Token sent; "" when none
	Body        []byte // the Update JSON sent
	Status      int    // the receiver's HTTP status; 0 when the POST failed
	Response    []byte // the receiver's body (capped at 64 KB)
	Err         string // transport failure, if any
	At          time.Time
}

// OK reports whether the receiver accepted the update (2xx).
func (d Delivery) OK() bool { return d.Status/100 == 2 }

// Webhook is the webhook state set by setWebhook.
type Webhook struct {
	URL            string
	SecretToken    string
	AllowedUpdates []string
	MaxConnections int
}

// Request is one recorded request.
type Request struct {
	HTTPMethod string
	Path       string
	Token      string            // the token in the path
	Method     string            // the Bot API method, canonical ("sendMessage") when known
	Params     map[string]string // query and body parameters, objects as JSON text
	Header     http.Header
	Body       []byte
	At         time.Time
}
