package wake

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// ToolInvoker runs a tool call through the executor (schema, policy,
// tool, audit); it never fails, the envelope says how it went.
type ToolInvoker interface {
	Invoke(ctx context.Context, call sb.ToolCall) sb.Envelope
}

// FileUploader posts a file into a Rocket.Chat room (rooms.media +
// rooms.mediaConfirm), with description as its message.
type FileUploader interface {
	UploadFile(ctx context.Context, rid, name, contentType string, r io.Reader, size int64, description, tmid string) (sb.ChatMessage, error)
}

// Replier is the automatic reply path: it posts a run's answer where the
// agent was woken. Its methods are the Worker's Reply, Attach and Fallback.
type Replier struct {
	// Tools posts into Rocket.Chat through the RocketChat tool, so that an
	// answer is audited like any other post.
	Tools ToolInvoker
	// Files is the agent's Rocket.Chat client for answers posted as a file.
	Files func(agentID string) (FileUploader, bool)
	// BaseURL is the agent's Rocket.Chat web address ("" when unknown), for
	// the link in a fallback notice.
	BaseURL func(agentID string) string
	// Telegram answers a message that came in over Telegram; nil when no
	// bot is configured.
	Telegram func(ctx context.Context, agentID, chatID, text string) error
	// Notify hands an answer that could not be posted to the human.
	Notify func(ctx context.Context, agentID, text string) error
	Audit  sb.AuditStore
	Scrub  func(string) string
	Log    *slog.Logger
}

// Reply posts the run's final answer where the agent was woken, through
// the tool path; the router origin marks it as a system action. Temporary
// refusals (429, 5xx, no answer) come back as ERATELIMITED or EUNAVAILABLE,
// which the worker retries; the rest are final and go to Fallback.
func (r *Replier) Reply(ctx context.Context, job Job, run sb.RunContext, text string) error {
	const op = "wake.reply"
	if job.ReplyTo == nil {
		return sb.E(op, sb.EINVALID, "the wake job names no place to answer (replyTo)")
	}
	if chat := job.ReplyTo.TelegramChatID; chat != "" {
		if r.Telegram == nil {
			return sb.E(op, sb.EINVALID, "instance.telegram.botToken is not set")
		}
		return r.Telegram(ctx, job.AgentID, chat, text)
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
	env := r.Tools.Invoke(ctx, sb.ToolCall{AgentID: job.AgentID, Tool: "RocketChat", Action: action,
		Args: raw, Run: run, Origin: sb.OriginRouter})
	if env.Status == "ok" {
		return nil
	}
	code := sb.EUNAVAILABLE
	switch s := env.HTTPStatus; {
	case s == http.StatusTooManyRequests:
		code = sb.ERATELIMITED
	case s >= 400 && s < 500:
		code = sb.EINVALID
	case env.Status == "pending_approval":
		code = sb.ECONFLICT
	}
	return sb.E(op, code, env.Error)
}

// Attach posts an answer too long for a few messages as a Markdown file
// with caption as its message, and audits it like the RocketChat tool's
// send_file.
func (r *Replier) Attach(ctx context.Context, job Job, run sb.RunContext, text, caption string) error {
	files, ok := r.Files(job.AgentID)
	if !ok || job.ReplyTo == nil {
		return sb.E("wake.reply", sb.EINVALID, fmt.Sprintf("agent %q has no RocketChat block", job.AgentID))
	}
	name := "answer-" + run.RunID + ".md"
	if run.RunID == "" {
		name = "answer.md"
	}
	start := time.Now()
	text = r.Scrub(text) // the client scrubs texts, not file contents
	_, err := files.UploadFile(ctx, job.ReplyTo.RoomID, name, "text/markdown", strings.NewReader(text), int64(len(text)), caption, job.ReplyTo.ThreadID)
	args, _ := json.Marshal(map[string]any{"room": job.ReplyTo.RoomID, "fileName": name, "tmid": job.ReplyTo.ThreadID, "bytes": len(text)})
	entry := sb.AuditEntry{ID: sb.NewID(start), At: start, Run: run, AgentID: job.AgentID, Tool: "RocketChat",
		Action: "send_file", Args: string(args), Decision: sb.DecisionAuto, Outcome: sb.OutcomeOK, Duration: time.Since(start)}
	if err != nil {
		entry.Outcome, entry.Error = sb.OutcomeError, r.Scrub(sb.ErrorMessage(err))
	}
	if aerr := r.Audit.Append(context.WithoutCancel(ctx), entry); aerr != nil {
		r.Log.ErrorContext(ctx, "audit entry of a reply file not written", "agent", job.AgentID, "err", aerr)
	}
	return err
}

// Fallback hands an answer that Rocket.Chat would not take (after the
// client's retries) to the human, with a link to the room, so that it is
// not lost.
func (r *Replier) Fallback(ctx context.Context, job Job, text string) error {
	var where string
	if to := job.ReplyTo; to != nil {
		where = to.RoomName
		if where == "" {
			where = to.RoomID
		}
		if link := RoomLink(r.BaseURL(job.AgentID), to); link != "" {
			where += " (" + link + ")"
		}
	}
	return r.Notify(ctx, job.AgentID, fmt.Sprintf("This answer could not be posted in %s:\n\n%s", where, text))
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
