package rctool

import (
	"context"
	"encoding/json"
	"strings"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/toolargs"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
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
	return run(ctx, s, by, "send_message", a, posted((*invocation).doSendMessage))
}

// Reply posts into a thread (RocketChat.reply).
func (s *Service) Reply(ctx context.Context, by sb.ToolCall, a sb.ChatPostArgs) (sb.ChatPosted, error) {
	return run(ctx, s, by, "reply", a, posted((*invocation).doReply))
}

// AttachText keeps a.Text in the agent's workspace as
// personal:answers/<FileName> and sends that file (RocketChat.send_file).
func (s *Service) AttachText(ctx context.Context, by sb.ToolCall, a sb.ChatTextFile) (sb.ChatPosted, error) {
	const op = "rctool.attach"
	ref := "personal:answers/" + a.FileName
	key, err := workspace.Resolve(by.AgentID, ref)
	if err != nil {
		return sb.ChatPosted{}, sb.Wrap(op, sb.EINVALID, "the answer's file name is not a workspace name", err)
	}
	if err := s.t.blobs.Put(ctx, key, strings.NewReader(a.Text), int64(len(a.Text)), "text/markdown"); err != nil {
		return sb.ChatPosted{}, sb.Wrap(op, sb.ErrorCode(err), "the answer could not be kept in the workspace", err)
	}
	args := sendFileCall{Room: a.Room, LocalPath: ref, Description: a.Description, Tmid: a.Tmid}
	return run(ctx, s, by, "send_file", args, func(c *invocation) (sb.ChatPosted, error) {
		f, err := c.doSendFile()
		if err != nil {
			return sb.ChatPosted{}, err
		}
		return sb.ChatPosted{MessageID: f.msg.ID, RoomID: f.roomID()}, nil
	})
}

// sendFileCall are send_file's arguments as the model sends them.
type sendFileCall struct {
	Room        string `json:"room"`
	LocalPath   string `json:"localPath"`
	Description string `json:"description,omitempty"`
	Tmid        string `json:"tmid,omitempty"`
}

// posted turns a post's result into the typed answer.
func posted(do func(*invocation) (*post, error)) func(*invocation) (sb.ChatPosted, error) {
	return func(c *invocation) (sb.ChatPosted, error) {
		p, err := do(c)
		if err != nil {
			return sb.ChatPosted{}, err
		}
		return sb.ChatPosted{MessageID: p.sent.ID, RoomID: p.roomID()}, nil
	}
}

// run runs action with args (marshalled as the model would send them) for
// by through the Runner.
func run[A any](ctx context.Context, s *Service, by sb.ToolCall, action string, args A, do func(*invocation) (sb.ChatPosted, error)) (sb.ChatPosted, error) {
	raw, err := json.Marshal(args)
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
		out = p
		return nil
	})
	return out, err
}
