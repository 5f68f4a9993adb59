// Package telegramwebhookfn builds the telegram-webhook function: approval
// buttons and messages to agents. It records a decision and hands an
// approved call to the agent-worker, which runs it; so it builds only the
// core and the decide part, and links no tool executor, S3, Nextcloud or
// model provider.
package telegramwebhookfn

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	"github.com/switchboard-dev/switchboard/shared/app/internal/decide"
	"github.com/switchboard-dev/switchboard/shared/handlers"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
	"github.com/switchboard-dev/switchboard/shared/usecases/tginbound"
)

// Build serves POST /hooks/telegram; the handler checks
// X-Telegram-Bot-Api-Secret-Token itself.
func Build(ctx context.Context, getenv func(string) string) (any, error) {
	c, err := core.ForFunction(ctx, "telegram-webhook", getenv)
	if err != nil {
		return nil, err
	}
	d, err := decide.New(c)
	if err != nil {
		return nil, err
	}
	return handlers.URL("telegram-webhook", httpapi.TelegramWebhook(Inbound(d)), c.Log, c.Scrubber)
}

// Inbound handles Telegram updates: the webhook's, and the slow poller's
// (the jobs function's telegram-poll).
func Inbound(d *decide.Decide) *tginbound.Inbound {
	c := d.Core
	t := c.Config.Instance.Telegram
	ids := make([]string, 0, len(c.Config.Agents))
	for _, ag := range c.Config.Agents {
		ids = append(ids, ag.ID)
	}
	// An approver's /stop stops the chain's pipeline executions too (the
	// deploy catalogue grants StopExecution to the functions that stop).
	c.Control().Executions = core.StepFunctionsExecutions{Core: c}
	in := &tginbound.Inbound{
		Secret:       t.WebhookSecret,
		AllowedChats: t.AllowedChatIDs,
		Agents:       ids,
		Dispatch:     c.Dispatcher,
		Claims:       c.Store,
		Control:      c.Control(),
		Approvers:    c.Config.Instance.Approvals.ApproverTelegramIDs,
		Log:          c.Log,
	}
	// Never a nil pointer in the interfaces.
	if d.Approvals != nil {
		in.Decider = callbackDecisions{approvals: d.Approvals, approvers: c.Config.Instance.Approvals.ApproverTelegramIDs}
	}
	if d.Telegram != nil {
		in.Answers, in.Replies = d.Telegram, d.Telegram
	}
	return in
}

// callbackDecisions decide a button press by the configured approvers.
type callbackDecisions struct {
	approvals *approvals.Service
	approvers []string
}

func (c callbackDecisions) Decide(ctx context.Context, data, from string) (string, error) {
	out, err := c.approvals.DecideByCallback(ctx, data, from, c.approvers)
	return out.Message, err
}
