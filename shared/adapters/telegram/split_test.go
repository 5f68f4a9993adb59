package telegram

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

func runes(s string) int { return utf8.RuneCountInString(s) }

func lens(parts []string) []int {
	out := make([]int, len(parts))
	for i, p := range parts {
		out[i] = runes(p)
	}
	return out
}

func TestSplitTextBoundaries(t *testing.T) {
	word := strings.Repeat("a", 9) + " " // 10 characters
	tests := []struct {
		name      string
		text      string
		limit     int
		mode      string
		wantLens  []int
		wantParts []string // checked when set
	}{
		{"empty", "", 0, "", nil, nil},
		{"spaces only", " \n ", 0, "", nil, nil},
		{"exactly 4096", strings.Repeat("x", 4096), 0, "", []int{4096}, nil},
		{"4096 after trimming", "  " + strings.Repeat("x", 4096) + "\n", 0, "", []int{4096}, nil},
		{"4097 in one word is hard cut", strings.Repeat("x", 4097), 0, "", []int{4096, 1}, nil},
		{"4096 two-byte characters", strings.Repeat("é", 4096), 0, "", []int{4096}, nil},
		{"4097 two-byte characters", strings.Repeat("é", 4097), 0, "", []int{4096, 1}, nil},
		{"4096 astral characters (8192 UTF-16 units) fit", strings.Repeat("😀", 4096), 0, "", []int{4096}, nil},
		{"4097 astral characters", strings.Repeat("😀", 4097), 0, "", []int{4096, 1}, nil},
		{"4097 with a space: cut at the word", strings.Repeat("x", 4000) + " " + strings.Repeat("y", 96), 0, "", []int{4000, 96}, nil},
		{"words of 10: no word is cut", strings.Repeat(word, 500), 0, "", []int{4089, 909}, nil},
		{"paragraph preferred over line and space", "aaaa aaaa aa\n\nbbbb\ncc dd", 20, "", nil, []string{"aaaa aaaa aa", "bbbb\ncc dd"}},
		{"paragraph too early: line", "aa\n\nbbbbbbbbbb\ncccc dddd eeee", 20, "", nil, []string{"aa\n\nbbbbbbbbbb", "cccc dddd eeee"}},
		{"line too early: space", "a\nbbbbbbbbbbbbb cccccc dd", 20, "", nil, []string{"a\nbbbbbbbbbbbbb", "cccccc dd"}},
		{"long word between short ones", "ab " + strings.Repeat("x", 25) + " cd", 10, "", nil, []string{"ab", "xxxxxxxxxx", "xxxxxxxxxx", "xxxxx cd"}},
		{"html tag is never cut", "aaaaaaaaaaaaaaa <a href=\"https://e.x/y z\">link</a>", 40, "HTML", nil,
			[]string{"aaaaaaaaaaaaaaa", "<a href=\"https://e.x/y z\">link</a>"}},
		{"html prefers cuts outside elements", "aa <b>bb cc dd</b> ee", 16, "HTML", nil,
			[]string{"aa", "<b>bb cc dd</b>", "ee"}},
		{"the same text without a parse mode", "aa <b>bb cc dd</b> ee", 16, "", nil,
			[]string{"aa <b>bb cc", "dd</b> ee"}},
		{"html entity is never cut", strings.Repeat("a", 8) + "&amp;bcdef", 10, "HTML", nil, []string{"aaaaaaaa", "&amp;bcdef"}},
		{"markdownv2 escape stays with its character", strings.Repeat("a", 9) + `\.bbb`, 10, "MarkdownV2", nil, []string{"aaaaaaaaa", `\.bbb`}},
		{"zwj emoji is not cut", strings.Repeat("a", 8) + "👩‍💻" + "bb", 10, "", nil, []string{"aaaaaaaa", "👩‍💻bb"}},
		{"combining mark stays", strings.Repeat("a", 9) + "e\u0301x", 10, "", nil, []string{"aaaaaaaaa", "e\u0301x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SplitText(tt.text, tt.limit, tt.mode)
			if tt.wantParts != nil && fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.wantParts) {
				t.Errorf("parts = %q, want %q", got, tt.wantParts)
			}
			if tt.wantParts == nil && fmt.Sprint(lens(got)) != fmt.Sprint(tt.wantLens) {
				t.Errorf("part lengths = %v, want %v", lens(got), tt.wantLens)
			}
		})
	}
}

// TestSplitTextProperties: on random prose every part fits, none is empty,
// no word is cut, and the words come out in order.
func TestSplitTextProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := []string{"the", "report", "über", "naïve", "日本語", "😀", "approval", "x", "Rocket.Chat", "—"}
	seps := []string{" ", " ", " ", " ", "\n", "\n\n", "  ", "\t"}
	for n := 0; n < 100; n++ {
		var b strings.Builder
		words := 50 + rng.IntN(3000)
		for i := 0; i < words; i++ {
			b.WriteString(vocab[rng.IntN(len(vocab))])
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		limit := 20 + rng.IntN(4096)
		text := b.String()
		parts := SplitText(text, limit, "")
		for i, p := range parts {
			if p == "" || runes(p) > limit {
				t.Fatalf("case %d: part %d has %d characters (limit %d)", n, i, runes(p), limit)
			}
			if strings.TrimSpace(p) != p {
				t.Fatalf("case %d: part %d is not trimmed: %q", n, i, p)
			}
		}
		if got, want := strings.Fields(strings.Join(parts, " ")), strings.Fields(text); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("case %d (limit %d): words changed", n, limit)
		}
	}
}

// TestSplitTextHTMLPartsParse: every part of a long HTML text made of
// short elements parses on its own at the fake (no tag cut, none left
// open).
func TestSplitTextHTMLPartsParse(t *testing.T) {
	f := newFixture(t)
	var b strings.Builder
	for i := 0; b.Len() < 12000; i++ {
		fmt.Fprintf(&b, "<b>Step %d</b> done &amp; <a href=\"https://sb.example/r/%d?a=1&amp;b=2\">report %d</a>.", i, i, i)
		if i%7 == 6 {
			b.WriteString("\n\n")
		} else {
			b.WriteString(" ")
		}
	}
	sent, err := f.c.SendLong(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: b.String(), ParseMode: ParseModeHTML})
	if err != nil {
		t.Fatalf("SendLong: %v (after %d parts)", err, len(sent))
	}
	if len(sent) < 3 {
		t.Errorf("%d parts, want at least 3", len(sent))
	}
}

func TestSendLong(t *testing.T) {
	f := newFixture(t)
	var b strings.Builder
	for i := 0; b.Len() < 10000; i++ {
		fmt.Fprintf(&b, "Paragraph %d: the nightly report is ready and uploaded.\n\n", i)
	}
	text := b.String()
	kb := &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{{CallbackButton("Approve", "a:7"), CallbackButton("Deny", "d:7")}}}
	first, _ := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "earlier"})
	sent, err := f.c.SendLong(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: text, ReplyMarkup: kb, ReplyToMessageID: first.MessageID})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 3 {
		t.Fatalf("%d parts, want 3", len(sent))
	}
	msgs := f.s.Messages(ann)[1:]
	var joined []string
	for i, m := range msgs {
		if m.MessageID != sent[i].MessageID {
			t.Errorf("part %d: id %d, Sent says %d", i, m.MessageID, sent[i].MessageID)
		}
		if n := runes(m.Text); n > MaxTextLength {
			t.Errorf("part %d has %d characters", i, n)
		}
		if !strings.HasPrefix(m.Text, "Paragraph ") || !strings.HasSuffix(m.Text, "uploaded.") {
			t.Errorf("part %d is not cut at a paragraph: %q … %q", i, m.Text[:20], m.Text[len(m.Text)-20:])
		}
		if (m.ReplyMarkup != nil) != (i == len(msgs)-1) {
			t.Errorf("part %d: keyboard %v; want it on the last part only", i, m.ReplyMarkup)
		}
		if (m.ReplyToMessage != nil) != (i == 0) {
			t.Errorf("part %d: reply %v; want it on the first part only", i, m.ReplyToMessage)
		}
		joined = append(joined, m.Text)
	}
	if got := strings.Join(joined, "\n\n"); got != strings.TrimSpace(text) {
		t.Errorf("the parts do not add up to the text")
	}

	// A short text is one message.
	one, err := f.c.SendLong(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "short"})
	if err != nil || len(one) != 1 {
		t.Errorf("short: %+v, %v", one, err)
	}
	// Nothing to send, or a bad keyboard: refused before any request.
	n := f.c.Calls()["sendMessage"]
	_, err = f.c.SendLong(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "  "})
	checkErr(t, err, sb.EINVALID, "text is empty")
	_, err = f.c.SendLong(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: text, ReplyMarkup: &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{{CallbackButton("x", strings.Repeat("d", 65))}}}})
	checkErr(t, err, sb.EINVALID, "65 bytes")
	_, err = f.c.SendLong(ctx(t), sb.TelegramText{ChatID: "me", Text: text})
	checkErr(t, err, sb.EINVALID, "neither a number")
	if got := f.c.Calls()["sendMessage"]; got != n {
		t.Errorf("refused texts sent %d requests", got-n)
	}
}

func TestSendLongStopsAtFirstFailure(t *testing.T) {
	f := newFixture(t)
	text := strings.Repeat("word ", 2000) // 9999 characters: 3 parts
	f.s.SetRateLimit(1)                   // one message per chat and (fake) second
	// Part 2 meets a 429 (retry after 1 s): waited out, part 2 goes; part 3
	// meets the next 429 in the same second: no second wait.
	sent, err := f.c.SendLong(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: text})
	if len(sent) != 2 {
		t.Fatalf("%d parts sent, want 2", len(sent))
	}
	e := checkErr(t, err, sb.ERATELIMITED, "wait 1s", "[part 3 of 3 failed; parts 1–2 were sent]")
	if e.RetryAfter != time.Second {
		t.Errorf("RetryAfter = %v", e.RetryAfter)
	}
	if got := f.c.Calls()["sendMessage"]; got != 4 {
		t.Errorf("%d sendMessage calls, want 4 (one wait, no second)", got)
	}
	if got := f.clock.Slept(); fmt.Sprint(got) != "[1s]" {
		t.Errorf("slept %v, want [1s]", got)
	}
	// The caller resumes with the parts not sent.
	parts := SplitText(text, MaxTextLength, "")
	for i, p := range parts[len(sent):] {
		f.clock.Add(time.Second)
		if _, err := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: p}); err != nil {
			t.Fatalf("resume part %d: %v", i+3, err)
		}
	}
	if got := len(f.s.Messages(ann)); got != 3 {
		t.Errorf("%d messages in the chat, want 3", got)
	}

	f.s.FailNext("sendMessage", 500, 0)
	f.clock.Add(time.Second)
	sent, err = f.c.SendLong(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: text})
	if len(sent) != 0 {
		t.Errorf("%d parts sent", len(sent))
	}
	checkErr(t, err, sb.EUNAVAILABLE, "[part 1 of 3 failed; nothing was sent]")
	if got := f.clock.Slept(); len(got) != 1 {
		t.Errorf("slept %v; a 500 is not waited out", got)
	}
}

// A short 429 is waited out once per call and only the parts that did not
// arrive are sent; a long one, a second one, or a client that never waits
// hands the 429 back at once.
func TestSendLongWaitsOutOneShort429(t *testing.T) {
	text := strings.Repeat("word ", 1000) // 4999 characters: 2 parts
	tests := []struct {
		name       string
		wait       sb.TelegramWait
		fail       []int // retry_after of stacked 429s, from part failAt on
		failAt     int   // parts that pass before the 429s
		wantSent   int
		wantSleeps string
		wantCode   string
	}{
		{name: "part 1, retry after 1", fail: []int{1}, wantSent: 2, wantSleeps: "[1s]"},
		{name: "part 2, retry after 1", fail: []int{1}, failAt: 1, wantSent: 2, wantSleeps: "[1s]"},
		{name: "exactly the default 5 s", fail: []int{5}, wantSent: 2, wantSleeps: "[5s]"},
		{name: "over the default", fail: []int{6}, wantSleeps: "[]", wantCode: sb.ERATELIMITED},
		{name: "two in a row", fail: []int{1, 1}, failAt: 1, wantSent: 1, wantSleeps: "[1s]", wantCode: sb.ERATELIMITED},
		{name: "custom Max allows 20 s", wait: sb.TelegramWait{Max: 30 * time.Second}, fail: []int{20}, wantSent: 2, wantSleeps: "[20s]"},
		{name: "never wait", wait: sb.TelegramWait{Max: -1}, fail: []int{1}, wantSleeps: "[]", wantCode: sb.ERATELIMITED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.failAt > 0 {
				f.s.PassNext("sendMessage")
			}
			for _, s := range tt.fail {
				f.s.FailNext("sendMessage", 429, s)
			}
			sent, err := f.c.SendLongWait(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: text}, tt.wait)
			if got := sb.ErrorCode(err); got != tt.wantCode {
				t.Fatalf("SendLongWait = %v, want code %q", err, tt.wantCode)
			}
			if len(sent) != tt.wantSent {
				t.Errorf("%d parts sent, want %d", len(sent), tt.wantSent)
			}
			if got := fmt.Sprint(f.clock.Slept()); got != tt.wantSleeps {
				t.Errorf("slept %s, want %s", got, tt.wantSleeps)
			}
			parts := SplitText(text, MaxTextLength, "")
			msgs := f.s.Messages(ann)
			if len(msgs) != tt.wantSent {
				t.Fatalf("%d messages in the chat, want %d", len(msgs), tt.wantSent)
			}
			for i, m := range msgs {
				if m.Text != parts[i] {
					t.Errorf("message %d is not part %d: a part was doubled or skipped", i+1, i+1)
				}
			}
		})
	}
}

func TestSendLongWaitEndsWithContext(t *testing.T) {
	f := newFixture(t)
	c, err := New(f.s.URL, token, f.s.Client()) // the real timer
	if err != nil {
		t.Fatal(err)
	}
	f.s.FailNext("sendMessage", 429, 3)
	cx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	sent, err := c.SendLong(cx, sb.TelegramText{ChatID: chat(ann), Text: "x"})
	if !errors.Is(err, context.DeadlineExceeded) || len(sent) != 0 {
		t.Errorf("SendLong = %d sent, %v; want nothing and the context's error", len(sent), err)
	}
	if n := f.s.Calls("sendMessage"); n != 1 {
		t.Errorf("%d sendMessage calls, want 1: nothing resent after a cancelled wait", n)
	}
}
