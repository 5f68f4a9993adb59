package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/platform/textsplit"
)

// longAnswer is realistic Markdown of exactly n characters: paragraphs, a
// list and a fenced code block.
func longAnswer(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		switch i % 4 {
		case 1:
			b.WriteString("- revenue rose in every region\n- costs stayed flat\n- the forecast holds")
		case 3:
			b.WriteString("```sql\nSELECT region, sum(amount) FROM bookings\nGROUP BY region;\n```")
		default:
			fmt.Fprintf(&b, "Section %d. %s", i, strings.TrimSpace(strings.Repeat("The quarter closed with numbers that add up. ", 14)))
		}
		b.WriteString("\n\n")
	}
	s := strings.TrimSpace(b.String()[:n-1]) + "."
	return s + strings.Repeat(".", n-len(s))
}

// A 7,758-character answer reaches the room complete and in order, in
// messages that fit Rocket.Chat's limit; one six times as long arrives as a
// Markdown file with its first paragraph as the message.
func TestLongAnswerArrivesWhole(t *testing.T) {
	answer := longAnswer(7758)
	w := startRCWorldReply(t, answer)
	m, err := w.rc.Post("richard", w.room, "@agent-hermes the full report please", rcfake.PostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := w.deliver(t, m); status != 200 {
		t.Fatalf("webhook = %d", status)
	}
	var parts []string
	w.rc.Until(soft{t}, 15*time.Second, "the whole answer", func() bool {
		parts = parts[:0]
		for _, msg := range w.rc.Messages(w.room) {
			if msg.Username == "agent-hermes" {
				parts = append(parts, msg.Text)
			}
		}
		return strings.Join(parts, "\n\n") == answer
	})
	if got := strings.Join(parts, "\n\n"); got != answer {
		t.Fatalf("room holds %d messages by the agent, %d characters joined; want the %d-character answer in order\nlog:\n%s",
			len(parts), len(got), len(answer), w.dev.logs.String())
	}
	for i, p := range parts {
		if textsplit.Len(p) > textsplit.RocketChatLimit {
			t.Errorf("message %d has %d characters, over Rocket.Chat's limit", i, textsplit.Len(p))
		}
	}
	t.Logf("7,758 characters → %d messages", len(parts))
	if len(parts) < 2 {
		t.Errorf("answer posted as %d message(s), want it split", len(parts))
	}
}

func TestVeryLongAnswerArrivesAsAFile(t *testing.T) {
	answer := longAnswer(6 * 7758)
	w := startRCWorldReply(t, answer)
	m, err := w.rc.Post("richard", w.room, "@agent-hermes everything please", rcfake.PostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.deliver(t, m)
	msg := w.waitForReply(t, w.room, "Section 0.")
	if len(msg.FileIDs) != 1 {
		t.Fatalf("reply %+v, want one file", msg)
	}
	up, ok := w.rc.Upload(msg.FileIDs[0])
	if !ok || !up.Confirmed || !strings.HasSuffix(up.Name, ".md") {
		t.Fatalf("file %+v, want a published Markdown file", up)
	}
	if strings.Contains(msg.Text, "Section 2.") {
		t.Errorf("message text = %.100q…, want only the first paragraph", msg.Text)
	}
	if string(up.Content) != answer {
		t.Errorf("file holds %d bytes, want the whole %d-byte answer", len(up.Content), len(answer))
	}
	if n := w.replies(w.room); n != 1 {
		t.Errorf("%d messages by the agent, want the one with the file", n)
	}
}
