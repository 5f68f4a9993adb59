package actions

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// reply posts the run's final answer where the agent was woken (RC8),
// through the tool path so that it is audited like any other post; the
// router origin marks it as a system action.
func (a *Actions) Reply(ctx context.Context, job wake.Job, run sb.RunContext, text string) error {
	if chat := job.ReplyTo.TelegramChatID; chat != "" {
		return a.replyTelegram(ctx, job.AgentID, chat, text)
	}
	args := map[string]string{"room": job.ReplyTo.RoomID, "text": text}
	action := "send_message"
	if job.ReplyTo.ThreadID != "" {
		action, args["tmid"] = "reply", job.ReplyTo.ThreadID
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return err
	}
	env := a.Tools.Invoke(ctx, sb.ToolCall{AgentID: job.AgentID, Tool: "RocketChat", Action: action,
		Args: raw, Run: run, Origin: sb.OriginRouter})
	if env.Status != "ok" {
		// Temporary refusals (429, 5xx, no answer) are worth another try;
		// the worker retries those and hands the rest to the router.
		code := sb.EUNAVAILABLE
		switch s := env.HTTPStatus; {
		case s == http.StatusTooManyRequests:
			code = sb.ERATELIMITED
		case s >= 400 && s < 500:
			code = sb.EINVALID
		case env.Status == "pending_approval":
			code = sb.ECONFLICT
		}
		return sb.E("app.reply", code, env.Error)
	}
	return nil
}

// replyAsFile posts an answer too long for a few messages as a Markdown
// file (rooms.media + rooms.mediaConfirm) with caption as its message, and
// audits it like the RocketChat tool's send_file.
func (a *Actions) ReplyAsFile(ctx context.Context, job wake.Job, run sb.RunContext, text, caption string) error {
	rc, ok := a.RC[job.AgentID]
	if !ok {
		return sb.E("app.reply", sb.EINVALID, fmt.Sprintf("agent %q has no RocketChat block", job.AgentID))
	}
	name := "answer-" + run.RunID + ".md"
	if run.RunID == "" {
		name = "answer.md"
	}
	start := time.Now()
	text = a.Scrubber.String(text) // the client scrubs texts, not file contents
	_, err := rc.Client.UploadFile(ctx, job.ReplyTo.RoomID, name, "text/markdown", strings.NewReader(text), int64(len(text)), caption, job.ReplyTo.ThreadID)
	args, _ := json.Marshal(map[string]any{"room": job.ReplyTo.RoomID, "fileName": name, "tmid": job.ReplyTo.ThreadID, "bytes": len(text)})
	entry := sb.AuditEntry{ID: sb.NewID(start), At: start, Run: run, AgentID: job.AgentID, Tool: "RocketChat",
		Action: "send_file", Args: string(args), Decision: sb.DecisionAuto, Outcome: sb.OutcomeOK, Duration: time.Since(start)}
	if err != nil {
		entry.Outcome, entry.Error = sb.OutcomeError, a.Scrubber.String(sb.ErrorMessage(err))
	}
	if aerr := a.Store.Append(context.WithoutCancel(ctx), entry); aerr != nil {
		a.Log.ErrorContext(ctx, "audit entry of a reply file not written", "agent", job.AgentID, "err", aerr)
	}
	return err
}

// replyByRouter hands an answer that Rocket.Chat would not take (after the
// client's retries) to the human through the router, with a link to the
// room, so that it is not lost.
func (a *Actions) ReplyByRouter(ctx context.Context, job wake.Job, text string) error {
	where := job.ReplyTo.RoomName
	if where == "" {
		where = job.ReplyTo.RoomID
	}
	if link := a.roomLink(job.AgentID, job.ReplyTo); link != "" {
		where += " (" + link + ")"
	}
	n := router.Notice{Kind: router.KindAgent, AgentID: job.AgentID,
		Text: fmt.Sprintf("This answer could not be posted in %s:\n\n%s", where, text)}
	_, err := a.Router.Deliver(ctx, n)
	return err
}

// roomLink is the web link to a room (and thread), or "" when the agent has
// no Rocket.Chat base URL.
func (a *Actions) roomLink(agentID string, to *wake.ReplyTo) string {
	c, ok := a.Config.Agent(agentID)
	if !ok || c.Tools.RocketChat == nil || c.Tools.RocketChat.BaseURL == "" {
		return ""
	}
	base := strings.TrimRight(c.Tools.RocketChat.BaseURL, "/")
	var link string
	switch rocketchat.RoomType(to.RoomType) {
	case rocketchat.Group:
		link = base + "/group/" + url.PathEscape(to.RoomName)
	case rocketchat.Direct:
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

// replyTelegram answers a message that came in over Telegram (CR3).
func (a *Actions) replyTelegram(ctx context.Context, agentID, chatID, text string) error {
	if a.Telegram == nil {
		return sb.E("app.reply", sb.EINVALID, "instance.telegram.botToken is not set")
	}
	_, err := a.Telegram.SendLong(ctx, telegram.Message{ChatID: chatID, Text: a.AgentName(agentID) + ": " + text, DisableWebPagePreview: true})
	return err
}
