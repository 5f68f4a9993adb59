package rocketchat

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
	"github.com/switchboard-dev/switchboard/shared/platform/errtest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.*")

type fakeClock = clocktest.Clock

var t0 = time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)

// fixture is a fake Rocket.Chat with alice (a person), hermes (the agent the
// client acts as) and bob; a channel, a private group and a DM alice–hermes.
type fixture struct {
	s                   *rcfake.Server
	clock               *fakeClock
	c                   *Client // as hermes
	token               string  // hermes's token, which must never leak
	ids                 map[string]string
	general, team, dmAH string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	s := rcfake.New()
	t.Cleanup(s.Close)
	f := &fixture{s: s, clock: clocktest.New(t0), ids: map[string]string{}}
	s.SetClock(f.clock.Now)
	f.ids["alice"], _ = s.AddUser("alice")
	var hermesID string
	hermesID, f.token = s.AddUser("hermes", "bot", "user")
	f.ids["hermes"] = hermesID
	f.ids["bob"], _ = s.AddUser("bob")
	f.general = s.AddChannel("general", "alice", "hermes", "bob")
	f.team = s.AddGroup("finanz-team", "alice", "hermes")
	f.dmAH = s.AddDM("alice", "hermes")
	c, err := New(s.URL, hermesID, f.token, s.Client())
	if err != nil {
		t.Fatal(err)
	}
	c.now = f.clock.Now
	f.c = c
	return f
}

func (f *fixture) post(t *testing.T, as, rid, text string, opts rcfake.PostOptions) rcfake.Message {
	t.Helper()
	f.clock.Add(time.Second)
	return f.s.MustPost(t, as, rid, text, opts)
}

func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// checkErr asserts code and message parts of a *switchboard.Error, and that
// neither the message nor the whole error text carries the token.
func checkErr(t *testing.T, err error, token, wantCode string, wantMsg ...string) *sb.Error {
	t.Helper()
	e := errtest.Check(t, err, wantCode, wantMsg...)
	if token != "" && (strings.Contains(e.Message, token) || strings.Contains(err.Error(), token)) {
		t.Errorf("error leaks the token: %v", err)
	}
	return e
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update once to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("request body differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// lastRequest is the last request the fake saw to route.
func lastRequest(t *testing.T, s *rcfake.Server, route string) rcfake.Request {
	t.Helper()
	reqs := s.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Route == route {
			return reqs[i]
		}
	}
	t.Fatalf("no request to %s", route)
	return rcfake.Request{}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name            string
		base, uid, tok  string
		wantErr         string // part of the message; "" for success
		wantNotInErrMsg string
		wantBase        string
	}{
		{name: "plain", base: "https://chat.example.org", uid: "u", tok: "t", wantBase: "https://chat.example.org"},
		{name: "path prefix and trailing slash", base: " https://example.org/chat/ ", uid: "u", tok: "t", wantBase: "https://example.org/chat"},
		{name: "no scheme", base: "chat.example.org", uid: "u", tok: "t", wantErr: "is not an http(s) URL"},
		{name: "ftp", base: "ftp://chat.example.org", uid: "u", tok: "t", wantErr: "is not an http(s) URL"},
		{name: "empty", base: "", uid: "u", tok: "t", wantErr: "is not an http(s) URL"},
		{name: "credentials", base: "https://bot:hunter2@chat.example.org", uid: "u", tok: "t", wantErr: "contains credentials", wantNotInErrMsg: "hunter2"},
		{name: "query", base: "https://chat.example.org/?x=1", uid: "u", tok: "t", wantErr: "query or fragment"},
		{name: "no user id", base: "https://chat.example.org", uid: " ", tok: "t", wantErr: "userId is empty"},
		{name: "no token", base: "https://chat.example.org", uid: "u", tok: "", wantErr: "authToken is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.base, tt.uid, tt.tok, nil)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.base.String() != tt.wantBase {
					t.Errorf("base = %q, want %q", c.base, tt.wantBase)
				}
				return
			}
			e := checkErr(t, err, "", sb.EINVALID, tt.wantErr)
			if tt.wantNotInErrMsg != "" && strings.Contains(e.Error(), tt.wantNotInErrMsg) {
				t.Errorf("error %q leaks %q", e, tt.wantNotInErrMsg)
			}
		})
	}
}

func TestPrintingTheClientHidesTheToken(t *testing.T) {
	c, err := New("https://chat.example.org", "uid1", "secret-token-value", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v", c, c, c)} {
		if strings.Contains(s, "secret-token-value") {
			t.Errorf("%q shows the token", s)
		}
	}
}

func TestInfo(t *testing.T) {
	f := newFixture(t)
	v, err := f.c.Info(ctx(t))
	if err != nil || v != "8.7" {
		t.Fatalf("Info = %q, %v; want 8.7", v, err)
	}
	r := lastRequest(t, f.s, "info")
	if r.Header.Get("X-User-Id") != f.ids["hermes"] || r.Header.Get("X-Auth-Token") != f.token {
		t.Errorf("auth headers missing on /api/info: %v", r.Header)
	}
}

func TestSubscriptionsAndMarkRead(t *testing.T) {
	f := newFixture(t)
	all, err := f.c.Subscriptions(ctx(t), time.Time{})
	if err != nil || len(all) != 3 {
		t.Fatalf("Subscriptions = %d, %v; want 3", len(all), err)
	}
	since := f.clock.Now()
	f.post(t, "alice", f.general, "plain message", rcfake.PostOptions{})
	f.post(t, "alice", f.team, "@hermes numbers please", rcfake.PostOptions{})
	f.post(t, "alice", f.dmAH, "hi", rcfake.PostOptions{})

	got, err := f.c.Subscriptions(ctx(t), since)
	if err != nil {
		t.Fatal(err)
	}
	if q := lastRequest(t, f.s, "subscriptions.get").Query.Get("updatedSince"); q != "2026-08-03T09:00:00.000Z" {
		t.Errorf("updatedSince = %q, want ISO with ms", q)
	}
	byRoom := map[string]sb.ChatSubscription{}
	for _, s := range got {
		byRoom[s.RoomID] = s
	}
	tests := []struct {
		name string
		rid  string
		want sb.ChatSubscription
	}{
		{name: "plain message: alert only", rid: f.general, want: sb.ChatSubscription{RoomID: f.general, Type: sb.RoomChannel, Name: "general", DisplayName: "general", Alert: true, Open: true}},
		{name: "mention: unread and userMentions", rid: f.team, want: sb.ChatSubscription{RoomID: f.team, Type: sb.RoomGroup, Name: "finanz-team", DisplayName: "finanz-team", Unread: 1, UserMentions: 1, Alert: true, Open: true}},
		{name: "DM: named after the counterpart", rid: f.dmAH, want: sb.ChatSubscription{RoomID: f.dmAH, Type: sb.RoomDirect, Name: "alice", DisplayName: "Alice", Unread: 1, Alert: true, Open: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := byRoom[tt.rid]
			if !ok {
				t.Fatalf("room %s missing from %+v", tt.rid, got)
			}
			if s.UpdatedAt.IsZero() || s.LastSeen.IsZero() {
				t.Errorf("UpdatedAt/LastSeen not parsed: %+v", s)
			}
			s.UpdatedAt, s.LastSeen = time.Time{}, time.Time{}
			if s != tt.want {
				t.Errorf("got  %+v\nwant %+v", s, tt.want)
			}
		})
	}

	f.clock.Add(time.Minute)
	if err := f.c.MarkRead(ctx(t), f.team); err != nil {
		t.Fatal(err)
	}
	if body := string(lastRequest(t, f.s, "subscriptions.read").Body); body != `{"rid":"`+f.team+`"}` {
		t.Errorf("subscriptions.read body = %s", body)
	}
	after, _ := f.c.Subscriptions(ctx(t), f.clock.Now().Add(-time.Second))
	if len(after) != 1 || after[0].RoomID != f.team || after[0].Unread != 0 || after[0].UserMentions != 0 || after[0].Alert || !after[0].LastSeen.Equal(f.clock.Now()) {
		t.Errorf("after MarkRead: %+v", after)
	}
	err = f.c.MarkRead(ctx(t), "nope")
	checkErr(t, err, f.token, sb.ENOTFOUND, `unknown room "nope"`, "POST /api/v1/subscriptions.read")
}

func TestHistory(t *testing.T) {
	f := newFixture(t)
	first := f.post(t, "alice", f.general, "@hermes look at this", rcfake.PostOptions{
		URLs: []rcfake.Link{{URL: "https://www.rocket.chat/", Title: "Rocket.Chat | Secure CommsOS™", Description: "Chat platform"}}})
	f.post(t, "bob", f.general, "thread reply", rcfake.PostOptions{Tmid: first.ID})
	if err := f.s.Join("bob", f.team); err != nil {
		t.Fatal(err)
	}
	file := f.post(t, "alice", f.general, "", rcfake.PostOptions{Files: []rcfake.FileSpec{{Name: "chart.png", Type: "image/png", Content: []byte("PNGDATA")}}})
	bot := f.post(t, "bob", f.general, "deploy done", rcfake.PostOptions{Bot: true})
	f.clock.Add(time.Second)
	if err := f.s.Edit(bot.ID, "deploy done (edited)"); err != nil {
		t.Fatal(err)
	}

	msgs, err := f.c.History(ctx(t), sb.RoomChannel, f.general, time.Time{}, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 {
		t.Fatalf("History = %+v, want 3 messages without the thread reply", msgs)
	}
	m0, m1, m2 := msgs[0], msgs[1], msgs[2]
	if m0.ID != first.ID || m1.ID != file.ID || m2.ID != bot.ID {
		t.Errorf("order = %s %s %s, want oldest first", m0.ID, m1.ID, m2.ID)
	}
	wantFirst := sb.ChatMessage{ID: first.ID, RoomID: f.general, Text: "@hermes look at this", At: first.At,
		User: sb.ChatUser{ID: f.ids["alice"], Username: "alice", Name: "Alice"}, Mentions: []string{"hermes"},
		Links: []sb.ChatLink{{URL: "https://www.rocket.chat/", Title: "Rocket.Chat | Secure CommsOS™", Description: "Chat platform"}}}
	if fmt.Sprintf("%+v", m0) != fmt.Sprintf("%+v", wantFirst) {
		t.Errorf("first message\n got %+v\nwant %+v", m0, wantFirst)
	}
	if len(m1.Files) != 1 || m1.Files[0] != (sb.ChatFile{ID: file.FileIDs[0], Name: "chart.png", Type: "image/png", Size: 7}) {
		t.Errorf("files = %+v, want the original image only (no thumbnail)", m1.Files)
	}
	if !m2.Bot || !m2.Edited || m2.Text != "deploy done (edited)" {
		t.Errorf("bot message = %+v, want Bot and Edited", m2)
	}
	q := lastRequest(t, f.s, "channels.history").Query
	if q.Get("roomId") != f.general || q.Has("showThreadMessages") || q.Has("oldest") || q.Has("count") {
		t.Errorf("query = %v", q)
	}

	withThreads, err := f.c.History(ctx(t), sb.RoomChannel, f.general, first.At, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(withThreads) != 2 || withThreads[0].ID != file.ID || withThreads[1].ID != bot.ID {
		t.Errorf("oldest (exclusive) + count 2 + threads: got %d messages %+v; want the newest two after the first", len(withThreads), withThreads)
	}
	q = lastRequest(t, f.s, "channels.history").Query
	if q.Get("oldest") != "2026-08-03T09:00:01.000Z" || q.Get("count") != "2" || q.Get("showThreadMessages") != "true" {
		t.Errorf("query = %v", q)
	}
	all, _ := f.c.History(ctx(t), sb.RoomChannel, f.general, first.At.Add(-time.Millisecond), 10, true)
	if len(all) != 4 || all[1].ThreadID != first.ID {
		t.Errorf("with threads = %+v, want the reply second with ThreadID", all)
	}

	group, err := f.c.History(ctx(t), sb.RoomGroup, f.team, time.Time{}, 0, false)
	if err != nil || len(group) != 1 || group[0].SystemType != "uj" || group[0].User.Username != "bob" {
		t.Errorf("group history = %+v, %v; want bob's uj system message", group, err)
	}
	f.post(t, "alice", f.dmAH, "psst", rcfake.PostOptions{})
	dm, err := f.c.History(ctx(t), sb.RoomDirect, f.dmAH, time.Time{}, 0, false)
	if err != nil || len(dm) != 1 || dm[0].Text != "psst" {
		t.Errorf("DM history = %+v, %v", dm, err)
	}
	for _, route := range []string{"channels.history", "groups.history", "im.history"} {
		if f.c.Calls()[route] == 0 {
			t.Errorf("no call to %s: %v", route, f.c.Calls())
		}
	}

	_, err = f.c.History(ctx(t), sb.RoomLivechat, "x", time.Time{}, 0, false)
	checkErr(t, err, f.token, sb.EINVALID, `room type "l"`)
	_, err = f.c.History(ctx(t), sb.RoomChannel, f.team, time.Time{}, 0, false)
	checkErr(t, err, f.token, sb.ENOTFOUND, "unknown room", "GET /api/v1/channels.history")
}

func TestPostMessageGoldenBody(t *testing.T) {
	f := newFixture(t)
	parent := f.post(t, "alice", f.general, "question", rcfake.PostOptions{})
	f.clock.Add(time.Second)
	sent, err := f.c.PostMessage(ctx(t), f.general, "Antwort: <b>42</b> & mehr", parent.ID)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "chat.postMessage.golden.json", lastRequest(t, f.s, "chat.postMessage").Body)
	if sent.ID == "" || sent.RoomID != f.general || sent.ThreadID != parent.ID || sent.User.Username != "hermes" {
		t.Errorf("sent = %+v", sent)
	}
	if want := t0.Add(2 * time.Second); !sent.At.Equal(want) || !sent.ServerTime.Equal(want) {
		t.Errorf("At = %v, ServerTime = %v, want both %v (message.ts ISO, ts epoch ms)", sent.At, sent.ServerTime, want)
	}
	if ms := f.s.Messages(f.general); ms[len(ms)-1].ThreadID != parent.ID {
		t.Errorf("stored message %+v is not in the thread", ms[len(ms)-1])
	}

	// Names and @users work through roomId as well (processWebhookMessage).
	if s, err := f.c.PostMessage(ctx(t), "@bob", "hello", ""); err != nil || s.RoomID != f.s.AddDM("hermes", "bob") {
		t.Errorf("@bob = %+v, %v; want the hermes–bob DM", s, err)
	}
	if s, err := f.c.PostMessage(ctx(t), "#finanz-team", "hello", ""); err != nil || s.RoomID != f.team {
		t.Errorf("#finanz-team = %+v, %v", s, err)
	}

	tests := []struct {
		name, room, text, wantCode string
		wantMsg                    []string
	}{
		{name: "unknown room", room: "nope", text: "x", wantCode: sb.ENOTFOUND, wantMsg: []string{`unknown room "nope"`, "POST /api/v1/chat.postMessage"}},
		{name: "empty text", room: f.general, text: " ", wantCode: sb.EINVALID, wantMsg: []string{"the text is empty"}},
		{name: "no room", room: "", text: "x", wantCode: sb.EINVALID, wantMsg: []string{"no room given"}},
		{name: "too long", room: f.general, text: strings.Repeat("x", 5001), wantCode: sb.EINVALID, wantMsg: []string{"Message_MaxAllowedSize"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.c.PostMessage(ctx(t), tt.room, tt.text, "")
			checkErr(t, err, f.token, tt.wantCode, tt.wantMsg...)
		})
	}
}

func TestPostIntoAGroupWithoutMembership(t *testing.T) {
	f := newFixture(t)
	other := f.s.AddGroup("board", "alice")
	_, err := f.c.PostMessage(ctx(t), other, "hi", "")
	checkErr(t, err, f.token, sb.EFORBIDDEN, "not allowed in room", "not a member")
}

func TestReact(t *testing.T) {
	f := newFixture(t)
	m := f.post(t, "alice", f.general, "done", rcfake.PostOptions{})
	for _, emoji := range []string{":white_check_mark:", "white_check_mark"} {
		if err := f.c.React(ctx(t), m.ID, emoji); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.s.Reactions(m.ID)[":white_check_mark:"]; len(got) != 1 {
		t.Errorf("reactions = %v, want hermes once (shouldReact keeps it set)", got)
	}
	if body := string(lastRequest(t, f.s, "chat.react").Body); body != `{"messageId":"`+m.ID+`","emoji":":white_check_mark:","shouldReact":true}` {
		t.Errorf("body = %s", body)
	}
	checkErr(t, f.c.React(ctx(t), "nope", ":+1:"), f.token, sb.ENOTFOUND, `unknown message "nope"`)
	checkErr(t, f.c.React(ctx(t), m.ID, "not an emoji!"), f.token, sb.EINVALID, "Invalid emoji provided")
	checkErr(t, f.c.React(ctx(t), m.ID, "::"), f.token, sb.EINVALID, "emoji is empty")
}

func TestCreateDM(t *testing.T) {
	f := newFixture(t)
	rid, err := f.c.CreateDM(ctx(t), "@bob")
	if err != nil || rid != f.s.AddDM("hermes", "bob") {
		t.Fatalf("CreateDM = %q, %v", rid, err)
	}
	if body := string(lastRequest(t, f.s, "im.create").Body); body != `{"username":"bob"}` {
		t.Errorf("body = %s", body)
	}
	_, err = f.c.CreateDM(ctx(t), "ghost")
	checkErr(t, err, f.token, sb.ENOTFOUND, `unknown user "ghost"`, "POST /api/v1/im.create")
}

func TestUploadFileTwoStepsGolden(t *testing.T) {
	f := newFixture(t)
	parent := f.post(t, "alice", f.team, "Zahlen?", rcfake.PostOptions{})
	content := "monat,umsatz\nmai,42\n"
	f.clock.Add(time.Second)
	msg, err := f.c.UploadFile(ctx(t), f.team, `auswertung "Mai".csv`, "text/csv", strings.NewReader(content), int64(len(content)), "schau dir die Zahlen an", parent.ID)
	if err != nil {
		t.Fatal(err)
	}
	media := lastRequest(t, f.s, "rooms.media")
	if media.Path != "/api/v1/rooms.media/"+f.team || media.Header.Get("Content-Length") != "" && media.Header.Get("Content-Length") != fmt.Sprint(len(media.Body)) {
		t.Errorf("rooms.media request = %s %v", media.Path, media.Header)
	}
	boundary := strings.TrimPrefix(media.Header.Get("Content-Type"), "multipart/form-data; boundary=")
	golden(t, "rooms.media.golden.txt", bytes.ReplaceAll(media.Body, []byte(boundary), []byte("BOUNDARY")))
	confirm := lastRequest(t, f.s, "rooms.mediaConfirm")
	if len(msg.Files) != 1 || confirm.Path != "/api/v1/rooms.mediaConfirm/"+f.team+"/"+msg.Files[0].ID {
		t.Fatalf("confirm path = %s, files = %+v", confirm.Path, msg.Files)
	}
	golden(t, "rooms.mediaConfirm.golden.json", confirm.Body)

	if msg.Text != "schau dir die Zahlen an" || msg.ThreadID != parent.ID || msg.Files[0].Name != `auswertung "Mai".csv` || msg.Files[0].Type != "text/csv" || msg.Files[0].Size != int64(len(content)) {
		t.Errorf("message = %+v", msg)
	}
	up, ok := f.s.Upload(msg.Files[0].ID)
	if !ok || !up.Confirmed || string(up.Content) != content {
		t.Errorf("stored upload = %+v", up)
	}
	calls := f.c.Calls()
	if calls["rooms.media"] != 1 || calls["rooms.mediaConfirm"] != 1 || calls["rooms.upload"] != 0 || f.s.Calls("rooms.upload") != 0 {
		t.Errorf("calls = %v; want one rooms.media, one rooms.mediaConfirm, no rooms.upload", calls)
	}

	// Unknown size: chunked, same result.
	if _, err := f.c.UploadFile(ctx(t), f.team, "b.bin", "", strings.NewReader("xyz"), -1, "", ""); err != nil {
		t.Errorf("upload with unknown size: %v", err)
	}
	// A reader shorter than size fails before anything is published.
	_, err = f.c.UploadFile(ctx(t), f.team, "c.bin", "", strings.NewReader("xy"), 10, "", "")
	checkErr(t, err, f.token, sb.EINVALID, "POST /api/v1/rooms.media/"+f.team, "different number of bytes")
}

func TestUploadFileErrors(t *testing.T) {
	f := newFixture(t)
	board := f.s.AddGroup("board", "alice")
	_, err := f.c.UploadFile(ctx(t), board, "a.txt", "text/plain", strings.NewReader("a"), 1, "", "")
	checkErr(t, err, f.token, sb.EFORBIDDEN, `no access to room "`+board+`"`, "POST /api/v1/rooms.media/"+board)
	_, err = f.c.UploadFile(ctx(t), "..", "a.txt", "text/plain", strings.NewReader("a"), 1, "", "")
	checkErr(t, err, f.token, sb.EINVALID, "POST /api/v1/rooms.media/:rid", "room id")

	f.s.FailNext("rooms.mediaConfirm", 500, `{"success":false,"error":"boom"}`)
	_, err = f.c.UploadFile(ctx(t), f.team, "a.txt", "text/plain", strings.NewReader("a"), 1, "", "")
	e := checkErr(t, err, f.token, sb.EUNAVAILABLE, "POST /api/v1/rooms.mediaConfirm/"+f.team+"/", "is not shown in the room", "24 h")
	if e.RetryAfter != 0 {
		t.Errorf("RetryAfter = %v", e.RetryAfter)
	}
}

func TestDownload(t *testing.T) {
	f := newFixture(t)
	m := f.post(t, "alice", f.general, "", rcfake.PostOptions{Files: []rcfake.FileSpec{{Name: "bericht q2.pdf", Type: "application/pdf", Content: []byte("%PDF-1.7 …")}}})
	fs, err := f.c.Download(ctx(t), m.FileIDs[0], "bericht q2.pdf")
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Body.Close()
	body, _ := io.ReadAll(fs.Body)
	if string(body) != "%PDF-1.7 …" || fs.Size != int64(len(body)) || fs.ContentType != "application/pdf" {
		t.Errorf("download = %q size %d type %q", body, fs.Size, fs.ContentType)
	}
	r := lastRequest(t, f.s, "file-upload")
	if r.Path != "/file-upload/"+m.FileIDs[0]+"/bericht q2.pdf" || r.Header.Get("X-Auth-Token") != f.token {
		t.Errorf("request = %s %v", r.Path, r.Header)
	}
	if _, err := f.c.Download(ctx(t), m.FileIDs[0], ""); err != nil {
		t.Errorf("default name: %v", err)
	}
	if p := lastRequest(t, f.s, "file-upload").Path; !strings.HasSuffix(p, "/download") {
		t.Errorf("path = %s, want …/download", p)
	}
	_, err = f.c.Download(ctx(t), "000000000000000000000000", "x.pdf")
	checkErr(t, err, f.token, sb.ENOTFOUND, `no file with id "000000000000000000000000"`, "GET /file-upload/000000000000000000000000/x.pdf")
	_, err = f.c.Download(ctx(t), m.FileIDs[0], "..")
	checkErr(t, err, f.token, sb.EINVALID, "GET /file-upload/:id/:name", "file name")

	wrong, _ := New(f.s.URL, f.ids["hermes"], "revoked-token", nil)
	_, err = wrong.Download(ctx(t), m.FileIDs[0], "x.pdf")
	checkErr(t, err, "revoked-token", sb.EFORBIDDEN, "valid userId/authToken")
}

func TestSearch(t *testing.T) {
	f := newFixture(t)
	f.post(t, "alice", f.general, "Umsatz Mai", rcfake.PostOptions{})
	f.post(t, "alice", f.general, "Umsatz Juni", rcfake.PostOptions{})
	f.post(t, "alice", f.general, "Mittag?", rcfake.PostOptions{})
	got, err := f.c.Search(ctx(t), f.general, "umsatz", 10)
	if err != nil || len(got) != 2 || got[0].Text != "Umsatz Juni" {
		t.Fatalf("Search = %+v, %v; want two hits, newest first", got, err)
	}
	q := lastRequest(t, f.s, "chat.search").Query
	if q.Get("roomId") != f.general || q.Get("searchText") != "umsatz" || q.Get("count") != "10" {
		t.Errorf("query = %v", q)
	}
	board := f.s.AddGroup("board", "alice")
	_, err = f.c.Search(ctx(t), board, "x", 0)
	checkErr(t, err, f.token, sb.ENOTFOUND, `unknown room "`+board+`", or this user has no access`, "GET /api/v1/chat.search")
	if _, err := f.c.Search(ctx(t), f.general, " ", 0); sb.ErrorCode(err) != sb.EINVALID {
		t.Errorf("empty query: %v", err)
	}
}

func TestGetMessage(t *testing.T) {
	f := newFixture(t)
	m := f.post(t, "alice", f.general, "@hermes see file", rcfake.PostOptions{Files: []rcfake.FileSpec{{Name: "a.csv", Type: "text/csv", Content: []byte("a,b\n")}}})
	got, err := f.c.GetMessage(ctx(t), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != m.ID || got.Text != "@hermes see file" || len(got.Mentions) != 1 || len(got.Files) != 1 || got.Files[0].ID != m.FileIDs[0] {
		t.Errorf("GetMessage = %+v", got)
	}
	if q := lastRequest(t, f.s, "chat.getMessage").Query; q.Get("msgId") != m.ID {
		t.Errorf("query = %v", q)
	}
	_, err = f.c.GetMessage(ctx(t), "nope")
	checkErr(t, err, f.token, sb.ENOTFOUND, `unknown message "nope"`, "GET /api/v1/chat.getMessage")
	board := f.s.AddGroup("board", "alice")
	secret := f.post(t, "alice", board, "board only", rcfake.PostOptions{})
	_, err = f.c.GetMessage(ctx(t), secret.ID)
	checkErr(t, err, f.token, sb.EFORBIDDEN, "GET /api/v1/chat.getMessage")
	_, err = f.c.GetMessage(ctx(t), "")
	checkErr(t, err, f.token, sb.EINVALID, "message id is empty")
}

func TestRoomInfo(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name      string
		arg       string
		wantID    string
		wantType  sb.RoomType
		wantCalls int
	}{
		{name: "by id", arg: f.team, wantID: f.team, wantType: sb.RoomGroup, wantCalls: 1},
		{name: "by #name", arg: "#general", wantID: f.general, wantType: sb.RoomChannel, wantCalls: 1},
		{name: "by name after the id lookup", arg: "finanz-team", wantID: f.team, wantType: sb.RoomGroup, wantCalls: 2},
		{name: "DM", arg: f.dmAH, wantID: f.dmAH, wantType: sb.RoomDirect, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.c.Calls()["rooms.info"]
			r, err := f.c.RoomInfo(ctx(t), tt.arg)
			if err != nil {
				t.Fatal(err)
			}
			if r.ID != tt.wantID || r.Type != tt.wantType {
				t.Errorf("room = %+v", r)
			}
			if n := f.c.Calls()["rooms.info"] - before; n != tt.wantCalls {
				t.Errorf("%d calls, want %d", n, tt.wantCalls)
			}
		})
	}
	r, _ := f.c.RoomInfo(ctx(t), f.dmAH)
	if strings.Join(r.Usernames, ",") != "alice,hermes" || r.MemberCount != 2 {
		t.Errorf("DM = %+v", r)
	}
	_, err := f.c.RoomInfo(ctx(t), "nope")
	checkErr(t, err, f.token, sb.ENOTFOUND, `unknown room "nope"`, "GET /api/v1/rooms.info")
	board := f.s.AddGroup("board", "alice")
	_, err = f.c.RoomInfo(ctx(t), board)
	checkErr(t, err, f.token, sb.EFORBIDDEN, "not a member")
}

// TestErrors runs every error path of the table in failure.
func TestErrors(t *testing.T) {
	tests := []struct {
		name           string
		setup          func(f *fixture)
		call           func(f *fixture, c context.Context) error
		wantCode       string
		wantMsg        []string
		wantRetryAfter time.Duration
	}{
		{name: "401 wrong token", setup: func(f *fixture) {
			f.c, _ = New(f.s.URL, f.ids["hermes"], "wrong-token", nil)
		}, call: func(f *fixture, c context.Context) error {
			_, err := f.c.Subscriptions(c, time.Time{})
			return err
		}, wantCode: sb.EUNAUTHORIZED, wantMsg: []string{"GET /api/v1/subscriptions.get", "check RocketChat.userId and RocketChat.authToken", "may have been revoked"}},
		{name: "403", setup: func(f *fixture) {
			f.s.FailNext("channels.history", 403, `{"success":false,"error":"forbidden"}`)
		}, call: func(f *fixture, c context.Context) error {
			_, err := f.c.History(c, sb.RoomChannel, f.general, time.Time{}, 0, false)
			return err
		}, wantCode: sb.EFORBIDDEN, wantMsg: []string{"GET /api/v1/channels.history", "forbidden (403)"}},
		{name: "400 invalid-channel", call: func(f *fixture, c context.Context) error {
			_, err := f.c.PostMessage(c, "no-such-room", "hi", "")
			return err
		}, wantCode: sb.ENOTFOUND, wantMsg: []string{`unknown room "no-such-room"`, "POST /api/v1/chat.postMessage"}},
		{name: "400 error-room-not-found", call: func(f *fixture, c context.Context) error {
			_, err := f.c.History(c, sb.RoomGroup, "no-such-group", time.Time{}, 0, false)
			return err
		}, wantCode: sb.ENOTFOUND, wantMsg: []string{`unknown room "no-such-group"`, "GET /api/v1/groups.history"}},
		{name: "400 other, with the server's reason", setup: func(f *fixture) {
			f.s.FailNext("chat.postMessage", 400, `{"success":false,"error":"You can't send messages because the room is readonly."}`)
		}, call: func(f *fixture, c context.Context) error {
			_, err := f.c.PostMessage(c, f.general, "hi", "")
			return err
		}, wantCode: sb.EINVALID, wantMsg: []string{"rejected the request (400): You can't send messages because the room is readonly."}},
		{name: "404 endpoint", setup: func(f *fixture) {
			f.s.FailNext("rooms.info", 404, `{"success":false,"error":"Resource not found"}`)
		}, call: func(f *fixture, c context.Context) error {
			_, err := f.c.RoomInfo(c, "#general")
			return err
		}, wantCode: sb.ENOTFOUND, wantMsg: []string{"not found (404)", "GET /api/v1/rooms.info"}},
		{name: "429 with X-RateLimit-Reset in epoch ms", setup: func(f *fixture) {
			for i := 0; i < 10; i++ {
				f.c.Subscriptions(context.Background(), time.Time{})
			}
			f.clock.Add(18 * time.Second)
		}, call: func(f *fixture, c context.Context) error {
			_, err := f.c.Subscriptions(c, time.Time{})
			return err
		}, wantCode: sb.ERATELIMITED, wantMsg: []string{"rate limited (429)", "wait 42s", "GET /api/v1/subscriptions.get"}, wantRetryAfter: 42 * time.Second},
		{name: "429 when our clock is ahead of the server's", setup: func(f *fixture) {
			f.s.SetRateLimit(1, time.Minute)
			f.c.Subscriptions(context.Background(), time.Time{})
			f.c.now = func() time.Time { return t0.Add(time.Hour) }
		}, call: func(f *fixture, c context.Context) error {
			_, err := f.c.Subscriptions(c, time.Time{})
			return err
		}, wantCode: sb.ERATELIMITED, wantMsg: []string{"wait 60s"}, wantRetryAfter: time.Minute},
		{name: "5xx outage", setup: func(f *fixture) { f.s.SetDown(true) }, call: func(f *fixture, c context.Context) error {
			_, err := f.c.Info(c)
			return err
		}, wantCode: sb.EUNAVAILABLE, wantMsg: []string{"Rocket.Chat failed (HTTP 503)", "GET /api/info"}},
		{name: "500", setup: func(f *fixture) {
			f.s.FailNext("chat.react", 500, `{"success":false,"error":"boom"}`)
		}, call: func(f *fixture, c context.Context) error { return f.c.React(c, "m", ":+1:") },
			wantCode: sb.EUNAVAILABLE, wantMsg: []string{"HTTP 500", "POST /api/v1/chat.react", ": boom"}},
		{name: "slow server and a context deadline", setup: func(f *fixture) { f.s.SetDelay(2 * time.Second) }, call: func(f *fixture, c context.Context) error {
			c, cancel := context.WithTimeout(c, 50*time.Millisecond)
			defer cancel()
			_, err := f.c.History(c, sb.RoomChannel, f.general, t0, 5, false)
			return err
		}, wantCode: sb.EUNAVAILABLE, wantMsg: []string{"no answer in time", "GET /api/v1/channels.history"}},
		{name: "not Rocket.Chat JSON", setup: func(f *fixture) {
			f.s.FailNext("info", 200, "<html>captive portal</html>")
		}, call: func(f *fixture, c context.Context) error {
			_, err := f.c.Info(c)
			return err
		}, wantCode: sb.EINTERNAL, wantMsg: []string{"not Rocket.Chat JSON", "GET /api/info"}},
		{name: "success false in a 200", setup: func(f *fixture) {
			f.s.FailNext("subscriptions.read", 200, `{"success":false,"error":"error-invalid-subscription"}`)
		}, call: func(f *fixture, c context.Context) error { return f.c.MarkRead(c, "r1") },
			wantCode: sb.ENOTFOUND, wantMsg: []string{`unknown room "r1"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			if tt.setup != nil {
				tt.setup(f)
			}
			start := time.Now()
			err := tt.call(f, ctx(t))
			e := checkErr(t, err, f.token, tt.wantCode, tt.wantMsg...)
			if e.RetryAfter != tt.wantRetryAfter {
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tt.wantRetryAfter)
			}
			if strings.Contains(e.Message, "?") {
				t.Errorf("message carries a query: %q", e.Message)
			}
			if time.Since(start) > time.Second {
				t.Errorf("took %v: the client must not wait or retry", time.Since(start))
			}
		})
	}
}

func TestContextDeadlineKeepsTheCause(t *testing.T) {
	f := newFixture(t)
	f.s.SetDelay(time.Second)
	c, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := f.c.Search(c, f.general, "secret search words", 5)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(err, DeadlineExceeded) = false: %v", err)
	}
	if strings.Contains(err.Error(), "secret search words") || strings.Contains(err.Error(), "searchText") {
		t.Errorf("the query reached the error text: %v", err)
	}
}

func TestUnreachableServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := New("http://"+addr, "u", "tok-unreachable", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Info(ctx(t))
	checkErr(t, err, "tok-unreachable", sb.EUNAVAILABLE, "cannot reach Rocket.Chat at http://"+addr, "GET /api/info")
}

func TestNoRetries(t *testing.T) {
	f := newFixture(t)
	f.s.FailNext("chat.postMessage", 503, "")
	f.s.FailNext("chat.postMessage", 503, "")
	_, err := f.c.PostMessage(ctx(t), f.general, "once", "")
	checkErr(t, err, f.token, sb.EUNAVAILABLE)
	if n := f.s.Calls("chat.postMessage"); n != 1 {
		t.Errorf("server saw %d postMessage calls, want 1", n)
	}
	if n := f.c.Calls()["chat.postMessage"]; n != 1 {
		t.Errorf("Calls() = %d, want 1", n)
	}
}

func TestRedirectToAnotherOriginDropsAuthHeaders(t *testing.T) {
	var got http.Header
	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "file body")
	}))
	defer store.Close()
	var sameOrigin http.Header
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/file-upload/f1/a.txt":
			http.Redirect(w, r, store.URL+"/signed?sig=1", http.StatusFound)
		case "/file-upload/f2/a.txt":
			http.Redirect(w, r, "/file-upload/f3/a.txt", http.StatusFound)
		default:
			sameOrigin = r.Header.Clone()
			io.WriteString(w, "same origin")
		}
	}))
	defer rc.Close()
	c, err := New(rc.URL, "uid", "tok-redirect", nil)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := c.Download(ctx(t), "f1", "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	fs.Body.Close()
	if got.Get("X-Auth-Token") != "" || got.Get("X-User-Id") != "" {
		t.Errorf("the other origin got auth headers: %v", got)
	}
	fs, err = c.Download(ctx(t), "f2", "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	fs.Body.Close()
	if sameOrigin.Get("X-Auth-Token") != "tok-redirect" {
		t.Errorf("a same-origin redirect lost the auth headers: %v", sameOrigin)
	}
}

func TestCallsCountsPerEndpoint(t *testing.T) {
	f := newFixture(t)
	f.c.Subscriptions(ctx(t), time.Time{})
	f.c.Subscriptions(ctx(t), time.Time{})
	f.c.Info(ctx(t))
	f.c.MarkRead(ctx(t), "nope") // failures count too
	got := f.c.Calls()
	want := map[string]int{"subscriptions.get": 2, "info": 1, "subscriptions.read": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Calls() = %v, want %v", got, want)
	}
	got["info"] = 99
	if f.c.Calls()["info"] != 1 {
		t.Error("Calls() returned the live map")
	}
}
