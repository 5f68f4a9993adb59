// Package receive builds the rocketchat-webhook function from the core
// alone: config, store, the webhook receiver and the dispatcher that
// invokes the agent-worker. No tool, model, S3 or Nextcloud client is
// linked into it.
package receive

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
)

// RocketChatWebhook is the rocketchat-webhook function's handler.
func RocketChatWebhook(ctx context.Context, getenv func(string) string) (any, error) {
	c, err := core.New(ctx, getenv)
	if err != nil {
		return nil, err
	}
	if c.Dispatcher == nil {
		c.Dispatcher = core.NoDispatcher{Function: "rocketchat-webhook"}
	}
	return handlers.URL("rocketchat-webhook", httpapi.RocketChatWebhook(c.Receiver()), c.Log, c.Scrubber)
}
