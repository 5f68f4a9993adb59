package rctool

import (
	"context"
	"encoding/json"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
)

// Runner is the executor's typed path (shared/tools Executor.Run): the
// gate, staging, approvals and the audit entry of call, around do.
type Runner interface {
	Run(ctx context.Context, call sb.ToolCall, do func(ctx context.Context) error) error
}

// Service is the tool as switchboard.ChatTool: the same posts the model
// makes, answering Go values instead of envelopes. Each call is audited and
// staged by the Runner like the model's call of the action.
type Service struct {
	t *Tool
	x Runner
}

var _ sb.ChatTool = (*Service)(nil)

// Service returns the tool's typed service, run through x.
func (t *Tool) Service(x Runner) *Service { return &Service{t: t, x: x} }

// SendMessage posts a message (RocketChat.send_message).
func (s *Service) SendMessage(ctx context.Context, by sb.ToolCall, a sb.ChatPostArgs) (sb.ChatPosted, error) {
	return s.post(ctx, by, "send_message", a, (*invocation).doSendMessage)
}

// Reply posts into a thread (RocketChat.reply).
func (s *Service) Reply(ctx context.Context, by sb.ToolCall, a sb.ChatPostArgs) (sb.ChatPosted, error) {
	return s.post(ctx, by, "reply", a, (*invocation).doReply)
}

// post runs action with a (marshalled as the model would send it) for by
// through the Runner.
func (s *Service) post(ctx context.Context, by sb.ToolCall, action string, a sb.ChatPostArgs, do func(*invocation) (*post, error)) (sb.ChatPosted, error) {
	raw, err := json.Marshal(a)
	if err != nil {
		return sb.ChatPosted{}, sb.Wrap("rctool."+action, sb.EINTERNAL, "the arguments could not be encoded", err)
	}
	call := by
	call.Tool, call.Action, call.Args = ToolName, action, raw
	var out sb.ChatPosted
	err = s.x.Run(ctx, call, func(ctx context.Context) error {
		agent, ok := s.t.clients(call.AgentID)
		if !ok || agent.Client == nil {
			return toolargs.NotConfigured("rctool", call.AgentID, "RocketChat")
		}
		p, err := do(&invocation{t: s.t, ctx: ctx, call: call, agent: agent, op: "rctool." + action})
		if err != nil {
			return withWait(err)
		}
		out = sb.ChatPosted{MessageID: p.sent.ID, RoomID: p.roomID()}
		return nil
	})
	return out, err
}
