package router_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram"
	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

const humanChat = int64(4242) // the human's private chat with the bot

type tgWorld struct {
	s     *tgfake.Server
	c     *telegram.Client
	clock *clocktest.Clock // the fake Bot API and the injected Sleep share it
}

func newTGWorld(t *testing.T) *tgWorld {
	t.Helper()
	s := tgfake.New()
	t.Cleanup(s.Close)
	w := &tgWorld{s: s, clock: clocktest.New(time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC))}
	s.SetClock(w.clock.Now)
	s.AddUser(tgfake.User{ID: humanChat, FirstName: "Richard", Username: "richard"})
	c, err := telegram.New(s.URL, tgfake.DefaultToken, s.Client())
	if err != nil {
		t.Fatal(err)
	}
	w.c = c
	return w
}

func (w *tgWorld) channel() *router.TelegramChannel {
	return &router.TelegramChannel{Client: w.c, ChatID: fmt.Sprint(humanChat), Names: agentNames, Sleep: w.clock.Sleep}
}

func (w *tgWorld) texts() []string {
	var out []string
	for _, m := range w.s.Messages(humanChat) {
		out = append(out, m.Text)
	}
	return out
}

func agentNames(id string) string {
	return map[string]string{"hermes": "Hermes", "atlas": "Atlas"}[id]
}

// longText is n words of 9 characters and a space: it splits at spaces.
func longText(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "word%05d", i)
	}
	return b.String()
}

func TestTelegramChannelSends(t *testing.T) {
	tests := []struct {
		name    string
		names   func(string) string
		notice  router.Notice
		wantTxt string
	}{
		{"agent notice names the agent", agentNames,
			router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "The report is ready."}, "Hermes: The report is ready."},
		{"system notice", agentNames,
			router.Notice{Kind: router.KindOutage, Text: "Rocket.Chat unreachable since 09:00, I'm here now."},
			"Switchboard: Rocket.Chat unreachable since 09:00, I'm here now."},
		{"without a name function the text goes as it is", nil,
			router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "plain"}, "plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newTGWorld(t)
			ch := w.channel()
			ch.Names = tt.names
			if ch.Name() != "Telegram" {
				t.Errorf("Name = %q, want Telegram", ch.Name())
			}
			if err := ch.Send(testCtx(t), tt.notice); err != nil {
				t.Fatalf("Send: %v", err)
			}
			msgs := w.s.Messages(humanChat)
			if len(msgs) != 1 {
				t.Fatalf("%d messages in the chat, want 1", len(msgs))
			}
			if m := msgs[0]; m.Text != tt.wantTxt || m.ParseMode != "" || !m.LinkPreviewDisabled {
				t.Errorf("message %q (parse mode %q, preview disabled %v), want %q as plain text without preview",
					m.Text, m.ParseMode, m.LinkPreviewDisabled, tt.wantTxt)
			}
			if len(w.clock.Slept()) != 0 {
				t.Errorf("slept %v without a 429", w.clock.Slept())
			}
		})
	}
}

func TestTelegramChannelNeedsChatID(t *testing.T) {
	w := newTGWorld(t)
	ch := w.channel()
	ch.ChatID = ""
	err := ch.Send(testCtx(t), router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "x"})
	if sb.ErrorCode(err) != sb.EINVALID || !strings.Contains(sb.ErrorMessage(err), "instance.telegram.chatId") {
		t.Errorf("Send = %v, want EINVALID naming instance.telegram.chatId", err)
	}
	if n := w.s.Calls("sendMessage"); n != 0 {
		t.Errorf("%d sendMessage calls without a chat id", n)
	}
}

func TestTelegramChannelSplitsLongTexts(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		wantParts int
	}{
		{"exactly 4096 with the prefix", strings.Repeat("x", telegram.MaxTextLength-len("Hermes: ")), 1},
		{"one over", strings.Repeat("x", telegram.MaxTextLength-len("Hermes: ")+1), 2},
		{"about 10,000 characters", longText(1000), 3},
		{"multi-byte characters count once", strings.Repeat("über ", 800), 1}, // 4,800 bytes
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newTGWorld(t)
			if err := w.channel().Send(testCtx(t), router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: tt.text}); err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := w.texts()
			if len(got) != tt.wantParts {
				t.Fatalf("%d messages, want %d", len(got), tt.wantParts)
			}
			want := telegram.SplitText("Hermes: "+tt.text, telegram.MaxTextLength, "")
			for i, p := range got {
				if n := utf8.RuneCountInString(p); n > telegram.MaxTextLength {
					t.Errorf("part %d has %d characters, more than %d", i+1, n, telegram.MaxTextLength)
				}
				if p != want[i] {
					t.Errorf("part %d = %.40q…, want %.40q…", i+1, p, want[i])
				}
			}
			if joined := strings.Join(got, ""); strings.ReplaceAll("Hermes: "+tt.text, " ", "") != strings.ReplaceAll(joined, " ", "") {
				t.Error("the parts do not add up to the text")
			}
		})
	}
}

func TestTelegramChannelRateLimit(t *testing.T) {
	tests := []struct {
		name       string
		maxWait    time.Duration
		retryAfter []int // stacked 429s for the next sendMessage calls
		wantSleeps []time.Duration
		wantCode   string
		wantMsgs   int
	}{
		{name: "short wait is waited out (default MaxWait 5 s)",
			retryAfter: []int{2}, wantSleeps: []time.Duration{2 * time.Second}, wantMsgs: 1},
		{name: "exactly the default MaxWait is waited out",
			retryAfter: []int{5}, wantSleeps: []time.Duration{5 * time.Second}, wantMsgs: 1},
		{name: "longer than the default fails at once",
			retryAfter: []int{6}, wantCode: sb.ERATELIMITED},
		{name: "custom MaxWait allows longer waits",
			maxWait: 30 * time.Second, retryAfter: []int{20}, wantSleeps: []time.Duration{20 * time.Second}, wantMsgs: 1},
		{name: "custom MaxWait refuses longer waits",
			maxWait: time.Second, retryAfter: []int{2}, wantCode: sb.ERATELIMITED},
		{name: "waited out only once",
			retryAfter: []int{1, 1}, wantSleeps: []time.Duration{time.Second}, wantCode: sb.ERATELIMITED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newTGWorld(t)
			for _, s := range tt.retryAfter {
				w.s.FailNext("sendMessage", 429, s)
			}
			ch := w.channel()
			ch.MaxWait = tt.maxWait
			err := ch.Send(testCtx(t), router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "hello"})
			if got := sb.ErrorCode(err); err != nil && got != tt.wantCode || err == nil && tt.wantCode != "" {
				t.Fatalf("Send = %v (code %q), want code %q", err, got, tt.wantCode)
			}
			if got := w.clock.Slept(); fmt.Sprint(got) != fmt.Sprint(tt.wantSleeps) {
				t.Errorf("slept %v, want %v", got, tt.wantSleeps)
			}
			if got := w.texts(); len(got) != tt.wantMsgs {
				t.Errorf("chat has %q, want %d message(s)", got, tt.wantMsgs)
			}
		})
	}
}

// A 429 in the middle of a long text: after the wait only the parts that did
// not arrive are sent again.
func TestTelegramChannelResendsOnlyTheRest(t *testing.T) {
	tests := []struct {
		name      string
		words     int
		wantParts int // that arrive
		wantCode  string
		wantCalls int
	}{
		// part 1 ok, part 2 429 (retry after 1 s), wait, part 2 ok.
		{name: "two parts", words: 600, wantParts: 2, wantCalls: 3},
		// part 1 ok, part 2 429, wait, part 2 ok, part 3 429: no second wait.
		{name: "three parts, second 429 gives up", words: 1000, wantParts: 2, wantCode: sb.ERATELIMITED, wantCalls: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newTGWorld(t)
			w.s.SetRateLimit(1) // one message per chat and (frozen) second
			text := longText(tt.words)
			err := w.channel().Send(testCtx(t), router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: text})
			if got := sb.ErrorCode(err); err != nil && got != tt.wantCode || err == nil && tt.wantCode != "" {
				t.Fatalf("Send = %v (code %q), want code %q", err, got, tt.wantCode)
			}
			if got := w.clock.Slept(); len(got) != 1 || got[0] != time.Second {
				t.Errorf("slept %v, want [1s]", got)
			}
			want := telegram.SplitText("Hermes: "+text, telegram.MaxTextLength, "")
			got := w.texts()
			if len(got) != tt.wantParts {
				t.Fatalf("%d messages arrived, want %d", len(got), tt.wantParts)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("message %d is not part %d (a part was sent twice or skipped)", i+1, i+1)
				}
			}
			if n := w.s.Calls("sendMessage"); n != tt.wantCalls {
				t.Errorf("%d sendMessage calls, want %d", n, tt.wantCalls)
			}
		})
	}
}

func TestTelegramChannelErrors(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(*tgfake.Server)
		chat     string
		wantCode string
	}{
		{"Telegram down", func(s *tgfake.Server) { s.SetDown(true) }, "", sb.EUNAVAILABLE},
		{"bot blocked", func(s *tgfake.Server) { s.SetBlocked(humanChat, true) }, "", sb.EFORBIDDEN},
		{"unknown chat", func(*tgfake.Server) {}, "777", sb.ENOTFOUND},
		{"bad token", func(s *tgfake.Server) { s.SetTokens("7000000001:another-token") }, "", sb.EUNAUTHORIZED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newTGWorld(t)
			tt.setup(w.s)
			ch := w.channel()
			if tt.chat != "" {
				ch.ChatID = tt.chat
			}
			err := ch.Send(testCtx(t), router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "x"})
			if got := sb.ErrorCode(err); got != tt.wantCode {
				t.Errorf("Send = %v (code %q), want %q", err, got, tt.wantCode)
			}
			if got := w.clock.Slept(); len(got) != 0 {
				t.Errorf("slept %v on a non-429 error", got)
			}
			if n := w.s.Calls("sendMessage"); n != 1 {
				t.Errorf("%d sendMessage calls, want 1 (no retry)", n)
			}
		})
	}
}

func TestTelegramChannelWaitEndsWithContext(t *testing.T) {
	w := newTGWorld(t)
	w.s.FailNext("sendMessage", 429, 3)
	ch := w.channel()
	ch.Sleep = nil // the real sleep, cut short by the context
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := ch.Send(ctx, router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Send = %v, want the context's error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Send took %v; the wait must end with the context", d)
	}
	if n := w.s.Calls("sendMessage"); n != 1 {
		t.Errorf("%d sendMessage calls, want 1: nothing resent after a cancelled wait", n)
	}
}

func TestTelegramChannelRealSleep(t *testing.T) {
	w := newTGWorld(t)
	w.s.FailNext("sendMessage", 429, 1)
	ch := w.channel()
	ch.Sleep = nil
	start := time.Now()
	if err := ch.Send(testCtx(t), router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("Send took %v, want at least the 1 s Telegram asked for", d)
	}
	if got := w.texts(); len(got) != 1 {
		t.Errorf("chat has %q, want one message", got)
	}
}

// A retry_after longer than MaxWait makes the router move on at once.
func TestTelegramLongRateLimitFailsOver(t *testing.T) {
	w := newTGWorld(t)
	w.s.FailNext("sendMessage", 429, 60)
	next := &fakeChannel{name: "Mail"}
	r := router.New([]router.Channel{w.channel(), next}, memstore.New(), discard())
	d, err := r.Deliver(testCtx(t), router.Notice{Kind: router.KindAgent, AgentID: "hermes", Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Channel != "Mail" || !d.PrimaryFailed || len(d.Failures) != 1 || !strings.HasPrefix(d.Failures[0], "Telegram: ") {
		t.Errorf("delivery = %+v, want Mail after Telegram's 429", d)
	}
	if got := w.clock.Slept(); len(got) != 0 {
		t.Errorf("slept %v; a 60 s retry_after is over MaxWait", got)
	}
	if len(next.sent()) != 1 {
		t.Errorf("Mail got %d notices, want 1", len(next.sent()))
	}
}
