package collabora_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/collabora"
	"github.com/switchboard-dev/switchboard/shared/adapters/collabora/cofake"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

const refusal = "Collabora refuses conversions from this host (not in its allowed hosts list / net.post_allow); deliver Markdown or CSV instead, or ask the admin to allow this host"

func startFake(t *testing.T, opts cofake.Options) *cofake.Server {
	t.Helper()
	s := cofake.New(opts)
	t.Cleanup(s.Close)
	return s
}

func newClient(t *testing.T, base string, hc *http.Client) *collabora.Client {
	t.Helper()
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	c, err := collabora.New(base, hc)
	if err != nil {
		t.Fatalf("New(%q): %v", base, err)
	}
	return c
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := sb.ErrorCode(err); got != code {
		t.Fatalf("error code = %q, want %q (err: %v)", got, code, err)
	}
}

// readAll reads and closes a converted body.
func readAll(t *testing.T, rc io.ReadCloser) []byte {
	t.Helper()
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("reading the converted body: %v", err)
	}
	return b
}

// onlyReader hides Seek and Len: a stream such as an S3 object body.
type onlyReader struct{ io.Reader }

// paths lists the paths of the fake's requests.
func paths(reqs []cofake.Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Path)
	}
	return out
}

func TestNew(t *testing.T) {
	tests := []struct {
		name, base string
		wantErr    string // substring of the caller-safe message; "" = no error
	}{
		{name: "https", base: "https://office.example.org"},
		{name: "trailing slash and path", base: "http://127.0.0.1:9980/office/"},
		{name: "no scheme", base: "office.example.org", wantErr: "is not an http(s) URL"},
		{name: "ftp", base: "ftp://office.example.org", wantErr: "is not an http(s) URL"},
		{name: "no host", base: "https://", wantErr: "is not an http(s) URL"},
		{name: "query", base: "https://office.example.org/?a=b", wantErr: "must not carry a query"},
		{name: "credentials stay out of the message", base: "ftp://admin:s3cret@office.example.org", wantErr: "is not an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := collabora.New(tt.base, nil)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New(%q) = %v, want no error", tt.base, err)
				}
				return
			}
			wantCode(t, err, sb.EINVALID)
			msg := sb.ErrorMessage(err)
			if !strings.Contains(msg, tt.wantErr) {
				t.Errorf("message %q does not contain %q", msg, tt.wantErr)
			}
			if strings.Contains(msg, "s3cret") {
				t.Errorf("message %q shows the password", msg)
			}
		})
	}
}

func TestConvertHappyPath(t *testing.T) {
	fake := startFake(t, cofake.Options{})
	c := newClient(t, fake.URL, nil)
	csvIn := "name,qty\nfoo,1\nbar,2\n"
	htmlIn := "<html><body><h1>Weekly report</h1><p>All green.</p></body></html>"

	tests := []struct {
		name, format, file, input string
		wantType, wantName        string
		check                     func(t *testing.T, out []byte)
	}{
		{
			name: "csv to xlsx", format: "xlsx", file: "report.csv", input: csvIn,
			wantType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", wantName: "report.xlsx",
			check: func(t *testing.T, out []byte) {
				sheet := zipEntry(t, out, "xl/worksheets/sheet1.xml")
				zipEntry(t, out, "xl/workbook.xml")
				zipEntry(t, out, "[Content_Types].xml")
				if !strings.Contains(sheet, ">foo<") || !strings.Contains(sheet, ">2<") {
					t.Errorf("sheet1.xml lacks the CSV cells: %s", sheet)
				}
			},
		},
		{
			name: "html to pdf", format: "pdf", file: "report.html", input: htmlIn,
			wantType: "application/pdf", wantName: "report.pdf",
			check: func(t *testing.T, out []byte) {
				if !bytes.HasPrefix(out, []byte("%PDF-")) || !bytes.Contains(out, []byte("Weekly report")) {
					t.Errorf("not the PDF of the input: %.80q", out)
				}
			},
		},
		{
			name: "format case and dot", format: ".DOCX", file: "notes.odt", input: "some text",
			wantType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", wantName: "notes.docx",
			check: func(t *testing.T, out []byte) { zipEntry(t, out, "word/document.xml") },
		},
		{
			name: "a path becomes its base name", format: "pdf", file: "reports/2026/q1.html", input: htmlIn,
			wantType: "application/pdf", wantName: "q1.pdf",
			check: func(t *testing.T, out []byte) {},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(fake.Requests())
			rc, info, err := c.Convert(context.Background(), tt.format, tt.file, strings.NewReader(tt.input))
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			out := readAll(t, rc)
			if info.ContentType != tt.wantType || info.FileName != tt.wantName {
				t.Errorf("info = %+v, want ContentType %q, FileName %q", info, tt.wantType, tt.wantName)
			}
			tt.check(t, out)

			reqs := fake.Requests()[before:]
			if len(reqs) != 1 {
				t.Fatalf("requests = %v, want exactly one", paths(reqs))
			}
			r := reqs[0]
			format := strings.ToLower(strings.TrimPrefix(tt.format, "."))
			if r.Method != http.MethodPost || r.Path != "/cool/convert-to/"+format {
				t.Errorf("request = %s %s, want POST /cool/convert-to/%s", r.Method, r.Path, format)
			}
			if !strings.HasPrefix(r.ContentType, "multipart/form-data; boundary=") {
				t.Errorf("Content-Type = %q, want multipart/form-data", r.ContentType)
			}
			if r.FieldName != "data" {
				t.Errorf("multipart field = %q, want %q", r.FieldName, "data")
			}
			base := tt.file[strings.LastIndex(tt.file, "/")+1:]
			if r.FileName != base || string(r.Body) != tt.input {
				t.Errorf("file part = %q %q, want %q %q", r.FileName, r.Body, base, tt.input)
			}
			if r.ContentLength <= int64(len(tt.input)) {
				t.Errorf("Content-Length = %d, want the whole multipart length (> %d): a strings.Reader has a known size", r.ContentLength, len(tt.input))
			}
		})
	}
}

func zipEntry(t *testing.T, data []byte, name string) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("not a zip container: %v", err)
	}
	f, err := zr.Open(name)
	if err != nil {
		t.Fatalf("zip has no %s: %v", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return string(b)
}

func TestConvertLegacyFallback(t *testing.T) {
	input := "a,b\n1,2\n"
	tests := []struct {
		name      string
		reader    func() io.Reader
		wantPaths []string // first call
		chunked   bool
	}{
		{
			name:      "seekable input is sent again after the 404",
			reader:    func() io.Reader { return strings.NewReader(input) },
			wantPaths: []string{"/cool/convert-to/xlsx", "/lool/convert-to/xlsx"},
		},
		{
			name:      "a stream is sent once, after an empty probe",
			reader:    func() io.Reader { return onlyReader{strings.NewReader(input)} },
			wantPaths: []string{"/cool/convert-to/xlsx", "/lool/convert-to/xlsx", "/lool/convert-to/xlsx"},
			chunked:   true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := startFake(t, cofake.Options{LegacyOnly: true})
			c := newClient(t, fake.URL, nil)
			for call := 1; call <= 2; call++ {
				rc, info, err := c.Convert(context.Background(), "xlsx", "t.csv", tt.reader())
				if err != nil {
					t.Fatalf("call %d: %v", call, err)
				}
				zipEntry(t, readAll(t, rc), "xl/workbook.xml")
				if info.FileName != "t.xlsx" {
					t.Errorf("FileName = %q, want t.xlsx", info.FileName)
				}
			}
			reqs := fake.Requests()
			want := append(append([]string(nil), tt.wantPaths...), "/lool/convert-to/xlsx") // the second call goes straight to /lool/
			if got := paths(reqs); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("paths = %v, want %v", got, want)
			}
			last := reqs[len(reqs)-1]
			if last.Status != http.StatusOK || string(last.Body) != input || last.FieldName != "data" {
				t.Errorf("last request: status %d, field %q, body %q; want 200, data, %q", last.Status, last.FieldName, last.Body, input)
			}
			if got := last.ContentLength == -1; got != tt.chunked {
				t.Errorf("chunked = %v (Content-Length %d), want %v", got, last.ContentLength, tt.chunked)
			}
			if tt.chunked {
				probe := reqs[1] // the empty form on /lool/: no file, 400 from Collabora
				if probe.Status != http.StatusBadRequest || probe.FileName != "" {
					t.Errorf("probe on /lool/: status %d, file %q; want 400 and no file", probe.Status, probe.FileName)
				}
			}
		})
	}
}

func TestConvertStreamOnModernServer(t *testing.T) {
	fake := startFake(t, cofake.Options{})
	c := newClient(t, fake.URL, nil)
	rc, _, err := c.Convert(context.Background(), "pdf", "a.txt", onlyReader{strings.NewReader("hello")})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, rc)
	reqs := fake.Requests()
	if got, want := paths(reqs), []string{"/cool/convert-to/pdf", "/cool/convert-to/pdf"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("paths = %v, want %v (probe, then the file)", got, want)
	}
	if reqs[0].Status != http.StatusBadRequest || reqs[0].FileName != "" {
		t.Errorf("probe: status %d, file %q; want 400 and no file", reqs[0].Status, reqs[0].FileName)
	}
}

func TestConvertRefused403(t *testing.T) {
	for _, tt := range []struct {
		name   string
		reader io.Reader
	}{
		{"seekable", strings.NewReader("x,y\n")},
		{"stream", onlyReader{strings.NewReader("x,y\n")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := startFake(t, cofake.Options{Refuse403: true})
			c := newClient(t, fake.URL, nil)
			rc, _, err := c.Convert(context.Background(), "xlsx", "t.csv", tt.reader)
			if rc != nil {
				rc.Close()
				t.Fatal("got a body with an error")
			}
			wantCode(t, err, sb.EFORBIDDEN)
			if got := sb.ErrorMessage(err); got != refusal {
				t.Errorf("message = %q, want %q", got, refusal)
			}
			var se *collabora.StatusError
			if !errors.As(err, &se) || se.Status != http.StatusForbidden || se.Endpoint != fake.URL+"/cool/convert-to/xlsx" {
				t.Errorf("StatusError = %+v, want 403 at %s/cool/convert-to/xlsx", se, fake.URL)
			}
		})
	}
}

func TestConvertNoEndpoint(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path)
		mu.Unlock()
		http.NotFound(w, r) // collaboraUrl points at a web server without Collabora
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL+"/office", nil)
	for _, r := range []io.Reader{strings.NewReader("<p>x</p>"), onlyReader{strings.NewReader("<p>x</p>")}} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		_, _, err := c.Convert(context.Background(), "pdf", "x.html", r)
		wantCode(t, err, sb.ENOTFOUND)
		if msg := sb.ErrorMessage(err); !strings.Contains(msg, "no convert-to endpoint at collaboraUrl "+srv.URL+"/office") {
			t.Errorf("message = %q", msg)
		}
		mu.Lock()
		got := strings.Join(seen, " ")
		mu.Unlock()
		if want := "/office/cool/convert-to/pdf /office/lool/convert-to/pdf"; got != want {
			t.Errorf("paths = %q, want %q (each prefix once)", got, want)
		}
	}
}

func TestConvertTimeout(t *testing.T) {
	fake := startFake(t, cofake.Options{Slow: 5 * time.Second})
	t.Run("client timeout", func(t *testing.T) {
		c := newClient(t, fake.URL, &http.Client{Timeout: 200 * time.Millisecond})
		start := time.Now()
		_, _, err := c.Convert(context.Background(), "pdf", "a.html", strings.NewReader("<p>x</p>"))
		wantCode(t, err, sb.EUNAVAILABLE)
		if msg := sb.ErrorMessage(err); !strings.Contains(msg, "did not answer in time") {
			t.Errorf("message = %q", msg)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Convert took %v; the timeout is 200ms", d)
		}
	})
	t.Run("context deadline", func(t *testing.T) {
		c := newClient(t, fake.URL, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, _, err := c.Convert(ctx, "pdf", "a.html", strings.NewReader("<p>x</p>"))
		wantCode(t, err, sb.EUNAVAILABLE)
		if msg := sb.ErrorMessage(err); !strings.Contains(msg, "did not answer in time") {
			t.Errorf("message = %q", msg)
		}
	})
}

func TestConvertDownAndTooLarge(t *testing.T) {
	fake := startFake(t, cofake.Options{Down: true})
	c := newClient(t, fake.URL, nil)
	_, _, err := c.Convert(context.Background(), "pdf", "a.html", strings.NewReader("<p>x</p>"))
	wantCode(t, err, sb.EUNAVAILABLE)

	fake.SetOptions(cofake.Options{MaxBytes: 1000})
	_, _, err = c.Convert(context.Background(), "pdf", "big.html", strings.NewReader(strings.Repeat("x", 2000)))
	wantCode(t, err, sb.EINVALID)
	if msg := sb.ErrorMessage(err); !strings.Contains(msg, "big.html is too large") {
		t.Errorf("message = %q", msg)
	}
	// Chunked: the limit is only found while reading.
	_, _, err = c.Convert(context.Background(), "pdf", "big.html", onlyReader{strings.NewReader(strings.Repeat("x", 2000))})
	wantCode(t, err, sb.EINVALID)

	c2 := newClient(t, "http://127.0.0.1:1", nil) // nothing listens on port 1
	_, _, err = c2.Convert(context.Background(), "pdf", "a.html", strings.NewReader("x"))
	wantCode(t, err, sb.EUNAVAILABLE)
	if msg := sb.ErrorMessage(err); !strings.Contains(msg, "cannot reach Collabora") {
		t.Errorf("message = %q", msg)
	}
}

func TestConvertStatusTable(t *testing.T) {
	tests := []struct {
		status     int
		header     map[string]string
		wantCode   string
		wantRetry  time.Duration
		wantInText string
	}{
		{status: 400, wantCode: sb.EINVALID, wantInText: "could not convert a.html to pdf"},
		{status: 401, wantCode: sb.EUNAUTHORIZED, wantInText: "asks for credentials"},
		{status: 403, wantCode: sb.EFORBIDDEN, wantInText: refusal},
		{status: 413, wantCode: sb.EINVALID, wantInText: "too large"},
		{status: 429, header: map[string]string{"Retry-After": "7"}, wantCode: sb.ERATELIMITED, wantRetry: 7 * time.Second},
		{status: 500, wantCode: sb.EUNAVAILABLE, wantInText: "HTTP 500"},
		{status: 502, wantCode: sb.EUNAVAILABLE},
		{status: 503, header: map[string]string{"Retry-After": "30"}, wantCode: sb.EUNAVAILABLE, wantRetry: 30 * time.Second},
		{status: 504, wantCode: sb.EUNAVAILABLE},
		{status: 418, wantCode: sb.EINTERNAL, wantInText: "unexpected answer (HTTP 418)"},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
			}))
			t.Cleanup(srv.Close)
			c := newClient(t, srv.URL, nil)
			_, _, err := c.Convert(context.Background(), "pdf", "a.html", strings.NewReader("<p>x</p>"))
			wantCode(t, err, tt.wantCode)
			var e *sb.Error
			if errors.As(err, &e) && e.RetryAfter != tt.wantRetry {
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tt.wantRetry)
			}
			if msg := sb.ErrorMessage(err); !strings.Contains(msg, tt.wantInText) {
				t.Errorf("message = %q, want it to contain %q", msg, tt.wantInText)
			}
			var se *collabora.StatusError
			if !errors.As(err, &se) || se.HTTPStatusCode() != tt.status {
				t.Errorf("StatusError = %+v, want status %d", se, tt.status)
			}
		})
	}
}

func TestConvertAnswerShapes(t *testing.T) {
	tests := []struct {
		name        string
		disposition string
		body        string
		wantName    string
		wantCode    string
	}{
		{name: "no Content-Disposition", body: "%PDF-1.4", wantName: "a.pdf"},
		{name: "a path in the name", disposition: `attachment; filename="../../etc/x.pdf"`, body: "%PDF-1.4", wantName: "x.pdf"},
		{name: "unreadable disposition", disposition: `attachment; filename="`, body: "%PDF-1.4", wantName: "a.pdf"},
		{name: "empty document", disposition: `attachment; filename="a.pdf"`, wantCode: sb.EINTERNAL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/octet-stream")
				if tt.disposition != "" {
					w.Header().Set("Content-Disposition", tt.disposition)
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(tt.body)))
				_, _ = io.WriteString(w, tt.body)
			}))
			t.Cleanup(srv.Close)
			c := newClient(t, srv.URL, nil)
			rc, info, err := c.Convert(context.Background(), "pdf", "a.html", strings.NewReader("<p>x</p>"))
			if tt.wantCode != "" {
				wantCode(t, err, tt.wantCode)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := string(readAll(t, rc)); got != tt.body || info.FileName != tt.wantName {
				t.Errorf("got %q named %q, want %q named %q", got, info.FileName, tt.body, tt.wantName)
			}
		})
	}
}

func TestConvertRefusesBeforeSending(t *testing.T) {
	fake := startFake(t, cofake.Options{})
	c := newClient(t, fake.URL, nil)
	tests := []struct {
		name, format, file string
		wantInText         string
	}{
		{name: "png", format: "png", file: "a.html", wantInText: `cannot convert to "png"; Collabora conversion supports docx, html, ods, odt, pdf, xlsx`},
		{name: "empty format", format: "", file: "a.html", wantInText: `cannot convert to ""`},
		{name: "path in format", format: "../pdf", file: "a.html", wantInText: `cannot convert to "../pdf"`},
		{name: "markdown", format: "pdf", file: "notes.md", wantInText: "notes.md is Markdown"},
		{name: "markdown upper case", format: "docx", file: "README.MARKDOWN", wantInText: "is Markdown"},
		{name: "csv to docx", format: "docx", file: "t.csv", wantInText: "a spreadsheet file (t.csv) cannot become docx; it can become html, ods, pdf, xlsx"},
		{name: "html to xlsx", format: "xlsx", file: "t.html", wantInText: "a text file (t.html) cannot become xlsx; it can become docx, html, odt, pdf"},
		{name: "no file name", format: "pdf", file: "", wantInText: "a file name with an extension is needed"},
		{name: "directory", format: "pdf", file: "reports/", wantInText: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := c.Convert(context.Background(), tt.format, tt.file, strings.NewReader("x"))
			if tt.name == "directory" {
				// path.Base("reports/") is "reports": no extension, so the
				// server decides. Only the empty names are refused here.
				if err != nil {
					t.Fatalf("Convert: %v", err)
				}
				return
			}
			wantCode(t, err, sb.EINVALID)
			if msg := sb.ErrorMessage(err); !strings.Contains(msg, tt.wantInText) {
				t.Errorf("message = %q, want it to contain %q", msg, tt.wantInText)
			}
		})
	}
	if n := len(fake.Requests()); n != 1 { // the "directory" case only
		t.Errorf("%d requests reached the server, want 1", n)
	}
}

func TestFormats(t *testing.T) {
	if got, want := strings.Join(collabora.Formats(), ","), "docx,html,ods,odt,pdf,xlsx"; got != want {
		t.Errorf("Formats() = %s, want %s", got, want)
	}
	if got := collabora.ContentType(".PDF"); got != "application/pdf" {
		t.Errorf("ContentType(.PDF) = %q", got)
	}
	if got := collabora.ContentType("png"); got != "" {
		t.Errorf("ContentType(png) = %q, want empty", got)
	}
}

// gatedReader yields first bytes, then waits until the server has received
// some of them before it yields the rest. A client that buffered the whole
// input before sending would never get past the gate.
type gatedReader struct {
	first, rest io.Reader
	fake        *cofake.Server
	opened      bool
	length      int
}

func (g *gatedReader) Read(p []byte) (int, error) {
	n, err := g.first.Read(p)
	if err != io.EOF {
		return n, err
	}
	if !g.opened {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if !g.fake.Wait(ctx, func() bool { return g.fake.Received() > 0 }) {
			return 0, errors.New("the server saw no byte of the file while the client was still reading it: the body is buffered, not streamed")
		}
		g.opened = true
	}
	return g.rest.Read(p)
}

// sizedGate is a gatedReader that reports its length, as bytes.Buffer does.
type sizedGate struct{ *gatedReader }

func (s sizedGate) Len() int { return s.length }

func TestConvertStreamsTheBody(t *testing.T) {
	const firstLen, restLen = 256 << 10, 1 << 20
	for _, sized := range []bool{false, true} {
		name := "chunked"
		if sized {
			name = "with Content-Length"
		}
		t.Run(name, func(t *testing.T) {
			fake := startFake(t, cofake.Options{})
			c := newClient(t, fake.URL, nil)
			g := &gatedReader{
				first:  bytes.NewReader(bytes.Repeat([]byte("a"), firstLen)),
				rest:   bytes.NewReader(bytes.Repeat([]byte("b"), restLen)),
				fake:   fake,
				length: firstLen + restLen,
			}
			var r io.Reader = g
			if sized {
				r = sizedGate{g}
			}
			rc, _, err := c.Convert(context.Background(), "pdf", "big.txt", r)
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			readAll(t, rc)
			// A non-seekable input may be preceded by an empty probe
			// request; pick the upload.
			// The handler records the request when it ends, which can be
			// after the client has read the whole answer: wait for it.
			var last cofake.Request
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			fake.Wait(ctx, func() bool {
				for _, r := range fake.Requests() {
					if r.Size > last.Size {
						last = r
					}
				}
				return last.Size > 0
			})
			if last.Size != firstLen+restLen {
				t.Errorf("server got %d file bytes, want %d", last.Size, firstLen+restLen)
			}
			if got := last.ContentLength != -1; got != sized {
				t.Errorf("Content-Length %d; want it set: %v", last.ContentLength, sized)
			}
		})
	}
}

// failingReader fails after some bytes, as a broken download would.
type failingReader struct {
	n   int
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, f.err
	}
	n := min(f.n, len(p))
	for i := range n {
		p[i] = 'x'
	}
	f.n -= n
	return n, nil
}

func TestConvertInputFails(t *testing.T) {
	fake := startFake(t, cofake.Options{})
	c := newClient(t, fake.URL, nil)
	plain := errors.New("disk on fire")
	domain := sb.E("s3 get x", sb.EUNAVAILABLE, "the workspace store failed; try again")
	for _, tt := range []struct {
		name     string
		err      error
		wantCode string
	}{
		{"plain error", plain, sb.EINTERNAL},
		{"domain error keeps its code", domain, sb.EUNAVAILABLE},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := c.Convert(context.Background(), "pdf", "a.txt", &failingReader{n: 100 << 10, err: tt.err})
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want it to wrap %v", err, tt.err)
			}
			wantCode(t, err, tt.wantCode)
		})
	}
}

func TestConvertConcurrent(t *testing.T) {
	fake := startFake(t, cofake.Options{LegacyOnly: true})
	c := newClient(t, fake.URL, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r io.Reader = strings.NewReader("a,b\n1,2\n")
			if i%2 == 1 {
				r = onlyReader{r}
			}
			rc, _, err := c.Convert(context.Background(), "ods", "t.csv", r)
			if err != nil {
				errs <- err
				return
			}
			defer rc.Close()
			if _, err := io.Copy(io.Discard, rc); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestConvertThroughAProxyWithASharedSecret: Collabora checks only the
// caller's address, so a deployment without a fixed address puts a reverse
// proxy in front that wants a secret header; WithHeaders sends it with every
// request (the empty probe of a stream too), and a missing or wrong one
// ends as EUNAUTHORIZED without the secret in the message.
func TestConvertThroughAProxyWithASharedSecret(t *testing.T) {
	const secret = "proxy-s3cret-value"
	fake := startFake(t, cofake.Options{})
	target, err := url.Parse(fake.URL)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Switchboard-Key") != secret {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		r.URL.Path = strings.TrimPrefix(r.URL.Path, "/office")
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	hc := &http.Client{Timeout: 10 * time.Second}

	for _, in := range []io.Reader{strings.NewReader("a,b\n1,2\n"), onlyReader{strings.NewReader("a,b\n1,2\n")}} {
		c, err := collabora.New(proxy.URL+"/office", hc, collabora.WithHeaders(map[string]string{"X-Switchboard-Key": secret}))
		if err != nil {
			t.Fatal(err)
		}
		rc, got, err := c.Convert(context.Background(), "xlsx", "t.csv", in)
		if err != nil {
			t.Fatalf("convert through the proxy: %v", err)
		}
		if out := readAll(t, rc); got.FileName != "t.xlsx" || len(out) == 0 {
			t.Errorf("got %s with %d bytes, want t.xlsx", got.FileName, len(out))
		}
	}

	for name, opts := range map[string][]collabora.Option{
		"no header":    nil,
		"wrong secret": {collabora.WithHeaders(map[string]string{"X-Switchboard-Key": "not-" + secret})},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := collabora.New(proxy.URL+"/office", hc, opts...)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = c.Convert(context.Background(), "xlsx", "t.csv", strings.NewReader("a,b\n"))
			wantCode(t, err, sb.EUNAUTHORIZED)
			if msg := sb.ErrorMessage(err); !strings.Contains(msg, "collaboraHeaders") || strings.Contains(err.Error(), secret) {
				t.Errorf("message = %q (err %v), want a hint at collaboraHeaders and no secret", msg, err)
			}
		})
	}
	// The seekable file once; the stream's empty probe, then the stream.
	if n := len(fake.Requests()); n != 3 {
		t.Errorf("Collabora saw %d requests, want the 3 that carried the secret", n)
	}
}
