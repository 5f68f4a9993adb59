package router

import (
	"context"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/telegram"
)

// TelegramChannel delivers to the configured chat (instance.telegram.chatId).
// Long texts are split at 4,096 characters; a 429 is waited out once when the
// server asks for at most MaxWait (the client's SendLongWait does it),
// otherwise the router moves on.
type TelegramChannel struct {
	Client  *telegram.Client
	ChatID  string
	Names   func(agentID string) string                      // display name of the speaking agent
	MaxWait time.Duration                                    // 0: the client's (default 5 s)
	Sleep   func(ctx context.Context, d time.Duration) error // nil: the client's (a timer)
}

// Name implements Channel.
func (c *TelegramChannel) Name() string { return "Telegram" }

// Send implements Channel.
func (c *TelegramChannel) Send(ctx context.Context, n Notice) error {
	if c.ChatID == "" {
		return sb.E("router.telegram", sb.EINVALID, "instance.telegram.chatId is not set")
	}
	text := n.Text
	switch {
	case n.AgentID == "":
		text = "Switchboard: " + text
	case c.Names != nil:
		text = c.Names(n.AgentID) + ": " + text
	}
	msg := telegram.Message{ChatID: c.ChatID, Text: text, DisableWebPagePreview: true}
	// The client waits out a short 429 once and resends only the parts
	// that did not arrive; anything else goes back to the router, which
	// tries the next channel.
	_, err := c.Client.SendLongWait(ctx, msg, telegram.RateLimitWait{Max: c.MaxWait, Sleep: c.Sleep})
	return err
}
