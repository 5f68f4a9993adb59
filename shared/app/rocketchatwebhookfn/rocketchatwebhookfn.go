// Package rocketchatwebhookfn builds the rocketchat-webhook function from
// the core alone: config, store, the webhook receiver and the dispatcher
// that invokes the agent-worker. No tool, model, S3 or Nextcloud client is
// linked into it.
package rocketchatwebhookfn

import (
	"context"
	"net/http"

	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// Build is the rocketchat-webhook function's handler.
func Build(ctx context.Context, getenv func(string) string) (any, error) {
	c, err := core.ForFunction(ctx, "rocketchat-webhook", getenv)
	if err != nil {
		return nil, err
	}
	return handlers.URL("rocketchat-webhook", Handler(c), c.Log, c.Scrubber)
}

// Handler serves POST /hooks/rocketchat with the receiver of c.
func Handler(c *core.Core) http.Handler { return httpapi.RocketChatWebhook(Receiver(c)) }

// Receiver is the Rocket.Chat outgoing-webhook receiver.
func Receiver(c *core.Core) *wake.Receiver {
	var hookAgents []wake.WebhookAgent
	for _, ag := range c.Config.Agents {
		if t := ag.Tools.RocketChat; t != nil {
			hookAgents = append(hookAgents, wake.WebhookAgent{ID: ag.ID, UserID: t.UserID, Username: t.Username,
				AgentUsernames: t.AgentUsernames, RespondToAllRooms: t.RespondToAllRooms, MentionOnly: t.MentionOnly,
				MaxWakesPerHour: t.MaxWakesPerRoomPerHour})
		}
	}
	r := wake.NewReceiver(c.Config.Instance.RocketChat.WebhookTokens, hookAgents, c.Wakes, c.Dispatcher, c.Log)
	r.ClaimFor = c.ClaimFor
	r.Counters, r.Markers = c.Store, c.Store
	return r
}
