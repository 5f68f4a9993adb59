package telegram

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/platform/tgtoken"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// SecretTokenHeader is the header in which Telegram sends a webhook's
// secret_token with every update.
const SecretTokenHeader = "X-Telegram-Bot-Api-Secret-Token"

// validateKeyboard checks k the way Telegram would, and more strictly:
// every button has text and exactly one of URL (absolute http, https or
// tg) and CallbackData (1–64 bytes); no row is empty. It returns EINVALID
// naming the row and button (1-based). A nil keyboard is valid.
func validateKeyboard(k *sb.TelegramKeyboard) error {
	if k == nil {
		return nil
	}
	const op = "telegram.keyboard"
	for r, row := range k.Rows {
		if len(row) == 0 {
			return sb.E(op, sb.EINVALID, fmt.Sprintf("inline keyboard row %d is empty; drop it or add a button", r+1))
		}
		for b, btn := range row {
			at := fmt.Sprintf("inline keyboard row %d, button %d (%q)", r+1, b+1, shorten(btn.Text))
			switch {
			case strings.TrimSpace(btn.Text) == "":
				return sb.E(op, sb.EINVALID, fmt.Sprintf("inline keyboard row %d, button %d has no text; every button needs a label", r+1, b+1))
			case btn.URL != "" && btn.CallbackData != "":
				return sb.E(op, sb.EINVALID, at+" sets both url and callback_data; set exactly one")
			case btn.URL == "" && btn.CallbackData == "":
				return sb.E(op, sb.EINVALID, at+" sets neither url nor callback_data; set exactly one (callback_data must be 1–64 bytes)")
			case btn.CallbackData != "" && len(btn.CallbackData) > MaxCallbackDataBytes:
				return sb.E(op, sb.EINVALID, fmt.Sprintf("%s: callback_data has %d bytes; Telegram allows 1–%d bytes (not characters), so send a short id and keep the details on the server", at, len(btn.CallbackData), MaxCallbackDataBytes))
			case btn.CallbackData != "" && !utf8.ValidString(btn.CallbackData):
				return sb.E(op, sb.EINVALID, at+": callback_data is not valid UTF-8")
			case btn.URL != "":
				u, err := url.Parse(btn.URL)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "tg") || (u.Host == "" && u.Scheme != "tg") {
					return sb.E(op, sb.EINVALID, at+": url is not an absolute http(s) or tg:// URL")
				}
			}
		}
	}
	return nil
}

// ValidateSecretToken checks a webhook secret against what setWebhook
// accepts: 1–256 characters of A-Z, a-z, 0-9, _ and -. It returns EINVALID
// without quoting the value.
func ValidateSecretToken(secret string) error {
	if !tgtoken.IsSecret(secret) {
		return sb.E("telegram.secret_token", sb.EINVALID, fmt.Sprintf("the webhook secret must be 1–%d characters of A-Z, a-z, 0-9, _ and -; check telegram.webhookSecret (generate one with: openssl rand -hex 32)", MaxSecretTokenLength))
	}
	return nil
}

// checkText refuses what Telegram would refuse for sure: empty text (after
// trimming, as Telegram trims), invalid UTF-8, an unknown parse mode, and
// plain text over MaxTextLength. With a parse mode the raw text may be
// longer than what Telegram counts, so that length is left to Telegram.
func checkText(op, method, text, parseMode string) error {
	where := "Telegram " + method + ": "
	switch parseMode {
	case "", ParseModeHTML, ParseModeMarkdownV2, ParseModeMarkdown:
	default:
		return sb.E(op, sb.EINVALID, fmt.Sprintf("%sparse mode %q is unknown; use HTML, MarkdownV2, Markdown or none", where, shorten(parseMode)))
	}
	if !utf8.ValidString(text) {
		return sb.E(op, sb.EINVALID, where+"the text is not valid UTF-8")
	}
	t := strings.TrimSpace(text)
	if t == "" {
		return sb.E(op, sb.EINVALID, where+"the text is empty (after trimming spaces); send some text")
	}
	if n := utf8.RuneCountInString(t); parseMode == "" && n > MaxTextLength {
		return sb.E(op, sb.EINVALID, fmt.Sprintf("%sthe text has %d characters; Telegram allows %d per message, so send it with SendLong", where, n, MaxTextLength))
	}
	return nil
}

// shorten caps a caller's value quoted in a message.
func shorten(s string) string {
	const max = 40
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "…"
}
