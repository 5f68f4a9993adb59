// Package decide builds the functions that take people's decisions and
// messages: approvals (the approval links) and telegram-webhook (approval
// buttons and messages to agents). They record a decision and hand an
// approved call to the agent-worker, which runs it; so they build only
// the core and the decide layer, and link no tool executor, S3, Nextcloud
// or model provider.
package decide

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	"github.com/switchboard-dev/switchboard/shared/app/internal/decide"
	"github.com/switchboard-dev/switchboard/shared/handlers"
)

func build(ctx context.Context, fn string, getenv func(string) string) (*decide.Decide, error) {
	c, err := core.New(ctx, getenv)
	if err != nil {
		return nil, err
	}
	if c.Dispatcher == nil {
		c.Dispatcher = core.NoDispatcher{Function: fn}
	}
	return decide.New(c)
}

// Approvals serves the approval links (GET page, POST decision) on a
// function URL with AuthType NONE: the signed token is the credential.
func Approvals(ctx context.Context, getenv func(string) string) (any, error) {
	d, err := build(ctx, "approvals", getenv)
	if err != nil {
		return nil, err
	}
	return handlers.URL("approvals", d.ApprovalsHandler(), d.Log, d.Scrubber)
}

// TelegramWebhook serves POST /hooks/telegram; the handler checks
// X-Telegram-Bot-Api-Secret-Token itself.
func TelegramWebhook(ctx context.Context, getenv func(string) string) (any, error) {
	d, err := build(ctx, "telegram-webhook", getenv)
	if err != nil {
		return nil, err
	}
	return handlers.URL("telegram-webhook", d.TelegramHandler(), d.Log, d.Scrubber)
}
