package router_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// The router as the app builds it: Rocket.Chat first, Telegram next,
// both real clients against their fakes, audit in memstore.
func newE2E(t *testing.T) (*rcWorld, *tgWorld, *memstore.Store, *router.Router) {
	t.Helper()
	rc, tg := newRCWorld(t), newTGWorld(t)
	store := memstore.New()
	r := router.New([]router.Channel{
		&router.RocketChatChannel{Human: "richard", Clients: rc.lookup, Default: "hermes"},
		&router.TelegramChannel{Client: tg.c, ChatID: fmt.Sprint(humanChat), Names: agentNames, Sleep: tg.clock.Sleep},
	}, store, discard())
	return rc, tg, store, r
}

func TestEndToEndRocketChatDownTelegramDelivers(t *testing.T) {
	rc, tg, store, r := newE2E(t)
	rc.s.SetDown(true)
	run := sb.NewRun("hermes", nil, time.Now())

	env := router.NewTool(r).Invoke(testCtx(t), sb.ToolCall{AgentID: "hermes", Tool: "notify_user", Action: "send",
		Args: json.RawMessage(`{"message":"Q3 numbers are in /Reports/q3.xlsx"}`), Run: run})

	if env.Status != "ok" || env.Data["channel"] != "Telegram" || env.Data["primaryFailed"] != true ||
		env.Data["note"] != "the primary channel was unreachable; delivered via Telegram" {
		t.Errorf("envelope = %+v, want ok via Telegram with the note", env)
	}
	if got := tg.texts(); len(got) != 1 || got[0] != "Hermes: Q3 numbers are in /Reports/q3.xlsx" {
		t.Errorf("Telegram chat = %q, want the agent's message once", got)
	}
	if n := rc.s.Calls("chat.postMessage"); n != 1 {
		t.Errorf("%d chat.postMessage calls, want 1", n)
	}

	entries := auditEntries(t, store, run.RootRunID)
	if len(entries) != 1 {
		t.Fatalf("%d audit entries, want 1", len(entries))
	}
	a := decodeArgs(t, entries[0].Args)
	if a.Channel != "Telegram" || !a.PrimaryFailed || len(a.Failures) != 1 || !strings.HasPrefix(a.Failures[0], "RocketChat: ") ||
		entries[0].Outcome != sb.OutcomeOK || entries[0].AgentID != "hermes" {
		t.Errorf("audit = %+v (args %+v), want Telegram, primary failed, one RocketChat failure, ok", entries[0], a)
	}

	// Rocket.Chat is back: the next message goes there again, not to Telegram.
	rc.s.SetDown(false)
	d, err := r.Deliver(testCtx(t), router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "second", Run: run})
	if err != nil || d.Channel != "RocketChat" || d.PrimaryFailed {
		t.Errorf("after recovery Deliver = %+v, %v; want RocketChat", d, err)
	}
	if got := rc.dm("agent-hermes"); len(got) != 1 || got[0].Text != "second" {
		t.Errorf("Rocket.Chat DM = %+v, want the second message only", got)
	}
	if got := tg.texts(); len(got) != 1 {
		t.Errorf("Telegram has %d messages, want still 1", len(got))
	}
}

func TestEndToEndBothDown(t *testing.T) {
	rc, tg, store, r := newE2E(t)
	rc.s.SetDown(true)
	tg.s.SetDown(true)
	run := sb.NewRun("hermes", nil, time.Now())
	d, err := r.Deliver(testCtx(t), router.Notice{Kind: router.KindBudget, Text: "Hermes reached its daily budget", Run: run})
	if sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Fatalf("Deliver = %v, want EUNAVAILABLE", err)
	}
	if d.Channel != "" || !d.PrimaryFailed || len(d.Failures) != 2 ||
		!strings.HasPrefix(d.Failures[0], "RocketChat: ") || !strings.HasPrefix(d.Failures[1], "Telegram: ") {
		t.Errorf("delivery = %+v", d)
	}
	entries := auditEntries(t, store, run.RootRunID)
	if len(entries) != 1 || entries[0].Outcome != sb.OutcomeError || entries[0].AgentID != "system" {
		t.Errorf("audit = %+v, want one error entry by system", entries)
	}
}

// An approval request goes Telegram first (Prefer), with its buttons on
// Telegram and its Telegram message as Delivery.Ref; when Telegram cannot
// take it, Rocket.Chat gets the same text without buttons and there is no
// Ref. The audit names the channel that delivered.
func TestEndToEndPreferTelegramWithButtons(t *testing.T) {
	kb := &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{{
		telegram.CallbackButton("Approve", "a:x"), telegram.CallbackButton("Deny", "d:x")}}}
	tests := []struct {
		name        string
		telegramUp  bool
		wantChannel string
	}{
		{"Telegram takes it", true, "Telegram"},
		{"Telegram down: Rocket.Chat", false, "RocketChat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, tg, store, r := newE2E(t)
			tg.s.SetDown(!tt.telegramUp)
			tgCh := &router.TelegramChannel{Client: tg.c, ChatID: fmt.Sprint(humanChat), Names: agentNames, Sleep: tg.clock.Sleep}
			pr := r.Prefer(tgCh)
			if got := fmt.Sprint(pr.Channels()); got != "[Telegram RocketChat]" {
				t.Fatalf("Prefer(Telegram).Channels() = %s", got)
			}
			if got := fmt.Sprint(r.Channels()); got != "[RocketChat Telegram]" {
				t.Errorf("Prefer changed the router it was called on: %s", got)
			}
			run := sb.NewRun("hermes", nil, time.Now())
			text := longText(450) + "\nApprove: https://x.example/approvals/1?decision=approve"
			d, err := pr.Deliver(testCtx(t), router.Notice{Kind: router.KindApproval, Text: text, Buttons: kb, Run: run})
			if err != nil || d.Channel != tt.wantChannel {
				t.Fatalf("Deliver = %+v, %v; want %s", d, err, tt.wantChannel)
			}
			msgs := tg.s.Messages(humanChat)
			if tt.telegramUp {
				if len(msgs) != 2 || msgs[0].ReplyMarkup != nil || msgs[1].ReplyMarkup == nil {
					t.Fatalf("Telegram got %d messages, want 2 with the buttons on the last only", len(msgs))
				}
				var ref router.TelegramRef
				if err := json.Unmarshal(d.Ref, &ref); err != nil || ref.ChatID != fmt.Sprint(humanChat) || ref.MessageID != msgs[1].MessageID {
					t.Errorf("Ref = %s, want the last part %d", d.Ref, msgs[1].MessageID)
				}
				if n := len(rc.dm("agent-hermes")); n != 0 {
					t.Errorf("Rocket.Chat got %d messages, want none", n)
				}
			} else {
				got := rc.dm("agent-hermes")
				if len(got) != 1 || !strings.Contains(got[0].Text, "Approve: https://x.example/approvals/1?decision=approve") {
					t.Errorf("Rocket.Chat DM = %+v, want the text with the link once", got)
				}
				if d.Ref != nil {
					t.Errorf("Ref = %s from Rocket.Chat, want nil", d.Ref)
				}
			}
			entries := auditEntries(t, store, run.RootRunID)
			if len(entries) != 1 || decodeArgs(t, entries[0].Args).Channel != tt.wantChannel ||
				decodeArgs(t, entries[0].Args).Kind != router.KindApproval {
				t.Errorf("audit = %+v, want one approval_pending entry naming %s", entries, tt.wantChannel)
			}
		})
	}
}
