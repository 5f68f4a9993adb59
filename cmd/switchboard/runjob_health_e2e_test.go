package main

// BUG (shared/app/notify.go:82): the rocketchat-health job builds its probe
// with rocketchat.New(base, "", "", a.http), but rocketchat.New refuses an
// empty userId/authToken (EINVALID "RocketChat.userId is empty", client.go:71).
// So whenever a Rocket.Chat server is configured, every run of
// rocketchat-health fails before asking /api/info: the health check never notices an
// outage. Fix: give the rocketchat package an identity-less probe (e.g.
// rocketchat.Info(ctx, baseURL, hc) or NewAnonymous for /api/info), or use an
// agent's client for the same base URL.
//
// Copy into cmd/switchboard/ to run (needs dynalite like the other run-job
// tests): go test -run TestRunJobRocketChatHealthEndToEnd ./cmd/switchboard

import (
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
)

// The health check end to end: the CLI runs the health job against a fake Rocket.Chat
// that is down; after three runs one notice reaches Telegram, then nothing,
// then one "back".
func TestRunJobRocketChatHealthEndToEnd(t *testing.T) {
	localEnv(t)
	rc := rcfake.New()
	t.Cleanup(rc.Close)
	tg := tgfake.New()
	t.Cleanup(tg.Close)
	const chat = int64(4242)
	tg.AddUser(tgfake.User{ID: chat, FirstName: "Richard"})
	cfg := writeConfig(t, fmt.Sprintf(`instance:
  name: healthtest
  model: {provider: scripted}
  channels: [RocketChat, Telegram]
  human:
    rocketchatUsername: richard
  rocketchat:
    baseUrl: %s
  telegram:
    apiBaseUrl: %s
    botToken: %s
    chatId: "%d"
agents:
  - id: hermes
    tools:
      Workspace: {}
`, rc.URL, tg.URL, tgfake.DefaultToken, chat))

	texts := func() []string {
		var out []string
		for _, m := range tg.Messages(chat) {
			out = append(out, m.Text)
		}
		return out
	}
	tick := func(wantDetail string) {
		t.Helper()
		out, err := runCLI(t, "run-job", "rocketchat-health", "--config", cfg)
		if err != nil {
			t.Fatalf("run-job: %v\n%s", err, out)
		}
		if r := decodeRun(t, out); r.Outcome != "ok" || r.Detail != wantDetail {
			t.Errorf("run = %+v, want detail %q", r, wantDetail)
		}
	}

	tick("Rocket.Chat " + rcfake.Version[:3] + " answers") // non-admins see major.minor
	rc.SetDown(true)
	first := time.Now().UTC()
	tick("Rocket.Chat unreachable (1 in a row)")
	last := time.Now().UTC()
	tick("Rocket.Chat unreachable (2 in a row)")
	if got := texts(); len(got) != 0 {
		t.Fatalf("Telegram got %q before the third failure", got)
	}
	tick("outage notice sent via Telegram")
	tick("Rocket.Chat unreachable (4 in a row)")
	got := texts()
	if len(got) != 1 {
		t.Fatalf("Telegram got %q, want one outage notice", got)
	}
	okText := false
	for _, at := range []time.Time{first, last} {
		if got[0] == "Switchboard: Rocket.Chat unreachable since "+at.Format("15:04")+", I'm here now." {
			okText = true
		}
	}
	if !okText {
		t.Errorf("notice %q, want the time of the first failure (%s UTC)", got[0], first.Format("15:04"))
	}

	rc.SetDown(false)
	tick("recovery notice sent via Telegram")
	tick("Rocket.Chat " + rcfake.Version[:3] + " answers")
	if got := texts(); len(got) != 2 || got[1] != "Switchboard: Rocket.Chat is back. We can talk there again." {
		t.Errorf("Telegram got %q, want the outage notice and one 'back'", got)
	}
	if n := rc.Calls("chat.postMessage"); n != 0 {
		t.Errorf("%d chat.postMessage calls; the outage notice must not try Rocket.Chat", n)
	}
}
