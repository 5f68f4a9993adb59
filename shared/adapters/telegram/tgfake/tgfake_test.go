package tgfake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/telegram/tgfake"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
)

type fakeClock = clocktest.Clock

var t0 = time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)

const (
	tok   = tgfake.DefaultToken
	ann   = int64(1111)
	group = int64(-4000000001)
)

var annUser = tgfake.User{ID: ann, FirstName: "Ann", Username: "ann"}

type world struct {
	s     *tgfake.Server
	clock *fakeClock
}

func newWorld(t *testing.T) *world {
	t.Helper()
	s := tgfake.New()
	t.Cleanup(s.Close)
	w := &world{s: s, clock: clocktest.New(t0)}
	s.SetClock(w.clock.Now)
	s.AddUser(annUser)
	s.AddChat(group, "group")
	return w
}

type answer struct {
	status int
	header http.Header
	raw    string
	obj    map[string]any
}

func (a answer) desc() string { s, _ := a.obj["description"].(string); return s }

func (a answer) result() map[string]any { m, _ := a.obj["result"].(map[string]any); return m }

// call POSTs body (JSON-encoded unless it is url.Values or []byte) to
// /bot<token>/<method>.
func (w *world) call(t *testing.T, token, method string, body any) answer {
	t.Helper()
	var rd io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case url.Values:
		rd, ct = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	case []byte:
		rd, ct = bytes.NewReader(b), "application/json"
	default:
		j, _ := json.Marshal(b)
		rd, ct = bytes.NewReader(j), "application/json"
	}
	return w.raw(t, http.MethodPost, "/bot"+token+"/"+method, ct, rd)
}

func (w *world) raw(t *testing.T, httpMethod, path, ct string, body io.Reader) answer {
	t.Helper()
	req, err := http.NewRequest(httpMethod, w.s.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := w.s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(b)}
	_ = json.Unmarshal(b, &a.obj)
	return a
}

func (w *world) send(t *testing.T, body map[string]any) answer {
	t.Helper()
	return w.call(t, tok, "sendMessage", body)
}

func wantError(t *testing.T, a answer, status int, desc string) {
	t.Helper()
	if a.status != status || a.obj["ok"] != false || a.obj["error_code"] != float64(status) || a.desc() != desc {
		t.Errorf("answer = %d %s, want %d %q", a.status, a.raw, status, desc)
	}
}

func wantOK(t *testing.T, a answer) {
	t.Helper()
	if a.status != 200 || a.obj["ok"] != true {
		t.Fatalf("answer = %d %s, want ok", a.status, a.raw)
	}
}

func TestPathsMethodsAndTokens(t *testing.T) {
	w := newWorld(t)
	notFound := `{"ok":false,"error_code":404,"description":"Not Found"}` + "\n"
	for _, p := range []string{"/", "/bot" + tok, "/bot" + tok + "/", "/bot" + tok + "/getMe/x", "/getMe", "/file/bot" + tok + "/x"} {
		a := w.raw(t, http.MethodGet, p, "", nil)
		if a.status != 404 || a.raw != notFound || a.header.Get("Content-Type") != "application/json" {
			t.Errorf("GET %s = %d %q, want 404 %q", p, a.status, a.raw, notFound)
		}
	}
	wantError(t, w.call(t, tok, "sendPhoto", nil), 404, "Not Found")
	wantError(t, w.call(t, "7000000001:wrong", "getMe", nil), 401, "Unauthorized")
	wantError(t, w.call(t, "7000000001:wrong", "noSuchMethod", nil), 401, "Unauthorized") // the token first
	for _, bad := range []string{"nocolon", "0123:abc", "-5:abc", strings.Repeat("1", 81) + ":x"} {
		wantError(t, w.call(t, bad, "getMe", nil), 401, "Unauthorized: invalid token specified")
	}

	// Names are case-insensitive; GET with a query string works as POST.
	for _, m := range []string{"getMe", "GETME", "getme"} {
		a := w.raw(t, http.MethodGet, "/bot"+tok+"/"+m, "", nil)
		wantOK(t, a)
		if r := a.result(); r["id"] != float64(7000000001) || r["is_bot"] != true || r["username"] != "switchboard_test_bot" {
			t.Errorf("getMe = %v", r)
		}
	}
	wantOK(t, w.raw(t, http.MethodGet, "/bot"+tok+"/SendMessage?chat_id=1111&text=hi", "", nil))
	// Calls counts every request of a valid shape, bad tokens included.
	if w.s.Calls("getme") != 8 || w.s.Calls("sendMessage") != 1 || w.s.Calls("sendPhoto") != 1 {
		t.Errorf("calls: getMe %d, sendMessage %d, sendPhoto %d", w.s.Calls("getMe"), w.s.Calls("sendMessage"), w.s.Calls("sendPhoto"))
	}
	reqs := w.s.Requests()
	if last := reqs[len(reqs)-1]; last.Method != "sendMessage" || last.Params["chat_id"] != "1111" || last.Token != tok {
		t.Errorf("recorded %+v", last)
	}

	// Form and multipart bodies.
	wantOK(t, w.call(t, tok, "sendMessage", url.Values{"chat_id": {"1111"}, "text": {"form"},
		"reply_markup": {`{"inline_keyboard":[[{"text":"A","callback_data":"a"}]]}`}}))
	var mb bytes.Buffer
	mw := multipart.NewWriter(&mb)
	mw.WriteField("chat_id", "1111")
	mw.WriteField("text", "multipart")
	mw.Close()
	wantOK(t, w.raw(t, http.MethodPost, "/bot"+tok+"/sendMessage", mw.FormDataContentType(), &mb))
	msgs := w.s.Messages(ann)
	if len(msgs) != 3 || msgs[1].Text != "form" || msgs[1].ReplyMarkup == nil || msgs[2].Text != "multipart" {
		t.Errorf("messages = %+v", msgs)
	}
	wantError(t, w.call(t, tok, "sendMessage", []byte(`[1,2]`)), 400, "Bad Request: can't parse JSON object")

	// Rotated tokens: the old one stops working.
	const rotated = "7000000001:AAHrotated_0123456789abcdefghijklmnopq"
	w.s.SetTokens(rotated)
	wantError(t, w.call(t, tok, "getMe", nil), 401, "Unauthorized")
	wantOK(t, w.call(t, rotated, "getMe", nil))
}

func TestSendMessageRules(t *testing.T) {
	data64 := strings.Repeat("€", 21) + "x"
	kb := func(buttons ...map[string]any) map[string]any {
		row := []any{}
		for _, b := range buttons {
			row = append(row, b)
		}
		return map[string]any{"inline_keyboard": []any{row}}
	}
	tests := []struct {
		name   string
		body   map[string]any
		status int
		desc   string
	}{
		{"no chat_id", map[string]any{"text": "x"}, 400, "Bad Request: chat_id is empty"},
		{"unknown chat", map[string]any{"chat_id": 42, "text": "x"}, 400, "Bad Request: chat not found"},
		{"unknown @name", map[string]any{"chat_id": "@nobody", "text": "x"}, 400, "Bad Request: chat not found"},
		{"chat id as string", map[string]any{"chat_id": "1111", "text": "x"}, 200, ""},
		{"no text", map[string]any{"chat_id": ann}, 400, "Bad Request: message text is empty"},
		{"only spaces", map[string]any{"chat_id": ann, "text": " \n\t"}, 400, "Bad Request: message text is empty"},
		{"4096 characters", map[string]any{"chat_id": ann, "text": strings.Repeat("ä", 4096)}, 200, ""},
		{"4096 astral characters", map[string]any{"chat_id": ann, "text": strings.Repeat("😀", 4096)}, 200, ""},
		{"4097 characters", map[string]any{"chat_id": ann, "text": strings.Repeat("ä", 4097)}, 400, "Bad Request: message is too long"},
		{"4096 after trimming", map[string]any{"chat_id": ann, "text": "\n " + strings.Repeat("a", 4096) + " "}, 200, ""},
		{"HTML counts parsed text", map[string]any{"chat_id": ann, "parse_mode": "HTML", "text": "<b>" + strings.Repeat("a", 4092) + "</b>&amp;&lt;&gt;&quot;"}, 200, ""},
		{"HTML too long after parsing", map[string]any{"chat_id": ann, "parse_mode": "html", "text": "<i>" + strings.Repeat("a", 4097) + "</i>"}, 400, "Bad Request: message is too long"},
		{"HTML unclosed", map[string]any{"chat_id": ann, "parse_mode": "HTML", "text": "<b>bold"}, 400, "Bad Request: can't parse entities: can't find end tag corresponding to start tag \"b\""},
		{"HTML unknown tag", map[string]any{"chat_id": ann, "parse_mode": "HTML", "text": "<div>x</div>"}, 400, "Bad Request: can't parse entities: unsupported start tag \"div\" at byte offset 0"},
		{"HTML only tags", map[string]any{"chat_id": ann, "parse_mode": "HTML", "text": "<b> </b>"}, 400, "Bad Request: message text is empty"},
		{"unknown parse mode", map[string]any{"chat_id": ann, "parse_mode": "bbcode", "text": "x"}, 400, "Bad Request: unsupported parse_mode"},
		{"64-byte callback_data", map[string]any{"chat_id": ann, "text": "x", "reply_markup": kb(map[string]any{"text": "A", "callback_data": data64})}, 200, ""},
		{"65-byte callback_data", map[string]any{"chat_id": ann, "text": "x", "reply_markup": kb(map[string]any{"text": "A", "callback_data": data64 + "y"})}, 400, "Bad Request: BUTTON_DATA_INVALID"},
		{"empty callback_data", map[string]any{"chat_id": ann, "text": "x", "reply_markup": kb(map[string]any{"text": "A", "callback_data": ""})}, 400, "Bad Request: BUTTON_DATA_INVALID"},
		{"button without action", map[string]any{"chat_id": ann, "text": "x", "reply_markup": kb(map[string]any{"text": "A"})}, 400, "Bad Request: text buttons are unallowed in the inline keyboard"},
		{"url button", map[string]any{"chat_id": ann, "text": "x", "reply_markup": kb(map[string]any{"text": "A", "url": "https://x.example"})}, 200, ""},
		{"markup as JSON text", map[string]any{"chat_id": ann, "text": "x", "reply_markup": `{"inline_keyboard":[[{"text":"A","callback_data":"a"}]]}`}, 200, ""},
		{"broken markup", map[string]any{"chat_id": ann, "text": "x", "reply_markup": `{"inline`}, 400, "Bad Request: can't parse reply keyboard markup JSON object"},
		{"reply to a missing message", map[string]any{"chat_id": ann, "text": "x", "reply_to_message_id": 999}, 400, "Bad Request: message to be replied not found"},
		{"reply to a missing message allowed", map[string]any{"chat_id": ann, "text": "x", "reply_parameters": map[string]any{"message_id": 999, "allow_sending_without_reply": true}}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			a := w.send(t, tt.body)
			if tt.status == 200 {
				wantOK(t, a)
				return
			}
			wantError(t, a, tt.status, tt.desc)
			if n := len(w.s.Messages(ann)); n != 0 {
				t.Errorf("a refused message was stored (%d)", n)
			}
		})
	}
}

func TestSendMessageResult(t *testing.T) {
	w := newWorld(t)
	w.s.SetChatUsername(group, "@Ops_Team")
	first := w.send(t, map[string]any{"chat_id": "@ops_team", "text": "hello"})
	wantOK(t, first)
	a := w.send(t, map[string]any{"chat_id": group, "text": "<b>Build</b> &amp; deploy", "parse_mode": "HTML",
		"reply_parameters":     map[string]any{"message_id": first.result()["message_id"]},
		"link_preview_options": map[string]any{"is_disabled": true},
		"reply_markup":         map[string]any{"inline_keyboard": [][]map[string]any{{{"text": "Approve", "callback_data": "a:1"}}}}})
	wantOK(t, a)
	r := a.result()
	from, _ := r["from"].(map[string]any)
	chat, _ := r["chat"].(map[string]any)
	reply, _ := r["reply_to_message"].(map[string]any)
	if r["message_id"] != first.result()["message_id"].(float64)+1 || r["date"] != float64(t0.Unix()) || r["text"] != "Build & deploy" ||
		from["id"] != float64(7000000001) || from["is_bot"] != true ||
		chat["id"] != float64(group) || chat["type"] != "group" || chat["title"] != fmt.Sprint("Chat ", group) || chat["username"] != "Ops_Team" ||
		reply["text"] != "hello" || r["reply_markup"] == nil {
		t.Errorf("result = %s", a.raw)
	}
	m := w.s.Messages(group)[1]
	if m.RawText != "<b>Build</b> &amp; deploy" || m.ParseMode != "HTML" || !m.LinkPreviewDisabled {
		t.Errorf("stored = %+v", m)
	}
}

func TestBlockedChats(t *testing.T) {
	w := newWorld(t)
	w.s.AddChat(-1001, "supergroup")
	w.s.AddChat(-1002, "channel")
	for id, desc := range map[int64]string{
		ann:   "Forbidden: bot was blocked by the user",
		group: "Forbidden: bot was kicked from the group chat",
		-1001: "Forbidden: bot was kicked from the supergroup chat",
		-1002: "Forbidden: bot is not a member of the channel chat",
	} {
		w.s.SetBlocked(id, true)
		wantError(t, w.send(t, map[string]any{"chat_id": id, "text": "x"}), 403, desc)
		w.s.SetBlocked(id, false)
		wantOK(t, w.send(t, map[string]any{"chat_id": id, "text": "x"}))
	}
}

func TestEditMessageText(t *testing.T) {
	w := newWorld(t)
	markup := map[string]any{"inline_keyboard": [][]map[string]any{{{"text": "Approve", "callback_data": "a:1"}}}}
	sent := w.send(t, map[string]any{"chat_id": ann, "text": "approve?", "reply_markup": markup})
	id := sent.result()["message_id"]
	user := w.s.InjectMessage(ann, annUser, "hi")

	notModified := "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"
	wantError(t, w.call(t, tok, "editMessageText", map[string]any{"chat_id": ann, "message_id": id, "text": "approve?", "reply_markup": markup}), 400, notModified)
	wantError(t, w.call(t, tok, "editMessageText", map[string]any{"chat_id": ann, "message_id": 999, "text": "x"}), 400, "Bad Request: message to edit not found")
	wantError(t, w.call(t, tok, "editMessageText", map[string]any{"chat_id": group, "message_id": id, "text": "x"}), 400, "Bad Request: message to edit not found")
	wantError(t, w.call(t, tok, "editMessageText", map[string]any{"chat_id": ann, "message_id": user.Message.MessageID, "text": "x"}), 400, "Bad Request: message can't be edited")
	wantError(t, w.call(t, tok, "editMessageText", map[string]any{"chat_id": ann, "message_id": id, "text": ""}), 400, "Bad Request: message text is empty")
	wantError(t, w.call(t, tok, "editMessageText", map[string]any{"chat_id": ann, "message_id": id, "text": strings.Repeat("a", 4097)}), 400, "Bad Request: message is too long")
	if len(w.s.Edits()) != 0 {
		t.Fatalf("edits = %+v", w.s.Edits())
	}

	// Same text without reply_markup removes the buttons: that is a change.
	w.clock.Add(time.Minute)
	a := w.call(t, tok, "editMessageText", map[string]any{"chat_id": ann, "message_id": id, "text": "approve?"})
	wantOK(t, a)
	if r := a.result(); r["reply_markup"] != nil || r["edit_date"] != float64(t0.Add(time.Minute).Unix()) {
		t.Errorf("result = %s", a.raw)
	}
	wantError(t, w.call(t, tok, "editMessageText", map[string]any{"chat_id": ann, "message_id": id, "text": "approve?"}), 400, notModified)
	e := w.s.Edits()
	if len(e) != 1 || e[0].ReplyMarkup != nil || e[0].Text != "approve?" || !e[0].At.Equal(t0.Add(time.Minute)) {
		t.Errorf("edits = %+v", e)
	}
}

func TestAnswerCallbackQuery(t *testing.T) {
	w := newWorld(t)
	sent := w.send(t, map[string]any{"chat_id": ann, "text": "approve?",
		"reply_markup": map[string]any{"inline_keyboard": [][]map[string]any{{{"text": "Approve", "callback_data": "a:1"}, {"text": "Web", "url": "https://x.example"}}}}})
	id := int64(sent.result()["message_id"].(float64))
	tooOld := "Bad Request: query is too old and response timeout expired or query ID is invalid"

	q := w.s.InjectCallback(annUser, id, "a:1")
	if q == "" || strings.Trim(q, "0123456789") != "" {
		t.Errorf("callback id %q, want a numeric string", q)
	}
	a := w.call(t, tok, "answerCallbackQuery", map[string]any{"callback_query_id": q, "text": "Approved", "show_alert": true, "cache_time": 5})
	wantOK(t, a)
	if a.obj["result"] != true {
		t.Errorf("result = %s", a.raw)
	}
	wantError(t, w.call(t, tok, "answerCallbackQuery", map[string]any{"callback_query_id": q}), 400, tooOld)
	wantError(t, w.call(t, tok, "answerCallbackQuery", map[string]any{"callback_query_id": "123"}), 400, tooOld)
	wantError(t, w.call(t, tok, "answerCallbackQuery", map[string]any{}), 400, `Bad Request: parameter "callback_query_id" is required`)

	w.s.SetCallbackTTL(time.Minute)
	late := w.s.InjectCallback(annUser, id, "a:1")
	w.clock.Add(61 * time.Second)
	wantError(t, w.call(t, tok, "answerCallbackQuery", map[string]any{"callback_query_id": late}), 400, tooOld)

	forged := w.s.InjectUpdate(tgfake.Update{CallbackQuery: &tgfake.CallbackQuery{ID: "555", From: annUser, ChatInstance: "1", Data: "anything"}})
	if forged.UpdateID == 0 {
		t.Errorf("InjectUpdate gave no id")
	}
	wantOK(t, w.call(t, tok, "answerCallbackQuery", map[string]any{"callback_query_id": "555"}))
	if got := w.s.Answers(); len(got) != 2 || got[0].Text != "Approved" || !got[0].ShowAlert || got[0].CacheTime != 5 || got[1].CallbackQueryID != "555" {
		t.Errorf("answers = %+v", got)
	}
}

func updateIDs(t *testing.T, a answer) []int64 {
	t.Helper()
	wantOK(t, a)
	list, ok := a.obj["result"].([]any)
	if !ok {
		t.Fatalf("result is not a list: %s", a.raw)
	}
	var ids []int64
	for _, u := range list {
		ids = append(ids, int64(u.(map[string]any)["update_id"].(float64)))
	}
	return ids
}

func TestGetUpdatesOffsets(t *testing.T) {
	w := newWorld(t)
	var ids []int64
	for i := 0; i < 5; i++ {
		ids = append(ids, w.s.InjectMessage(ann, annUser, fmt.Sprint("m", i)).UpdateID)
	}
	if ids[0] != 100000001 || ids[4] != ids[0]+4 {
		t.Errorf("ids = %v", ids)
	}
	if got := updateIDs(t, w.call(t, tok, "getUpdates", map[string]any{"limit": 2})); fmt.Sprint(got) != fmt.Sprint(ids[:2]) {
		t.Errorf("limit 2 = %v", got)
	}
	if got := updateIDs(t, w.call(t, tok, "getUpdates", map[string]any{"offset": ids[1]})); fmt.Sprint(got) != fmt.Sprint(ids[1:]) {
		t.Errorf("offset second = %v", got)
	}
	if got := updateIDs(t, w.call(t, tok, "getUpdates", nil)); fmt.Sprint(got) != fmt.Sprint(ids[1:]) {
		t.Errorf("the first should stay confirmed: %v", got)
	}
	if got := updateIDs(t, w.call(t, tok, "getUpdates", map[string]any{"offset": -2})); fmt.Sprint(got) != fmt.Sprint(ids[3:]) {
		t.Errorf("offset -2 = %v", got)
	}
	if got := updateIDs(t, w.call(t, tok, "getUpdates", map[string]any{"offset": 0, "limit": 0})); fmt.Sprint(got) != fmt.Sprint(ids[3:]) {
		t.Errorf("older ones should be forgotten after a negative offset: %v", got)
	}
	if got := updateIDs(t, w.call(t, tok, "getUpdates", map[string]any{"offset": ids[4] + 1})); len(got) != 0 {
		t.Errorf("all confirmed = %v", got)
	}
	// The update is the Bot API shape.
	u := w.s.InjectMessage(group, tgfake.User{ID: 2222, FirstName: "Bob"}, "hi all")
	a := w.call(t, tok, "getUpdates", nil)
	want := fmt.Sprintf(`{"ok":true,"result":[{"update_id":%d,"message":{"message_id":%d,"from":{"id":2222,"is_bot":false,"first_name":"Bob"},"chat":{"id":%d,"type":"group","title":"Chat %d"},"date":%d,"text":"hi all"}}]}`+"\n",
		u.UpdateID, u.Message.MessageID, group, group, t0.Unix())
	if a.raw != want {
		t.Errorf("getUpdates\n got %s\nwant %s", a.raw, want)
	}
}

func TestGetUpdatesLongPollAndConflicts(t *testing.T) {
	w := newWorld(t)
	// An empty long poll waits (up to the cap), then answers an empty list.
	w.s.SetLongPollCap(400 * time.Millisecond)
	if got := updateIDs(t, w.call(t, tok, "getUpdates", map[string]any{"timeout": 30})); len(got) != 0 {
		t.Errorf("got %v", got)
	}
	if n := w.s.LongPollWaits(); n != 1 {
		t.Errorf("an empty long poll: %d waits, want 1", n)
	}
	// A short poll (timeout 0) never waits.
	if got := updateIDs(t, w.call(t, tok, "getUpdates", map[string]any{"timeout": 0})); len(got) != 0 {
		t.Errorf("got %v", got)
	}
	if n := w.s.LongPollWaits(); n != 1 {
		t.Errorf("a short poll waited: %d waits in all, want still 1", n)
	}

	// An injected update wakes a waiting poll.
	w.s.SetLongPollCap(5 * time.Second)
	done := make(chan answer, 1)
	go func() { done <- w.call(t, tok, "getUpdates", map[string]any{"timeout": 5}) }()
	awaitPolls(t, w.s, 2)
	w.s.InjectMessage(ann, annUser, "wake up")
	select {
	case a := <-done:
		if len(updateIDs(t, a)) != 1 {
			t.Errorf("woken poll = %s", a.raw)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the poll was not woken")
	}

	// A second poll ends the first.
	go func() {
		done <- w.call(t, tok, "getUpdates", map[string]any{"offset": -1, "timeout": 5, "allowed_updates": []string{"callback_query"}})
	}()
	awaitPolls(t, w.s, 3)
	second := make(chan answer, 1)
	go func() { second <- w.call(t, tok, "getUpdates", map[string]any{"timeout": 1}) }()
	select {
	case a := <-done:
		wantError(t, a, 409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
	case <-time.After(3 * time.Second):
		t.Fatal("the first poll was not ended")
	}
	// Setting a webhook ends the second, and getUpdates conflicts from then on.
	awaitPolls(t, w.s, 4)
	wantOK(t, w.call(t, tok, "setWebhook", map[string]any{"url": "https://sb.example/hook"}))
	conflict := "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"
	wantError(t, <-second, 409, conflict)
	wantError(t, w.call(t, tok, "getUpdates", nil), 409, conflict)
}

func TestWebhookMethods(t *testing.T) {
	w := newWorld(t)
	tests := []struct {
		body map[string]any
		desc string
	}{
		{map[string]any{"url": "ftp://x"}, "Bad Request: invalid webhook URL specified"},
		{map[string]any{"url": "https://sb.example/h", "secret_token": "a+b"}, "Bad Request: secret token contains unallowed characters"},
		{map[string]any{"url": "https://sb.example/h", "secret_token": "ä"}, "Bad Request: secret token contains unallowed characters"},
		{map[string]any{"url": "https://sb.example/h", "secret_token": strings.Repeat("a", 257)}, "Bad Request: secret token is too long"},
	}
	for _, tt := range tests {
		wantError(t, w.call(t, tok, "setWebhook", tt.body), 400, tt.desc)
	}
	w.s.InjectMessage(ann, annUser, "pending")
	a := w.call(t, tok, "setWebhook", map[string]any{"url": "https://sb.example/h", "secret_token": strings.Repeat("a", 256), "allowed_updates": []string{"message"}})
	wantOK(t, a)
	if a.desc() != "Webhook was set" || a.obj["result"] != true {
		t.Errorf("setWebhook = %s", a.raw)
	}
	a = w.call(t, tok, "setWebhook", map[string]any{"url": "https://sb.example/h", "secret_token": strings.Repeat("a", 256), "allowed_updates": []string{"message"}})
	if a.desc() != "Webhook is already set" {
		t.Errorf("again = %s", a.raw)
	}
	info := w.call(t, tok, "getWebhookInfo", nil)
	want := `{"ok":true,"result":{"url":"https://sb.example/h","has_custom_certificate":false,"pending_update_count":1,"max_connections":40,"allowed_updates":["message"]}}` + "\n"
	if info.raw != want {
		t.Errorf("getWebhookInfo\n got %s\nwant %s", info.raw, want)
	}
	if a := w.call(t, tok, "deleteWebhook", map[string]any{"drop_pending_updates": true}); a.desc() != "Webhook was deleted" {
		t.Errorf("deleteWebhook = %s", a.raw)
	}
	if a := w.call(t, tok, "deleteWebhook", nil); a.desc() != "Webhook is already deleted" {
		t.Errorf("deleteWebhook again = %s", a.raw)
	}
	if n := len(w.s.Pending()); n != 0 {
		t.Errorf("drop_pending_updates left %d", n)
	}
	// An empty url removes the webhook too.
	wantOK(t, w.call(t, tok, "setWebhook", map[string]any{"url": "http://127.0.0.1:1/h"}))
	if a := w.call(t, tok, "setWebhook", map[string]any{"url": ""}); a.desc() != "Webhook was deleted" || w.s.Webhook().URL != "" {
		t.Errorf("setWebhook url='' = %s", a.raw)
	}
}

func TestPushUpdate(t *testing.T) {
	w := newWorld(t)
	type hit struct {
		header http.Header
		body   string
	}
	hits := make(chan hit, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hits <- hit{r.Header.Clone(), string(b)}
		io.WriteString(rw, `{"method":"sendMessage","chat_id":1111,"text":"ok"}`)
	}))
	t.Cleanup(receiver.Close)

	if _, err := w.s.PushUpdate(context.Background(), tgfake.Update{}); err != tgfake.ErrNoWebhook {
		t.Errorf("without webhook: %v", err)
	}
	wantOK(t, w.call(t, tok, "setWebhook", map[string]any{"url": receiver.URL + "/hooks/telegram", "secret_token": "s3cr3t_-x"}))
	u := w.s.InjectMessage(ann, annUser, "hello")
	ds, err := w.s.PushPending(context.Background())
	if err != nil || len(ds) != 1 || !ds[0].OK() || ds[0].UpdateID != u.UpdateID || !strings.Contains(string(ds[0].Response), "sendMessage") {
		t.Fatalf("deliveries = %+v, %v", ds, err)
	}
	h := <-hits
	wantBody, _ := json.Marshal(u)
	if h.header.Get("X-Telegram-Bot-Api-Secret-Token") != "s3cr3t_-x" || h.header.Get("Content-Type") != "application/json" || h.body != string(wantBody) {
		t.Errorf("hit = %v %s", h.header, h.body)
	}
	if len(w.s.Pending()) != 0 {
		t.Errorf("a delivered update is still pending")
	}

	// Auto push delivers as updates arrive; no secret, no header.
	wantOK(t, w.call(t, tok, "setWebhook", map[string]any{"url": receiver.URL + "/hooks/telegram"}))
	w.s.SetAutoPush(true)
	w.s.InjectMessage(ann, annUser, "auto")
	select {
	case h := <-hits:
		if _, ok := h.header["X-Telegram-Bot-Api-Secret-Token"]; ok || !strings.Contains(h.body, `"text":"auto"`) {
			t.Errorf("auto hit = %v %s", h.header, h.body)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("no auto push")
	}
	if n := len(w.s.Deliveries()); n != 2 {
		t.Errorf("%d deliveries, want 2", n)
	}

	// An unreachable webhook is a transport error and the last error.
	receiver.Close()
	w.s.SetAutoPush(false)
	w.s.InjectMessage(ann, annUser, "lost?")
	ds, err = w.s.PushPending(context.Background())
	if err == nil || len(ds) != 1 || ds[0].Err == "" || ds[0].Status != 0 {
		t.Errorf("deliveries = %+v, %v", ds, err)
	}
	info := w.call(t, tok, "getWebhookInfo", nil).result()
	if info["pending_update_count"] != float64(1) || info["last_error_message"] == nil {
		t.Errorf("info = %v", info)
	}
}

func TestRateLimitsAndFailures(t *testing.T) {
	w := newWorld(t)
	w.s.FailNext("SendMessage", 429, 5)
	a := w.send(t, map[string]any{"chat_id": ann, "text": "x"})
	wantError(t, a, 429, "Too Many Requests: retry after 5")
	if p, _ := a.obj["parameters"].(map[string]any); p["retry_after"] != float64(5) || a.header.Get("Retry-After") != "5" {
		t.Errorf("429 = %v %s", a.header, a.raw)
	}
	wantOK(t, w.send(t, map[string]any{"chat_id": ann, "text": "x"})) // once only

	w.s.SetRateLimit(2)
	w.clock.Add(400 * time.Millisecond)
	wantOK(t, w.send(t, map[string]any{"chat_id": ann, "text": "1"}))
	wantOK(t, w.send(t, map[string]any{"chat_id": ann, "text": "2"}))
	a = w.send(t, map[string]any{"chat_id": ann, "text": "3"})
	wantError(t, a, 429, "Too Many Requests: retry after 1")
	if a.header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After = %q", a.header.Get("Retry-After"))
	}
	wantOK(t, w.send(t, map[string]any{"chat_id": group, "text": "other chat"}))
	w.clock.Add(time.Second)
	wantOK(t, w.send(t, map[string]any{"chat_id": ann, "text": "3"}))
	w.s.SetRateLimit(0)

	w.s.FailNext("getMe", 500, 0)
	wantError(t, w.call(t, tok, "getMe", nil), 500, "Internal Server Error")
	w.s.FailNext("getMe", 502, 30)
	if a := w.call(t, tok, "getMe", nil); a.status != 502 || a.header.Get("Retry-After") != "30" {
		t.Errorf("502 = %d %v", a.status, a.header)
	}
	w.s.FailNextWith("sendMessage", 403, "Forbidden: bot was blocked by the user")
	wantError(t, w.send(t, map[string]any{"chat_id": ann, "text": "x"}), 403, "Forbidden: bot was blocked by the user")

	w.s.SetDown(true)
	a = w.call(t, tok, "getMe", nil)
	if a.status != 502 || !strings.Contains(a.raw, "<center><h1>502 Bad Gateway</h1></center>") || a.header.Get("Content-Type") != "text/html" {
		t.Errorf("down = %d %q", a.status, a.raw)
	}
	w.s.SetDown(false)
	wantOK(t, w.call(t, tok, "getMe", nil))
}

func TestSetupPanics(t *testing.T) {
	w := newWorld(t)
	sent := w.send(t, map[string]any{"chat_id": ann, "text": "x",
		"reply_markup": map[string]any{"inline_keyboard": [][]map[string]any{{{"text": "A", "callback_data": "a"}}}}})
	id := int64(sent.result()["message_id"].(float64))
	user := w.s.InjectMessage(ann, annUser, "mine")
	tests := []struct {
		name string
		fn   func()
	}{
		{"bad type", func() { w.s.AddChat(-5, "forum") }},
		{"private with negative id", func() { w.s.AddChat(-5, "private") }},
		{"group with positive id", func() { w.s.AddChat(5, "group") }},
		{"duplicate", func() { w.s.AddChat(ann, "private") }},
		{"unknown chat", func() { w.s.InjectMessage(77, annUser, "x") }},
		{"someone else in a private chat", func() { w.s.InjectMessage(ann, tgfake.User{ID: 9, FirstName: "Eve"}, "x") }},
		{"callback on unknown message", func() { w.s.InjectCallback(annUser, 999, "a") }},
		{"callback on a user's message", func() { w.s.InjectCallback(annUser, user.Message.MessageID, "a") }},
		{"callback data not on a button", func() { w.s.InjectCallback(annUser, id, "b") }},
		{"malformed token", func() { w.s.SetTokens("nope") }},
		{"unknown chat blocked", func() { w.s.SetBlocked(77, true) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			tt.fn()
		})
	}
	// The server still works after the panics (no lock left held).
	wantOK(t, w.call(t, tok, "getMe", nil))
	if q := w.s.InjectCallback(annUser, id, "a"); q == "" {
		t.Errorf("no callback id")
	}
}

func TestCloseEndsLongPolls(t *testing.T) {
	s := tgfake.New()
	s.SetLongPollCap(time.Minute)
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/bot"+tok+"/getUpdates?timeout=60", nil)
		if resp, err := s.Client().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	awaitPolls(t, s, 1)
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select { // the poll would otherwise wait its minute
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return with a poll waiting")
	}
	<-done
}

func TestPassNextDelaysTheQueuedFailure(t *testing.T) {
	w := newWorld(t)
	w.s.PassNext("sendMessage")
	w.s.FailNext("sendMessage", 429, 1)
	wantOK(t, w.send(t, map[string]any{"chat_id": ann, "text": "first"}))
	wantError(t, w.send(t, map[string]any{"chat_id": ann, "text": "second"}), 429, "Too Many Requests: retry after 1")
	wantOK(t, w.send(t, map[string]any{"chat_id": ann, "text": "second"}))
}

// awaitPolls waits until n getUpdates requests in all have gone into a long
// wait on s.
func awaitPolls(t *testing.T, s *tgfake.Server, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.AwaitLongPolls(ctx, n); err != nil {
		t.Fatalf("%d long polls waiting: %v (saw %d)", n, err, s.LongPollWaits())
	}
}
