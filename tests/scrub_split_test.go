package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	"github.com/switchboard-dev/switchboard/shared/platform/textsplit"
)

// The attack run's split secret: an answer longer than one Rocket.Chat message
// carries a configured secret (here the tool API token) inside one unbroken
// word, right where the answer is cut. Through the real wiring of
// `switchboard dev` the room gets the secret masked whole — no message and
// no two adjacent ones hold 8 characters of it.
func TestSecretAtTheCutOfALongAnswerIsMaskedWhole(t *testing.T) {
	word := strings.Repeat("x", textsplit.RocketChatLimit-len(toolToken)/2) + toolToken + strings.Repeat("y", 50)
	w := startRCWorldReply(t, "Here is the token:\n\n"+word)
	m, err := w.rc.Post("richard", w.room, "@agent-hermes the token please", rcfake.PostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := w.deliver(t, m); status != 200 {
		t.Fatalf("webhook = %d", status)
	}
	var parts []string
	w.rc.Until(soft{t}, 15*time.Second, "the answer's last part", func() bool {
		parts = parts[:0]
		for _, msg := range w.rc.Messages(w.room) {
			if msg.Username == "agent-hermes" {
				parts = append(parts, msg.Text)
			}
		}
		n := len(parts)
		return n > 0 && strings.HasSuffix(parts[n-1], "yyyy")
	})
	if n := len(parts); n < 2 || !strings.HasSuffix(parts[n-1], "yyyy") {
		t.Fatalf("room holds %d messages by the agent, want the whole answer in parts\nlog:\n%s", n, w.dev.logs.String())
	}
	leak := func(s string) string {
		for i := 0; i+8 <= len(toolToken); i++ {
			if strings.Contains(s, toolToken[i:i+8]) {
				return toolToken[i : i+8]
			}
		}
		return ""
	}
	for i, p := range parts {
		if c := leak(p); c != "" {
			t.Errorf("message %d carries %q of the tool token", i, c)
		}
		if i > 0 {
			if c := leak(parts[i-1] + p); c != "" {
				t.Errorf("messages %d and %d carry %q of the tool token across their cut", i-1, i, c)
			}
		}
	}
	if !strings.Contains(strings.Join(parts, ""), scrub.Mask) {
		t.Error("the answer arrived without the mask; want the token masked whole")
	}
}
