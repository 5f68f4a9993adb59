package wake_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

// fuzzSecretLetters spell every fuzzed secret and are taken out of the
// fuzzed text, so any 8 of them in a row that reach Rocket.Chat can only be
// a piece of a planted secret.
const fuzzSecretLetters = "QXZJKVWY"

// fuzzSecret is a secret of 12 to 40 of fuzzSecretLetters, chosen by seed.
func fuzzSecret(seed uint64, n uint8) string {
	r := rand.New(rand.NewPCG(seed, seed>>32|1))
	b := make([]byte, 12+int(n)%29)
	for i := range b {
		b[i] = fuzzSecretLetters[r.IntN(len(fuzzSecretLetters))]
	}
	return string(b)
}

// plantSecret inserts secret into text at up to 8 places that plan picks
// (relative positions in the original text, moved to rune starts), all at
// once, so that no copy lands inside another.
func plantSecret(text, secret string, plan []byte) string {
	if len(plan) == 0 {
		plan = []byte{128}
	}
	var at []int
	for _, p := range plan[:min(len(plan), 8)] {
		i := int(p) * (len(text) + 1) / 256
		for i < len(text) && !utf8.RuneStart(text[i]) {
			i++
		}
		at = append(at, i)
	}
	slices.Sort(at)
	var b strings.Builder
	last := 0
	for _, i := range at {
		b.WriteString(text[last:i])
		b.WriteString(secret)
		last = i
	}
	b.WriteString(text[last:])
	return b.String()
}

// FuzzScrubThenSplit: whatever the answer, wherever a configured secret
// sits in it and whatever the server's message limit, what the worker hands
// Rocket.Chat (each message as the client scrubs it again, or the caption
// and the file of a very long answer) holds no 8 characters of the secret —
// not in one message, not across the cut between two adjacent ones, not in
// all of them read in order — and the secret shows up masked. Splitting
// before scrubbing fails this at once: the client's per-message scrub sees
// only halves.
func FuzzScrubThenSplit(f *testing.F) {
	f.Add("Here is the report.\n\n"+strings.Repeat("x", 90), uint64(1), uint8(8), []byte{250}, uint16(99), false)
	f.Add(strings.Repeat("word ", 60), uint64(2), uint8(28), []byte{10, 128, 128, 250}, uint16(40), false)
	f.Add("```go\nkey := \"\"\n```\n\nDone. Next! And?\n\n"+strings.Repeat("long paragraph. ", 30), uint64(3), uint8(0), []byte{30, 200}, uint16(50), true)
	f.Add("日本語の文章です。😀👨‍👩‍👧🇩🇪 e\u0301", uint64(4), uint8(3), []byte{0, 255}, uint16(5), false)
	f.Add("AIzaabcdefghijklmnopqrstuvwxyz0123", uint64(5), uint8(16), []byte{255}, uint16(20), false)
	f.Add("a", uint64(6), uint8(4), []byte{0}, uint16(0), false)
	f.Fuzz(func(t *testing.T, text string, seed uint64, secretLen uint8, plan []byte, limit uint16, attach bool) {
		if len(text) > 4096 {
			text = text[:4096]
		}
		text = strings.Map(func(r rune) rune {
			if strings.ContainsRune(fuzzSecretLetters, r) {
				return r + ('a' - 'A')
			}
			return r
		}, text)
		secret := fuzzSecret(seed, secretLen)
		answer := plantSecret(text, secret, plan)
		sc := scrub.New([]string{secret})

		w, _, _ := newWorker(memstore.New(), func(context.Context, sb.WakeJob) (agentrun.Result, error) {
			return answered("hermes", answer), nil
		})
		w.MaxMessage, w.MaxParts = 1+int(limit)%600, 4
		w.Scrubber = sc
		var sent []string
		w.Replies = replyFunc(func(ctx context.Context, _ sb.WakeJob, _ sb.RunContext, text string) error {
			sent = append(sent, sc.StringContext(ctx, text)) // the Rocket.Chat client's own scrub
			return nil
		})
		if attach {
			w.Files = attachFunc(func(ctx context.Context, _ sb.WakeJob, _ sb.RunContext, text, caption string) error {
				sent = append(sent, sc.StringContext(ctx, caption), sc.String(text)) // as Replier.Attach
				return nil
			})
		}
		if err := w.Handle(context.Background(), job("hermes")); err != nil {
			t.Fatal(err)
		}
		for i, p := range sent {
			if c := leakedChunk(p, secret); c != "" {
				t.Fatalf("text %d of %d carries %q of secret %q: %q", i, len(sent), c, secret, p)
			}
			if i > 0 {
				if c := leakedChunk(sent[i-1]+p, secret); c != "" {
					t.Fatalf("texts %d and %d carry %q of secret %q across their cut: …%q | %q…", i-1, i, c, secret,
						sent[i-1][max(0, len(sent[i-1])-len(secret)):], p[:min(len(p), len(secret))])
				}
			}
		}
		joined := strings.Join(sent, "")
		if c := leakedChunk(joined, secret); c != "" {
			t.Fatalf("the %d texts read in order carry %q of secret %q", len(sent), c, secret)
		}
		if !strings.Contains(joined, scrub.Mask) {
			t.Fatalf("the %d texts hold no %q; the planted secret %q went missing instead of masked", len(sent), scrub.Mask, secret)
		}
	})
}
