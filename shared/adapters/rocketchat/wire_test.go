package rocketchat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestRCTime(t *testing.T) {
	want := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, in string
		want     time.Time
		wantErr  bool
	}{
		{name: "ISO with ms", in: `"2024-05-01T12:00:00.000Z"`, want: want},
		{name: "ISO with offset", in: `"2024-05-01T14:00:00+02:00"`, want: want},
		{name: "epoch ms", in: `1714564800000`, want: want},
		{name: "EJSON", in: `{"$date":1714564800000}`, want: want},
		{name: "null", in: `null`},
		{name: "empty string", in: `""`},
		{name: "garbage", in: `"yesterday"`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got rcTime
			err := json.Unmarshal([]byte(tt.in), &got)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !got.Equal(tt.want) {
				t.Errorf("got %v, want %v", got.Time, tt.want)
			}
		})
	}
}

// TestToMessage converts messages in the shapes the REST API returns.
func TestToMessage(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want sb.ChatMessage
	}{
		{name: "files[] with a thumbnail: the attachment's fileId decides",
			in: `{"_id":"m1","rid":"r","msg":"","ts":"2024-05-01T12:00:00.000Z","u":{"_id":"u1","username":"alice","name":"Alice"},
				"file":{"_id":"f1","name":"a.png","type":"image/png","size":1234},
				"files":[{"_id":"f1","name":"a.png","type":"image/png","size":1234,"format":"png","typeGroup":"image"},
				         {"_id":"t1","name":"thumb-a.png","type":"image/png","size":99}],
				"attachments":[{"title":"a.png","type":"file","title_link":"/file-upload/f1/a.png","image_url":"/file-upload/t1/a.png","image_type":"image/png","image_size":1234,"fileId":"f1"}]}`,
			want: sb.ChatMessage{ID: "m1", RoomID: "r", At: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), User: sb.ChatUser{ID: "u1", Username: "alice", Name: "Alice"},
				Files: []sb.ChatFile{{ID: "f1", Name: "a.png", Type: "image/png", Size: 1234}}}},
		{name: "two files without attachments",
			in:   `{"_id":"m2","files":[{"_id":"f1","name":"a.csv","type":"text/csv","size":"77"},{"_id":"f2","name":"b.csv","type":"text/csv","size":1.5e3}]}`,
			want: sb.ChatMessage{ID: "m2", Files: []sb.ChatFile{{ID: "f1", Name: "a.csv", Type: "text/csv", Size: 77}, {ID: "f2", Name: "b.csv", Type: "text/csv", Size: 1500}}}},
		{name: "only the deprecated file",
			in:   `{"_id":"m3","file":{"_id":"f9","name":"x.pdf","type":"application/pdf","size":10}}`,
			want: sb.ChatMessage{ID: "m3", Files: []sb.ChatFile{{ID: "f9", Name: "x.pdf", Type: "application/pdf", Size: 10}}}},
		{name: "only an attachment with a title_link",
			in:   `{"_id":"m4","attachments":[{"title":"doc.pdf","type":"file","format":"PDF","title_link":"/file-upload/f7/doc.pdf","size":1234}]}`,
			want: sb.ChatMessage{ID: "m4", Files: []sb.ChatFile{{ID: "f7", Name: "doc.pdf", Size: 1234}}}},
		{name: "an attachment that is no file",
			in:   `{"_id":"m5","attachments":[{"title":"quote","text":"…"}]}`,
			want: sb.ChatMessage{ID: "m5"}},
		{name: "mentions: users, all and here, not teams",
			in: `{"_id":"m6","msg":"@hermes @all @devs","mentions":[{"_id":"u2","username":"hermes","name":"Hermes","type":"user"},
				{"_id":"all","username":"all"},{"_id":"here","username":"here"},{"_id":"t1","username":"devs","type":"team"}]}`,
			want: sb.ChatMessage{ID: "m6", Text: "@hermes @all @devs", Mentions: []string{"hermes", "all", "here"}}},
		{name: "system message, thread, bot object, edited",
			in:   `{"_id":"m7","t":"uj","tmid":"p1","bot":{"i":"int1"},"editedAt":"2024-05-01T12:01:00.000Z","msg":"bob"}`,
			want: sb.ChatMessage{ID: "m7", ThreadID: "p1", Text: "bob", SystemType: "uj", Bot: true, Edited: true, EditedAt: time.Date(2024, 5, 1, 12, 1, 0, 0, time.UTC)}},
		{name: "bot false and null are no bot",
			in:   `{"_id":"m8","bot":false,"editedAt":null}`,
			want: sb.ChatMessage{ID: "m8"}},
		{name: "link previews in their meta variants",
			in: `{"_id":"m9","urls":[{"url":"https://a","meta":{"pageTitle":"A page","description":"about a"}},
				{"url":"https://b","meta":{"ogTitle":"B og","pageTitle":"B page","ogDescription":"b og"}},
				{"url":"https://c"},{"url":""},{"url":"https://d","meta":{"pageTitle":7}}]}`,
			want: sb.ChatMessage{ID: "m9", Links: []sb.ChatLink{{URL: "https://a", Title: "A page", Description: "about a"},
				{URL: "https://b", Title: "B og", Description: "b og"}, {URL: "https://c"}, {URL: "https://d"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w wireMessage
			if err := json.Unmarshal([]byte(tt.in), &w); err != nil {
				t.Fatal(err)
			}
			got := toMessage(w)
			if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC)
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	const text = "Error, too many requests. Please slow down. You must wait 42 seconds before trying this endpoint again."
	tests := []struct {
		name   string
		h      http.Header
		reason string
		want   time.Duration
	}{
		{name: "reset in epoch ms", h: hdr("X-RateLimit-Reset", fmt.Sprint(now.Add(41500*time.Millisecond).UnixMilli())), want: 41500 * time.Millisecond},
		{name: "reset in the past: the text decides", h: hdr("X-RateLimit-Reset", fmt.Sprint(now.Add(-time.Second).UnixMilli())), reason: text, want: 42 * time.Second},
		{name: "reset in seconds is read as ms, lands in 1970: the text decides", h: hdr("X-RateLimit-Reset", fmt.Sprint(now.Unix()+30)), reason: text, want: 42 * time.Second},
		{name: "no header: the text", h: hdr(), reason: text, want: 42 * time.Second},
		{name: "a proxy's Retry-After", h: hdr("Retry-After", "7"), want: 7 * time.Second},
		{name: "nothing", h: hdr(), want: 0},
		{name: "garbage", h: hdr("X-RateLimit-Reset", "soon"), want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryAfter(tt.h, tt.reason, now); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestFailureTable checks failure on answers the fake does not produce
// itself: pre-8.0 bodies, HTML, codes only in errorType.
func TestFailureTable(t *testing.T) {
	c, err := New("https://chat.example.org", "uid", "tok-SECRET-123", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.now = func() time.Time { return time.Date(2026, 8, 3, 9, 0, 0, 0, time.UTC) }
	cl := api(http.MethodPost, "chat.postMessage")
	cl.room = "finanz"
	tests := []struct {
		name     string
		status   int
		body     string
		wantCode string
		wantMsg  string
	}{
		{name: "7.x 401 body", status: 401, body: `{"success":false,"error":"You must be logged in to do this.","status":"error","message":"You must be logged in to do this."}`,
			wantCode: sb.EUNAUTHORIZED, wantMsg: "not logged in (401)"},
		{name: "restivus 401 body", status: 401, body: `{"status":"error","message":"You must be logged in to do this."}`, wantCode: sb.EUNAUTHORIZED},
		{name: "7.x forbidden", status: 403, body: `{"success":false,"error":"unauthorized"}`, wantCode: sb.EFORBIDDEN, wantMsg: `no access to room "finanz"`},
		{name: "invalid-channel only in error", status: 400, body: `{"success":false,"error":"[invalid-channel]"}`, wantCode: sb.ENOTFOUND, wantMsg: `unknown room "finanz"`},
		{name: "code only in errorType", status: 400, body: `{"success":false,"error":"Room not found","errorType":"error-invalid-room"}`, wantCode: sb.ENOTFOUND},
		{name: "subscription missing", status: 400, body: `{"success":false,"error":"error-invalid-subscription"}`, wantCode: sb.ENOTFOUND},
		{name: "DDP rate limit through REST", status: 400, body: `{"success":false,"error":"Error, too many requests. Please slow down. You must wait 9 seconds before trying again. [error-too-many-requests]","errorType":"error-too-many-requests"}`,
			wantCode: sb.ERATELIMITED, wantMsg: "wait 9s"},
		{name: "bare failure about a room", status: 400, body: `{"success":false}`, wantCode: sb.ENOTFOUND, wantMsg: `unknown room "finanz", or this user has no access`},
		{name: "Not allowed [error-not-allowed]", status: 400, body: `{"success":false,"error":"Not allowed [error-not-allowed]","errorType":"error-not-allowed","details":{"method":"getSingleMessage"}}`,
			wantCode: sb.EFORBIDDEN, wantMsg: `not allowed in room "finanz"`},
		{name: "reason with not-allowed code stays EINVALID", status: 400, body: `{"success":false,"error":"Invalid emoji provided. [error-not-allowed]","errorType":"error-not-allowed"}`,
			wantCode: sb.EINVALID, wantMsg: "(400): Invalid emoji provided."},
		{name: "server echoes the token", status: 400, body: `{"success":false,"error":"bad token tok-SECRET-123 given"}`, wantCode: sb.EINVALID, wantMsg: "bad token"},
		{name: "long reason is capped", status: 400, body: `{"success":false,"error":"` + strings.Repeat("a", 1000) + `"}`, wantCode: sb.EINVALID},
		{name: "error as an object", status: 400, body: `{"success":false,"error":{"code":1}}`, wantCode: sb.EINVALID, wantMsg: `{"code":1}`},
		{name: "HTML 404", status: 404, body: `<!DOCTYPE html><pre>Cannot POST /api/v1/rooms.upload/x</pre>`, wantCode: sb.ENOTFOUND, wantMsg: "does not offer this endpoint"},
		{name: "413 from a proxy", status: 413, body: `<html>too large</html>`, wantCode: sb.EINVALID, wantMsg: "too large"},
		{name: "502", status: 502, body: ``, wantCode: sb.EUNAVAILABLE, wantMsg: "HTTP 502"},
		{name: "422", status: 422, body: `{"success":false,"error":"nope"}`, wantCode: sb.EINVALID, wantMsg: "(HTTP 422): nope"},
		{name: "304", status: 304, body: ``, wantCode: sb.EINTERNAL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.failure(cl, &http.Response{StatusCode: tt.status, Header: http.Header{}}, []byte(tt.body), nil)
			e := checkErr(t, err, "tok-SECRET-123", tt.wantCode, tt.wantMsg, "Rocket.Chat POST /api/v1/chat.postMessage: ")
			if e.Op != "rocketchat.chat.postMessage" {
				t.Errorf("Op = %q", e.Op)
			}
			if len(e.Message) > 600 {
				t.Errorf("message is %d bytes long", len(e.Message))
			}
		})
	}
}
