package cofake_test

import (
	"archive/zip"
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/collabora/cofake"
)

// post sends one multipart request the way curl -F does, without the client.
func post(t *testing.T, url, field, fileName, content string) *http.Response {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if field != "" {
		w, err := mw.CreateFormFile(field, fileName)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(w, content)
	}
	_ = mw.WriteField("PDFVer", "PDF-1.7") // a form field is skipped, as Collabora does
	_ = mw.Close()
	resp, err := http.Post(url, mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestAnswers(t *testing.T) {
	s := cofake.New(cofake.Options{})
	defer s.Close()
	tests := []struct {
		name, path, field, file string
		opts                    cofake.Options
		want                    int
	}{
		{name: "convert", path: "/cool/convert-to/pdf", field: "data", file: "a.html", want: 200},
		{name: "legacy prefix", path: "/lool/convert-to/pdf", field: "data", file: "a.html", want: 200},
		{name: "field not named data", path: "/cool/convert-to/pdf", field: "file", file: "a.html", want: 400},
		{name: "no file", path: "/cool/convert-to/pdf", want: 400},
		{name: "no export filter", path: "/cool/convert-to/png", field: "data", file: "a.html", want: 400},
		{name: "unknown resource", path: "/cool/convert-from/pdf", field: "data", file: "a.html", want: 400},
		{name: "outside Collabora", path: "/remote.php/dav", field: "data", file: "a.html", want: 404},
		{name: "legacy only", path: "/cool/convert-to/pdf", field: "data", file: "a.html", opts: cofake.Options{LegacyOnly: true}, want: 404},
		{name: "legacy only, lool", path: "/lool/convert-to/pdf", field: "data", file: "a.html", opts: cofake.Options{LegacyOnly: true}, want: 200},
		{name: "refused", path: "/cool/convert-to/pdf", field: "data", file: "a.html", opts: cofake.Options{Refuse403: true}, want: 403},
		{name: "down", path: "/cool/convert-to/pdf", field: "data", file: "a.html", opts: cofake.Options{Down: true}, want: 503},
		{name: "too large", path: "/cool/convert-to/pdf", field: "data", file: "a.html", opts: cofake.Options{MaxBytes: 10}, want: 413},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.SetOptions(tt.opts)
			resp := post(t, s.URL+tt.path, tt.field, tt.file, "<p>hello</p>")
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.want {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tt.want)
			}
			if tt.want != 200 {
				if len(body) != 0 || resp.Header.Get("Content-Length") != "0" {
					t.Errorf("error answer has a body %q (Content-Length %q); Collabora sends none", body, resp.Header.Get("Content-Length"))
				}
				return
			}
			if got := resp.Header.Get("Content-Type"); got != "application/octet-stream" {
				t.Errorf("Content-Type = %q, want application/octet-stream", got)
			}
			if got := resp.Header.Get("Content-Disposition"); got != `attachment; filename=a.pdf` && got != `attachment; filename="a.pdf"` {
				t.Errorf("Content-Disposition = %q", got)
			}
			if !bytes.HasPrefix(body, []byte("%PDF-1.4")) {
				t.Errorf("body = %.40q, want a PDF", body)
			}
		})
	}
	reqs := s.Requests()
	if len(reqs) != len(tests) {
		t.Fatalf("recorded %d requests, want %d", len(reqs), len(tests))
	}
	if r := reqs[0]; r.Prefix != "cool" || r.Format != "pdf" || r.FieldName != "data" || r.FileName != "a.html" ||
		string(r.Body) != "<p>hello</p>" || r.Size != 12 || r.Status != 200 || r.ContentLength <= 0 {
		t.Errorf("first request recorded as %+v", r)
	}
}

func convert(t *testing.T, s *cofake.Server, format, file, content string) []byte {
	t.Helper()
	resp := post(t, s.URL+"/cool/convert-to/"+format, "data", file, content)
	if resp.StatusCode != 200 {
		t.Fatalf("convert %s to %s: status %d", file, format, resp.StatusCode)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDocuments(t *testing.T) {
	s := cofake.New(cofake.Options{})
	defer s.Close()
	csvIn := "name,qty\n\"Äpfel, rot\",3\n<b>,4\n"
	htmlIn := "<html><body><h1>Report (Q1)</h1><p>Fish &amp; chips</p></body></html>"

	t.Run("pdf", func(t *testing.T) {
		doc := convert(t, s, "pdf", "r.html", htmlIn)
		checkPDF(t, doc)
		if !bytes.Contains(doc, []byte(`(Report \(Q1\)) '`)) || !bytes.Contains(doc, []byte("(Fish & chips) '")) {
			t.Errorf("PDF lacks the input's text:\n%s", doc)
		}
	})
	t.Run("xlsx", func(t *testing.T) {
		files := unzip(t, convert(t, s, "xlsx", "r.csv", csvIn))
		for _, name := range []string{"[Content_Types].xml", "_rels/.rels", "xl/workbook.xml", "xl/_rels/workbook.xml.rels", "xl/worksheets/sheet1.xml"} {
			if _, ok := files[name]; !ok {
				t.Errorf("xlsx lacks %s", name)
			}
		}
		sheet := files["xl/worksheets/sheet1.xml"]
		for _, want := range []string{`<c r="A2" t="inlineStr"><is><t xml:space="preserve">Äpfel, rot</t>`, `<c r="B3"`, `&lt;b&gt;`} {
			if !strings.Contains(sheet, want) {
				t.Errorf("sheet1.xml lacks %q:\n%s", want, sheet)
			}
		}
	})
	t.Run("docx", func(t *testing.T) {
		files := unzip(t, convert(t, s, "docx", "r.html", htmlIn))
		if doc := files["word/document.xml"]; !strings.Contains(doc, "Fish &amp; chips") {
			t.Errorf("document.xml = %s", doc)
		}
	})
	for _, tt := range []struct{ format, in, mime, want string }{
		{"odt", "r.html", "application/vnd.oasis.opendocument.text", "<text:p>Report (Q1)</text:p>"},
		{"ods", "r.csv", "application/vnd.oasis.opendocument.spreadsheet", "<text:p>qty</text:p>"},
	} {
		t.Run(tt.format, func(t *testing.T) {
			in := htmlIn
			if strings.HasSuffix(tt.in, ".csv") {
				in = csvIn
			}
			doc := convert(t, s, tt.format, tt.in, in)
			zr, err := zip.NewReader(bytes.NewReader(doc), int64(len(doc)))
			if err != nil {
				t.Fatal(err)
			}
			if f := zr.File[0]; f.Name != "mimetype" || f.Method != zip.Store {
				t.Errorf("first entry %s (method %d), want mimetype stored", f.Name, f.Method)
			}
			files := unzip(t, doc)
			if files["mimetype"] != tt.mime || !strings.Contains(files["content.xml"], tt.want) {
				t.Errorf("mimetype %q, content.xml %s", files["mimetype"], files["content.xml"])
			}
		})
	}
	t.Run("html", func(t *testing.T) {
		doc := string(convert(t, s, "html", "r.csv", csvIn))
		if !strings.HasPrefix(doc, "<!DOCTYPE html>") || !strings.Contains(doc, "<tr><td>&lt;b&gt;</td><td>4</td></tr>") {
			t.Errorf("html = %s", doc)
		}
	})
}

func unzip(t *testing.T, data []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = string(b)
	}
	return out
}

// checkPDF checks the structure a reader relies on: header, every xref
// offset pointing at its object, startxref pointing at the xref table.
func checkPDF(t *testing.T, doc []byte) {
	t.Helper()
	if !bytes.HasPrefix(doc, []byte("%PDF-1.4\n")) || !bytes.HasSuffix(doc, []byte("%%EOF\n")) {
		t.Fatalf("not a PDF: %.20q … %q", doc, doc[max(0, len(doc)-10):])
	}
	m := regexp.MustCompile(`startxref\n(\d+)\n`).FindSubmatch(doc)
	if m == nil {
		t.Fatal("no startxref")
	}
	xref, _ := strconv.Atoi(string(m[1]))
	if !bytes.HasPrefix(doc[xref:], []byte("xref\n0 6\n")) {
		t.Fatalf("startxref %d does not point at the xref table", xref)
	}
	entries := regexp.MustCompile(`(\d{10}) 00000 n `).FindAllSubmatch(doc[xref:], -1)
	if len(entries) != 5 {
		t.Fatalf("%d xref entries, want 5", len(entries))
	}
	for i, e := range entries {
		off, _ := strconv.Atoi(string(e[1]))
		if want := strconv.Itoa(i+1) + " 0 obj\n"; !bytes.HasPrefix(doc[off:], []byte(want)) {
			t.Errorf("xref entry %d points at %.12q, want %q", i+1, doc[off:], want)
		}
	}
	loc := regexp.MustCompile(`<< /Length (\d+) >>\nstream\n`).FindSubmatchIndex(doc)
	if loc == nil {
		t.Fatal("no content stream")
	}
	n, _ := strconv.Atoi(string(doc[loc[2]:loc[3]]))
	if !bytes.HasPrefix(doc[loc[1]+n:], []byte("endstream")) {
		t.Errorf("stream /Length %d does not end at endstream", n)
	}
}
