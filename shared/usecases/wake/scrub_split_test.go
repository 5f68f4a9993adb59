package wake_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

// straddleSecret is a configured secret without spaces, so that an answer
// carrying it in one long word can only be cut inside it.
const straddleSecret = "QXZJ-kvwy-7f3e9a1c-straddles-the-cut"

// secretChunks lists every piece of secret of n characters: a reader who
// sees one has a third of a 24-character key.
func secretChunks(secret string, n int) []string {
	var out []string
	for i := 0; i+n <= len(secret); i++ {
		out = append(out, secret[i:i+n])
	}
	return out
}

// leakedChunk returns the first piece of secret of 8 characters that text
// holds, or "".
func leakedChunk(text, secret string) string {
	for _, c := range secretChunks(secret, 8) {
		if strings.Contains(text, c) {
			return c
		}
	}
	return ""
}

// A secret inside one unbroken word that straddles the cut between two
// Rocket.Chat messages is masked as a whole: the worker scrubs the whole
// answer before cutting it, so no part carries a half that the client's own
// per-message scrub would not recognise. The same holds for the caption of
// an answer that goes as a file.
func TestWorkerScrubsTheWholeAnswerBeforeCutting(t *testing.T) {
	const limit = 100
	sc := scrub.New([]string{straddleSecret})
	// One word of 150 characters; the cut at 100 falls in the secret.
	word := strings.Repeat("x", limit-len(straddleSecret)/2) + straddleSecret + strings.Repeat("y", 30)
	tests := []struct {
		name   string
		answer string
		attach bool
	}{
		{"two messages", "Here it is:\n\n" + word, false},
		{"a file with the first paragraph as caption", word + "\n\n" + strings.Repeat("More text follows. ", 40), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, _, _ := newWorker(memstore.New(), func(context.Context, sb.WakeJob) (agentrun.Result, error) {
				return answered("hermes", tt.answer), nil
			})
			w.MaxMessage, w.MaxParts = limit, 2
			w.Scrubber = sc
			var sent []string // what reached Rocket.Chat, scrubbed per message as the client does
			w.Replies = replyFunc(func(ctx context.Context, _ sb.WakeJob, _ sb.RunContext, text string) error {
				sent = append(sent, sc.StringContext(ctx, text))
				return nil
			})
			if tt.attach {
				w.Files = attachFunc(func(ctx context.Context, _ sb.WakeJob, _ sb.RunContext, text, caption string) error {
					sent = append(sent, sc.StringContext(ctx, caption), sc.String(text))
					return nil
				})
			}
			if err := w.Handle(context.Background(), job("hermes")); err != nil {
				t.Fatal(err)
			}
			if len(sent) < 2 {
				t.Fatalf("sent %d texts, want the answer cut in parts (or a caption and a file)", len(sent))
			}
			for i, p := range sent {
				if c := leakedChunk(p, straddleSecret); c != "" {
					t.Errorf("text %d %q carries %q of the secret", i, p, c)
				}
			}
			if joined := strings.Join(sent, ""); leakedChunk(joined, straddleSecret) != "" || !strings.Contains(joined, scrub.Mask) {
				t.Errorf("sent texts joined = %q, want the secret masked whole", joined)
			}
		})
	}
}
