package collabora_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/collabora/sofficetest"
)

// TestRealConversionWithSoffice converts through a real LibreOffice, the
// engine behind Collabora's convert-to. A small adapter in the test answers
// POST /cool/convert-to/{format} as Collabora does (field "data", octet-stream,
// Content-Disposition) and runs soffice --headless --convert-to in between.
// Without soffice on PATH it skips, unless SWITCHBOARD_REQUIRE_SOFFICE=1.
func TestRealConversionWithSoffice(t *testing.T) {
	adapter := sofficetest.Start(t, sofficetest.Find(t))
	c := newClient(t, adapter.URL, &http.Client{Timeout: 2 * time.Minute})

	tests := []struct {
		name, format, file, input string
		reader                    func(string) io.Reader
		wantName                  string
		check                     func(t *testing.T, out []byte)
	}{
		{
			name: "csv to xlsx", format: "xlsx", file: "stock.csv",
			input:    "item,count\nwidgets,42\ngadgets,7\n",
			reader:   func(s string) io.Reader { return strings.NewReader(s) },
			wantName: "stock.xlsx",
			check: func(t *testing.T, out []byte) {
				if !bytes.HasPrefix(out, []byte("PK\x03\x04")) {
					t.Fatalf("not a zip container: %.8q", out)
				}
				zipEntry(t, out, "xl/workbook.xml")
				cells := zipEntry(t, out, "xl/sharedStrings.xml") + zipEntry(t, out, "xl/worksheets/sheet1.xml")
				if !strings.Contains(cells, "widgets") || !strings.Contains(cells, "<v>42</v>") {
					t.Errorf("the workbook lacks the CSV's cells:\n%s", cells)
				}
			},
		},
		{
			name: "html to pdf, streamed", format: "pdf", file: "weekly.html",
			input:    "<html><body><h1>Weekly report</h1><p>All systems green.</p></body></html>",
			reader:   func(s string) io.Reader { return onlyReader{strings.NewReader(s)} },
			wantName: "weekly.pdf",
			check: func(t *testing.T, out []byte) {
				if !bytes.HasPrefix(out, []byte("%PDF-")) || !bytes.Contains(out[max(0, len(out)-1024):], []byte("%%EOF")) {
					t.Errorf("not a PDF: %.16q … %q", out, out[max(0, len(out)-16):])
				}
			},
		},
		{
			name: "html to docx", format: "docx", file: "weekly.html",
			input:    "<html><body><h1>Weekly report</h1><p>All systems green.</p></body></html>",
			reader:   func(s string) io.Reader { return strings.NewReader(s) },
			wantName: "weekly.docx",
			check: func(t *testing.T, out []byte) {
				if doc := zipEntry(t, out, "word/document.xml"); !strings.Contains(doc, "All systems green.") {
					t.Errorf("document.xml lacks the text:\n%.2000s", doc)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			rc, info, err := c.Convert(context.Background(), tt.format, tt.file, tt.reader(tt.input))
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			out := readAll(t, rc)
			t.Logf("%s → %s: %d bytes in %v", tt.file, tt.format, len(out), time.Since(start).Round(time.Millisecond))
			if info.FileName != tt.wantName || info.ContentType == "" {
				t.Errorf("info = %+v, want FileName %q", info, tt.wantName)
			}
			tt.check(t, out)
		})
	}
}
