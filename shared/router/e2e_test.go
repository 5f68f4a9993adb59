package router_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/memstore"
	"github.com/switchboard-dev/switchboard/shared/router"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// The router as the app builds it (CR1): Rocket.Chat first, Telegram next,
// both real clients against their fakes, audit in memstore.
func newE2E(t *testing.T) (*rcWorld, *tgWorld, *memstore.Store, *router.Router) {
	t.Helper()
	rc, tg := newRCWorld(t), newTGWorld(t)
	store := memstore.New()
	r := router.New([]router.Channel{
		&router.RocketChatChannel{Human: "richard", Clients: rc.lookup, Default: "hermes"},
		&router.TelegramChannel{Client: tg.c, ChatID: fmt.Sprint(humanChat), Names: agentNames, Sleep: tg.clock.sleep},
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
