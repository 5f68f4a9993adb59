package wake_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/textsplit"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

// paragraphs is an answer of n paragraphs of about 900 characters each.
func paragraphs(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "Paragraph %d. %s", i, strings.TrimSpace(strings.Repeat("The numbers add up nicely. ", 33)))
	}
	return b.String()
}

// A long answer arrives whole: in parts that fit the limit, in order, and a
// part the server refuses for a moment is tried again without repeating the
// parts already posted.
func TestWorkerPostsALongAnswerInParts(t *testing.T) {
	answer := paragraphs(8) // ≈ 7,300 characters
	tests := []struct {
		name      string
		limit     int
		failAt    int // the post number (1-based) refused once with EUNAVAILABLE; 0 = none
		wantParts int
	}{
		{"fits the default limit in two parts", 0, 0, 2},
		{"a smaller server limit", 2000, 0, 4},
		{"second part refused once", 2000, 2, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, _, r := newWorker(memstore.New(), func(context.Context, sb.WakeJob) (agentrun.Result, error) {
				return answered("hermes", answer), nil
			})
			w.MaxMessage = tt.limit
			posts := 0
			w.Replies = replyFunc(func(ctx context.Context, job sb.WakeJob, run sb.RunContext, text string) error {
				posts++
				if posts == tt.failAt {
					return sb.E("test.reply", sb.EUNAVAILABLE, "Rocket.Chat answered 503")
				}
				return r.Reply(ctx, job, run, text)
			})
			attached := false
			w.Files = attachFunc(func(context.Context, sb.WakeJob, sb.RunContext, string, string) error { attached = true; return nil })
			if err := w.Handle(context.Background(), job("hermes")); err != nil {
				t.Fatal(err)
			}
			if attached {
				t.Fatal("answer went as a file, want messages")
			}
			got := r.all()
			if len(got) != tt.wantParts {
				t.Fatalf("%d messages posted, want %d", len(got), tt.wantParts)
			}
			limit := tt.limit
			if limit == 0 {
				limit = textsplit.RocketChatLimit
			}
			var joined []string
			for i, p := range got {
				if n := textsplit.Len(p.Text); n > limit {
					t.Errorf("part %d has %d characters, over the limit %d", i, n, limit)
				}
				joined = append(joined, p.Text)
			}
			if strings.Join(joined, "\n\n") != answer {
				t.Error("the parts joined are not the answer, in order")
			}
		})
	}
}

// More parts than MaxParts: the answer goes as one Markdown file with its
// first paragraph as the message; without Attach it still goes as messages.
func TestWorkerAttachesAVeryLongAnswer(t *testing.T) {
	answer := paragraphs(30)
	w, _, r := newWorker(memstore.New(), func(context.Context, sb.WakeJob) (agentrun.Result, error) {
		return answered("hermes", answer), nil
	})
	var file, caption string
	w.Files = attachFunc(func(_ context.Context, _ sb.WakeJob, _ sb.RunContext, text, c string) error {
		file, caption = text, c
		return nil
	})
	if err := w.Handle(context.Background(), job("hermes")); err != nil {
		t.Fatal(err)
	}
	if n := len(r.all()); n != 0 {
		t.Errorf("%d messages posted besides the file, want 0", n)
	}
	if file != answer {
		t.Errorf("file holds %d characters, want the whole answer (%d)", len(file), len(answer))
	}
	if !strings.HasPrefix(answer, strings.TrimSuffix(caption, "…")) || !strings.HasPrefix(caption, "Paragraph 0.") || strings.Contains(caption, "Paragraph 1.") {
		t.Errorf("caption = %.80q…, want the first paragraph", caption)
	}

	w.Files = nil
	if err := w.Handle(context.Background(), job("hermes")); err != nil {
		t.Fatal(err)
	}
	if n := len(r.all()); n < 5 {
		t.Errorf("without Attach %d messages posted, want the whole answer in parts", n)
	}
}
