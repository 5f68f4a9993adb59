package router

import (
	"context"
	"fmt"
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

// MaxNotifyChars bounds what an agent may send in one notice.
const MaxNotifyChars = 4000

// Tool is notify_user: an agent says what the human should know and
// the router picks the channel. The agent never chooses the channel.
type Tool struct{ r *Router }

// NewTool wraps r as the notify_user tool.
func NewTool(r *Router) *Tool { return &Tool{r: r} }

var _ sb.Tool = (*Tool)(nil)

// sendArgs declares the arguments of send once: the schema offered to
// models comes from these tags and Invoke enforces the same limits.
type sendArgs struct {
	Message *string `json:"message" required:"true" schema:"minLength=1,maxLength=4000" doc:"what the human should know, in plain words"`
}

// Spec implements switchboard.Tool.
func (t *Tool) Spec() sb.ToolSpec {
	return sb.ToolSpec{
		Name: "notify_user",
		Description: "Tell the human something important, wherever they are reachable right now " +
			"(Rocket.Chat, or Telegram when Rocket.Chat is down). You do not choose the channel.",
		Actions: []sb.ActionSpec{{
			Name:        "send",
			Description: "Deliver one message to the human. Answers the channel that delivered it.",
			Parameters:  toolargs.Schema(sendArgs{}, toolargs.Vocab{}),
		}},
	}
}

// Invoke implements switchboard.Tool.
func (t *Tool) Invoke(ctx context.Context, call sb.ToolCall) sb.Envelope {
	const needs = `notify_user needs {"message": "…"} with the text for the human`
	var args sendArgs
	if err := (toolargs.Args{Op: "notify_user.send", Action: "send"}).Decode(call.Args, &args); err != nil {
		return sb.Fail(needs + "; " + sb.ErrorMessage(err))
	}
	if args.Message == nil || strings.TrimSpace(*args.Message) == "" {
		return sb.Fail(needs)
	}
	kind := KindAgent
	d, err := t.r.Deliver(ctx, Notice{Kind: kind, AgentID: call.AgentID, Text: *args.Message, Run: call.Run})
	if err != nil {
		env := sb.FailErr(err)
		env.Data["failures"] = d.Failures
		return env
	}
	data := map[string]any{"channel": d.Channel, "primaryFailed": d.PrimaryFailed}
	if d.PrimaryFailed {
		data["note"] = fmt.Sprintf("the primary channel was unreachable; delivered via %s", d.Channel)
	}
	return sb.OK(data)
}
