package router

import (
	"context"
	"encoding/json"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// TelegramChannel delivers to the configured chat (instance.telegram.chatId).
// Long texts are split at 4,096 characters; a 429 is waited out once when the
// server asks for at most MaxWait (the client's SendLongWait does it),
// otherwise the router moves on.
type TelegramChannel struct {
	Client  sb.TelegramSender
	ChatID  string
	Names   func(agentID string) string                      // display name of the speaking agent
	MaxWait time.Duration                                    // 0: the client's (default 5 s)
	Sleep   func(ctx context.Context, d time.Duration) error // nil: the client's (a timer)
}

// Name implements Channel.
func (c *TelegramChannel) Name() string { return "Telegram" }

// TelegramRef names the message an approval request (or any notice) became
// on Telegram: the last part, which carries the buttons.
type TelegramRef struct {
	ChatID    string `json:"chatId"`
	MessageID int64  `json:"messageId"`
}

var _ RefChannel = (*TelegramChannel)(nil)

// Send implements Channel.
func (c *TelegramChannel) Send(ctx context.Context, n Notice) error {
	_, err := c.SendRef(ctx, n)
	return err
}

// SendRef implements RefChannel: the reference is a TelegramRef.
func (c *TelegramChannel) SendRef(ctx context.Context, n Notice) (json.RawMessage, error) {
	if c.ChatID == "" {
		return nil, sb.E("router.telegram", sb.EINVALID, "instance.telegram.chatId is not set")
	}
	text := n.Text
	switch {
	case n.AgentID == "":
		text = "Switchboard: " + text
	case c.Names != nil:
		text = c.Names(n.AgentID) + ": " + text
	}
	msg := sb.TelegramText{ChatID: c.ChatID, Text: text, ReplyMarkup: n.Buttons, DisableWebPagePreview: true}
	// The client waits out a short 429 once and resends only the parts
	// that did not arrive; anything else goes back to the router, which
	// tries the next channel.
	sent, err := c.Client.SendLongWait(ctx, msg, sb.TelegramWait{Max: c.MaxWait, Sleep: c.Sleep})
	if err != nil {
		return nil, err
	}
	return json.Marshal(TelegramRef{ChatID: c.ChatID, MessageID: sent[len(sent)-1].MessageID})
}
