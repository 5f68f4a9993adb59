package telegram

import (
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/tgtoken"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Limits of the Bot API.
const (
	// MaxTextLength is the most characters (runes) one message may carry.
	MaxTextLength = 4096
	// MaxCallbackDataBytes is the most BYTES an inline button's
	// callback_data may have; the least is 1.
	MaxCallbackDataBytes = 64
	// MaxSecretTokenLength is the most characters of a webhook secret_token.
	MaxSecretTokenLength = tgtoken.MaxSecretLength
)

// Parse modes for switchboard.TelegramText.ParseMode ("" sends plain text).
const (
	ParseModeHTML       = "HTML"
	ParseModeMarkdownV2 = "MarkdownV2"
	ParseModeMarkdown   = "Markdown" // legacy
)

// CallbackButton is a button that sends data back to the bot when pressed.
func CallbackButton(text, data string) sb.TelegramButton {
	return sb.TelegramButton{Text: text, CallbackData: data}
}

// URLButton is a button that opens url.
func URLButton(text, url string) sb.TelegramButton {
	return sb.TelegramButton{Text: text, URL: url}
}

// Edit changes the text (and buttons) of a message the bot sent.
type Edit struct {
	ChatID    string
	MessageID int64
	Text      string
	ParseMode string
	// ReplyMarkup nil removes the message's buttons, as Telegram does when
	// editMessageText carries no reply_markup.
	ReplyMarkup           *sb.TelegramKeyboard
	DisableWebPagePreview bool
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
