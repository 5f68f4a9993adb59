package router

import (
	"context"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/platform/textsplit"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// RocketChatChannel delivers as a direct message to the human's Rocket.Chat
// user, sent by the agent that speaks (or, for system notices, by the first
// agent with a Rocket.Chat identity).
type RocketChatChannel struct {
	Human   string // the human's username, without "@"
	Clients func(agentID string) (*rocketchat.Client, bool)
	Default string // agent whose identity system notices use
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
	// fit the server's message limit.
	for _, part := range textsplit.Split(text, textsplit.RocketChatLimit) {
		if _, err := client.PostMessage(ctx, "@"+strings.TrimPrefix(c.Human, "@"), part, ""); err != nil {
			return err
		}
	}
	return nil
}
