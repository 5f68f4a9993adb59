package wake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Account is what the wake needs of one agent's Rocket.Chat account: the
// client that reads as the agent, its wake rules and hourly limit, and its
// web address for links ("" when unknown).
type Account struct {
	Messages sb.ChatMessageSource
	Rules    Rules
	MaxWakes int
	BaseURL  string
}

// Accounts are the agents' Rocket.Chat accounts by agent id.
type Accounts map[string]Account

// AccountPreparer prepares a webhook job with the woken agent's own
// account (Preparer.Prepare).
type AccountPreparer struct {
	Preparer *Preparer
	Accounts Accounts
}

// PrepareJob implements JobPreparer. ENOTFOUND when the agent has no
// account.
func (p AccountPreparer) PrepareJob(ctx context.Context, job sb.WakeJob) (sb.WakeJob, bool, error) {
	a, ok := p.Accounts[job.AgentID]
	if !ok {
		return job, false, sb.E("app.prepare", sb.ENOTFOUND, fmt.Sprintf("agent %q has no RocketChat block", job.AgentID))
	}
	return p.Preparer.Prepare(ctx, job, a.Messages, a.Rules, a.MaxWakes)
}

// AgentNames names an agent for people.
type AgentNames interface {
	AgentName(agentID string) string
}

// HumanNotifier hands an agent's text to the human by another channel
// (the router).
type HumanNotifier interface {
	NotifyHuman(ctx context.Context, agentID, text string) error
}

// Replier is the automatic reply path: it posts a run's answer where the
// agent was woken. It is the Worker's Replies, Files and Fallback.
type Replier struct {
	// Chat posts into Rocket.Chat through the RocketChat tool's typed
	// service, so that an answer is audited like any other post.
	Chat     sb.ChatTool
	Accounts Accounts
	// Telegram answers a message that came in over Telegram as the bot
	// (one bot speaks for every agent), the text headed by the agent's
	// name and without link previews; nil when no bot is configured.
	Telegram sb.TelegramSender
	Names    AgentNames
	Human    HumanNotifier
	Scrubber Scrubber
	Log      *slog.Logger
}

var (
	_ ReplyPoster      = (*Replier)(nil)
	_ FilePoster       = (*Replier)(nil)
	_ FallbackNotifier = (*Replier)(nil)
)

// Reply posts the run's final answer where the agent was woken, through
// the tool path; the router origin marks it as a system action. Temporary
// refusals (429, 5xx, no answer) come back as ERATELIMITED or EUNAVAILABLE,
// which the worker retries; the rest are final and go to Fallback.
func (r *Replier) Reply(ctx context.Context, job sb.WakeJob, run sb.RunContext, text string) error {
	const op = "wake.reply"
	if job.ReplyTo == nil {
		return sb.E(op, sb.EINVALID, "the wake job names no place to answer (replyTo)")
	}
	if chat := job.ReplyTo.TelegramChatID; chat != "" {
		if r.Telegram == nil {
			return sb.E(op, sb.EINVALID, "instance.telegram.botToken is not set")
		}
		_, err := r.Telegram.SendLongWait(ctx, sb.TelegramText{ChatID: chat, Text: r.Names.AgentName(job.AgentID) + ": " + text,
			DisableWebPagePreview: true}, sb.TelegramWait{})
		return err
	}
	post := sb.ChatPostArgs{Room: job.ReplyTo.RoomID, Text: text, Tmid: job.ReplyTo.ThreadID}
	by := sb.ToolCall{AgentID: job.AgentID, Run: run, Origin: sb.OriginRouter}
	var err error
	if post.Tmid != "" {
		_, err = r.Chat.Reply(ctx, by, post)
	} else {
		_, err = r.Chat.SendMessage(ctx, by, post)
	}
	return classified(op, err)
}

// classified sorts a post's error for the worker: temporary refusals (429,
// 5xx, no answer) are ERATELIMITED or EUNAVAILABLE, which it retries; a
// 4xx, a deny and a refused argument are EINVALID and a call staged for
// approval ECONFLICT, all final.
func classified(op string, err error) error {
	if err == nil {
		return nil
	}
	code, msg := sb.EUNAVAILABLE, sb.ErrorMessage(err)
	var pending *sb.PendingApproval
	switch s := sb.HTTPStatus(err); {
	case s == http.StatusTooManyRequests || sb.ErrorCode(err) == sb.ERATELIMITED:
		code = sb.ERATELIMITED
	case s >= 400 && s < 500:
		code = sb.EINVALID
	case sb.ErrorCode(err) == sb.EFORBIDDEN || sb.ErrorCode(err) == sb.EINVALID:
		// The staging policy's deny, a refused argument: trying again
		// changes nothing.
		code = sb.EINVALID
	case errors.As(err, &pending):
		code, msg = sb.ECONFLICT, pending.Message
	}
	return sb.Wrap(op, code, msg, err)
}

// Attach posts an answer too long for a few messages as a Markdown file
// with caption as its message, through the RocketChat tool's typed
// send_file (kept in the agent's workspace, staged and audited like the
// model's call; the router origin lets an approval rule pass, never a
// deny). Errors are classified like Reply's.
func (r *Replier) Attach(ctx context.Context, job sb.WakeJob, run sb.RunContext, text, caption string) error {
	if job.ReplyTo == nil {
		return sb.E("wake.reply", sb.EINVALID, "the wake job names no place to answer (replyTo)")
	}
	name := "answer-" + run.RunID + ".md"
	if run.RunID == "" {
		name = "answer.md"
	}
	text = r.Scrubber.String(text) // the client scrubs texts, not file contents
	by := sb.ToolCall{AgentID: job.AgentID, Run: run, Origin: sb.OriginRouter}
	_, err := r.Chat.AttachText(ctx, by, sb.ChatTextFile{Room: job.ReplyTo.RoomID, Tmid: job.ReplyTo.ThreadID,
		FileName: name, Text: text, Description: caption})
	return classified("wake.reply", err)
}

// Fallback hands an answer that Rocket.Chat would not take (after the
// client's retries) to the human, with a link to the room, so that it is
// not lost.
func (r *Replier) Fallback(ctx context.Context, job sb.WakeJob, text string) error {
	var where string
	if to := job.ReplyTo; to != nil {
		where = to.RoomName
		if where == "" {
			where = to.RoomID
		}
		if link := RoomLink(r.Accounts[job.AgentID].BaseURL, to); link != "" {
			where += " (" + link + ")"
		}
	}
	return r.Human.NotifyHuman(ctx, job.AgentID, fmt.Sprintf("This answer could not be posted in %s:\n\n%s", where, text))
}

// RoomLink is the web link to a room (and thread) on the Rocket.Chat at
// base, or "" without a base.
func RoomLink(base string, to *ReplyTo) string {
	if base == "" || to == nil {
		return ""
	}
	base = strings.TrimRight(base, "/")
	var link string
	switch sb.RoomType(to.RoomType) {
	case sb.RoomGroup:
		link = base + "/group/" + url.PathEscape(to.RoomName)
	case sb.RoomDirect:
		link = base + "/direct/" + url.PathEscape(to.RoomID)
	default:
		name := to.RoomName
		if name == "" {
			name = to.RoomID
		}
		link = base + "/channel/" + url.PathEscape(name)
	}
	if to.ThreadID != "" {
		link += "?msg=" + url.QueryEscape(to.ThreadID)
	}
	return link
}
