package rctool_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat"
	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
	"github.com/switchboard-dev/switchboard/shared/platform/untrusted"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/rctool"
)

// csv77 is the seed's auswertung.csv: 77 bytes.
var csv77 = []byte("monat;umsatz;kosten\njuli;1200;800\naugust;1350;820\nseptember;1410;905\nsumme;;\n")

// postFile has richard send a file (and a link) into his DM with the agent.
func (e *env) postFile(name, typ string, content []byte) rcfake.Message {
	e.t.Helper()
	m, err := e.rc.Post("richard", e.dmRichard, "schau dir die Zahlen bitte an.", rcfake.PostOptions{
		Files: []rcfake.FileSpec{{Name: name, Type: typ, Content: content}},
		URLs:  []rcfake.Link{{URL: "https://www.rocket.chat/", Title: "Rocket.Chat | Secure CommsOS™"}},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// TestInboundFileSeedCases are nine inbound-file cases measured against a
// real Rocket.Chat: names with paths, colons, executable endings, clashes.
func TestInboundFileSeedCases(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if len(csv77) != 77 {
		t.Fatalf("fixture is %d bytes, want 77", len(csv77))
	}
	msg := e.postFile("auswertung.csv", "text/csv", csv77)
	fileID := msg.FileIDs[0]

	t.Run("1 file in the read_room text with fileId", func(t *testing.T) {
		env := e.ok("read_room", `{"room":"richard"}`)
		source, text, ok := untrusted.Parse(str(env, "text"))
		if !ok || source != "rocketchat:@richard" {
			t.Fatalf("not one untrusted frame from rocketchat:@richard: %q", str(env, "text"))
		}
		line := regexp.MustCompile(`(?m)^\[\d\d:\d\d\] @richard \(messageId: ` + msg.ID + `\): schau dir die Zahlen bitte an\.$`)
		if !line.MatchString(text) {
			t.Errorf("no message line in %q", text)
		}
		want := "    File: auswertung.csv (text/csv, 77 B) — fileId: " + fileID
		if !strings.Contains(text, want+"\n") {
			t.Errorf("no file line %q in %q", want, text)
		}
	})
	t.Run("2 link with title", func(t *testing.T) {
		env := e.ok("read_room", `{"room":"richard"}`)
		_, text, _ := untrusted.Parse(str(env, "text"))
		if want := "    Link: https://www.rocket.chat/ — Rocket.Chat | Secure CommsOS™"; !strings.Contains(text, want) {
			t.Errorf("no link line %q in %q", want, text)
		}
	})
	t.Run("3 download into the personal workspace", func(t *testing.T) {
		env := e.ok("download_file", jsonArgs(map[string]any{"fileId": fileID, "fileName": "auswertung.csv"}))
		if got := str(env, "path"); got != "personal:auswertung.csv" {
			t.Errorf("path = %q", got)
		}
	})
	t.Run("4 download into the shared workspace", func(t *testing.T) {
		env := e.ok("download_file", jsonArgs(map[string]any{"fileId": fileID, "fileName": "auswertung.csv", "target": "shared:"}))
		if got := str(env, "path"); got != "shared:auswertung.csv" {
			t.Errorf("path = %q", got)
		}
	})
	t.Run("5 content matches", func(t *testing.T) {
		for _, key := range []string{personal + "auswertung.csv", "shared/auswertung.csv"} {
			if got := e.get(key); !bytes.Equal(got, csv77) {
				t.Errorf("%s = %q, want %q", key, got, csv77)
			}
		}
		env := e.ok("download_file", jsonArgs(map[string]any{"fileId": fileID, "fileName": "auswertung.csv", "target": "shared:berichte/q3"}))
		if str(env, "path") != "shared:berichte/q3/auswertung.csv" || num(env, "size") != 77 || str(env, "contentType") != "text/csv" {
			t.Errorf("answer = %v", env.Data)
		}
	})
	t.Run("6 escape through the file name is defused", func(t *testing.T) {
		for _, tc := range []struct{ fileName, want string }{
			{"../../agents/atlas/personal/stolen.csv", "personal:stolen.csv"},
			{`..\..\windows\evil.csv`, "personal:evil.csv"},
			{"/etc/cron.d/job.csv", "personal:job.csv"},
			{"shared:kopie.csv", "personal:kopie.csv"}, // the prefix never picks the folder
			{`C:\Users\richard\bericht.csv`, "personal:bericht.csv"},
			{"liste.csv:versteckt.txt", "personal:versteckt.txt"}, // no NTFS stream: the colon is a separator
		} {
			env := e.ok("download_file", jsonArgs(map[string]any{"fileId": fileID, "fileName": tc.fileName}))
			if got := str(env, "path"); got != tc.want {
				t.Errorf("fileName %q stored as %q, want %q", tc.fileName, got, tc.want)
			}
		}
		for _, k := range e.keys() {
			if !strings.HasPrefix(k, personal) && !strings.HasPrefix(k, "shared/") {
				t.Errorf("object outside the agent's view: %q", k)
			}
			if strings.HasPrefix(k, "shared/") && k != "shared/auswertung.csv" && k != "shared/berichte/q3/auswertung.csv" {
				t.Errorf("a name chose the shared folder: %q", k)
			}
		}
	})
	t.Run("7 dangerous ending refused", func(t *testing.T) {
		exe := e.postFile("setup.exe", "application/x-msdownload", []byte("MZ\x90\x00"))
		for _, name := range []string{"setup.exe", "rechnung.pdf.exe", "RUN.PS1", "setup.exe.", "start.BAT ", "report\u202Efdp.exe", "x.Js", "a.lnk", "b.psm1", "c.ps1xml", "d.msi", "e.jar", "f.sh", "g.apk", "h.reg", "i.hta", "j.scr", "k.dll"} {
			env := e.fails("download_file", jsonArgs(map[string]any{"fileId": exe.FileIDs[0], "fileName": name}),
				"executable ending", "allowDangerousDownloads")
			if env.Data["code"] != sb.EFORBIDDEN {
				t.Errorf("%q: code %v", name, env.Data["code"])
			}
		}
		for _, k := range e.keys() {
			if strings.Contains(strings.ToLower(k), "setup") {
				t.Errorf("a refused download left %q", k)
			}
		}
		e.configure(func(a *rctool.Agent) { a.AllowDangerousDownloads = true })
		defer e.configure(func(a *rctool.Agent) { a.AllowDangerousDownloads = false })
		env := e.ok("download_file", jsonArgs(map[string]any{"fileId": exe.FileIDs[0], "fileName": "setup.exe"}))
		if str(env, "path") != "personal:setup.exe" {
			t.Errorf("with allowDangerousDownloads: %v", env.Data)
		}
	})
	t.Run("8 unknown fileId", func(t *testing.T) {
		env := e.fails("download_file", `{"fileId":"0123456789abcdef01234567","fileName":"x.csv"}`,
			`no file with id "0123456789abcdef01234567" (404)`)
		if env.HTTPStatus != 404 || env.Endpoint != "GET /file-upload/0123456789abcdef01234567/x.csv" || env.Data["code"] != sb.ENOTFOUND {
			t.Errorf("envelope = %+v", env)
		}
	})
	t.Run("9 missing fileId", func(t *testing.T) {
		env := e.fails("download_file", `{"fileName":"x.csv"}`, `missing argument "fileId"`, "fileId:")
		if env.Data["code"] != sb.EINVALID {
			t.Errorf("code = %v", env.Data["code"])
		}
	})
}

func TestDownloadNeverOverwrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.put(personal+"auswertung.csv", []byte("meine eigene Arbeit"))
	fileID := e.postFile("auswertung.csv", "text/csv", csv77).FileIDs[0]
	env := e.ok("download_file", jsonArgs(map[string]any{"fileId": fileID, "fileName": "auswertung.csv"}))
	if str(env, "path") != "personal:auswertung (2).csv" || !strings.Contains(str(env, "note"), "already existed") {
		t.Errorf("answer = %v", env.Data)
	}
	env = e.ok("download_file", jsonArgs(map[string]any{"fileId": fileID, "fileName": "auswertung.csv"}))
	if str(env, "path") != "personal:auswertung (3).csv" {
		t.Errorf("third copy = %v", env.Data)
	}
	if got := string(e.get(personal + "auswertung.csv")); got != "meine eigene Arbeit" {
		t.Errorf("the existing file was replaced: %q", got)
	}
}

func TestDownloadTargets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fileID := e.postFile("a.csv", "text/csv", csv77).FileIDs[0]
	tests := []struct {
		target, want string
	}{
		{"personal:", "personal:a.csv"},
		{"", "personal:a (2).csv"}, // the default, and a.csv is taken now
		{"shared:", "shared:a.csv"},
		{"shared:reports", "shared:reports/a.csv"},
		{"shared:reports/", "shared:reports/a (2).csv"},
		{"inbox", "personal:inbox/a.csv"},
	}
	for _, tt := range tests {
		env := e.ok("download_file", jsonArgs(map[string]any{"fileId": fileID, "fileName": "a.csv", "target": tt.target}))
		if got := str(env, "path"); got != tt.want {
			t.Errorf("target %q: path %q, want %q", tt.target, got, tt.want)
		}
	}
	for _, bad := range []struct{ target, want string }{
		{"shared:../agents/atlas", "contains .."},
		{"/tmp", "absolute"},
		{"C:", "unknown prefix"},
		{"shared:a:b", "colon"},
	} {
		e.fails("download_file", jsonArgs(map[string]any{"fileId": fileID, "fileName": "a.csv", "target": bad.target}), bad.want)
	}
	e.fails("download_file", jsonArgs(map[string]any{"fileId": fileID, "fileName": "../"}), "no file name left")
	e.fails("download_file", jsonArgs(map[string]any{"fileId": fileID}), `missing argument "fileName"`)
	e.fails("download_file", jsonArgs(map[string]any{"fileId": "../../api/v1/me", "fileName": "a.csv"}), "not a Rocket.Chat id")
}

// TestDownloadOverSizeByContentLength: the announced size is refused before
// anything is read or written.
func TestDownloadOverSizeByContentLength(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.configure(func(a *rctool.Agent) { a.MaxDownloadMB = 1 })
	fileID := e.postFile("gross.csv", "text/csv", bytes.Repeat([]byte("x"), 1<<20+1)).FileIDs[0]
	env := e.fails("download_file", jsonArgs(map[string]any{"fileId": fileID, "fileName": "gross.csv"}),
		"is 1.0 MB, more than this agent's download limit of 1 MB", "nothing was saved")
	if env.Data["code"] != sb.EINVALID {
		t.Errorf("code = %v", env.Data["code"])
	}
	if keys := e.keys(); len(keys) != 0 {
		t.Errorf("objects left behind: %v", keys)
	}
	// Exactly the limit passes.
	ok := e.postFile("genau.csv", "text/csv", bytes.Repeat([]byte("x"), 1<<20)).FileIDs[0]
	env = e.ok("download_file", jsonArgs(map[string]any{"fileId": ok, "fileName": "genau.csv"}))
	if num(env, "size") != 1<<20 {
		t.Errorf("size = %d", num(env, "size"))
	}
}

// TestDownloadOverSizeWhileStreaming: without Content-Length (chunked) the
// limit is enforced while reading, and nothing is left behind — neither on
// S3's single-request path (below 5 MiB) nor on its multipart path.
func TestDownloadOverSizeWhileStreaming(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		limitMB int
	}{
		{"single PutObject", 1},
		{"multipart upload", 6}, // more than s3blob.PartSize (5 MiB)
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.configure(func(a *rctool.Agent) { a.MaxDownloadMB = tc.limitMB })
			srv := chunkedFileServer(t, bytes.Repeat([]byte("y"), tc.limitMB<<20+1), false)
			e.useClientFor(srv.URL)
			env := e.fails("download_file", `{"fileId":"6a821828ea0ad1bcab878f74","fileName":"stream.csv"}`,
				"larger than "+strconv.Itoa(tc.limitMB)+" MB (the server did not announce its size)", "nothing was saved")
			if env.Data["code"] != sb.EINVALID {
				t.Errorf("code = %v", env.Data["code"])
			}
			if keys := e.keys(); len(keys) != 0 {
				t.Errorf("objects left behind: %v", keys)
			}
		})
	}
}

// TestDownloadStreamingWithinLimit: a chunked body under the limit is stored
// whole, with its size counted.
func TestDownloadStreamingWithinLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := bytes.Repeat([]byte("0123456789"), 10_000)
	e.useClientFor(chunkedFileServer(t, body, false).URL)
	env := e.ok("download_file", `{"fileId":"6a821828ea0ad1bcab878f74","fileName":"stream.csv"}`)
	if num(env, "size") != int64(len(body)) || !bytes.Equal(e.get(personal+"stream.csv"), body) {
		t.Errorf("answer %v; stored %d bytes", env.Data, len(e.get(personal+"stream.csv")))
	}
}

// TestDownloadBrokenTransfer: a connection that breaks mid-body leaves no
// file behind. With chunked encoding the client sees io.ErrUnexpectedEOF,
// which a store reading with io.ReadFull would take for a complete short
// body if it were passed on as is.
func TestDownloadBrokenTransfer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.useClientFor(chunkedFileServer(t, bytes.Repeat([]byte("z"), 100_000), true).URL)
	env := e.fails("download_file", `{"fileId":"6a821828ea0ad1bcab878f74","fileName":"kaputt.csv"}`, "broke off", "nothing was saved, try again")
	if env.Data["code"] != sb.EUNAVAILABLE {
		t.Errorf("code = %v", env.Data["code"])
	}
	if keys := e.keys(); len(keys) != 0 {
		t.Errorf("objects left behind: %v", keys)
	}
}

// chunkedFileServer serves /file-upload/… with body and no Content-Length
// (chunked, flushed in pieces); with broken it stops halfway and drops the
// connection. It checks the auth headers like Rocket.Chat does.
func chunkedFileServer(t *testing.T, body []byte, broken bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/file-upload/") || r.Header.Get("X-Auth-Token") == "" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "text/csv")
		w.WriteHeader(http.StatusOK)
		end := len(body)
		if broken {
			end /= 2
		}
		for i := 0; i < end; i += 32 << 10 {
			w.Write(body[i:min(i+32<<10, end)])
			w.(http.Flusher).Flush()
		}
		if broken {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// useClientFor points the agent's client at another server.
func (e *env) useClientFor(baseURL string) {
	e.t.Helper()
	c, err := rocketchat.New(baseURL, "uid", "token", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.configure(func(a *rctool.Agent) { a.Client = c })
}
