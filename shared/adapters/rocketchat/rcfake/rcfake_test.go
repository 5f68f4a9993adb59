package rcfake_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/platform/clock/clocktest"
)

type fakeClock = clocktest.Clock

var t0 = time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)

// world is a fake with three users: alice (a person), hermes (an agent) and
// bob, and a channel, a group and a DM between alice and hermes.
type world struct {
	s                   *rcfake.Server
	clock               *fakeClock
	ids, tokens         map[string]string
	general, team, dmAH string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	s := rcfake.New()
	t.Cleanup(s.Close)
	w := &world{s: s, clock: clocktest.New(t0), ids: map[string]string{}, tokens: map[string]string{}}
	s.SetClock(w.clock.Now)
	for _, u := range []string{"alice", "hermes", "bob"} {
		w.ids[u], w.tokens[u] = s.AddUser(u)
	}
	w.general = s.AddChannel("general", "alice", "hermes", "bob")
	w.team = s.AddGroup("finanz-team", "alice", "hermes")
	w.dmAH = s.AddDM("alice", "hermes")
	return w
}

// post injects a message, one second after the previous one.
func (w *world) post(t *testing.T, as, rid, text string, opts rcfake.PostOptions) rcfake.Message {
	t.Helper()
	w.clock.Add(time.Second)
	return w.s.MustPost(t, as, rid, text, opts)
}

type answer struct {
	status int
	header http.Header
	raw    []byte
	obj    map[string]any
}

// do sends a request as user as ("" for none); body is JSON-encoded unless
// it is already []byte.
func (w *world) do(t *testing.T, as, method, path string, body any) answer {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	ctype := ""
	if body != nil {
		ctype = "application/json"
	}
	return w.send(t, as, method, path, rd, ctype)
}

// send sends a request as user as ("" for none) with the body's content
// type (none when ""), and reads the answer.
func (w *world) send(t *testing.T, as, method, path string, body io.Reader, ctype string) answer {
	t.Helper()
	req, err := http.NewRequest(method, w.s.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if as != "" {
		req.Header.Set("X-User-Id", w.ids[as])
		req.Header.Set("X-Auth-Token", w.tokens[as])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, raw: raw}
	_ = json.Unmarshal(raw, &a.obj)
	return a
}

func (a answer) messages(t *testing.T) []map[string]any {
	t.Helper()
	list, ok := a.obj["messages"].([]any)
	if !ok {
		t.Fatalf("no messages in %s", a.raw)
	}
	var out []map[string]any
	for _, m := range list {
		out = append(out, m.(map[string]any))
	}
	return out
}

func texts(ms []map[string]any) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m["msg"].(string))
	}
	return out
}

func sub(t *testing.T, w *world, user, rid string) rcfake.Subscription {
	t.Helper()
	s, ok := w.s.Subscription(user, rid)
	if !ok {
		t.Fatalf("%s has no subscription to %s", user, rid)
	}
	return s
}

func TestHistoryIsNewestFirstWithoutThreadReplies(t *testing.T) {
	w := newWorld(t)
	first := w.post(t, "alice", w.general, "one", rcfake.PostOptions{})
	w.post(t, "bob", w.general, "two", rcfake.PostOptions{})
	w.post(t, "bob", w.general, "reply in thread", rcfake.PostOptions{Tmid: first.ID})
	w.post(t, "bob", w.general, "reply also sent to the room", rcfake.PostOptions{Tmid: first.ID, TShow: true})
	w.post(t, "alice", w.general, "three", rcfake.PostOptions{})

	tests := []struct {
		name  string
		query string
		want  []string
	}{
		{name: "default", query: "", want: []string{"three", "reply also sent to the room", "two", "one"}},
		{name: "showThreadMessages", query: "&showThreadMessages=true", want: []string{"three", "reply also sent to the room", "reply in thread", "two", "one"}},
		{name: "oldest is exclusive", query: "&oldest=" + url.QueryEscape(first.At.Format(time.RFC3339Nano)), want: []string{"three", "reply also sent to the room", "two"}},
		{name: "count keeps the newest", query: "&count=2", want: []string{"three", "reply also sent to the room"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := w.do(t, "hermes", "GET", "/api/v1/channels.history?roomId="+w.general+tt.query, nil)
			if a.status != 200 {
				t.Fatalf("status %d: %s", a.status, a.raw)
			}
			if got := texts(a.messages(t)); strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestJoinLeavesASystemMessageInHistory(t *testing.T) {
	w := newWorld(t)
	w.s.AddUser("carol")
	w.clock.Add(time.Second)
	if err := w.s.Join("carol", w.general); err != nil {
		t.Fatal(err)
	}
	ms := w.do(t, "hermes", "GET", "/api/v1/channels.history?roomId="+w.general, nil).messages(t)
	if len(ms) != 1 || ms[0]["t"] != "uj" || ms[0]["msg"] != "carol" {
		t.Fatalf("history = %v, want one uj message for carol", ms)
	}
	if u := ms[0]["u"].(map[string]any); u["username"] != "carol" {
		t.Errorf("u = %v, want carol", u)
	}
	if s := sub(t, w, "hermes", w.general); !s.Alert || s.Unread != 0 {
		t.Errorf("hermes after a join: %+v, want alert only", s)
	}
}

func TestCountersFollowRocketChat8(t *testing.T) {
	w := newWorld(t)
	// A plain message only sets alert.
	w.post(t, "alice", w.general, "good morning", rcfake.PostOptions{})
	if s := sub(t, w, "hermes", w.general); !s.Alert || s.Unread != 0 || s.UserMentions != 0 {
		t.Errorf("after a plain message: %+v, want alert only", s)
	}
	if s := sub(t, w, "alice", w.general); s.Alert {
		t.Errorf("the author's own subscription got alert: %+v", s)
	}
	// A mention counts as unread and userMentions.
	w.post(t, "alice", w.general, "@hermes please check", rcfake.PostOptions{})
	w.post(t, "alice", w.general, "and another plain one", rcfake.PostOptions{})
	if s := sub(t, w, "hermes", w.general); s.Unread != 1 || s.UserMentions != 1 || !s.Alert {
		t.Errorf("after one mention and two plain messages: %+v, want unread 1, userMentions 1", s)
	}
	if s := sub(t, w, "bob", w.general); s.Unread != 0 || s.UserMentions != 0 {
		t.Errorf("bob was not mentioned: %+v", s)
	}
	// userMentions stays up until subscriptions.read.
	w.clock.Add(time.Minute)
	if s := sub(t, w, "hermes", w.general); s.UserMentions != 1 {
		t.Errorf("userMentions dropped without a read: %+v", s)
	}
	if a := w.do(t, "hermes", "POST", "/api/v1/subscriptions.read", map[string]string{"rid": w.general}); a.status != 200 || string(a.raw) != `{"success":true}` {
		t.Fatalf("subscriptions.read = %d %s", a.status, a.raw)
	}
	if s := sub(t, w, "hermes", w.general); s.Unread != 0 || s.UserMentions != 0 || s.Alert || !s.LastSeen.Equal(w.clock.Now()) {
		t.Errorf("after read: %+v, want all zero and ls = now", s)
	}
	// @all is a group mention.
	w.post(t, "alice", w.general, "@all lunch?", rcfake.PostOptions{})
	if s := sub(t, w, "bob", w.general); s.GroupMentions != 1 || s.Unread != 1 {
		t.Errorf("after @all: %+v, want groupMentions 1, unread 1", s)
	}
	// In a DM every message counts (Unread_Count_DM = all_messages).
	w.post(t, "alice", w.dmAH, "hi", rcfake.PostOptions{})
	w.post(t, "alice", w.dmAH, "are you there?", rcfake.PostOptions{})
	if s := sub(t, w, "hermes", w.dmAH); s.Unread != 2 || s.UserMentions != 0 || !s.Alert {
		t.Errorf("DM after two messages: %+v, want unread 2", s)
	}
}

func TestThreadReplyAlertsOnlyItsParticipants(t *testing.T) {
	w := newWorld(t)
	parent := w.post(t, "hermes", w.general, "report is ready", rcfake.PostOptions{})
	if a := w.do(t, "bob", "POST", "/api/v1/subscriptions.read", map[string]string{"rid": w.general}); a.status != 200 {
		t.Fatal(a.status)
	}
	w.post(t, "alice", w.general, "thanks", rcfake.PostOptions{Tmid: parent.ID})
	if s := sub(t, w, "hermes", w.general); !s.Alert {
		t.Errorf("the thread's author was not alerted: %+v", s)
	}
	if s := sub(t, w, "bob", w.general); s.Alert {
		t.Errorf("bob is not in the thread but got alert: %+v", s)
	}
}

func TestSubscriptionsGet(t *testing.T) {
	w := newWorld(t)
	a := w.do(t, "hermes", "GET", "/api/v1/subscriptions.get", nil)
	if a.status != 200 || len(a.obj["update"].([]any)) != 3 {
		t.Fatalf("all subscriptions = %d %s, want three", a.status, a.raw)
	}
	since := w.clock.Now()
	w.post(t, "alice", w.team, "@hermes numbers?", rcfake.PostOptions{})
	a = w.do(t, "hermes", "GET", "/api/v1/subscriptions.get?updatedSince="+url.QueryEscape(since.Format(time.RFC3339Nano)), nil)
	upd := a.obj["update"].([]any)
	if len(upd) != 1 {
		t.Fatalf("updatedSince: %s, want only finanz-team", a.raw)
	}
	s := upd[0].(map[string]any)
	for k, want := range map[string]any{"rid": w.team, "t": "p", "name": "finanz-team", "unread": 1.0, "userMentions": 1.0, "alert": true} {
		if s[k] != want {
			t.Errorf("%s = %v, want %v", k, s[k], want)
		}
	}
	dm := w.do(t, "hermes", "GET", "/api/v1/subscriptions.get", nil)
	for _, e := range dm.obj["update"].([]any) {
		if m := e.(map[string]any); m["t"] == "d" && (m["name"] != "alice" || m["fname"] != "Alice") {
			t.Errorf("DM subscription name/fname = %v/%v, want the counterpart alice/Alice", m["name"], m["fname"])
		}
	}
	if bad := w.do(t, "hermes", "GET", "/api/v1/subscriptions.get?updatedSince=yesterday", nil); bad.status != 400 {
		t.Errorf("invalid updatedSince = %d, want 400", bad.status)
	}
}

func TestPostMessageAnswersTsAsEpochMsAndMessageTsAsISO(t *testing.T) {
	w := newWorld(t)
	a := w.do(t, "hermes", "POST", "/api/v1/chat.postMessage", map[string]string{"roomId": w.general, "text": "hello @alice see https://example.org/x."})
	if a.status != 200 {
		t.Fatalf("status %d: %s", a.status, a.raw)
	}
	var body struct {
		TS      json.RawMessage `json:"ts"`
		Channel string          `json:"channel"`
		Message struct {
			TS       json.RawMessage  `json:"ts"`
			Mentions []map[string]any `json:"mentions"`
			URLs     []map[string]any `json:"urls"`
		} `json:"message"`
	}
	if err := json.Unmarshal(a.raw, &body); err != nil {
		t.Fatal(err)
	}
	if want := strconv.FormatInt(t0.UnixMilli(), 10); string(body.TS) != want {
		t.Errorf("ts = %s, want the number %s", body.TS, want)
	}
	if want := `"2026-08-03T09:00:00.000Z"`; string(body.Message.TS) != want {
		t.Errorf("message.ts = %s, want %s", body.Message.TS, want)
	}
	if body.Channel != w.general {
		t.Errorf("channel = %q, want the roomId as passed", body.Channel)
	}
	if len(body.Message.Mentions) != 1 || body.Message.Mentions[0]["username"] != "alice" {
		t.Errorf("mentions = %v, want alice", body.Message.Mentions)
	}
	if len(body.Message.URLs) != 1 || body.Message.URLs[0]["url"] != "https://example.org/x" {
		t.Errorf("urls = %v", body.Message.URLs)
	}
}

func TestPostMessageTargets(t *testing.T) {
	w := newWorld(t)
	w.ids["carol"], w.tokens["carol"] = w.s.AddUser("carol")
	ids := map[string]string{}
	tests := []struct {
		name       string
		as         string
		body       map[string]string
		wantStatus int
		wantBody   string // exact, for errors
	}{
		{name: "channel by #name", as: "hermes", body: map[string]string{"channel": "#general", "text": "a"}, wantStatus: 200},
		{name: "room by name in roomId", as: "hermes", body: map[string]string{"roomId": "finanz-team", "text": "b"}, wantStatus: 200},
		{name: "@user opens a DM", as: "hermes", body: map[string]string{"channel": "@bob", "text": "c"}, wantStatus: 200},
		{name: "unknown room", as: "hermes", body: map[string]string{"roomId": "nope", "text": "d"}, wantStatus: 400,
			wantBody: `{"error":"[invalid-channel]","errorType":"invalid-channel","success":false}`},
		{name: "unknown #channel", as: "hermes", body: map[string]string{"channel": "#nope", "text": "d"}, wantStatus: 400,
			wantBody: `{"error":"[invalid-channel]","errorType":"invalid-channel","success":false}`},
		{name: "group without membership", as: "carol", body: map[string]string{"roomId": "finanz-team", "text": "e"}, wantStatus: 400,
			wantBody: `{"error":"error-not-allowed","success":false}`},
		{name: "tmid only with roomId", as: "hermes", body: map[string]string{"channel": "#general", "text": "f", "tmid": "x"}, wantStatus: 400,
			wantBody: `{"error":"must match exactly one schema in oneOf [invalid-params]","errorType":"invalid-params","success":false}`},
		{name: "too long", as: "hermes", body: map[string]string{"roomId": w.general, "text": strings.Repeat("x", 5001)}, wantStatus: 400,
			wantBody: `{"error":"error-message-size-exceeded","success":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := w.do(t, tt.as, "POST", "/api/v1/chat.postMessage", tt.body)
			if a.status != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", a.status, tt.wantStatus, a.raw)
			}
			if tt.wantBody != "" && string(a.raw) != tt.wantBody {
				t.Errorf("body %s, want %s", a.raw, tt.wantBody)
			}
			if a.status == 200 {
				ids[tt.name] = a.obj["message"].(map[string]any)["rid"].(string)
			}
		})
	}
	if ids["@user opens a DM"] != w.s.AddDM("hermes", "bob") {
		t.Errorf("@bob went to %q, want the hermes–bob DM", ids["@user opens a DM"])
	}
}

func TestPostingToAPublicChannelJoinsIt(t *testing.T) {
	w := newWorld(t)
	w.ids["carol"], w.tokens["carol"] = w.s.AddUser("carol")
	rid := w.s.AddChannel("random", "alice")
	if a := w.do(t, "carol", "POST", "/api/v1/chat.postMessage", map[string]string{"channel": "#random", "text": "hi all"}); a.status != 200 {
		t.Fatalf("status %d: %s", a.status, a.raw)
	}
	ms := w.s.Messages(rid)
	if len(ms) != 2 || ms[0].SystemType != "uj" || ms[0].Username != "carol" || ms[1].Text != "hi all" {
		t.Errorf("messages = %+v, want carol's uj then her message", ms)
	}
	if _, ok := w.s.Subscription("carol", rid); !ok {
		t.Error("carol has no subscription after posting")
	}
}

func TestHistoryErrors(t *testing.T) {
	w := newWorld(t)
	tests := []struct {
		name, as, path string
		wantStatus     int
		wantBody       string
	}{
		{name: "unknown channel", as: "hermes", path: "/api/v1/channels.history?roomId=nope", wantStatus: 400,
			wantBody: `{"error":"The required \"roomId\" or \"roomName\" param provided does not match any channel [error-room-not-found]","errorType":"error-room-not-found","success":false}`},
		{name: "a group is no channel", as: "hermes", path: "/api/v1/channels.history?roomId=" + w.team, wantStatus: 400},
		{name: "group without membership", as: "bob", path: "/api/v1/groups.history?roomId=" + w.team, wantStatus: 400,
			wantBody: `{"error":"The required \"roomId\" or \"roomName\" param provided does not match any group [error-room-not-found]","errorType":"error-room-not-found","success":false}`},
		{name: "unknown DM", as: "hermes", path: "/api/v1/im.history?roomId=nope", wantStatus: 400,
			wantBody: `{"error":"[invalid-channel]","errorType":"invalid-channel","success":false}`},
		{name: "someone else's DM", as: "bob", path: "/api/v1/im.history?roomId=" + w.dmAH, wantStatus: 403,
			wantBody: `{"error":"forbidden","success":false}`},
		{name: "unknown query parameter", as: "hermes", path: "/api/v1/channels.history?roomId=" + w.general + "&foo=1", wantStatus: 400,
			wantBody: `{"error":"must NOT have additional properties","errorType":"error-invalid-params","success":false}`},
		{name: "not logged in", as: "", path: "/api/v1/channels.history?roomId=" + w.general, wantStatus: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := w.do(t, tt.as, "GET", tt.path, nil)
			if a.status != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", a.status, tt.wantStatus, a.raw)
			}
			if tt.wantBody != "" && string(a.raw) != tt.wantBody {
				t.Errorf("body %s\nwant %s", a.raw, tt.wantBody)
			}
		})
	}
}

func TestUnauthorizedHasThe8xShape(t *testing.T) {
	w := newWorld(t)
	w.tokens["hermes"] = "revoked"
	for _, path := range []string{"/api/v1/subscriptions.get", "/api/v1/rooms.info?roomId=x"} {
		a := w.do(t, "hermes", "GET", path, nil)
		if want := `{"error":"You must be logged in to do this.","success":false}`; a.status != 401 || string(a.raw) != want {
			t.Errorf("%s = %d %s, want 401 %s", path, a.status, a.raw, want)
		}
	}
}

func TestRoomsUploadIsABareHTML404(t *testing.T) {
	w := newWorld(t)
	a := w.do(t, "hermes", "POST", "/api/v1/rooms.upload/"+w.general, []byte("--x--"))
	if a.status != 404 || !strings.HasPrefix(a.header.Get("Content-Type"), "text/html") || !strings.Contains(string(a.raw), "<pre>Cannot POST /api/v1/rooms.upload/") {
		t.Errorf("rooms.upload = %d %q %s, want a bare HTML 404", a.status, a.header.Get("Content-Type"), a.raw)
	}
	if w.s.Calls("rooms.upload") != 1 {
		t.Errorf("Calls(rooms.upload) = %d, want 1", w.s.Calls("rooms.upload"))
	}
}

// multipartBody is a rooms.media body with field "file".
func multipartBody(t *testing.T, field, name, typ string, content []byte) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{`form-data; name="` + field + `"; filename="` + name + `"`}
	h["Content-Type"] = []string{typ}
	p, err := mw.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	p.Write(content)
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

func (w *world) upload(t *testing.T, as, rid string, body []byte, ctype string) answer {
	t.Helper()
	return w.send(t, as, "POST", "/api/v1/rooms.media/"+rid, bytes.NewReader(body), ctype)
}

func TestTwoStepUploadAndDownload(t *testing.T) {
	w := newWorld(t)
	content := []byte("monat,umsatz\nmai,42\n")
	body, ctype := multipartBody(t, "file", "auswertung.csv", "text/csv", content)
	a := w.upload(t, "hermes", w.team, body, ctype)
	if a.status != 200 {
		t.Fatalf("rooms.media = %d %s", a.status, a.raw)
	}
	file := a.obj["file"].(map[string]any)
	id := file["_id"].(string)
	if file["url"] != "/file-upload/"+id+"/auswertung.csv" {
		t.Errorf("url = %v", file["url"])
	}
	if len(w.s.Messages(w.team)) != 0 {
		t.Fatal("rooms.media alone must not show anything in the room")
	}
	if up, _ := w.s.Upload(id); up.Confirmed {
		t.Error("upload confirmed before mediaConfirm")
	}

	bad := w.do(t, "hermes", "POST", "/api/v1/rooms.mediaConfirm/"+w.team+"/"+id, map[string]string{"msg": "x", "filename": "y"})
	if bad.status != 400 || !strings.Contains(string(bad.raw), "Match error: Unknown key in field filename") {
		t.Errorf("unknown key = %d %s, want a 400 Match error", bad.status, bad.raw)
	}
	c := w.do(t, "hermes", "POST", "/api/v1/rooms.mediaConfirm/"+w.team+"/"+id, map[string]string{"msg": "schau dir die Zahlen an"})
	if c.status != 200 {
		t.Fatalf("rooms.mediaConfirm = %d %s", c.status, c.raw)
	}
	msg := c.obj["message"].(map[string]any)
	files := msg["files"].([]any)
	if msg["msg"] != "schau dir die Zahlen an" || len(files) != 1 || files[0].(map[string]any)["_id"] != id {
		t.Errorf("message = %v", msg)
	}
	att := msg["attachments"].([]any)[0].(map[string]any)
	if att["fileId"] != id || att["title_link"] != "/file-upload/"+id+"/auswertung.csv" || att["format"] != "CSV" {
		t.Errorf("attachment = %v", att)
	}
	if up, _ := w.s.Upload(id); !up.Confirmed || !bytes.Equal(up.Content, content) {
		t.Errorf("upload = %+v", up)
	}

	tests := []struct {
		name       string
		as         string
		path       string
		wantStatus int
		wantBody   []byte
	}{
		{name: "with headers", as: "bob", path: "/file-upload/" + id + "/auswertung.csv", wantStatus: 200, wantBody: content},
		{name: "without credentials: 403, empty", as: "", path: "/file-upload/" + id + "/auswertung.csv", wantStatus: 403, wantBody: []byte{}},
		{name: "credentials in the query", as: "", path: "/file-upload/" + id + "/x?rc_uid=" + w.ids["bob"] + "&rc_token=" + w.tokens["bob"], wantStatus: 200, wantBody: content},
		{name: "unknown id: 404, empty", as: "bob", path: "/file-upload/0000/x", wantStatus: 404, wantBody: []byte{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := w.do(t, tt.as, "GET", tt.path, nil)
			if a.status != tt.wantStatus || !bytes.Equal(a.raw, tt.wantBody) {
				t.Errorf("= %d %q, want %d %q", a.status, a.raw, tt.wantStatus, tt.wantBody)
			}
			if a.status == 200 && (a.header.Get("Content-Type") != "text/csv" || a.header.Get("Content-Length") != strconv.Itoa(len(content))) {
				t.Errorf("headers = %v", a.header)
			}
		})
	}
	if a := w.upload(t, "bob", w.team, body, ctype); a.status != 403 {
		t.Errorf("upload to a group bob is not in = %d, want 403", a.status)
	}
	if a := w.upload(t, "bob", "unknown", body, ctype); a.status != 403 {
		t.Errorf("upload to an unknown room = %d, want 403 (canAccessRoomIdAsync)", a.status)
	}
}

func TestPostedImageHasAThumbnailInFiles(t *testing.T) {
	w := newWorld(t)
	m := w.post(t, "alice", w.general, "", rcfake.PostOptions{Files: []rcfake.FileSpec{{Name: "chart.png", Type: "image/png", Content: []byte("PNG…")}}})
	if len(m.FileIDs) != 1 {
		t.Fatalf("FileIDs = %v, want the original only", m.FileIDs)
	}
	ms := w.do(t, "hermes", "GET", "/api/v1/channels.history?roomId="+w.general, nil).messages(t)
	files := ms[0]["files"].([]any)
	att := ms[0]["attachments"].([]any)[0].(map[string]any)
	if len(files) != 2 || att["fileId"] != m.FileIDs[0] || !strings.Contains(att["image_url"].(string), files[1].(map[string]any)["_id"].(string)) {
		t.Errorf("files = %v, attachment = %v; want original + thumbnail, image_url pointing at the thumbnail", files, att)
	}
}

func TestRateLimiter(t *testing.T) {
	w := newWorld(t)
	path := "/api/v1/subscriptions.get"
	for i := 1; i <= 10; i++ {
		a := w.do(t, "hermes", "GET", path, nil)
		if a.status != 200 || a.header.Get("X-RateLimit-Remaining") != strconv.Itoa(10-i) {
			t.Fatalf("call %d = %d remaining %q", i, a.status, a.header.Get("X-RateLimit-Remaining"))
		}
	}
	w.clock.Add(18 * time.Second)
	a := w.do(t, "hermes", "GET", path, nil)
	reset := t0.Add(time.Minute).UnixMilli()
	if a.status != 429 {
		t.Fatalf("11th call = %d, want 429", a.status)
	}
	for k, want := range map[string]string{"X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(reset, 10), "Retry-After": ""} {
		if got := a.header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if want := `{"error":"Error, too many requests. Please slow down. You must wait 42 seconds before trying this endpoint again. [error-too-many-requests]","success":false}`; string(a.raw) != want {
		t.Errorf("body %s\nwant %s", a.raw, want)
	}
	if a := w.do(t, "hermes", "GET", "/api/v1/channels.history?roomId="+w.general, nil); a.status != 200 {
		t.Errorf("another route = %d, want 200 (per route)", a.status)
	}
	if a := w.do(t, "alice", "GET", path, nil); a.status != 200 {
		t.Errorf("another user = %d, want 200 (per user)", a.status)
	}
	w.clock.Add(42 * time.Second)
	if a := w.do(t, "hermes", "GET", path, nil); a.status != 200 || a.header.Get("X-RateLimit-Remaining") != "9" {
		t.Errorf("after the window = %d remaining %q, want 200 and a new window", a.status, a.header.Get("X-RateLimit-Remaining"))
	}

	admin := newWorld(t)
	admin.ids["root"], admin.tokens["root"] = admin.s.AddUser("root", "admin", "user")
	for i := 0; i < 15; i++ {
		if a := admin.do(t, "root", "GET", path, nil); a.status != 200 {
			t.Fatalf("admin call %d = %d, want 200 (admins bypass)", i+1, a.status)
		}
	}

	off := newWorld(t)
	off.s.SetRateLimit(0, 0)
	for i := 0; i < 15; i++ {
		if a := off.do(t, "hermes", "GET", path, nil); a.status != 200 || a.header.Get("X-RateLimit-Limit") != "" {
			t.Fatalf("call %d with the limiter off = %d", i+1, a.status)
		}
	}
	small := newWorld(t)
	small.s.SetRateLimit(2, time.Second)
	for i, want := range []int{200, 200, 429} {
		if a := small.do(t, "hermes", "GET", path, nil); a.status != want {
			t.Errorf("SetRateLimit(2, 1s) call %d = %d, want %d", i+1, a.status, want)
		}
	}
}

func TestOutgoingWebhookPayload(t *testing.T) {
	w := newWorld(t)
	w.s.SetWebhookToken("tok-123")
	ch := w.post(t, "alice", w.general, "@hermes <b>hi</b> & bye", rcfake.PostOptions{})
	dm := w.post(t, "alice", w.dmAH, "private", rcfake.PostOptions{})
	reply := w.post(t, "bob", w.general, "in thread", rcfake.PostOptions{Tmid: ch.ID, Bot: true})
	w.clock.Add(time.Second)
	if err := w.s.Edit(reply.ID, "in thread (edited)"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		msg  rcfake.Message
		want string
	}{
		{name: "channel", msg: ch, want: `{"token":"tok-123","bot":false,"channel_id":"` + w.general + `","channel_name":"general","message_id":"` + ch.ID +
			`","timestamp":"2026-08-03T09:00:01.000Z","user_id":"` + w.ids["alice"] + `","user_name":"alice","text":"@hermes <b>hi</b> & bye","siteUrl":"` + w.s.URL + `"}`},
		{name: "DM has no channel_name", msg: dm, want: `{"token":"tok-123","bot":false,"channel_id":"` + w.dmAH + `","message_id":"` + dm.ID +
			`","timestamp":"2026-08-03T09:00:02.000Z","user_id":"` + w.ids["alice"] + `","user_name":"alice","text":"private","siteUrl":"` + w.s.URL + `"}`},
		{name: "edited bot thread reply", msg: reply, want: `{"token":"tok-123","bot":true,"channel_id":"` + w.general + `","channel_name":"general","message_id":"` + reply.ID +
			`","timestamp":"2026-08-03T09:00:03.000Z","user_id":"` + w.ids["bob"] + `","user_name":"bob","text":"in thread (edited)","siteUrl":"` + w.s.URL + `","isEdited":true,"tmid":"` + ch.ID + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(w.s.OutgoingWebhookPayload(tt.msg)); got != tt.want {
				t.Errorf("payload\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestOutageFailuresAndRecording(t *testing.T) {
	w := newWorld(t)
	w.s.SetDown(true)
	a := w.do(t, "hermes", "GET", "/api/info", nil)
	if a.status != 503 || !strings.Contains(string(a.raw), "nginx") {
		t.Errorf("down: %d %s, want the proxy's 503", a.status, a.raw)
	}
	w.s.SetDown(false)
	a = w.do(t, "", "GET", "/api/info", nil)
	if a.status != 200 || a.obj["version"] != "8.7" {
		t.Errorf("info = %d %s, want version 8.7", a.status, a.raw)
	}

	w.s.FailNext("chat.postMessage", 500, `{"success":false,"error":"boom"}`)
	if a := w.do(t, "hermes", "POST", "/api/v1/chat.postMessage", map[string]string{"roomId": w.general, "text": "x"}); a.status != 500 {
		t.Errorf("FailNext = %d, want 500", a.status)
	}
	if a := w.do(t, "hermes", "POST", "/api/v1/chat.postMessage", map[string]string{"roomId": w.general, "text": "y"}); a.status != 200 {
		t.Errorf("after FailNext = %d, want 200 (once only)", a.status)
	}

	if got := w.s.Calls("chat.postMessage"); got != 2 {
		t.Errorf("Calls(chat.postMessage) = %d, want 2", got)
	}
	if got := w.s.Calls("info"); got != 2 {
		t.Errorf("Calls(info) = %d, want 2 (requests while down count)", got)
	}
	reqs := w.s.Requests()
	last := reqs[len(reqs)-1]
	if last.Method != "POST" || last.Path != "/api/v1/chat.postMessage" || last.Route != "chat.postMessage" ||
		!strings.Contains(string(last.Body), `"text":"y"`) || last.Header.Get("X-User-Id") != w.ids["hermes"] {
		t.Errorf("last request = %+v", last)
	}
}

func TestReactSearchDMAndRoomInfo(t *testing.T) {
	w := newWorld(t)
	m := w.post(t, "alice", w.general, "Quarterly numbers are in", rcfake.PostOptions{})
	w.post(t, "alice", w.general, "unrelated", rcfake.PostOptions{})

	for i := 0; i < 2; i++ { // shouldReact:true keeps the reaction on a repeat
		if a := w.do(t, "hermes", "POST", "/api/v1/chat.react", map[string]any{"messageId": m.ID, "emoji": ":+1:", "shouldReact": true}); a.status != 200 {
			t.Fatalf("react = %d %s", a.status, a.raw)
		}
	}
	if got := w.s.Reactions(m.ID)[":+1:"]; len(got) != 1 || got[0] != "hermes" {
		t.Errorf("reactions = %v, want hermes once", got)
	}
	w.do(t, "hermes", "POST", "/api/v1/chat.react", map[string]any{"messageId": m.ID, "emoji": ":+1:"})
	if got := w.s.Reactions(m.ID); len(got) != 0 {
		t.Errorf("without shouldReact the reaction toggles off; got %v", got)
	}
	if a := w.do(t, "hermes", "POST", "/api/v1/chat.react", map[string]any{"messageId": "nope", "emoji": ":+1:"}); a.status != 400 || a.obj["errorType"] != "error-message-not-found" {
		t.Errorf("unknown message = %d %s", a.status, a.raw)
	}

	s := w.do(t, "hermes", "GET", "/api/v1/chat.search?roomId="+w.general+"&searchText=quarterly", nil)
	if got := texts(s.messages(t)); len(got) != 1 || got[0] != "Quarterly numbers are in" {
		t.Errorf("search = %q", got)
	}
	if a := w.do(t, "bob", "GET", "/api/v1/chat.search?roomId="+w.team+"&searchText=x", nil); a.status != 400 || string(a.raw) != `{"success":false}` {
		t.Errorf("search without access = %d %s, want a bare 400", a.status, a.raw)
	}

	one := w.do(t, "hermes", "GET", "/api/v1/chat.getMessage?msgId="+m.ID, nil)
	if one.status != 200 || one.obj["message"].(map[string]any)["_id"] != m.ID {
		t.Errorf("chat.getMessage = %d %s", one.status, one.raw)
	}
	if a := w.do(t, "hermes", "GET", "/api/v1/chat.getMessage?msgId=nope", nil); a.status != 400 || string(a.raw) != `{"success":false}` {
		t.Errorf("chat.getMessage unknown = %d %s, want a bare 400", a.status, a.raw)
	}
	secret := w.post(t, "alice", w.team, "team only", rcfake.PostOptions{})
	if a := w.do(t, "bob", "GET", "/api/v1/chat.getMessage?msgId="+secret.ID, nil); a.status != 400 || a.obj["errorType"] != "error-not-allowed" {
		t.Errorf("chat.getMessage without access = %d %s", a.status, a.raw)
	}

	dm := w.do(t, "hermes", "POST", "/api/v1/im.create", map[string]string{"username": "bob"})
	room := dm.obj["room"].(map[string]any)
	if dm.status != 200 || room["rid"] != w.s.AddDM("hermes", "bob") || room["t"] != "d" {
		t.Errorf("im.create = %d %s", dm.status, dm.raw)
	}
	if a := w.do(t, "hermes", "POST", "/api/v1/im.create", map[string]string{"username": "ghost"}); a.status != 400 || a.obj["errorType"] != "error-invalid-user" {
		t.Errorf("im.create unknown = %d %s", a.status, a.raw)
	}

	info := w.do(t, "hermes", "GET", "/api/v1/rooms.info?roomName=finanz-team", nil)
	if r := info.obj["room"].(map[string]any); info.status != 200 || r["_id"] != w.team || r["t"] != "p" || r["usersCount"] != 2.0 {
		t.Errorf("rooms.info = %d %s", info.status, info.raw)
	}
	if a := w.do(t, "bob", "GET", "/api/v1/rooms.info?roomId="+w.team, nil); a.status != 400 || string(a.raw) != `{"error":"not-allowed","errorType":"Not Allowed","success":false}` {
		t.Errorf("rooms.info without access = %d %s", a.status, a.raw)
	}
}

func TestDropNextClosesTheConnectionOnce(t *testing.T) {
	w := newWorld(t)
	w.s.DropNext("chat.postMessage")
	req, _ := http.NewRequest("POST", w.s.URL+"/api/v1/chat.postMessage", strings.NewReader(`{"roomId":"`+w.general+`","text":"x"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-User-Id", w.ids["hermes"])
	req.Header.Set("X-Auth-Token", w.tokens["hermes"])
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("dropped request answered %d, want a transport error", resp.StatusCode)
	}
	if n := len(w.s.Messages(w.general)); n != 0 {
		t.Errorf("a dropped post stored %d messages, want 0", n)
	}
	if a := w.do(t, "hermes", "POST", "/api/v1/chat.postMessage", map[string]string{"roomId": w.general, "text": "y"}); a.status != 200 {
		t.Errorf("after DropNext = %d, want 200 (once only)", a.status)
	}
	if got := w.s.Calls("chat.postMessage"); got != 2 {
		t.Errorf("Calls(chat.postMessage) = %d, want 2 (the dropped one counts)", got)
	}
}

func TestSetDroppingDropsUntilTurnedOff(t *testing.T) {
	w := newWorld(t)
	w.s.SetDropping("info", true)
	for i := range 3 {
		if resp, err := http.Get(w.s.URL + "/api/info"); err == nil {
			resp.Body.Close()
			t.Fatalf("GET %d answered %d while dropping, want a transport error", i, resp.StatusCode)
		}
	}
	w.s.SetDropping("info", false)
	if a := w.do(t, "", "GET", "/api/info", nil); a.status != 200 {
		t.Errorf("after SetDropping(false) = %d, want 200", a.status)
	}
}
