// Package decide builds the part that takes decisions from people and
// tells them things: the Telegram client, the channel router and the
// approvals service. It runs no tool: an approved call is handed to the
// agent-worker as a job, so the approvals and telegram-webhook functions
// stop here and link no executor, S3, Nextcloud or tool code. The actions
// part gives the approvals service its executor. Internal: only the
// builders under shared/app use it.
package decide

import (
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	"github.com/switchboard-dev/switchboard/shared/app/internal/core"
	swcfg "github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals/notices"
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
		Notifier:      d.approvalNotices(),
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

// approvalNotices shows approval requests and their outcomes over the
// router, Telegram first.
func (d *Decide) approvalNotices() *notices.Notifier {
	n := &notices.Notifier{Router: d.Router, Telegram: d.TelegramChannel(), Names: d.Core.AgentName, Scrub: d.Core.Scrubber}
	if d.Telegram != nil { // never a nil *Client in the interface
		n.Edits = d.Telegram
	}
	return n
}
