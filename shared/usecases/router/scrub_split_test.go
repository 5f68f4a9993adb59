package router_test

import (
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	"github.com/switchboard-dev/switchboard/shared/platform/textsplit"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// A notice too long for one Rocket.Chat message (an answer handed over from
// a room) whose cut falls inside a secret reaches the DM with the secret
// masked whole: the channel scrubs the whole text before cutting it, so the
// client's scrub of each message never sees two unrecognisable halves.
func TestRocketChatChannelScrubsTheWholeNoticeBeforeCutting(t *testing.T) {
	const secret = "QXZJ-kvwy-7f3e9a1c-straddles-the-cut"
	sc := scrub.New([]string{secret})
	s := rcfake.New()
	t.Cleanup(s.Close)
	s.SetRateLimit(0, 0)
	s.AddUser("richard")
	uid, token := s.AddUser("agent-hermes", "bot", "user")
	// The client scrubs as in production: the instance Scrubber plus its token.
	client, err := rocketchat.New(s.URL, uid, token, s.Client(), rocketchat.WithScrubber(sc))
	if err != nil {
		t.Fatal(err)
	}
	clients := func(string) (sb.ChatPoster, bool) { return client, true }
	// One word; the cut at Rocket.Chat's limit falls in the middle of the secret.
	word := strings.Repeat("x", textsplit.RocketChatLimit-len(secret)/2) + secret + strings.Repeat("y", 40)
	ch := &router.RocketChatChannel{Human: "richard", Clients: clients, Default: "hermes", Scrub: sc.StringContext}
	if err := ch.Send(testCtx(t), router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: word}); err != nil {
		t.Fatal(err)
	}
	msgs := s.Messages(s.AddDM("richard", "agent-hermes"))
	if len(msgs) < 2 {
		t.Fatalf("DM has %d messages, want the notice cut in parts", len(msgs))
	}
	var joined strings.Builder
	for i, m := range msgs {
		for j := 0; j+8 <= len(secret); j++ {
			if strings.Contains(m.Text, secret[j:j+8]) {
				t.Errorf("message %d carries %q of the secret: …%s", i, secret[j:j+8], m.Text[max(0, len(m.Text)-40):])
				break
			}
		}
		joined.WriteString(m.Text)
	}
	if got := joined.String(); strings.Contains(got, secret) || !strings.Contains(got, scrub.Mask) {
		t.Errorf("the messages joined hold the secret or no mask; want it masked whole")
	}
}
