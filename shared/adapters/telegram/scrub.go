package telegram

import (
	"context"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// scrubMessage returns m with its text and buttons scrubbed.
func (c *Client) scrubMessage(ctx context.Context, m sb.TelegramText) sb.TelegramText {
	m.Text, m.ParseMode = c.scrubText(ctx, m.Text, m.ParseMode)
	m.ReplyMarkup = c.scrubKeyboard(ctx, m.ReplyMarkup)
	return m
}

// scrubText is the one place outbound text passes; values the caller
// allowed on ctx (scrub.Allow) stay as they are. The mask "***" is markup
// in Markdown and MarkdownV2 (Telegram would refuse the message as "can't
// parse entities"), so a Markdown text in which something was masked goes
// out as plain text: readable, and delivered. HTML needs nothing: the mask
// is plain text there.
func (c *Client) scrubText(ctx context.Context, text, parseMode string) (string, string) {
	out := c.scrubber.StringContext(ctx, text)
	if out != text && (parseMode == ParseModeMarkdown || parseMode == ParseModeMarkdownV2) {
		parseMode = ""
	}
	return out, parseMode
}

// scrubKeyboard returns a copy of k with button labels and URLs scrubbed;
// callback data is the bot's own and goes unchanged.
func (c *Client) scrubKeyboard(ctx context.Context, k *sb.TelegramKeyboard) *sb.TelegramKeyboard {
	if k == nil {
		return nil
	}
	out := &sb.TelegramKeyboard{Rows: make([][]sb.TelegramButton, len(k.Rows))}
	for i, row := range k.Rows {
		out.Rows[i] = make([]sb.TelegramButton, len(row))
		for j, b := range row {
			b.Text = c.scrubber.StringContext(ctx, b.Text)
			if b.URL != "" {
				b.URL = c.scrubber.StringContext(ctx, b.URL)
			}
			out.Rows[i][j] = b
		}
	}
	return out
}

// Parts returns the texts SendLong sends for m, in order: m's text
// scrubbed, then cut by SplitText. A caller resuming an interrupted SendLong
// (after a 429) resends Parts(m)[len(sent):].
func (c *Client) Parts(ctx context.Context, m sb.TelegramText) []string {
	m = c.scrubMessage(ctx, m)
	return SplitText(m.Text, MaxTextLength, m.ParseMode)
}
