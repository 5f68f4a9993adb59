package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/switchboard-dev/switchboard/shared/approvals"
	"github.com/switchboard-dev/switchboard/shared/router"
	"github.com/switchboard-dev/switchboard/shared/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/telegram"
	"github.com/switchboard-dev/switchboard/shared/tginbound"
)

// EnvPublicBaseURL stands in for an empty instance.publicBaseUrl; the dev
// runtime sets it to its own listener so that approval links work locally.
const EnvPublicBaseURL = "SWITCHBOARD_PUBLIC_BASE_URL"

// setupApprovals connects the approvals flow (ST2, ST3) when a signing key
// and a public base URL are configured; without them approve answers
// pending_approval and keeps nothing (logged once at start).
func (a *App) setupApprovals() error {
	cfg := a.Config.Instance
	base := cfg.PublicBaseURL
	if base == "" {
		base = a.getenv(EnvPublicBaseURL)
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

// ApprovalsHandler serves GET/POST /approvals/{id}; without approvals set
// up it answers 404 with a page that says so.
func (a *App) ApprovalsHandler() http.Handler {
	if a.Approvals == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "approvals are not set up on this instance", http.StatusNotFound)
		})
	}
	return approvals.Handler(a.Approvals)
}

// expireApprovals is the approvals-expire job: pending approvals past their
// expiry are closed and their agents told; stuck ones are reported.
func (a *App) expireApprovals(ctx context.Context) (string, error) {
	if a.Approvals == nil {
		return "approvals are not set up", nil
	}
	n, err := a.Approvals.ExpireDue(ctx)
	return fmt.Sprintf("%d approvals expired or closed", n), err
}

// approvalNotifier shows approval requests in the approver chat on Telegram
// (inline buttons + both links) and edits the message with the outcome.
// Without Telegram the request goes through the router instead.
type approvalNotifier struct{ app *App }

type tgNotice struct {
	ChatID    string `json:"chatId"`
	MessageID int64  `json:"messageId"`
}

func (n *approvalNotifier) describe(ap approvals.Approval) string {
	args := n.app.Scrubber.String(string(ap.Args))
	if r := []rune(args); len(r) > 600 {
		args = string(r[:600]) + "…"
	}
	return fmt.Sprintf("%s wants to run %s.%s\nwith %s\nWhy: %s\nExpires: %s UTC",
		n.app.agentName(ap.AgentID), ap.Tool, ap.Action, args, ap.Reason, ap.ExpiresAt.UTC().Format("2006-01-02 15:04"))
}

// RequestApproval implements approvals.Notifier. The links carry tokens:
// they go to Telegram untouched and are never logged. The clients scrub
// every outbound text, and "token=…" looks like a secret, so the two links
// (exactly these) are allowed through on ctx.
func (n *approvalNotifier) RequestApproval(ctx context.Context, r approvals.Request) (json.RawMessage, error) {
	ctx = scrub.Allow(ctx, r.ApproveURL, r.DenyURL)
	text := n.describe(r.Approval) + "\n\nApprove: " + r.ApproveURL + "\nDeny: " + r.DenyURL
	tg, chat := n.app.telegram, n.app.Config.Instance.Telegram.ChatID
	if tg == nil || chat == "" {
		_, err := n.app.Router.Deliver(ctx, router.Notice{Kind: router.KindApproval, Text: text})
		return nil, err
	}
	kb := &telegram.InlineKeyboard{Rows: [][]telegram.InlineKeyboardButton{{
		telegram.CallbackButton("Approve", approvals.CallbackData(approvals.Approve, r.Approval.ID)),
		telegram.CallbackButton("Deny", approvals.CallbackData(approvals.Deny, r.Approval.ID)),
	}}}
	sent, err := tg.SendMessage(ctx, telegram.Message{ChatID: chat, Text: text, ReplyMarkup: kb, DisableWebPagePreview: true})
	if err != nil {
		return nil, err
	}
	return json.Marshal(tgNotice{ChatID: chat, MessageID: sent.MessageID})
}

// Decided implements approvals.Notifier: the request message shows the
// outcome and loses its buttons.
func (n *approvalNotifier) Decided(ctx context.Context, ap approvals.Approval) error {
	text := n.describe(ap) + "\n\nOutcome: " + outcomeLine(ap)
	var note tgNotice
	if n.app.telegram != nil && len(ap.Notice) > 0 && json.Unmarshal(ap.Notice, &note) == nil && note.MessageID != 0 {
		err := n.app.telegram.EditMessageText(ctx, note.ChatID, note.MessageID, text, nil)
		if sb.ErrorCode(err) == sb.ECONFLICT { // "message is not modified": already shows it
			return nil
		}
		return err
	}
	_, err := n.app.Router.Deliver(ctx, router.Notice{Kind: router.KindApproval, Text: text})
	return err
}

func outcomeLine(ap approvals.Approval) string {
	who := ap.DecidedBy
	if who == "" {
		who = "nobody"
	}
	switch ap.Status {
	case approvals.StatusExecuted:
		return "approved by " + who + " and done"
	case approvals.StatusFailed:
		return "approved by " + who + ", but the action failed: " + ap.Result.Error
	case approvals.StatusDenied:
		return "denied by " + who
	case approvals.StatusExpired:
		return "expired without a decision"
	}
	return string(ap.Status)
}

// setupTelegramInbound builds the webhook receiver and the slow poller (CR3).
func (a *App) setupTelegramInbound() {
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
			if a.telegram == nil {
				return nil
			}
			return a.telegram.AnswerCallbackQuery(ctx, id, text, false)
		},
		Dispatch: a.Dispatcher,
		Claims:   a.Store,
		Log:      a.Log,
	}
}

// pollTelegram is the telegram-poll job.
func (a *App) pollTelegram(ctx context.Context) (string, error) {
	if a.telegram == nil {
		return "no Telegram bot configured", nil
	}
	p := &tginbound.Poller{Client: a.telegram, KV: a.Store.KV(), In: a.TelegramIn}
	return p.Tick(ctx)
}

// replyContext lets a staged approval remember where its follow-up run
// should answer.
func replyContext(ctx context.Context, to any) context.Context {
	if to == nil {
		return ctx
	}
	raw, err := json.Marshal(map[string]any{"replyTo": to})
	if err != nil {
		return ctx
	}
	return approvals.WithContext(ctx, raw)
}
