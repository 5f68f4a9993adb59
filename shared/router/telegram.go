package router

import (
	"context"
	"errors"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/telegram"
)

// TelegramChannel delivers to the configured chat (instance.telegram.chatId).
// Long texts are split at 4,096 characters; a 429 is waited out once when the
// server asks for at most MaxWait, otherwise the router moves on.
type TelegramChannel struct {
	Client  *telegram.Client
	ChatID  string
	Names   func(agentID string) string // display name of the speaking agent
	MaxWait time.Duration               // default 5 s
	Sleep   func(ctx context.Context, d time.Duration) error
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
	sent, err := c.Client.SendLong(ctx, msg)
	if err == nil {
		return nil
	}
	wait := retryAfter(err)
	max := c.MaxWait
	if max == 0 {
		max = 5 * time.Second
	}
	if sb.ErrorCode(err) != sb.ERATELIMITED || wait <= 0 || wait > max {
		return err
	}
	sleep := c.Sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	if err := sleep(ctx, wait); err != nil {
		return err
	}
	// Resend only what did not arrive: SplitText is deterministic.
	parts := c.Client.Parts(ctx, msg)
	for _, p := range parts[len(sent):] {
		m := msg
		m.Text = p
		if _, err := c.Client.SendMessage(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

func retryAfter(err error) time.Duration {
	var se *sb.Error
	if errors.As(err, &se) {
		return se.RetryAfter
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
