package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	"github.com/switchboard-dev/switchboard/shared/platform/errtest"
	"github.com/switchboard-dev/switchboard/shared/platform/tgtoken"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

type fakeClock = clocktest.Clock

var t0 = time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)

const (
	ann   = int64(1111)           // a person in a private chat with the bot
	team  = int64(-1001234567890) // a supergroup with the bot
	token = tgfake.DefaultToken
)

var annUser = tgfake.User{ID: ann, FirstName: "Ann", Username: "ann"}

// fixture is a fake Bot API with Ann's private chat and a supergroup
// "@opsteam", and a client for the bot.
type fixture struct {
	s     *tgfake.Server
	clock *fakeClock
	c     *Client
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	s := tgfake.New()
	t.Cleanup(s.Close)
	f := &fixture{s: s, clock: clocktest.New(t0)}
	s.SetClock(f.clock.Now)
	s.AddUser(annUser)
	s.AddChat(team, "supergroup")
	s.SetChatUsername(team, "opsteam")
	c, err := New(s.URL, token, s.Client(), WithRateLimitWait(sb.TelegramWait{Sleep: f.clock.Sleep}))
	if err != nil {
		t.Fatal(err)
	}
	f.c = c
	return f
}

func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// checkErr asserts code and message parts of a *switchboard.Error, and that
// neither its message nor the whole error text carries the bot token.
func checkErr(t *testing.T, err error, wantCode string, wantMsg ...string) *sb.Error {
	t.Helper()
	e := errtest.Check(t, err, wantCode, wantMsg...)
	secret := token[strings.IndexByte(token, ':')+1:]
	for _, s := range []string{e.Message, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
		if strings.Contains(s, secret) {
			t.Errorf("error leaks the token: %s", s)
		}
	}
	return e
}

func chat(id int64) string { return fmt.Sprint(id) }

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name, base, token string
		wantMsg           string
	}{
		{"not a URL", "api.telegram.org", token, "not an http(s) URL"},
		{"ftp", "ftp://api.telegram.org", token, "not an http(s) URL"},
		{"credentials", "https://u:p@api.telegram.org", token, "contains credentials"},
		{"query", "https://api.telegram.org?x=1", token, "query or fragment"},
		{"token in base", "https://api.telegram.org/bot" + token, token, "contains /bot"},
		{"empty token", "https://api.telegram.org", " ", "botToken is empty"},
		{"token without id", "https://api.telegram.org", "AAHsecretsecretsecret", "does not look like a bot token"},
		{"token with space", "https://api.telegram.org", token + " ", "does not look like a bot token"},
		{"token with slash", "https://api.telegram.org", "123:abc/def", "does not look like a bot token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.base, tt.token, nil)
			checkErr(t, err, sb.EINVALID, tt.wantMsg)
		})
	}
	c, err := New("https://api.telegram.org/", token, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{c.String(), fmt.Sprintf("%v %+v %#v %s", c, c, c, c)} {
		if strings.Contains(s, token) || strings.Contains(s, "AAH") {
			t.Errorf("String leaks the token: %s", s)
		}
	}
	if got, want := c.String(), "telegram client for bot 7000000001 at https://api.telegram.org"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestGetMeAndURL(t *testing.T) {
	f := newFixture(t)
	me, err := f.c.GetMe(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if want := (sb.TelegramUser{ID: 7000000001, IsBot: true, Username: "switchboard_test_bot", FirstName: "Switchboard"}); me != want {
		t.Errorf("GetMe = %+v, want %+v", me, want)
	}
	reqs := f.s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.HTTPMethod != http.MethodPost || r.Path != "/bot"+token+"/getMe" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("request = %s %s (%s), want POST /bot<token>/getMe as JSON", r.HTTPMethod, r.Path, r.Header.Get("Content-Type"))
	}
	if got := f.c.Calls(); got["getMe"] != 1 || len(got) != 1 {
		t.Errorf("Calls = %v, want getMe:1", got)
	}
}

func TestUnauthorized(t *testing.T) {
	f := newFixture(t)
	f.s.SetTokens("7000000001:AAHrotated-after-revoke_0123456789abcd")
	_, err := f.c.GetMe(ctx(t))
	checkErr(t, err, sb.EUNAUTHORIZED, "Telegram getMe:", "check telegram.botToken")
	_, err = f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "hi"})
	checkErr(t, err, sb.EUNAUTHORIZED, "check telegram.botToken")
}

func TestSendMessageRequestShape(t *testing.T) {
	f := newFixture(t)
	first, err := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "first"})
	if err != nil {
		t.Fatal(err)
	}
	kb := &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{{
		URLButton("Open", "https://ci.example.com/b/42"), CallbackButton("Approve", "approve:42")}}}
	sent, err := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "<b>Build</b> finished & <i>green</i>", ParseMode: ParseModeHTML,
		ReplyMarkup: kb, DisableWebPagePreview: true, ReplyToMessageID: first.MessageID})
	if err != nil {
		t.Fatal(err)
	}
	if want := (sb.TelegramSent{MessageID: first.MessageID + 1, ChatID: ann, Date: t0}); sent != want {
		t.Errorf("Sent = %+v, want %+v", sent, want)
	}
	reqs := f.s.Requests()
	got := string(reqs[len(reqs)-1].Body)
	want := `{"chat_id":1111,"text":"<b>Build</b> finished & <i>green</i>","parse_mode":"HTML",` +
		`"reply_markup":{"inline_keyboard":[[{"text":"Open","url":"https://ci.example.com/b/42"},{"text":"Approve","callback_data":"approve:42"}]]},` +
		`"link_preview_options":{"is_disabled":true},"reply_parameters":{"message_id":` + fmt.Sprint(first.MessageID) + `,"allow_sending_without_reply":true}}`
	if got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
	msgs := f.s.Messages(ann)
	m := msgs[len(msgs)-1]
	if m.Text != "Build finished & green" || m.RawText != "<b>Build</b> finished & <i>green</i>" || !m.LinkPreviewDisabled ||
		m.ReplyToMessage == nil || m.ReplyToMessage.MessageID != first.MessageID || m.ReplyMarkup == nil {
		t.Errorf("stored message = %+v", m)
	}
}

func TestSendMessageToChannelUsername(t *testing.T) {
	f := newFixture(t)
	sent, err := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: "@opsteam", Text: "deploy done"})
	if err != nil {
		t.Fatal(err)
	}
	if sent.ChatID != team {
		t.Errorf("ChatID = %d, want %d", sent.ChatID, team)
	}
	reqs := f.s.Requests()
	if !strings.Contains(string(reqs[0].Body), `"chat_id":"@opsteam"`) {
		t.Errorf("body = %s, want chat_id as string", reqs[0].Body)
	}
}

func TestSendMessageErrors(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(f *fixture)
		chat     string
		wantCode string
		wantMsg  []string
		wantWait time.Duration
	}{
		{"chat not found", nil, "42", sb.ENOTFOUND, []string{`chat "42" not found`, "/start", "telegram.chatId"}, 0},
		{"unknown channel", nil, "@nochannel", sb.ENOTFOUND, []string{`chat "@nochannel" not found`}, 0},
		{"blocked by the user", func(f *fixture) { f.s.SetBlocked(ann, true) }, chat(ann), sb.EFORBIDDEN,
			[]string{"blocked by the user or is not in the chat", "Forbidden: bot was blocked by the user"}, 0},
		{"kicked from the group", func(f *fixture) { f.s.SetBlocked(team, true) }, chat(team), sb.EFORBIDDEN,
			[]string{"not in the chat", "kicked from the supergroup chat"}, 0},
		{"429 with retry_after", func(f *fixture) { f.s.FailNext("sendMessage", 429, 7) }, chat(ann), sb.ERATELIMITED,
			[]string{"rate limited (429); wait 7s"}, 7 * time.Second},
		{"500", func(f *fixture) { f.s.FailNext("sendmessage", 500, 0) }, chat(ann), sb.EUNAVAILABLE,
			[]string{"Telegram failed (HTTP 500)", "try again later"}, 0},
		{"502 with Retry-After", func(f *fixture) { f.s.FailNext("SENDMESSAGE", 502, 30) }, chat(ann), sb.EUNAVAILABLE,
			[]string{"HTTP 502"}, 30 * time.Second},
		{"down behind nginx", func(f *fixture) { f.s.SetDown(true) }, chat(ann), sb.EUNAVAILABLE, []string{"HTTP 502"}, 0},
		{"BUTTON_DATA_INVALID", func(f *fixture) { f.s.FailNextWith("sendMessage", 400, "Bad Request: BUTTON_DATA_INVALID") }, chat(ann),
			sb.EINVALID, []string{"callback_data is invalid", "1–64 bytes"}, 0},
		{"too long after parsing", func(f *fixture) { f.s.FailNextWith("sendMessage", 400, "Bad Request: message is too long") }, chat(ann),
			sb.EINVALID, []string{"longer than 4096", "SendLong"}, 0},
		{"entities", func(f *fixture) {
			f.s.FailNextWith("sendMessage", 400, "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0")
		}, chat(ann), sb.EINVALID, []string{"cannot parse the text's markup", `Unsupported start tag "x"`}, 0},
		{"other 400 keeps Telegram's words", func(f *fixture) { f.s.FailNextWith("sendMessage", 400, "Bad Request: something new") }, chat(ann),
			sb.EINVALID, []string{"refused the request (400)", "Bad Request: something new"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.setup != nil {
				tt.setup(f)
			}
			_, err := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: tt.chat, Text: "hello"})
			e := checkErr(t, err, tt.wantCode, append([]string{"Telegram sendMessage: "}, tt.wantMsg...)...)
			if e.RetryAfter != tt.wantWait {
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tt.wantWait)
			}
			if got := f.c.Calls()["sendMessage"]; got != 1 {
				t.Errorf("sendMessage calls = %d, want 1 (the client never retries)", got)
			}
		})
	}
}

func TestRateLimitFromFake(t *testing.T) {
	f := newFixture(t)
	f.clock.Add(250 * time.Millisecond)
	f.s.SetRateLimit(1)
	if _, err := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "one"}); err != nil {
		t.Fatal(err)
	}
	_, err := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "two"})
	e := checkErr(t, err, sb.ERATELIMITED, "wait 1s")
	if e.RetryAfter != time.Second {
		t.Errorf("RetryAfter = %v, want 1s", e.RetryAfter)
	}
	// Another chat has its own budget; the next second opens the first again.
	if _, err := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(team), Text: "other chat"}); err != nil {
		t.Errorf("other chat: %v", err)
	}
	f.clock.Add(time.Second)
	if _, err := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "two"}); err != nil {
		t.Errorf("next second: %v", err)
	}
}

// stub is an httptest server answering every request with status, headers
// and body, for shapes the fake does not produce.
func stub(t *testing.T, status int, header map[string]string, body string) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, token, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRetryAfterSources(t *testing.T) {
	t0 := time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		body   string
		want   time.Duration
	}{
		{"parameters win", map[string]string{"Retry-After": "9"}, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 5","parameters":{"retry_after":5}}`, 5 * time.Second},
		{"header only", map[string]string{"Retry-After": "9"}, `{"ok":false,"error_code":429,"description":"Too Many Requests"}`, 9 * time.Second},
		{"header as date", map[string]string{"Retry-After": t0.Add(20 * time.Second).Format(http.TimeFormat)}, `{"ok":false,"error_code":429,"description":"Too Many Requests"}`, 20 * time.Second},
		{"description only", nil, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 12"}`, 12 * time.Second},
		{"nothing", nil, `{"ok":false,"error_code":429,"description":"Too Many Requests"}`, 0},
		{"not JSON", map[string]string{"Retry-After": "3"}, `<html>slow down</html>`, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := stub(t, 429, tt.header, tt.body)
			c.now = func() time.Time { return t0 }
			_, err := c.SendMessage(ctx(t), sb.TelegramText{ChatID: "1", Text: "x"})
			e := checkErr(t, err, sb.ERATELIMITED)
			if e.RetryAfter != tt.want {
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tt.want)
			}
		})
	}
}

func TestUnusualAnswers(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		header   map[string]string
		body     string
		wantCode string
		wantMsg  string
	}{
		{"200 not JSON", 200, nil, "<html>portal</html>", sb.EINTERNAL, "not Bot API JSON"},
		{"200 ok:false", 200, nil, `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`, sb.ENOTFOUND, "not found"},
		{"200 ok:false without code", 200, nil, `{"ok":false}`, sb.EINTERNAL, "unexpected answer"},
		{"200 wrong result shape", 200, nil, `{"ok":true,"result":[1,2]}`, sb.EINTERNAL, "unexpected shape"},
		{"redirect is not followed", 302, map[string]string{"Location": "https://elsewhere.example/"}, "", sb.EINTERNAL, "unexpected redirect"},
		{"404", 404, nil, `{"ok":false,"error_code":404,"description":"Not Found"}`, sb.ENOTFOUND, "telegram.apiBaseUrl"},
		{"418", 418, nil, `{"ok":false,"error_code":418,"description":"I'm a teapot"}`, sb.EINVALID, "HTTP 418"},
		{"migrated group", 400, nil, `{"ok":false,"error_code":400,"description":"Bad Request: group chat was upgraded to a supergroup chat","parameters":{"migrate_to_chat_id":-1009876543210}}`,
			sb.EINVALID, "upgraded to a supergroup whose chat id is -1009876543210"},
		{"description echoing the token is masked", 400, nil, `{"ok":false,"error_code":400,"description":"Bad Request: odd ` + token + `"}`, sb.EINVALID, "<redacted>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := stub(t, tt.status, tt.header, tt.body)
			_, err := c.SendMessage(ctx(t), sb.TelegramText{ChatID: "-100123", Text: "x"})
			checkErr(t, err, tt.wantCode, tt.wantMsg)
		})
	}
}

func TestTransportFailures(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		f := newFixture(t)
		f.s.SetDelay(2 * time.Second)
		hc := f.s.Client()
		hc.Timeout = 100 * time.Millisecond
		c, err := New(f.s.URL, token, hc)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "x"})
		checkErr(t, err, sb.EUNAVAILABLE, "no answer in time")
		if d := time.Since(start); d > time.Second {
			t.Errorf("took %v; the client timeout is 100ms", d)
		}
	})
	t.Run("context deadline", func(t *testing.T) {
		f := newFixture(t)
		f.s.SetDelay(2 * time.Second)
		c, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := f.c.GetMe(c)
		checkErr(t, err, sb.EUNAVAILABLE, "no answer in time")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("errors.Is(err, DeadlineExceeded) = false: %v", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		f := newFixture(t)
		c, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := f.c.GetMe(c)
		checkErr(t, err, sb.EUNAVAILABLE, "cancelled")
	})
	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		base := srv.URL
		srv.Close()
		c, err := New(base, token, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.GetMe(ctx(t))
		e := checkErr(t, err, sb.EUNAVAILABLE, "cannot reach Telegram at "+base, "telegram.apiBaseUrl")
		if !strings.Contains(err.Error(), `"http://127.0.0.1:`) || !strings.Contains(err.Error(), "/bot<redacted>/getMe\"") {
			t.Errorf("the transport error should keep a redacted URL: %v", e)
		}
	})
}

func TestLocalValidationSendsNothing(t *testing.T) {
	data64 := strings.Repeat("€", 21) + "x" // 63 + 1 bytes
	tests := []struct {
		name    string
		m       sb.TelegramText
		wantMsg string
	}{
		{"empty text", sb.TelegramText{ChatID: "1111", Text: ""}, "text is empty"},
		{"only spaces", sb.TelegramText{ChatID: "1111", Text: " \n\t "}, "text is empty"},
		{"4097 characters", sb.TelegramText{ChatID: "1111", Text: strings.Repeat("a", 4097)}, "4097 characters; Telegram allows 4096"},
		{"4097 multibyte characters", sb.TelegramText{ChatID: "1111", Text: strings.Repeat("ä", 4097)}, "4097 characters"},
		{"invalid UTF-8", sb.TelegramText{ChatID: "1111", Text: "a\xffb"}, "not valid UTF-8"},
		{"unknown parse mode", sb.TelegramText{ChatID: "1111", Text: "x", ParseMode: "html5"}, `parse mode "html5" is unknown`},
		{"chat id is a name", sb.TelegramText{ChatID: "ann", Text: "x"}, "neither a number nor @channelusername"},
		{"chat id zero", sb.TelegramText{ChatID: "0", Text: "x"}, "neither a number"},
		{"chat id empty", sb.TelegramText{ChatID: "", Text: "x"}, "neither a number"},
		{"button with url and data", sb.TelegramText{ChatID: "1111", Text: "x", ReplyMarkup: &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{
			{{Text: "Both", URL: "https://x.example", CallbackData: "d"}}}}}, `row 1, button 1 ("Both") sets both url and callback_data`},
		{"button with neither", sb.TelegramText{ChatID: "1111", Text: "x", ReplyMarkup: &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{
			{CallbackButton("ok", "1"), {Text: "Nothing"}}}}}, `row 1, button 2 ("Nothing") sets neither`},
		{"callback data 65 bytes", sb.TelegramText{ChatID: "1111", Text: "x", ReplyMarkup: &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{
			{CallbackButton("Approve", strings.Repeat("a", 65))}}}}, "callback_data has 65 bytes; Telegram allows 1–64 bytes"},
		{"callback data 22 characters, 66 bytes", sb.TelegramText{ChatID: "1111", Text: "x", ReplyMarkup: &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{
			{CallbackButton("Approve", strings.Repeat("€", 22))}}}}, "66 bytes"},
		{"callback data one byte too many", sb.TelegramText{ChatID: "1111", Text: "x", ReplyMarkup: &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{
			{CallbackButton("Approve", data64+"y")}}}}, "65 bytes"},
		{"button without text", sb.TelegramText{ChatID: "1111", Text: "x", ReplyMarkup: &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{
			{CallbackButton(" ", "d")}}}}, "row 1, button 1 has no text"},
		{"empty row", sb.TelegramText{ChatID: "1111", Text: "x", ReplyMarkup: &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{
			{CallbackButton("a", "a")}, {}}}}, "row 2 is empty"},
		{"relative url", sb.TelegramText{ChatID: "1111", Text: "x", ReplyMarkup: &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{
			{URLButton("Open", "/approvals/1")}}}}, "not an absolute http(s) or tg:// URL"},
	}
	f := newFixture(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.c.SendMessage(ctx(t), tt.m)
			checkErr(t, err, sb.EINVALID, "Telegram sendMessage: ", tt.wantMsg)
		})
	}
	if n := len(f.s.Requests()); n != 0 {
		t.Errorf("%d requests reached the server, want 0", n)
	}
	if n := len(f.c.Calls()); n != 0 {
		t.Errorf("Calls = %v, want none", f.c.Calls())
	}

	// The limits themselves pass: 64 bytes of callback_data, 4096 characters.
	kb := &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{{CallbackButton("Approve", data64), URLButton("Open", "tg://resolve?domain=x")}}}
	if _, err := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: strings.Repeat("ä", 4096), ReplyMarkup: kb}); err != nil {
		t.Errorf("4096 characters and 64 bytes of callback_data: %v", err)
	}
}

func TestHTMLLengthIsLeftToTelegram(t *testing.T) {
	f := newFixture(t)
	// 4096 characters of text, more with tags: Telegram counts after parsing.
	text := "<b>" + strings.Repeat("x", 4096) + "</b>"
	if _, err := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: text, ParseMode: ParseModeHTML}); err != nil {
		t.Fatalf("4096 characters inside <b>: %v", err)
	}
	_, err := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "<b>" + strings.Repeat("x", 4097) + "</b>", ParseMode: ParseModeHTML})
	checkErr(t, err, sb.EINVALID, "longer than 4096", "SendLong")
	_, err = f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "<b>open", ParseMode: ParseModeHTML})
	checkErr(t, err, sb.EINVALID, "cannot parse the text's markup")
}

// The outcome edit of an approval meets a 429: a short one is waited out
// once, so that the message loses its buttons; a second or a long one goes
// back to the caller.
func TestEditMessageWaitsOutOneShort429(t *testing.T) {
	tests := []struct {
		name       string
		fail       []int
		wantSleeps string
		wantCode   string
		wantText   string
	}{
		{"one short 429", []int{1}, "[1s]", "", "Approved."},
		{"two in a row", []int{1, 1}, "[1s]", sb.ERATELIMITED, "approve?"},
		{"a long wait", []int{30}, "[]", sb.ERATELIMITED, "approve?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			kb := &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{{CallbackButton("Approve", "a:1")}}}
			sent, err := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "approve?", ReplyMarkup: kb})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.fail {
				f.s.FailNext("editMessageText", 429, s)
			}
			err = f.c.EditMessageText(ctx(t), chat(ann), sent.MessageID, "Approved.", nil)
			if got := sb.ErrorCode(err); got != tt.wantCode {
				t.Fatalf("EditMessageText = %v, want code %q", err, tt.wantCode)
			}
			if got := fmt.Sprint(f.clock.Slept()); got != tt.wantSleeps {
				t.Errorf("slept %s, want %s", got, tt.wantSleeps)
			}
			msgs := f.s.Messages(ann)
			if len(msgs) != 1 || msgs[0].Text != tt.wantText {
				t.Errorf("chat has %+v, want one message reading %q", msgs, tt.wantText)
			}
		})
	}
}

func TestEditMessageText(t *testing.T) {
	f := newFixture(t)
	kb := &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{{CallbackButton("Approve", "a:1"), CallbackButton("Deny", "d:1")}}}
	sent, err := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "Delete /reports?", ReplyMarkup: kb})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Minute)
	if err := f.c.EditMessageText(ctx(t), chat(ann), sent.MessageID, "Delete /reports? Approved by Ann.", nil); err != nil {
		t.Fatal(err)
	}
	edits := f.s.Edits()
	if len(edits) != 1 || edits[0].Text != "Delete /reports? Approved by Ann." || edits[0].ReplyMarkup != nil || !edits[0].At.Equal(t0.Add(time.Minute)) {
		t.Fatalf("edits = %+v", edits)
	}
	m, _ := f.s.Message(sent.MessageID)
	if m.ReplyMarkup != nil || m.EditDate != t0.Add(time.Minute).Unix() {
		t.Errorf("message after the edit = %+v, want no buttons and an edit date", m)
	}

	// The same edit again: Telegram says "not modified".
	err = f.c.EditMessageText(ctx(t), chat(ann), sent.MessageID, "Delete /reports? Approved by Ann.", nil)
	checkErr(t, err, sb.ECONFLICT, fmt.Sprintf("message %d already has this text", sent.MessageID))

	// With a parse mode and new buttons.
	err = f.c.EditMessage(ctx(t), Edit{ChatID: chat(ann), MessageID: sent.MessageID, Text: "<b>Approved</b>", ParseMode: ParseModeHTML,
		ReplyMarkup: &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{{URLButton("Details", "https://sb.example/a/1")}}}})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := f.s.Message(sent.MessageID); m.Text != "Approved" || m.ReplyMarkup == nil {
		t.Errorf("message = %+v", m)
	}

	tests := []struct {
		name     string
		chat     string
		id       int64
		text     string
		wantCode string
		wantMsg  string
	}{
		{"unknown message", chat(ann), 999, "x", sb.ENOTFOUND, `message 999 not found in chat "1111"`},
		{"message of another chat", chat(team), sent.MessageID, "x", sb.ENOTFOUND, "not found"},
		{"unknown chat", "77", sent.MessageID, "x", sb.ENOTFOUND, `chat "77" not found`},
		{"zero id", chat(ann), 0, "x", sb.EINVALID, "message id 0 is not valid"},
		{"empty text", chat(ann), sent.MessageID, " ", sb.EINVALID, "text is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := f.c.EditMessageText(ctx(t), tt.chat, tt.id, tt.text, nil)
			checkErr(t, err, tt.wantCode, "Telegram editMessageText: ", tt.wantMsg)
		})
	}
	// A user's message cannot be edited by the bot.
	u := f.s.InjectMessage(ann, annUser, "hello bot")
	err = f.c.EditMessageText(ctx(t), chat(ann), u.Message.MessageID, "changed", nil)
	checkErr(t, err, sb.EINVALID, "message can't be edited")
}

func TestAnswerCallbackQuery(t *testing.T) {
	f := newFixture(t)
	kb := &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{{CallbackButton("Approve", "a:1")}}}
	sent, err := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "approve?", ReplyMarkup: kb})
	if err != nil {
		t.Fatal(err)
	}
	id := f.s.InjectCallback(annUser, sent.MessageID, "a:1")
	if err := f.c.AnswerCallbackQuery(ctx(t), id, "Approved", false); err != nil {
		t.Fatal(err)
	}
	if a := f.s.Answers(); len(a) != 1 || a[0].CallbackQueryID != id || a[0].Text != "Approved" || a[0].ShowAlert {
		t.Errorf("answers = %+v", a)
	}
	err = f.c.AnswerCallbackQuery(ctx(t), id, "again", true)
	checkErr(t, err, sb.EINVALID, "unknown, too old or already answered")

	old := f.s.InjectCallback(annUser, sent.MessageID, "a:1")
	f.clock.Add(tgfake.DefaultCallbackTTL + time.Second)
	err = f.c.AnswerCallbackQuery(ctx(t), old, "", false)
	checkErr(t, err, sb.EINVALID, "too old")

	err = f.c.AnswerCallbackQuery(ctx(t), "12345", "", false)
	checkErr(t, err, sb.EINVALID, "unknown")

	n := f.c.Calls()["answerCallbackQuery"]
	checkErr(t, f.c.AnswerCallbackQuery(ctx(t), "", "", false), sb.EINVALID, "id is empty")
	checkErr(t, f.c.AnswerCallbackQuery(ctx(t), id, strings.Repeat("ü", 201), false), sb.EINVALID, "201 characters")
	if got := f.c.Calls()["answerCallbackQuery"]; got != n {
		t.Errorf("local validation sent %d requests", got-n)
	}
	if err := f.c.AnswerCallbackQuery(ctx(t), f.s.InjectCallback(annUser, sent.MessageID, "a:1"), strings.Repeat("ü", 200), true); err != nil {
		t.Errorf("200 characters: %v", err)
	}
}

func TestGetUpdates(t *testing.T) {
	f := newFixture(t)
	kb := &sb.TelegramKeyboard{Rows: [][]sb.TelegramButton{{CallbackButton("Approve", "a:1")}}}
	sent, err := f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "approve?", ReplyMarkup: kb})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Add(time.Second)
	um := f.s.InjectMessage(ann, annUser, "/start")
	gm := f.s.InjectMessage(team, tgfake.User{ID: 2222, FirstName: "Bob", Username: "bob"}, "@switchboard_test_bot status?")
	cbID := f.s.InjectCallback(annUser, sent.MessageID, "a:1")

	ups, err := f.c.GetUpdates(ctx(t), 0, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != 3 {
		t.Fatalf("%d updates, want 3: %+v", len(ups), ups)
	}
	want0 := sb.TelegramUpdate{ID: um.UpdateID, Kind: sb.TelegramKindMessage, Message: &sb.TelegramMessage{ID: um.Message.MessageID,
		From: sb.TelegramUser{ID: ann, FirstName: "Ann", Username: "ann"}, Chat: sb.TelegramChat{ID: ann, Type: "private", Username: "ann"},
		Date: t0.Add(time.Second), Text: "/start"}}
	if got := ups[0]; got.ID != want0.ID || got.Kind != want0.Kind || *got.Message != *want0.Message {
		t.Errorf("update 0 = %+v %+v, want %+v", got, got.Message, want0.Message)
	}
	if got := ups[1].Message; got == nil || got.Chat != (sb.TelegramChat{ID: team, Type: "supergroup", Title: "Chat -1001234567890", Username: "opsteam"}) || got.From.ID != 2222 {
		t.Errorf("update 1 = %+v", got)
	}
	cb := ups[2].CallbackQuery
	if ups[2].Kind != sb.TelegramKindCallbackQuery || cb == nil || cb.ID != cbID || cb.Data != "a:1" || cb.From.ID != ann ||
		cb.Message == nil || cb.Message.ID != sent.MessageID || !cb.Message.From.IsBot || cb.ChatInstance == "" {
		t.Errorf("update 2 = %+v %+v", ups[2], cb)
	}
	if ups[0].ID+1 != ups[1].ID || ups[1].ID+1 != ups[2].ID {
		t.Errorf("update ids %d %d %d do not increase by one", ups[0].ID, ups[1].ID, ups[2].ID)
	}
	_ = gm

	// Offset 0 confirms nothing; last+1 confirms everything.
	again, err := f.c.GetUpdates(ctx(t), 0, 0, nil)
	if err != nil || len(again) != 3 {
		t.Fatalf("again: %d updates, %v; want the same 3", len(again), err)
	}
	rest, err := f.c.GetUpdates(ctx(t), ups[1].ID, 0, nil)
	if err != nil || len(rest) != 2 || rest[0].ID != ups[1].ID {
		t.Fatalf("offset = second id: %+v, %v; want the last two", rest, err)
	}
	none, err := f.c.GetUpdates(ctx(t), ups[2].ID+1, 0, nil)
	if err != nil || len(none) != 0 {
		t.Fatalf("after confirming all: %+v, %v; want none", none, err)
	}
	if n := len(f.s.Pending()); n != 0 {
		t.Errorf("%d updates still pending at the fake", n)
	}

	// allowed_updates filters, and the setting sticks for later polls.
	f.s.InjectMessage(ann, annUser, "ignored")
	f.s.InjectCallback(annUser, sent.MessageID, "a:1")
	only, err := f.c.GetUpdates(ctx(t), 0, 0, []string{sb.TelegramKindCallbackQuery})
	if err != nil || len(only) != 1 || only[0].Kind != sb.TelegramKindCallbackQuery {
		t.Fatalf("only callbacks: %+v, %v", only, err)
	}
	f.s.InjectMessage(ann, annUser, "still ignored")
	later, err := f.c.GetUpdates(ctx(t), only[0].ID+1, 0, nil)
	if err != nil || len(later) != 0 {
		t.Errorf("the previous allowed_updates should stick: %+v, %v", later, err)
	}
	// An empty list is the default kinds again (for updates from then on:
	// the server does not keep kinds nobody asked for).
	if _, err := f.c.GetUpdates(ctx(t), only[0].ID+1, 0, []string{}); err != nil {
		t.Fatal(err)
	}
	body := f.s.Requests()[len(f.s.Requests())-1].Body
	if !strings.Contains(string(body), `"allowed_updates":[]`) {
		t.Errorf("body = %s, want allowed_updates:[]", body)
	}
	f.s.InjectMessage(ann, annUser, "seen")
	all, err := f.c.GetUpdates(ctx(t), only[0].ID+1, 0, nil)
	if err != nil || len(all) != 1 || all[0].Message == nil || all[0].Message.Text != "seen" {
		t.Errorf("default kinds: %+v, %v", all, err)
	}
}

func TestGetUpdatesLongPoll(t *testing.T) {
	f := newFixture(t)
	f.s.SetLongPollCap(3 * time.Second)

	// An update that arrives while the poll waits ends it with that update.
	type polled struct {
		ups []sb.TelegramUpdate
		err error
	}
	got := make(chan polled, 1)
	go func() {
		ups, err := f.c.GetUpdates(ctx(t), 0, 30*time.Second, nil)
		got <- polled{ups, err}
	}()
	waitCtx, cancel := context.WithTimeout(ctx(t), 5*time.Second)
	defer cancel()
	if err := f.s.AwaitLongPolls(waitCtx, 1); err != nil {
		t.Fatalf("the poll never waited: %v", err)
	}
	f.s.InjectMessage(ann, annUser, "are you there?")
	var p polled
	select {
	case p = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting poll did not end with the update")
	}
	ups, err := p.ups, p.err
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != 1 || ups[0].Message.Text != "are you there?" {
		t.Fatalf("updates = %+v", ups)
	}
	if !strings.Contains(string(f.s.Requests()[0].Body), `"timeout":30`) {
		t.Errorf("body = %s, want timeout 30", f.s.Requests()[0].Body)
	}

	// Nothing arrives: the poll waits its timeout (here the fake's cap) and
	// answers an empty list.
	f.s.SetLongPollCap(300 * time.Millisecond)
	ups, err = f.c.GetUpdates(ctx(t), ups[0].ID+1, 5*time.Second, nil)
	if err != nil || len(ups) != 0 {
		t.Fatalf("empty poll: %+v, %v", ups, err)
	}
	if n := f.s.LongPollWaits(); n != 2 {
		t.Errorf("the empty poll did not wait on the server (%d waits in all, want 2)", n)
	}

	// A timeout the HTTP client cannot wait for is refused locally.
	hc := f.s.Client()
	hc.Timeout = 10 * time.Second
	c, _ := New(f.s.URL, token, hc)
	_, err = c.GetUpdates(ctx(t), 0, 10*time.Second, nil)
	checkErr(t, err, sb.EINVALID, "not shorter than the HTTP client's timeout")
	_, err = c.GetUpdates(ctx(t), 0, -time.Second, nil)
	checkErr(t, err, sb.EINVALID, "negative")
	if c.Calls()["getUpdates"] != 0 {
		t.Errorf("local validation sent a request")
	}
}

func TestGetUpdatesConflicts(t *testing.T) {
	f := newFixture(t)
	f.s.SetLongPollCap(5 * time.Second)

	// A second poller ends the first with 409.
	errc := make(chan error, 1)
	go func() {
		_, err := f.c.GetUpdates(ctx(t), 0, 5*time.Second, nil)
		errc <- err
	}()
	waitCtx, cancel := context.WithTimeout(ctx(t), 5*time.Second)
	defer cancel()
	if err := f.s.AwaitLongPolls(waitCtx, 1); err != nil {
		t.Fatalf("the first poll never waited: %v", err)
	}
	other, _ := New(f.s.URL, token, f.s.Client())
	go func() { _, _ = other.GetUpdates(context.Background(), 0, time.Second, nil) }()
	select {
	case err := <-errc:
		checkErr(t, err, sb.ECONFLICT, "another getUpdates poller", "Conflict: terminated by other getUpdates request")
	case <-time.After(3 * time.Second):
		t.Fatal("the first poll was not ended by the second")
	}

	// A webhook makes getUpdates conflict, until it is deleted.
	if err := f.c.SetWebhook(ctx(t), "https://sb.example/hooks/telegram", "s3cret_-", nil, false); err != nil {
		t.Fatal(err)
	}
	_, err := f.c.GetUpdates(ctx(t), 0, 0, nil)
	checkErr(t, err, sb.ECONFLICT, "while a webhook is set", "DeleteWebhook", "can't use getUpdates method while webhook is active")
	if err := f.c.DeleteWebhook(ctx(t), false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.GetUpdates(ctx(t), 0, 0, nil); err != nil {
		t.Errorf("after DeleteWebhook: %v", err)
	}
}

func TestSetWebhookValidation(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name, url, secret string
		wantMsg           string
	}{
		{"empty url", "", "abc", "absolute https URL"},
		{"relative url", "/hooks/telegram", "abc", "absolute https URL"},
		{"secret with +", "https://sb.example/h", "abc+def=", "1–256 characters of A-Z, a-z, 0-9, _ and -"},
		{"secret with space", "https://sb.example/h", "abc def", "telegram.webhookSecret"},
		{"secret too long", "https://sb.example/h", strings.Repeat("a", 257), "1–256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := f.c.SetWebhook(ctx(t), tt.url, tt.secret, nil, false)
			e := checkErr(t, err, sb.EINVALID, "Telegram setWebhook: ", tt.wantMsg)
			if tt.secret != "abc" && strings.Contains(e.Message, tt.secret) {
				t.Errorf("the message quotes the secret: %s", e.Message)
			}
		})
	}
	if n := len(f.s.Requests()); n != 0 {
		t.Errorf("%d requests sent, want 0", n)
	}
	if err := f.c.SetWebhook(ctx(t), "https://sb.example/h", strings.Repeat("a", 256), []string{"message", "callback_query"}, true); err != nil {
		t.Errorf("256 characters: %v", err)
	}
	w := f.s.Webhook()
	if w.URL != "https://sb.example/h" || len(w.SecretToken) != 256 || len(w.AllowedUpdates) != 2 {
		t.Errorf("webhook = %+v", w)
	}
	if got := string(f.s.Requests()[0].Body); !strings.Contains(got, `"allowed_updates":["message","callback_query"],"drop_pending_updates":true`) {
		t.Errorf("body = %s", got)
	}
}

func TestWebhookPushWithSecret(t *testing.T) {
	f := newFixture(t)
	const secret = "Sw1tchboard_hook-secret"
	type got struct {
		header string
		update sb.TelegramUpdate
		err    error
	}
	var (
		mu       sync.Mutex
		received []got
		status   = http.StatusOK
	)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u, err := ParseUpdate(body)
		mu.Lock()
		defer mu.Unlock()
		received = append(received, got{header: r.Header.Get(SecretTokenHeader), update: u, err: err})
		if !tgtoken.SecretMatches(r.Header.Get(SecretTokenHeader), secret) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(receiver.Close)

	if err := f.c.SetWebhook(ctx(t), receiver.URL+"/hooks/telegram", secret, []string{"message", "callback_query"}, false); err != nil {
		t.Fatal(err)
	}
	info, err := f.c.GetWebhookInfo(ctx(t))
	if err != nil || info.URL != receiver.URL+"/hooks/telegram" || info.MaxConnections != 40 || len(info.AllowedUpdates) != 2 {
		t.Fatalf("info = %+v, %v", info, err)
	}

	u := f.s.InjectMessage(ann, annUser, "Rocket.Chat is down, are you there?")
	ds, err := f.s.PushPending(ctx(t))
	if err != nil || len(ds) != 1 || !ds[0].OK() || ds[0].SecretToken != secret {
		t.Fatalf("deliveries = %+v, %v", ds, err)
	}
	mu.Lock()
	r := received[0]
	mu.Unlock()
	if r.header != secret || r.err != nil || r.update.ID != u.UpdateID || r.update.Message == nil ||
		r.update.Message.Text != "Rocket.Chat is down, are you there?" || r.update.Message.From.ID != ann {
		t.Errorf("received = %+v (%+v)", r, r.update.Message)
	}
	if n := len(f.s.Pending()); n != 0 {
		t.Errorf("%d updates pending after a 200", n)
	}

	// The receiver refuses: the update stays pending and the webhook shows
	// the error.
	mu.Lock()
	status = http.StatusServiceUnavailable
	mu.Unlock()
	f.clock.Add(time.Minute)
	f.s.InjectMessage(ann, annUser, "second")
	ds, _ = f.s.PushPending(ctx(t))
	if len(ds) != 1 || ds[0].OK() || ds[0].Status != http.StatusServiceUnavailable {
		t.Fatalf("deliveries = %+v", ds)
	}
	info, err = f.c.GetWebhookInfo(ctx(t))
	if err != nil || info.PendingUpdateCount != 1 || info.LastErrorMessage != "Wrong response from the webhook: 503 Service Unavailable" ||
		!info.LastErrorDate.Equal(t0.Add(time.Minute)) {
		t.Errorf("info = %+v, %v", info, err)
	}

	// A forged update without the secret is refused by the receiver.
	mu.Lock()
	status = http.StatusOK
	mu.Unlock()
	if err := f.c.SetWebhook(ctx(t), receiver.URL+"/hooks/telegram", "other-secret", nil, false); err != nil {
		t.Fatal(err)
	}
	d, err := f.s.PushUpdate(ctx(t), tgfake.Update{Message: &tgfake.Message{MessageID: 1, Chat: tgfake.Chat{ID: ann, Type: "private"}, Text: "forged"}})
	if err != nil || d.Status != http.StatusUnauthorized {
		t.Errorf("forged delivery = %+v, %v; want 401 from the receiver", d, err)
	}

	// Deleting the webhook hands the pending update to getUpdates.
	if err := f.c.DeleteWebhook(ctx(t), false); err != nil {
		t.Fatal(err)
	}
	ups, err := f.c.GetUpdates(ctx(t), 0, 0, nil)
	if err != nil || len(ups) != 1 || ups[0].Message.Text != "second" {
		t.Errorf("after DeleteWebhook: %+v, %v", ups, err)
	}
	if _, err := f.s.PushPending(ctx(t)); !errors.Is(err, tgfake.ErrNoWebhook) {
		t.Errorf("PushPending without webhook: %v", err)
	}
}

func TestParseUpdate(t *testing.T) {
	// Updates in the shapes of the Bot API documentation.
	msg := `{"update_id": 10000,
 "message": {"message_id": 1365, "from": {"id": 1111, "is_bot": false, "first_name": "Ann", "username": "ann", "language_code": "en"},
             "chat": {"id": 1111, "type": "private", "first_name": "Ann", "username": "ann"},
             "date": 1714564800, "text": "/start", "entities": [{"offset":0,"length":6,"type":"bot_command"}]}}`
	cb := `{"update_id": 10001,
 "callback_query": {"id": "4382bfdwdsb323b2d9", "from": {"id": 1111, "is_bot": false, "first_name": "Ann"},
   "message": {"message_id": 1366, "chat": {"id": 1111, "type": "private"}, "date": 1714564801, "text": "Build finished"},
   "chat_instance": "-8473892", "data": "approve:42"}}`
	tests := []struct {
		name string
		body string
		want sb.TelegramUpdate
	}{
		{"message", msg, sb.TelegramUpdate{ID: 10000, Kind: sb.TelegramKindMessage, Message: &sb.TelegramMessage{ID: 1365, From: sb.TelegramUser{ID: 1111, FirstName: "Ann", Username: "ann"},
			Chat: sb.TelegramChat{ID: 1111, Type: "private", Username: "ann"}, Date: time.Unix(1714564800, 0).UTC(), Text: "/start"}}},
		{"callback", cb, sb.TelegramUpdate{ID: 10001, Kind: sb.TelegramKindCallbackQuery, CallbackQuery: &sb.TelegramCallback{ID: "4382bfdwdsb323b2d9",
			From: sb.TelegramUser{ID: 1111, FirstName: "Ann"}, ChatInstance: "-8473892", Data: "approve:42",
			Message: &sb.TelegramMessage{ID: 1366, Chat: sb.TelegramChat{ID: 1111, Type: "private"}, Date: time.Unix(1714564801, 0).UTC(), Text: "Build finished"}}}},
		{"other kind", `{"update_id": 10002, "my_chat_member": {"chat": {"id": 1, "type": "private"}}}`, sb.TelegramUpdate{ID: 10002, Kind: "my_chat_member"}},
		{"inaccessible message", `{"update_id": 3, "callback_query": {"id": "9", "from": {"id": 5, "is_bot": false, "first_name": "X"},
			"message": {"message_id": 7, "chat": {"id": 5, "type": "private"}, "date": 0}, "chat_instance": "1", "data": "d"}}`,
			sb.TelegramUpdate{ID: 3, Kind: sb.TelegramKindCallbackQuery, CallbackQuery: &sb.TelegramCallback{ID: "9", From: sb.TelegramUser{ID: 5, FirstName: "X"}, ChatInstance: "1", Data: "d",
				Message: &sb.TelegramMessage{ID: 7, Chat: sb.TelegramChat{ID: 5, Type: "private"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseUpdate([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tt.want)
			if string(gj) != string(wj) {
				t.Errorf("got  %s\nwant %s", gj, wj)
			}
		})
	}
	for _, bad := range []string{``, `[]`, `{"ok":true}`, `not json`} {
		_, err := ParseUpdate([]byte(bad))
		checkErr(t, err, sb.EINVALID, "not a Telegram Update")
	}
}

func TestValidateSecretToken(t *testing.T) {
	if err := ValidateSecretToken("ok_-09AZaz"); err != nil {
		t.Errorf("valid secret: %v", err)
	}
	checkErr(t, ValidateSecretToken(""), sb.EINVALID, "1–256")
}

func TestCalls(t *testing.T) {
	f := newFixture(t)
	f.c.GetMe(ctx(t))
	f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: "a"})
	f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: "404", Text: "b"}) // fails, still counted
	f.c.SendMessage(ctx(t), sb.TelegramText{ChatID: chat(ann), Text: ""})
	f.c.GetUpdates(ctx(t), 0, 0, nil)
	want := map[string]int{"getMe": 1, "sendMessage": 2, "getUpdates": 1}
	got := f.c.Calls()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Calls = %v, want %v", got, want)
	}
	if f.s.Calls("sendmessage") != 2 {
		t.Errorf("the fake counted %d sendMessage calls", f.s.Calls("sendMessage"))
	}
}
