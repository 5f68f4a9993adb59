package rctool_test

import (
	"bytes"
	"strings"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/rctool"
)

// TestSendFileSeedCases are eight send_file cases first measured against a
// live Rocket.Chat 8.7, here run against rcfake and the in-process S3.
func TestSendFileSeedCases(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.configure(func(a *rctool.Agent) { a.AllowedRooms = []string{"finanz-team", "richard"} })
	markdown := []byte("# Q3\n\nUmsatz: 1.234 €\n")
	csv := []byte("monat;umsatz\njuli;100\naugust;120\n")
	notes := []byte("nur für Richard\n")
	e.put(personal+"reports/q3.md", markdown)
	e.put("shared/zahlen/export.csv", csv)
	e.put(personal+"notes.txt", notes)

	type want struct {
		room, fileName string
		content        []byte
		err            []string
		code           string
	}
	tests := []struct {
		name string
		args map[string]any
		want want
	}{
		{"1 Markdown from the personal workspace",
			map[string]any{"room": "finanz-team", "localPath": "personal:reports/q3.md"},
			want{room: e.finanz, fileName: "q3.md", content: markdown}},
		{"2 CSV from the shared workspace with another file name",
			map[string]any{"room": "finanz-team", "localPath": "shared:zahlen/export.csv", "fileName": "auswertung-q3.csv", "description": "Die Zahlen für Q3"},
			want{room: e.finanz, fileName: "auswertung-q3.csv", content: csv}},
		{"3 file by direct message (path without prefix)",
			map[string]any{"room": "richard", "localPath": "notes.txt"},
			want{room: e.dmRichard, fileName: "notes.txt", content: notes}},
		{"4 escape with ../ refused",
			map[string]any{"room": "finanz-team", "localPath": "personal:../atlas/personal/secret.md"},
			want{err: []string{"contains ..", "cannot climb out"}, code: sb.EINVALID}},
		{"5 absolute path refused",
			map[string]any{"room": "finanz-team", "localPath": "/etc/passwd"},
			want{err: []string{"is absolute"}, code: sb.EINVALID}},
		{"6 missing file",
			map[string]any{"room": "finanz-team", "localPath": "personal:reports/q4.md"},
			want{err: []string{"no file personal:reports/q4.md in the workspace"}, code: sb.ENOTFOUND}},
		{"7 missing localPath",
			map[string]any{"room": "finanz-team"},
			want{err: []string{`missing argument "localPath"`}, code: sb.EINVALID}},
		{"8 room not allowed",
			map[string]any{"room": "vorstand", "localPath": "personal:reports/q3.md"},
			want{err: []string{"#vorstand is not in this agent's allowedRooms"}, code: sb.EFORBIDDEN}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uploads := e.rc.Calls("rooms.media")
			if tt.want.err != nil {
				env := e.fails("send_file", jsonArgs(tt.args), tt.want.err...)
				if env.Data["code"] != tt.want.code {
					t.Errorf("code = %v, want %s", env.Data["code"], tt.want.code)
				}
				if n := e.rc.Calls("rooms.media") - uploads; n != 0 {
					t.Errorf("a refused send_file uploaded %d times", n)
				}
				return
			}
			env := e.ok("send_file", jsonArgs(tt.args))
			if got := str(env, "roomId"); got != tt.want.room {
				t.Errorf("roomId = %q, want %q", got, tt.want.room)
			}
			if got := str(env, "fileName"); got != tt.want.fileName {
				t.Errorf("fileName = %q, want %q", got, tt.want.fileName)
			}
			if got := num(env, "size"); got != int64(len(tt.want.content)) {
				t.Errorf("size = %d, want %d", got, len(tt.want.content))
			}
			up, ok := e.rc.Upload(str(env, "fileId"))
			if !ok {
				t.Fatalf("no upload with fileId %q", str(env, "fileId"))
			}
			if !up.Confirmed || up.RoomID != tt.want.room || up.Name != tt.want.fileName || !bytes.Equal(up.Content, tt.want.content) {
				t.Errorf("upload = %+v", up)
			}
			msgs := e.rc.Messages(tt.want.room)
			last := msgs[len(msgs)-1]
			if last.ID != str(env, "messageId") || len(last.FileIDs) != 1 || last.FileIDs[0] != up.ID {
				t.Errorf("published message = %+v, answer %v", last, env.Data)
			}
			if d, _ := tt.args["description"].(string); d != "" && last.Text != d {
				t.Errorf("message text = %q, want the description %q", last.Text, d)
			}
		})
	}
	// Both steps, once per sent file (rooms.upload is gone in Rocket.Chat 8).
	if m, c, u := e.rc.Calls("rooms.media"), e.rc.Calls("rooms.mediaConfirm"), e.rc.Calls("rooms.upload"); m != 3 || c != 3 || u != 0 {
		t.Errorf("rooms.media %d, rooms.mediaConfirm %d, rooms.upload %d; want 3, 3, 0", m, c, u)
	}
}

func TestSendFileRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.put(personal+"big.bin", bytes.Repeat([]byte{7}, 1<<20+1))
	e.put(personal+"ok.txt", []byte("ok"))
	e.configure(func(a *rctool.Agent) { a.MaxUploadMB = 1 })
	tests := []struct {
		name string
		args string
		want []string
	}{
		{"over maxUploadMb, checked before uploading", `{"room":"finanz-team","localPath":"big.bin"}`,
			[]string{"personal:big.bin is 1.0 MB", "upload limit of 1 MB (RocketChat.maxUploadMb)"}},
		{"colon after the prefix", `{"room":"finanz-team","localPath":"personal:a:b.txt"}`, []string{"contains a colon"}},
		{"unknown prefix", `{"room":"finanz-team","localPath":"C:/x.txt"}`, []string{"unknown prefix"}},
		{"backslash", `{"room":"finanz-team","localPath":"..\\x.txt"}`, []string{"backslash"}},
		{"folder-ish fileName", `{"room":"finanz-team","localPath":"ok.txt","fileName":"../ok.txt"}`, []string{"bare file name"}},
		{"missing room", `{"localPath":"ok.txt"}`, []string{`missing argument "room"`}},
		{"unknown room", `{"room":"nirgends","localPath":"ok.txt"}`, []string{`unknown room "nirgends"`}},
		{"group the agent is not in", `{"room":"geheim","localPath":"ok.txt"}`, []string{"not allowed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { e.fails("send_file", tt.args, tt.want...) })
	}
	if n := e.rc.Calls("rooms.media"); n != 0 {
		t.Errorf("rooms.media called %d times", n)
	}

	// The limit is inclusive, and the default is 25 MB.
	e.put(personal+"exact.bin", bytes.Repeat([]byte{1}, 1<<20))
	e.ok("send_file", `{"room":"finanz-team","localPath":"exact.bin"}`)
	e.configure(func(a *rctool.Agent) { a.MaxUploadMB = 0 })
	e.ok("send_file", `{"room":"finanz-team","localPath":"big.bin"}`)
}

// TestSendFileSecondStepFails: when rooms.mediaConfirm fails the answer says
// that the file is uploaded but not shown.
func TestSendFileSecondStepFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.put(personal+"a.md", []byte("a"))
	e.rc.FailNext("rooms.mediaConfirm", 500, `{"success":false,"error":"boom"}`)
	env := e.fails("send_file", `{"room":"finanz-team","localPath":"a.md"}`, "not shown in the room")
	if env.HTTPStatus != 500 || !strings.HasPrefix(env.Endpoint, "POST /api/v1/rooms.mediaConfirm/"+e.finanz+"/") {
		t.Errorf("http_status/endpoint = %d %q", env.HTTPStatus, env.Endpoint)
	}
}

// TestSendFileIntoThread passes tmid to the published message.
func TestSendFileIntoThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.put(personal+"a.md", []byte("a"))
	root := e.ok("send_message", `{"room":"finanz-team","text":"Bericht folgt"}`)
	e.ok("send_file", jsonArgs(map[string]any{"room": "finanz-team", "localPath": "a.md", "tmid": str(root, "messageId")}))
	msgs := e.rc.Messages(e.finanz)
	if last := msgs[len(msgs)-1]; last.ThreadID != str(root, "messageId") {
		t.Errorf("file message thread = %q, want %q", last.ThreadID, str(root, "messageId"))
	}
}

// A send_file staged for approval records the room it goes to; once the
// room is gone its fingerprint is ENOTFOUND, which the executor turns into
// a refusal of the approved call ("it no longer exists").
func TestSendFileFingerprintOfARoomThatIsGone(t *testing.T) {
	e := newEnv(t)
	call := e.call("send_file", `{"room":"vorstand","localPath":"q3.csv"}`)
	fp, err := e.tool.Fingerprint(t.Context(), call)
	if err != nil || !strings.Contains(fp, e.vorstand) {
		t.Fatalf("Fingerprint = %q, %v; want the room's id %s", fp, err, e.vorstand)
	}
	e.rc.DeleteRoom(e.vorstand)
	fp, err = e.tool.Fingerprint(t.Context(), call)
	if sb.ErrorCode(err) != sb.ENOTFOUND {
		t.Fatalf("Fingerprint after the room was deleted = %q, %v; want ENOTFOUND", fp, err)
	}
}
