// Package tginbound takes Telegram updates in — from the webhook (POST
// /hooks/telegram, served by shared/httpapi; the secret header checked in
// constant time)
// or from the slow getUpdates poll when no webhook is set: button
// presses decide approvals, and messages from allowed chats wake an
// agent whose answer goes back to that chat, so people reach their agents
// while Rocket.Chat is down.
package tginbound

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/switchboard-dev/switchboard/shared/platform/tgtoken"
	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/control"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// Decider decides the approval a button press names (the approvals
// service, with the configured approvers) and returns the short text the
// press is answered with.
type Decider interface {
	Decide(ctx context.Context, data, fromUserID string) (string, error)
}

// CallbackAnswerer answers a button press (the Telegram client).
type CallbackAnswerer interface {
	AnswerCallbackQuery(ctx context.Context, callbackID, text string, showAlert bool) error
}

// Inbound handles updates.
type Inbound struct {
	Secret       string   // instance.telegram.webhookSecret
	AllowedChats []string // instance.telegram.allowedChatIds
	Agents       []string // agent ids; the first is the default addressee
	// Decider decides a button press; nil when approvals are not set up
	// (a press is answered so).
	Decider Decider
	// Answers answers a button press; nil without a bot (a press goes
	// unanswered).
	Answers  CallbackAnswerer
	Dispatch sb.WakeDispatcher
	Claims   wake.Claims
	// Control pauses and resumes agents and stops chains for the
	// /pause, /resume and /stop commands of an approver (Approvers: the
	// Telegram user ids of instance.approvals.approverTelegramIds); nil:
	// the commands are answered so. Replies answers the commands in their
	// chat (nil: they go unanswered).
	Control   Controller
	Approvers []string
	Replies   sb.TelegramSender
	Log       *slog.Logger
	Now       func() time.Time
}

// Controller is the operator's switches (control.Control).
type Controller interface {
	Pause(ctx context.Context, agentID, by string) error
	Resume(ctx context.Context, agentID, by string) (int, error)
	Stop(ctx context.Context, rootRunID, by string) (control.StopReport, error)
}

// Authorized reports whether secret, the X-Telegram-Bot-Api-Secret-Token
// of a delivery, is the configured webhook secret (constant time; with no
// secret configured nothing is: fail closed).
func (in *Inbound) Authorized(secret string) bool {
	return tgtoken.SecretMatches(secret, in.Secret)
}

// Handle processes one update once (a claim per update id).
func (in *Inbound) Handle(ctx context.Context, u sb.TelegramUpdate) error {
	key := "tg#update#" + strconv.FormatInt(u.ID, 10)
	first, err := in.Claims.Claim(ctx, key, in.now().Add(7*24*time.Hour))
	if err != nil || !first {
		return err
	}
	err = in.handle(ctx, u)
	if err != nil && sb.ErrorCode(err) == sb.EUNAVAILABLE {
		_ = in.Claims.Unclaim(context.WithoutCancel(ctx), key) // let the redelivery through
		return err
	}
	if err != nil {
		in.Log.WarnContext(ctx, "telegram update not handled", "update", u.ID, "err", err)
	}
	return nil
}

func (in *Inbound) handle(ctx context.Context, u sb.TelegramUpdate) error {
	switch {
	case u.CallbackQuery != nil:
		cb := u.CallbackQuery
		text := "approvals are not set up here"
		if in.Decider != nil {
			var err error
			if text, err = in.Decider.Decide(ctx, cb.Data, strconv.FormatInt(cb.From.ID, 10)); err != nil {
				text = sb.ErrorMessage(err)
			}
		}
		if in.Answers == nil {
			return nil
		}
		if aerr := in.Answers.AnswerCallbackQuery(ctx, cb.ID, shorten(text, sb.TelegramMaxAnswerLength), false); aerr != nil {
			in.Log.WarnContext(ctx, "answerCallbackQuery failed", "err", aerr)
		}
		return nil
	case u.Message != nil && u.Message.Text != "":
		return in.message(ctx, u.Message)
	}
	return nil // other kinds: confirmed and dropped
}

// message wakes an agent. "/hermes text" or "@hermes text" picks the agent;
// otherwise the first agent answers.
func (in *Inbound) message(ctx context.Context, m *sb.TelegramMessage) error {
	chat := strconv.FormatInt(m.Chat.ID, 10)
	if !contains(in.AllowedChats, chat) {
		in.Log.InfoContext(ctx, "telegram message from a chat that is not allowed; ignored", "chat", chat)
		return nil
	}
	if len(in.Agents) == 0 {
		return errors.New("no agents configured")
	}
	agent, text := in.Agents[0], strings.TrimSpace(m.Text)
	head, rest := text, ""
	if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
		head, rest = text[:i], text[i:]
	}
	if cmd, _, _ := strings.Cut(strings.ToLower(head), "@"); cmd == "/pause" || cmd == "/resume" || cmd == "/stop" {
		return in.command(ctx, m, chat, cmd, strings.TrimSpace(rest))
	}
	if len(head) > 1 && (head[0] == '/' || head[0] == '@') {
		name := strings.ToLower(strings.TrimSuffix(head[1:], "@"))
		name, _, _ = strings.Cut(name, "@") // /hermes@MyBot
		if contains(in.Agents, name) {
			agent, text = name, strings.TrimSpace(rest)
		}
	}
	who := m.From.Username
	if who == "" {
		who = m.From.FirstName
	}
	framed := untrusted.Frame("telegram:"+who, fmt.Sprintf("[%s] %s: %s", m.Date.UTC().Format("15:04"), who, text))
	job := sb.WakeJob{AgentID: agent, Source: "telegram",
		Text:    "New Telegram message for you (chat " + chat + "). Your final answer is sent back there automatically.\n" + framed,
		ReplyTo: &wake.ReplyTo{TelegramChatID: chat}}
	return in.Dispatch.Dispatch(ctx, job)
}

// command runs an operator's /pause <agent>, /resume <agent> or
// /stop <root run id> from an approver, and answers in the chat what it
// did; anyone else is refused.
func (in *Inbound) command(ctx context.Context, m *sb.TelegramMessage, chat, cmd, arg string) error {
	user := strconv.FormatInt(m.From.ID, 10)
	arg, _, _ = strings.Cut(arg, " ")
	var answer string
	switch {
	case !contains(in.Approvers, user):
		in.Log.WarnContext(ctx, "telegram command refused: not an approver", "command", cmd, "user", user, "chat", chat)
		answer = cmd + " is for approvers only (instance.approvals.approverTelegramIds); nothing was changed."
	case in.Control == nil:
		answer = "Pausing and stopping are not set up here; nothing was changed."
	case arg == "" && cmd == "/stop":
		answer = "Say which chain: /stop <root run id> (the console's chain page and the chain's notices show it)."
	case arg == "":
		answer = fmt.Sprintf("Say which agent: %s <agent id>, one of %s.", cmd, strings.Join(in.Agents, ", "))
	case cmd != "/stop" && !contains(in.Agents, strings.ToLower(arg)):
		answer = fmt.Sprintf("There is no agent %q; use one of %s.", shorten(arg, 64), strings.Join(in.Agents, ", "))
	default:
		var err error
		if answer, err = in.control(ctx, cmd, arg, "telegram:"+user); err != nil {
			if sb.ErrorCode(err) == sb.EUNAVAILABLE {
				return err // the redelivery tries again
			}
			answer = sb.ErrorMessage(err)
		}
	}
	if in.Replies == nil {
		return nil
	}
	if _, err := in.Replies.SendLongWait(ctx, sb.TelegramText{ChatID: chat, Text: answer, ReplyToMessageID: m.ID}, sb.TelegramWait{}); err != nil {
		in.Log.WarnContext(ctx, "telegram command answer not sent", "command", cmd, "err", err)
	}
	return nil
}

// control does what an approver's command says and says what was done.
func (in *Inbound) control(ctx context.Context, cmd, arg, by string) (string, error) {
	switch cmd {
	case "/pause":
		agent := strings.ToLower(arg)
		if err := in.Control.Pause(ctx, agent, by); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s is paused: it starts no new runs, and its wakes wait until /resume %s.", agent, agent), nil
	case "/resume":
		agent := strings.ToLower(arg)
		n, err := in.Control.Resume(ctx, agent, by)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s is resumed; %d waiting wakes were queued.", agent, n), nil
	default:
		rep, err := in.Control.Stop(ctx, arg, by)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Chain %s is stopped: its runs end before their next model step, its queued wakes are dropped, "+
			"%d pipeline executions were stopped.", rep.RootRunID, rep.Executions), nil
	}
}

// Poller is the telegram-poll job: a slow getUpdates poll for when no
// webhook is set. The offset lives in the store.
type Poller struct {
	Client sb.TelegramUpdates
	KV     sb.KV
	In     *Inbound
}

// Tick fetches pending updates once (no long poll) and handles them.
func (p *Poller) Tick(ctx context.Context) (string, error) {
	const key = "telegram#offset"
	raw, found, err := p.KV.Get(ctx, key)
	if err != nil {
		return "", err
	}
	var offset int64
	if found {
		offset, _ = strconv.ParseInt(raw, 10, 64)
	}
	updates, err := p.Client.GetUpdates(ctx, offset, 0, []string{sb.TelegramKindMessage, sb.TelegramKindCallbackQuery})
	if sb.ErrorCode(err) == sb.ECONFLICT && strings.Contains(sb.ErrorMessage(err), "webhook") {
		return "a webhook is set; updates arrive there", nil
	}
	if err != nil {
		return "", err
	}
	handled := 0
	var stopped error
	for _, u := range updates {
		if err := p.In.Handle(ctx, u); err != nil {
			stopped = fmt.Errorf("update %d: %w", u.ID, err) // keep the offset here; the next tick resumes
			break
		}
		offset, handled = u.ID+1, handled+1
	}
	if handled > 0 {
		old := ""
		if found {
			old = raw
		}
		if err := p.KV.PutIf(ctx, key, old, strconv.FormatInt(offset, 10), time.Time{}); err != nil && sb.ErrorCode(err) != sb.ECONFLICT {
			return "", err
		}
	}
	return fmt.Sprintf("%d updates handled", handled), stopped
}

func (in *Inbound) now() time.Time {
	if in.Now != nil {
		return in.Now()
	}
	return time.Now()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
