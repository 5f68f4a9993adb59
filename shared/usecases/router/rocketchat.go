package router

import (
	"context"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	"github.com/switchboard-dev/switchboard/shared/platform/textsplit"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// RocketChatChannel delivers as a direct message to the human's Rocket.Chat
// user, sent by the agent that speaks (or, for system notices, by the first
// agent with a Rocket.Chat identity).
type RocketChatChannel struct {
	Human   string // the human's username, without "@"
	Clients func(agentID string) (sb.ChatPoster, bool)
	Default string // agent whose identity system notices use
	// Scrub masks secrets in the whole notice before it is cut into
	// messages: a cut inside a secret leaves halves that the client's scrub
	// of each message does not recognise. Give the instance Scrubber's
	// StringContext (values ctx allows, such as an approval link's token,
	// stay). Nil masks the well-known patterns only.
	Scrub func(ctx context.Context, text string) string
}

// Name implements Channel.
func (c *RocketChatChannel) Name() string { return "RocketChat" }

// Send implements Channel.
func (c *RocketChatChannel) Send(ctx context.Context, n Notice) error {
	if c.Human == "" {
		return sb.E("router.rocketchat", sb.EINVALID, "instance.human.rocketchatUsername is not set")
	}
	client, ok := c.Clients(n.AgentID)
	if !ok {
		if client, ok = c.Clients(c.Default); !ok {
			return sb.E("router.rocketchat", sb.EINVALID, "no agent has a RocketChat block to send with")
		}
	}
	text := n.Text
	if n.AgentID == "" {
		text = "[Switchboard] " + text
	}
	// A long notice (an answer handed over from a room) goes in parts that
	// fit the server's message limit, cut from the scrubbed text.
	if c.Scrub != nil {
		text = c.Scrub(ctx, text)
	} else {
		text = (*scrub.Scrubber)(nil).StringContext(ctx, text)
	}
	for _, part := range textsplit.Split(text, textsplit.RocketChatLimit) {
		if _, err := client.PostMessage(ctx, "@"+strings.TrimPrefix(c.Human, "@"), part, ""); err != nil {
			return err
		}
	}
	return nil
}
