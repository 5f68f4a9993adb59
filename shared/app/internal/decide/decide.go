// Package decide builds the layer that takes decisions and messages from
// people: the Telegram client, the channel router, the approvals service
// and the Telegram inbound. It runs no tool: an approved call is handed to
// the agent-worker as a job, so the approvals and telegram-webhook
// functions stop here and link no executor, S3, Nextcloud or tool code.
// The actions layer builds on it and gives the approvals service its
// executor. Internal: only the builders under shared/app use it.
package decide

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	"github.com/switchboard-dev/switchboard/shared/httpapi"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
	"github.com/switchboard-dev/switchboard/shared/usecases/tginbound"
)

// EnvPublicBaseURL stands in for an empty instance.publicBaseUrl; the dev
// runtime sets it to its own listener so that approval links work locally.
const EnvPublicBaseURL = core.EnvPublicBaseURL

// Decide is the core plus what decides.
type Decide struct {
	*core.Core
	Telegram   *telegram.Client // nil without a bot token
	Router     *router.Router
	Approvals  *approvals.Service // nil when approvals are not set up
	TelegramIn *tginbound.Inbound
}

// New builds the layer on c. c.Dispatcher must be set.
func New(c *core.Core) (*Decide, error) {
	d := &Decide{Core: c}
	if t := c.Config.Instance.Telegram; t.BotToken != "" {
		var err error
		if d.Telegram, err = telegram.New(t.APIBaseURL, t.BotToken, c.HTTP, telegram.WithScrubber(c.Scrubber)); err != nil {
			return nil, fmt.Errorf("app: config %s: instance.telegram: %w", c.Config.File, err)
		}
	}
	d.setupRouter()
	if err := d.setupApprovals(); err != nil {
		return nil, err
	}
	d.setupTelegramInbound()
	return d, nil
}

// TelegramHandler serves POST /hooks/telegram.
func (d *Decide) TelegramHandler() http.Handler { return httpapi.TelegramWebhook(d.TelegramIn) }

// ApprovalsHandler serves GET/POST /approvals/{id}; without approvals set
// up it answers 404 with a page that says so.
func (d *Decide) ApprovalsHandler() http.Handler {
	if d.Approvals == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "approvals are not set up on this instance", http.StatusNotFound)
		})
	}
	return httpapi.Approvals(d.Approvals)
}

// setupRouter builds the channel router from instance.channels.
func (d *Decide) setupRouter() {
	var channels []router.Channel
	for _, name := range d.Config.Instance.Channels {
		switch name {
		case swcfg.ChannelRocketChat:
			channels = append(channels, &router.RocketChatChannel{
				Human:   d.Config.Instance.Human.RocketChatUsername,
				Clients: d.RocketChatClient,
				Default: d.FirstRocketChatAgent(),
				Scrub:   d.Scrubber.StringContext, // the whole notice, before it is cut
			})
		case swcfg.ChannelTelegram:
			if ch := d.TelegramChannel(); ch != nil {
				channels = append(channels, ch)
			}
		}
	}
	d.Router = router.New(channels, d.Store, d.Log)
}

// TelegramChannel is nil when no bot token or chat is configured.
func (d *Decide) TelegramChannel() router.Channel {
	t := d.Config.Instance.Telegram
	if d.Telegram == nil || t.ChatID == "" {
		return nil
	}
	return &router.TelegramChannel{Client: d.Telegram, ChatID: t.ChatID, Names: d.AgentName}
}

// setupApprovals connects the approvals flow when a signing key
// and a public base URL are configured; without them approve answers
// pending_approval and keeps nothing (logged once at start). The service
// has no executor here: the actions layer gives it one.
func (d *Decide) setupApprovals() error {
	cfg := d.Config.Instance
	base := d.PublicBaseURL()
	if cfg.Approvals.SigningKey == "" || base == "" {
		d.Log.Warn("approvals are not set up: set instance.approvals.signingKey and instance.publicBaseUrl; risky actions only answer pending_approval")
		return nil
	}
	signer, err := approvals.NewSigner([]byte(cfg.Approvals.SigningKey))
	if err != nil {
		return fmt.Errorf("app: config %s: instance.approvals.signingKey: %w", d.Config.File, err)
	}
	d.Approvals, err = approvals.New(approvals.Options{
		Store:         d.Store.Approvals(),
		Signer:        signer,
		Notifier:      &approvalNotifier{d: d},
		Waker:         d.Dispatcher,
		Tokens:        TaskTokens{D: d},
		PublicBaseURL: base,
		TTL:           time.Duration(cfg.Approvals.TTLHours) * time.Hour,
		Scrub:         d.Scrubber,
		Log:           d.Log,
	})
	if err != nil {
		return fmt.Errorf("app: approvals: %w", err)
	}
	return nil
}

// ExpireApprovals is the approvals-expire job: pending approvals past their
// expiry are closed and their agents told; approved calls that never
// started and stuck ones are closed and reported.
func (d *Decide) ExpireApprovals(ctx context.Context) (string, error) {
	if d.Approvals == nil {
		return "approvals are not set up", nil
	}
	n, err := d.Approvals.ExpireDue(ctx)
	return fmt.Sprintf("%d approvals expired or closed", n), err
}

// approvalNotifier shows approval requests to the human through the router,
// Telegram first (inline buttons and both links), then the other channels
// in their order (the links as text); it edits the Telegram message with
// the outcome.
type approvalNotifier struct{ d *Decide }

// router is the app's router with Telegram tried first: an approval
// request belongs where it has buttons, and still reaches the human over
// Rocket.Chat when Telegram cannot take it.
func (n *approvalNotifier) router() *router.Router {
	if ch := n.d.TelegramChannel(); ch != nil {
		return n.d.Router.Prefer(ch)
	}
	return n.d.Router
}

func (n *approvalNotifier) describe(ap approvals.Approval) string {
	return approvals.Describe(ap, n.d.AgentName(ap.AgentID), n.d.Scrubber)
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
	kb := &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{{
		telegram.CallbackButton("Approve", approvals.CallbackData(approvals.Approve, r.Approval.ID)),
		telegram.CallbackButton("Deny", approvals.CallbackData(approvals.Deny, r.Approval.ID)),
	}}}
	dl, err := n.router().Deliver(ctx, router.Notice{Kind: router.KindApproval, Text: text, Buttons: kb, Run: r.Approval.Run})
	if err != nil {
		return nil, err
	}
	return dl.Ref, nil
}

// Decided implements approvals.Notifier: the request message shows the
// outcome and loses its buttons. An approved call shows "running" first
// and its result when the worker has run it.
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
	if n.d.Telegram != nil && len(ap.Notice) > 0 && json.Unmarshal(ap.Notice, &ref) == nil && ref.MessageID != 0 {
		err := n.d.Telegram.EditMessageText(ctx, ref.ChatID, ref.MessageID, text, nil)
		switch sb.ErrorCode(err) {
		case "", sb.ECONFLICT: // ECONFLICT, "message is not modified": it already shows it
			return nil
		}
		return fmt.Errorf("the Telegram message of approval %s still shows its buttons (a press answers the outcome): %w", ap.ID, err)
	}
	if ap.Status == approvals.StatusApproved {
		// Without a message to edit, "running" would be one more message
		// before the result; whoever approved saw it on the page.
		return nil
	}
	_, err := n.d.Router.Deliver(ctx, router.Notice{Kind: router.KindApproval, Text: text, Run: ap.Run})
	return err
}

// setupTelegramInbound builds the webhook receiver (and the slow poller's
// handler).
func (d *Decide) setupTelegramInbound() {
	t := d.Config.Instance.Telegram
	ids := make([]string, 0, len(d.Config.Agents))
	for _, ag := range d.Config.Agents {
		ids = append(ids, ag.ID)
	}
	d.TelegramIn = &tginbound.Inbound{
		Secret:       t.WebhookSecret,
		AllowedChats: t.AllowedChatIDs,
		Agents:       ids,
		Decide: func(ctx context.Context, data, from string) (string, error) {
			if d.Approvals == nil {
				return "approvals are not set up here", nil
			}
			out, err := d.Approvals.DecideByCallback(ctx, data, from, d.Config.Instance.Approvals.ApproverTelegramIDs)
			return out.Message, err
		},
		Answer: func(ctx context.Context, id, text string) error {
			if d.Telegram == nil {
				return nil
			}
			return d.Telegram.AnswerCallbackQuery(ctx, id, text, false)
		},
		Dispatch: d.Dispatcher,
		Claims:   d.Store,
		Log:      d.Log,
	}
}

// PollTelegram is the telegram-poll job.
func (d *Decide) PollTelegram(ctx context.Context) (string, error) {
	if d.Telegram == nil {
		return "no Telegram bot configured", nil
	}
	p := &tginbound.Poller{Client: d.Telegram, KV: d.Store.KV(), In: d.TelegramIn}
	return p.Tick(ctx)
}
