package telegram

import (
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/tgtoken"
)

// Limits of the Bot API.
const (
	// MaxTextLength is the most characters (runes) one message may carry.
	MaxTextLength = 4096
	// MaxCallbackDataBytes is the most BYTES an inline button's
	// callback_data may have; the least is 1.
	MaxCallbackDataBytes = 64
	// MaxAnswerTextLength is the most characters of an answerCallbackQuery
	// notification.
	MaxAnswerTextLength = 200
	// MaxSecretTokenLength is the most characters of a webhook secret_token.
	MaxSecretTokenLength = tgtoken.MaxSecretLength
)

// Parse modes for Message.ParseMode ("" sends plain text).
const (
	ParseModeHTML       = "HTML"
	ParseModeMarkdownV2 = "MarkdownV2"
	ParseModeMarkdown   = "Markdown" // legacy
)

// Update kinds, as named by the Update object's fields and by
// allowed_updates.
const (
	KindMessage       = "message"
	KindEditedMessage = "edited_message"
	KindChannelPost   = "channel_post"
	KindCallbackQuery = "callback_query"
)

// User is a Telegram user or bot.
type User struct {
	ID        int64
	IsBot     bool
	Username  string // without "@"; may be empty
	FirstName string
}

// Chat is where a message lives. Type is private, group, supergroup or
// channel; group chat ids are negative.
type Chat struct {
	ID       int64
	Type     string
	Title    string // groups and channels
	Username string // without "@"; may be empty
}

// Msg is a received message.
type Msg struct {
	ID               int64
	From             User // zero for channel posts
	Chat             Chat
	Date             time.Time // zero for an inaccessible message
	Text             string
	ReplyToMessageID int64 // 0 when it answers nothing
}

// Callback is a pressed inline button.
type Callback struct {
	ID           string // a string, not a number
	From         User
	Message      *Msg // the message with the button; nil for inline messages
	ChatInstance string
	Data         string
}

// Update is one incoming update. Kind names its type; Message is set for
// "message" updates, CallbackQuery for "callback_query". Other kinds carry
// only ID and Kind, so a receiver can confirm them and move on.
type Update struct {
	ID            int64
	Kind          string
	Message       *Msg
	CallbackQuery *Callback
}

// InlineKeyboardButton is one button under a message. Exactly one of URL
// and CallbackData must be set; CallbackData must be 1–64 bytes.
type InlineKeyboardButton struct {
	Text         string
	URL          string
	CallbackData string
}

// CallbackButton is a button that sends data back to the bot when pressed.
func CallbackButton(text, data string) InlineKeyboardButton {
	return InlineKeyboardButton{Text: text, CallbackData: data}
}

// URLButton is a button that opens url.
func URLButton(text, url string) InlineKeyboardButton {
	return InlineKeyboardButton{Text: text, URL: url}
}

// InlineKeyboard is the reply_markup of a message: rows of buttons.
type InlineKeyboard struct {
	Rows [][]InlineKeyboardButton
}

// Message is a message to send.
type Message struct {
	// ChatID is a numeric chat id ("123456789", "-1001234567890") or
	// "@channelusername".
	ChatID    string
	Text      string
	ParseMode string // "", HTML, MarkdownV2 or Markdown
	// ReplyMarkup adds inline buttons. SendLong puts them on the last part.
	ReplyMarkup           *InlineKeyboard
	DisableWebPagePreview bool
	// ReplyToMessageID answers a message in the same chat. The message is
	// sent even when that one is gone (allow_sending_without_reply).
	ReplyToMessageID int64
}

// Edit changes the text (and buttons) of a message the bot sent.
type Edit struct {
	ChatID    string
	MessageID int64
	Text      string
	ParseMode string
	// ReplyMarkup nil removes the message's buttons, as Telegram does when
	// editMessageText carries no reply_markup.
	ReplyMarkup           *InlineKeyboard
	DisableWebPagePreview bool
}

// Sent identifies a message the bot sent.
type Sent struct {
	MessageID int64
	ChatID    int64
	Date      time.Time
}

// WebhookInfo is the webhook state (getWebhookInfo). URL is empty when no
// webhook is set.
type WebhookInfo struct {
	URL                string
	PendingUpdateCount int
	LastErrorDate      time.Time // zero when no delivery failed
	LastErrorMessage   string
	MaxConnections     int
	AllowedUpdates     []string
}
