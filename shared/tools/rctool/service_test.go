package rctool_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/rctool"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
	"github.com/switchboard-dev/switchboard/shared/tools/workspace"
)

// typed is the tool's typed service behind a real executor, with its
// audit store.
func (e *env) typed(rules map[string]string) (*memstore.Store, sb.ChatTool) {
	e.t.Helper()
	policy, err := staging.New(rules)
	if err != nil {
		e.t.Fatal(err)
	}
	audit := memstore.New()
	x, err := tools.New(tools.Options{Tools: []sb.Tool{e.tool}, Policy: policy, Audit: audit, Scrub: scrub.New(nil),
		Log: slog.New(slog.DiscardHandler), Permits: func(agent, _ string) bool { return agent == agentID }})
	if err != nil {
		e.t.Fatal(err)
	}
	return audit, e.tool.Service(x)
}

var by = sb.ToolCall{AgentID: agentID, Origin: sb.OriginRouter, Run: sb.RunContext{RunID: "run-typed", RootRunID: "root-typed", AgentID: agentID}}

// The typed posts land in the room (the thread for a reply), answer the
// message id and leave the audit entry the model's call would.
func TestServicePostsAndAudits(t *testing.T) {
	e := newEnv(t)
	audit, chat := e.typed(nil)
	ctx := context.Background()
	first, err := chat.SendMessage(ctx, by, sb.ChatPostArgs{Text: "to the default room"})
	if err != nil {
		t.Fatal(err)
	}
	if first.MessageID == "" || first.RoomID != e.finanz {
		t.Errorf("send_message = %+v, want a message in #finanz-team (%s)", first, e.finanz)
	}
	in, err := chat.Reply(ctx, by, sb.ChatPostArgs{Room: e.finanz, Tmid: first.MessageID, Text: "in the thread"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := e.rc.Messages(e.finanz)
	if len(msgs) != 2 || msgs[1].ID != in.MessageID || msgs[1].ThreadID != first.MessageID || msgs[1].Text != "in the thread" {
		t.Errorf("room holds %+v, want the post and the reply in its thread", msgs)
	}
	entries, err := audit.ByRoot(ctx, "root-typed")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, en := range entries {
		got = append(got, en.Tool+"."+en.Action+"="+en.Outcome+" "+en.Args)
	}
	want := fmt.Sprint([]string{`RocketChat.send_message=ok {"text":"to the default room"}`,
		`RocketChat.reply=ok {"room":"` + e.finanz + `","text":"in the thread","tmid":"` + first.MessageID + `"}`})
	if fmt.Sprint(got) != want {
		t.Errorf("audit trail %v, want %s", got, want)
	}
}

// A rate limit comes back as ERATELIMITED with the request's status and a
// wait; the policy's refusals and the tool's own as the executor makes them.
func TestServiceErrors(t *testing.T) {
	e := newEnv(t)
	_, chat := e.typed(map[string]string{"RocketChat.send_message:other_room": "deny"})
	ctx := context.Background()
	e.rc.SetRateLimit(1, time.Minute)
	if _, err := chat.SendMessage(ctx, by, sb.ChatPostArgs{Text: "one"}); err != nil {
		t.Fatal(err)
	}
	_, err := chat.SendMessage(ctx, by, sb.ChatPostArgs{Text: "two"})
	var se *sb.Error
	if sb.ErrorCode(err) != sb.ERATELIMITED || sb.HTTPStatus(err) != 429 || !errors.As(err, &se) || se.RetryAfter <= 0 {
		t.Errorf("rate-limited post = %v (status %d), want rate_limited, 429 and a wait", err, sb.HTTPStatus(err))
	}
	e.rc.SetRateLimit(0, 0)
	e.configure(func(a *rctool.Agent) { a.AllowedRooms = []string{"finanz-team"} })
	if _, err := chat.SendMessage(ctx, by, sb.ChatPostArgs{Room: "general", Text: "elsewhere"}); sb.ErrorCode(err) != sb.EFORBIDDEN {
		t.Errorf("post to a room outside allowedRooms = %v, want forbidden by the policy", err)
	}
	if _, err := chat.Reply(ctx, by, sb.ChatPostArgs{Room: e.finanz, Text: "no thread"}); sb.ErrorCode(err) != sb.EINVALID {
		t.Errorf("reply without tmid = %v, want invalid", err)
	}
}

// AttachText keeps the text in the agent's workspace and sends it as
// send_file: the file lands in the thread with its description, the
// default approval rule lets the router's call pass, a deny rule does not,
// and the audit entry is the model's send_file.
func TestServiceAttachesATextAsAFile(t *testing.T) {
	e := newEnv(t)
	audit, chat := e.typed(nil)
	ctx := context.Background()
	first, err := chat.SendMessage(ctx, by, sb.ChatPostArgs{Text: "the question"})
	if err != nil {
		t.Fatal(err)
	}
	posted, err := chat.AttachText(ctx, by, sb.ChatTextFile{Room: e.finanz, Tmid: first.MessageID,
		FileName: "answer-run-typed.md", Text: "# a long answer\n", Description: "the first paragraph"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := e.rc.Messages(e.finanz)
	last := msgs[len(msgs)-1]
	if last.ID != posted.MessageID || last.ThreadID != first.MessageID || last.Text != "the first paragraph" || len(last.FileIDs) != 1 {
		t.Fatalf("room's last message %+v, want the file in the thread with its description", last)
	}
	if up, _ := e.rc.Upload(last.FileIDs[0]); up.Name != "answer-run-typed.md" || string(up.Content) != "# a long answer\n" {
		t.Errorf("upload %q %q, want the answer as answer-run-typed.md", up.Name, up.Content)
	}
	if kept := string(e.get(workspaceKey(t, "personal:answers/answer-run-typed.md"))); kept != "# a long answer\n" {
		t.Errorf("workspace keeps %q, want the answer", kept)
	}
	entries, _ := audit.ByRoot(ctx, "root-typed")
	if n := len(entries); n != 2 || entries[1].Action != "send_file" || entries[1].Outcome != sb.OutcomeOK || entries[1].Decision != sb.DecisionAuto {
		t.Errorf("audit %+v, want a send_file entry decided auto and ok", entries)
	}

	_, denied := e.typed(map[string]string{"RocketChat.send_file": "deny"})
	if _, err := denied.AttachText(ctx, by, sb.ChatTextFile{Room: e.finanz, FileName: "answer.md", Text: "x"}); sb.ErrorCode(err) != sb.EFORBIDDEN {
		t.Errorf("AttachText under a deny rule = %v, want forbidden", err)
	}
	if _, err := chat.AttachText(ctx, by, sb.ChatTextFile{Room: e.finanz, FileName: "../x.md", Text: "x"}); sb.ErrorCode(err) != sb.EINVALID {
		t.Errorf("AttachText with ../x.md = %v, want invalid", err)
	}
}

func workspaceKey(t *testing.T, ref string) string {
	t.Helper()
	key, err := workspace.Resolve(agentID, ref)
	if err != nil {
		t.Fatal(err)
	}
	return key
}
