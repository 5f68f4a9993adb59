package actions

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
	"github.com/switchboard-dev/switchboard/shared/usecases/tginbound"
)

// setupApprovals connects the approvals flow when a signing key
// and a public base URL are configured; without them approve answers
// pending_approval and keeps nothing (logged once at start).
func (a *Actions) setupApprovals() error {
	cfg := a.Config.Instance
	base := cfg.PublicBaseURL
	if base == "" {
		base = a.Getenv(EnvPublicBaseURL)
	}
	if cfg.Approvals.SigningKey == "" || base == "" {
		a.Log.Warn("approvals are not set up: set instance.approvals.signingKey and instance.publicBaseUrl; risky actions only answer pending_approval")
		return nil
	}
	signer, err := approvals.NewSigner([]byte(cfg.Approvals.SigningKey))
	if err != nil {
		return fmt.Errorf("app: config %s: instance.approvals.signingKey: %w", a.Config.File, err)
	}
	a.Approvals, err = approvals.New(approvals.Options{
		Store:         a.Store.Approvals(),
		Signer:        signer,
		Executor:      a.Tools,
		Notifier:      &approvalNotifier{app: a},
		Waker:         a.Dispatcher,
		PublicBaseURL: base,
		TTL:           time.Duration(cfg.Approvals.TTLHours) * time.Hour,
		Scrub:         a.Scrubber,
		Log:           a.Log,
	})
	if err != nil {
		return fmt.Errorf("app: approvals: %w", err)
	}
	a.Tools.SetStager(a.Approvals)
	return nil
}

// expireApprovals is the approvals-expire job: pending approvals past their
// expiry are closed and their agents told; stuck ones are reported.
func (a *Actions) expireApprovals(ctx context.Context) (string, error) {
	if a.Approvals == nil {
		return "approvals are not set up", nil
	}
	n, err := a.Approvals.ExpireDue(ctx)
	return fmt.Sprintf("%d approvals expired or closed", n), err
}

// approvalNotifier shows approval requests to the human through the router,
// Telegram first (inline buttons and both links), then the other channels
// in their order (the links as text); it edits the Telegram message with
// the outcome.
type approvalNotifier struct{ app *Actions }

// router is the app's router with Telegram tried first: an approval
// request belongs where it has buttons, and still reaches the human over
// Rocket.Chat when Telegram cannot take it.
func (n *approvalNotifier) router() *router.Router {
	if ch := n.app.TelegramChannel(); ch != nil {
		return n.app.Router.Prefer(ch)
	}
	return n.app.Router
}

func (n *approvalNotifier) describe(ap approvals.Approval) string {
	return approvals.Describe(ap, n.app.AgentName(ap.AgentID), n.app.Scrubber.String)
}

// RequestApproval implements approvals.Notifier. The links carry tokens:
// they go to the human untouched and are never logged (the router audits
// kind and channel, not the text). The clients scrub every outbound text,
// and "token=…" looks like a secret, so the two links (exactly these) are
// allowed through on ctx. The notice reference is the Telegram message
// when Telegram delivered, else nil (Decided then posts the outcome anew).
func (n *approvalNotifier) RequestApproval(ctx context.Context, r approvals.Request) (json.RawMessage, error) {
	ctx = scrub.Allow(ctx, r.ApproveURL, r.DenyURL)
	text := n.describe(r.Approval) + "\n\nApprove: " + r.ApproveURL + "\nDeny: " + r.DenyURL
	kb := &telegram.InlineKeyboard{Rows: [][]telegram.InlineKeyboardButton{{
		telegram.CallbackButton("Approve", approvals.CallbackData(approvals.Approve, r.Approval.ID)),
		telegram.CallbackButton("Deny", approvals.CallbackData(approvals.Deny, r.Approval.ID)),
	}}}
	d, err := n.router().Deliver(ctx, router.Notice{Kind: router.KindApproval, Text: text, Buttons: kb, Run: r.Approval.Run})
	if err != nil {
		return nil, err
	}
	return d.Ref, nil
}

// Decided implements approvals.Notifier: the request message shows the
// outcome and loses its buttons.
//
// The Telegram client waits out one short 429 on the edit. When the edit
// still fails, the message keeps its buttons, and that is left so (the
// error is logged by the caller): the decision is final in the store and a
// press on a stale button answers what happened ("already executed",
// "expired"); whoever decided saw the outcome on the confirmation page or
// in the button's answer, and the agent is woken with it. A second message
// with the outcome would go into a chat that is refusing messages right
// now, and would arrive away from the request it belongs to.
func (n *approvalNotifier) Decided(ctx context.Context, ap approvals.Approval) error {
	text := n.describe(ap) + "\n\nOutcome: " + approvals.OutcomeLine(ap)
	var ref router.TelegramRef
	if n.app.Telegram != nil && len(ap.Notice) > 0 && json.Unmarshal(ap.Notice, &ref) == nil && ref.MessageID != 0 {
		err := n.app.Telegram.EditMessageText(ctx, ref.ChatID, ref.MessageID, text, nil)
		switch sb.ErrorCode(err) {
		case "", sb.ECONFLICT: // ECONFLICT, "message is not modified": it already shows it
			return nil
		}
		return fmt.Errorf("the Telegram message of approval %s still shows its buttons (a press answers the outcome): %w", ap.ID, err)
	}
	_, err := n.app.Router.Deliver(ctx, router.Notice{Kind: router.KindApproval, Text: text, Run: ap.Run})
	return err
}

// setupTelegramInbound builds the webhook receiver and the slow poller.
func (a *Actions) setupTelegramInbound() {
	t := a.Config.Instance.Telegram
	ids := make([]string, 0, len(a.Config.Agents))
	for _, ag := range a.Config.Agents {
		ids = append(ids, ag.ID)
	}
	a.TelegramIn = &tginbound.Inbound{
		Secret:       t.WebhookSecret,
		AllowedChats: t.AllowedChatIDs,
		Agents:       ids,
		Decide: func(ctx context.Context, data, from string) (string, error) {
			if a.Approvals == nil {
				return "approvals are not set up here", nil
			}
			out, err := a.Approvals.DecideByCallback(ctx, data, from, a.Config.Instance.Approvals.ApproverTelegramIDs)
			return out.Message, err
		},
		Answer: func(ctx context.Context, id, text string) error {
			if a.Telegram == nil {
				return nil
			}
			return a.Telegram.AnswerCallbackQuery(ctx, id, text, false)
		},
		Dispatch: a.Dispatcher,
		Claims:   a.Store,
		Log:      a.Log,
	}
}

// pollTelegram is the telegram-poll job.
func (a *Actions) pollTelegram(ctx context.Context) (string, error) {
	if a.Telegram == nil {
		return "no Telegram bot configured", nil
	}
	p := &tginbound.Poller{Client: a.Telegram, KV: a.Store.KV(), In: a.TelegramIn}
	return p.Tick(ctx)
}
