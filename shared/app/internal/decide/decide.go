// Package decide builds the part that takes decisions from people and
// tells them things: the Telegram client, the channel router and the
// approvals service. It runs no tool: an approved call is handed to the
// agent-worker as a job, so the approvals and telegram-webhook functions
// stop here and link no executor, S3, Nextcloud or tool code. The actions
// part gives the approvals service its executor. Internal: only the
// builders under shared/app use it.
package decide

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// Decide is what decides and tells people, over the core.
type Decide struct {
	Core      *core.Core
	Telegram  *telegram.Client // nil without a bot token
	Router    *router.Router
	Approvals *approvals.Service // nil when approvals are not set up
}

// New builds the part on c. c.Dispatcher must be set.
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
	return d, nil
}

// setupRouter builds the channel router from instance.channels.
func (d *Decide) setupRouter() {
	c := d.Core
	var channels []router.Channel
	for _, name := range c.Config.Instance.Channels {
		switch name {
		case swcfg.ChannelRocketChat:
			channels = append(channels, &router.RocketChatChannel{
				Human:   c.Config.Instance.Human.RocketChatUsername,
				Clients: c.RocketChatClient,
				Default: c.FirstRocketChatAgent(),
				Scrub:   c.Scrubber.StringContext, // the whole notice, before it is cut
			})
		case swcfg.ChannelTelegram:
			if ch := d.TelegramChannel(); ch != nil {
				channels = append(channels, ch)
			}
		}
	}
	d.Router = router.New(channels, c.Store, c.Log)
}

// TelegramChannel is nil when no bot token or chat is configured.
func (d *Decide) TelegramChannel() router.Channel {
	t := d.Core.Config.Instance.Telegram
	if d.Telegram == nil || t.ChatID == "" {
		return nil
	}
	return &router.TelegramChannel{Client: d.Telegram, ChatID: t.ChatID, Names: d.Core.AgentName}
}

// setupApprovals connects the approvals flow when a signing key
// and a public base URL are configured; without them approve answers
// pending_approval and keeps nothing (logged once at start). The service
// has no executor here: the actions part gives it one.
func (d *Decide) setupApprovals() error {
	c := d.Core
	cfg := c.Config.Instance
	base := c.PublicBaseURL()
	if cfg.Approvals.SigningKey == "" || base == "" {
		c.Log.Warn("approvals are not set up: set instance.approvals.signingKey and instance.publicBaseUrl; risky actions only answer pending_approval")
		return nil
	}
	signer, err := approvals.NewSigner([]byte(cfg.Approvals.SigningKey))
	if err != nil {
		return fmt.Errorf("app: config %s: instance.approvals.signingKey: %w", c.Config.File, err)
	}
	d.Approvals, err = approvals.New(approvals.Options{
		Store:         c.Store.Approvals(),
		Signer:        signer,
		Notifier:      &approvalNotifier{d: d},
		Waker:         c.Dispatcher,
		Tokens:        TaskTokens{Core: c},
		PublicBaseURL: base,
		TTL:           time.Duration(cfg.Approvals.TTLHours) * time.Hour,
		Allowances:    c.Store.Allowances(),
		AllowForHours: cfg.Approvals.AllowForHours,
		Audit:         c.Store,
		Scrub:         c.Scrubber,
		Log:           c.Log,
	})
	if err != nil {
		return fmt.Errorf("app: approvals: %w", err)
	}
	return nil
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
	return approvals.Describe(ap, n.d.Core.AgentName(ap.AgentID), n.d.Core.Scrubber)
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
