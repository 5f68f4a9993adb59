// Package notices shows approval requests and their outcomes to the human
// over the channel router (approvals.Notifier). It is apart from approvals
// so that the functions that read approvals (the webhooks, the console)
// link no router.
package notices

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// Notifier is the approvals.Notifier over the channel router: a request goes to
// Telegram first (inline buttons and both links), then to the other
// channels in their order (the links as text); the outcome edits the
// Telegram message the request became.
type Notifier struct {
	Router *router.Router
	// Telegram is the router's Telegram channel, tried first for a
	// request: it belongs where it has buttons, and still reaches the
	// human over Rocket.Chat when Telegram cannot take it. Nil without one.
	Telegram router.Channel
	// Edits changes the Telegram message of a request; nil without a bot.
	Edits sb.TelegramEditor
	Names func(agentID string) string // display name of an agent
	Scrub approvals.Scrubber
}

var _ approvals.Notifier = (*Notifier)(nil)

// requests is the router a request goes through.
func (n *Notifier) requests() *router.Router {
	if n.Telegram != nil {
		return n.Router.Prefer(n.Telegram)
	}
	return n.Router
}

func (n *Notifier) describe(ap approvals.Approval) string {
	name := ap.AgentID
	if n.Names != nil {
		name = n.Names(ap.AgentID)
	}
	return approvals.Describe(ap, name, n.Scrub)
}

// RequestApproval implements approvals.Notifier. The links carry tokens: they go to
// the human untouched and are never logged (the router audits kind and
// channel, not the text). The clients scrub every outbound text, and
// "token=…" looks like a secret, so the two links (exactly these) are
// allowed through on ctx. The notice reference is the Telegram message
// when Telegram delivered, else nil (Decided then posts the outcome anew).
func (n *Notifier) RequestApproval(ctx context.Context, r approvals.Request) (json.RawMessage, error) {
	ctx = scrub.Allow(ctx, r.ApproveURL, r.DenyURL)
	text := n.describe(r.Approval) + "\n\nApprove: " + r.ApproveURL + "\nDeny: " + r.DenyURL
	kb := &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{{
		{Text: "Approve", CallbackData: approvals.CallbackData(approvals.Approve, r.Approval.ID)},
		{Text: "Deny", CallbackData: approvals.CallbackData(approvals.Deny, r.Approval.ID)},
	}}}
	dl, err := n.requests().Deliver(ctx, router.Notice{Kind: router.KindApproval, Text: text, Buttons: kb, Run: r.Approval.Run})
	if err != nil {
		return nil, err
	}
	return dl.Ref, nil
}

// Decided implements approvals.Notifier: the request message shows the outcome and
// loses its buttons. An approved call shows "running" first and its result
// when the worker has run it.
//
// The Telegram client waits out one short 429 on the edit. When the edit
// still fails, the message keeps its buttons, and that is left so (the
// error is logged by the caller): the decision is final in the store and a
// press on a stale button answers what happened ("already executed",
// "expired"); whoever decided saw the outcome on the confirmation page or
// in the button's answer, and the agent is woken with it. A second message
// with the outcome would go into a chat that is refusing messages right
// now, and would arrive away from the request it belongs to.
func (n *Notifier) Decided(ctx context.Context, ap approvals.Approval) error {
	text := n.describe(ap) + "\n\nOutcome: " + approvals.OutcomeLine(ap)
	var ref router.TelegramRef
	if n.Edits != nil && len(ap.Notice) > 0 && json.Unmarshal(ap.Notice, &ref) == nil && ref.MessageID != 0 {
		err := n.Edits.EditMessageText(ctx, ref.ChatID, ref.MessageID, text, nil)
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
	_, err := n.Router.Deliver(ctx, router.Notice{Kind: router.KindApproval, Text: text, Run: ap.Run})
	return err
}
