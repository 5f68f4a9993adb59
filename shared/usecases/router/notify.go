package router

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// MaxNotifyChars bounds what an agent may send in one notice.
const MaxNotifyChars = 4000

// Tool is notify_user: an agent says what the human should know and
// the router picks the channel. The agent never chooses the channel.
type Tool struct{ r *Router }

// NewTool wraps r as the notify_user tool.
func NewTool(r *Router) *Tool { return &Tool{r: r} }

var _ sb.Tool = (*Tool)(nil)

// Spec implements switchboard.Tool.
func (t *Tool) Spec() sb.ToolSpec {
	return sb.ToolSpec{
		Name: "notify_user",
		Description: "Tell the human something important, wherever they are reachable right now " +
			"(Rocket.Chat, or Telegram when Rocket.Chat is down). You do not choose the channel.",
		Actions: []sb.ActionSpec{{
			Name:        "send",
			Description: "Deliver one message to the human. Answers the channel that delivered it.",
			Parameters: map[string]any{
				"type":                 "object",
				"additionalProperties": false,
				"required":             []string{"message"},
				"properties": map[string]any{
					"message": map[string]any{"type": "string", "minLength": 1, "maxLength": MaxNotifyChars,
						"description": "what the human should know, in plain words"},
				},
			},
		}},
	}
}

// Invoke implements switchboard.Tool.
func (t *Tool) Invoke(ctx context.Context, call sb.ToolCall) sb.Envelope {
	var args struct {
		Message string `json:"message"`
	}
	dec := json.NewDecoder(bytes.NewReader(call.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil || strings.TrimSpace(args.Message) == "" {
		return sb.Fail(`notify_user needs {"message": "…"} with the text for the human`)
	}
	kind := KindAgent
	d, err := t.r.Deliver(ctx, Notice{Kind: kind, AgentID: call.AgentID, Text: args.Message, Run: call.Run})
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
