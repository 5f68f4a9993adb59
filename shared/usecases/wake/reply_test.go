package wake_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/wake"
)

// invoker is the RocketChat tool's typed service: it records the posts as
// tool calls with the arguments the service sends, and answers err.
type invoker struct {
	calls []sb.ToolCall
	err   error
}

var _ sb.ChatTool = (*invoker)(nil)

func (i *invoker) post(by sb.ToolCall, action string, a sb.ChatPostArgs) (sb.ChatPosted, error) {
	by.Tool, by.Action = "RocketChat", action
	by.Args, _ = json.Marshal(a)
	i.calls = append(i.calls, by)
	if i.err != nil {
		return sb.ChatPosted{}, i.err
	}
	return sb.ChatPosted{MessageID: "m-new", RoomID: a.Room}, nil
}

func (i *invoker) SendMessage(_ context.Context, by sb.ToolCall, a sb.ChatPostArgs) (sb.ChatPosted, error) {
	return i.post(by, "send_message", a)
}

func (i *invoker) Reply(_ context.Context, by sb.ToolCall, a sb.ChatPostArgs) (sb.ChatPosted, error) {
	return i.post(by, "reply", a)
}

func (i *invoker) AttachText(_ context.Context, by sb.ToolCall, a sb.ChatTextFile) (sb.ChatPosted, error) {
	by.Tool, by.Action = "RocketChat", "attach"
	by.Args, _ = json.Marshal(a)
	i.calls = append(i.calls, by)
	if i.err != nil {
		return sb.ChatPosted{}, i.err
	}
	return sb.ChatPosted{MessageID: "m-file", RoomID: a.Room}, nil
}

// rcAnswered is the status Rocket.Chat rcAnswered, as its adapter keeps it in
// the chain of the tool's error.
type rcAnswered int

func (a rcAnswered) Error() string          { return fmt.Sprintf("HTTP %d", int(a)) }
func (a rcAnswered) RemoteStatus() int      { return int(a) }
func (a rcAnswered) RemoteEndpoint() string { return "POST /api/v1/chat.postMessage" }
func (a rcAnswered) RemoteCode() int        { return 0 }

// rcErr is the tool's error for a post Rocket.Chat rcAnswered with status.
func rcErr(code string, status int, msg string) error {
	return sb.Wrap("rctool.send_message", code, msg, rcAnswered(status))
}

func newReplier(inv *invoker, told *[]string) *wake.Replier {
	return &wake.Replier{
		Chat:     inv,
		Accounts: wake.Accounts{"hermes": {BaseURL: "https://chat.example.org/"}},
		Names:    agentIDs{},
		Human: notifyFunc(func(_ context.Context, agentID, text string) error {
			*told = append(*told, agentID+": "+text)
			return nil
		}),
		Scrubber: replaceScrubber{"s3cret", "[redacted]"},
		Log:      slog.New(slog.DiscardHandler),
	}
}

func TestReplierReplyPostsThroughTheRocketChatTool(t *testing.T) {
	tests := []struct {
		name       string
		to         wake.ReplyTo
		err        error
		wantAction string
		wantTmid   string
		wantCode   string
	}{
		{name: "room", to: wake.ReplyTo{RoomID: "r1"}, wantAction: "send_message"},
		{name: "thread", to: wake.ReplyTo{RoomID: "r1", ThreadID: "m9"}, wantAction: "reply", wantTmid: "m9"},
		{name: "rate limited", to: wake.ReplyTo{RoomID: "r1"}, err: rcErr(sb.ERATELIMITED, 429, "slow down"), wantAction: "send_message", wantCode: sb.ERATELIMITED},
		{name: "refused", to: wake.ReplyTo{RoomID: "r1"}, err: rcErr(sb.EFORBIDDEN, 403, "not in room"), wantAction: "send_message", wantCode: sb.EINVALID},
		{name: "server error", to: wake.ReplyTo{RoomID: "r1"}, err: rcErr(sb.EUNAVAILABLE, 502, "bad gateway"), wantAction: "send_message", wantCode: sb.EUNAVAILABLE},
		{name: "unreachable", to: wake.ReplyTo{RoomID: "r1"}, err: sb.E("rctool.send_message", sb.EUNAVAILABLE, "no answer"), wantAction: "send_message", wantCode: sb.EUNAVAILABLE},
		{name: "staged", to: wake.ReplyTo{RoomID: "r1"}, err: &sb.PendingApproval{Message: "waits for a human"}, wantAction: "send_message", wantCode: sb.ECONFLICT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := &invoker{err: tt.err}
			var told []string
			r := newReplier(inv, &told)
			run := sb.NewRun("hermes", nil, time.Now())
			to := tt.to
			err := r.Reply(context.Background(), sb.WakeJob{AgentID: "hermes", ReplyTo: &to}, run, "the answer")
			if got := sb.ErrorCode(err); got != tt.wantCode {
				t.Fatalf("Reply = %v (code %q), want code %q", err, got, tt.wantCode)
			}
			if len(inv.calls) != 1 {
				t.Fatalf("tool calls = %d, want 1", len(inv.calls))
			}
			c := inv.calls[0]
			var args map[string]string
			_ = json.Unmarshal(c.Args, &args)
			if c.Tool != "RocketChat" || c.Action != tt.wantAction || c.Origin != sb.OriginRouter || c.Run.RunID != run.RunID ||
				args["room"] != "r1" || args["text"] != "the answer" || args["tmid"] != tt.wantTmid {
				t.Errorf("call = %+v args %v, want RocketChat.%s from the router in the run, tmid %q", c, args, tt.wantAction, tt.wantTmid)
			}
		})
	}
}

func TestReplierReplyGoesBackToTelegram(t *testing.T) {
	inv := &invoker{}
	var told []string
	r := newReplier(inv, &told)
	job := sb.WakeJob{AgentID: "hermes", ReplyTo: &wake.ReplyTo{TelegramChatID: "42"}}
	if err := r.Reply(context.Background(), job, sb.RunContext{}, "hi"); sb.ErrorCode(err) != sb.EINVALID {
		t.Errorf("Reply without a bot = %v, want EINVALID naming the missing bot token", err)
	}
	var sent []string
	r.Telegram = sendFunc(func(_ context.Context, m sb.TelegramText) error {
		sent = append(sent, fmt.Sprintf("%s: %s (previews off: %v)", m.ChatID, m.Text, m.DisableWebPagePreview))
		return nil
	})
	if err := r.Reply(context.Background(), job, sb.RunContext{}, "hi"); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 || sent[0] != "42: hermes: hi (previews off: true)" || len(inv.calls) != 0 {
		t.Errorf("sent %q, tool calls %d; want one Telegram message without link previews and no Rocket.Chat post", sent, len(inv.calls))
	}
}

// A long answer goes through the RocketChat tool's typed AttachText as
// the router: the scrubbed text as answer-<run>.md in the thread, with the
// caption; a refusal comes back classified like a post's.
func TestReplierAttachSendsTheScrubbedAnswerThroughTheTool(t *testing.T) {
	inv := &invoker{}
	var told []string
	r := newReplier(inv, &told)
	run := sb.NewRun("hermes", nil, time.Now())
	job := sb.WakeJob{AgentID: "hermes", ReplyTo: &wake.ReplyTo{RoomID: "r1", ThreadID: "m1"}}
	if err := r.Attach(context.Background(), job, run, "long s3cret answer", "first paragraph"); err != nil {
		t.Fatal(err)
	}
	want := `{"Room":"r1","Tmid":"m1","FileName":"answer-` + run.RunID + `.md","Text":"long [redacted] answer","Description":"first paragraph"}`
	if len(inv.calls) != 1 || string(inv.calls[0].Args) != want || inv.calls[0].Origin != sb.OriginRouter || inv.calls[0].Run.RunID != run.RunID {
		t.Errorf("tool calls %+v, want one attach %s by the router for the run", inv.calls, want)
	}
	inv.err = rcErr(sb.ERATELIMITED, 429, "slow down")
	if err := r.Attach(context.Background(), job, run, "again", "c"); sb.ErrorCode(err) != sb.ERATELIMITED {
		t.Errorf("Attach refused with 429 = %v, want rate_limited (retried)", err)
	}
	inv.err = rcErr(sb.EFORBIDDEN, 403, "not a member")
	if err := r.Attach(context.Background(), job, run, "again", "c"); sb.ErrorCode(err) != sb.EINVALID {
		t.Errorf("Attach refused with 403 = %v, want invalid (final)", err)
	}
	inv.err = sb.E("tools.RocketChat.send_file", sb.EFORBIDDEN, "RocketChat.send_file is not allowed here by the staging policy")
	if err := r.Attach(context.Background(), job, run, "again", "c"); sb.ErrorCode(err) != sb.EINVALID {
		t.Errorf("Attach denied by the policy = %v, want invalid (final, not retried)", err)
	}
}

func TestReplierFallbackLinksTheRoom(t *testing.T) {
	tests := []struct {
		to   wake.ReplyTo
		want string
	}{
		{wake.ReplyTo{RoomID: "r1", RoomName: "finanz-team", RoomType: "c"}, "finanz-team (https://chat.example.org/channel/finanz-team)"},
		{wake.ReplyTo{RoomID: "r2", RoomName: "vorstand", RoomType: "p", ThreadID: "m 1"}, "vorstand (https://chat.example.org/group/vorstand?msg=m+1)"},
		{wake.ReplyTo{RoomID: "dm1", RoomType: "d"}, "dm1 (https://chat.example.org/direct/dm1)"},
	}
	for _, tt := range tests {
		var told []string
		r := newReplier(&invoker{}, &told)
		to := tt.to
		if err := r.Fallback(context.Background(), sb.WakeJob{AgentID: "hermes", ReplyTo: &to}, "the answer"); err != nil {
			t.Fatal(err)
		}
		want := "hermes: This answer could not be posted in " + tt.want + ":\n\nthe answer"
		if len(told) != 1 || told[0] != want {
			t.Errorf("told %q, want %q", told, want)
		}
	}
}
