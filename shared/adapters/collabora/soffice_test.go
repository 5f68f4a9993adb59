package collabora_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// sofficeInstall is what CI runs to get soffice (Debian 12: LibreOffice
// 7.4, 64 packages, about 100 MB download, 308 MB installed).
const sofficeInstall = "apt-get install -y --no-install-recommends libreoffice-calc-nogui libreoffice-writer-nogui"

// TestRealConversionWithSoffice converts through a real LibreOffice, the
// engine behind Collabora's convert-to. A small adapter in the test answers
// POST /cool/convert-to/{format} as Collabora does (field "data", octet-stream,
// Content-Disposition) and runs soffice --headless --convert-to in between.
// Without soffice on PATH it skips, unless SWITCHBOARD_REQUIRE_SOFFICE=1.
func TestRealConversionWithSoffice(t *testing.T) {
	soffice, err := exec.LookPath("soffice")
	if err != nil {
		if os.Getenv("SWITCHBOARD_REQUIRE_SOFFICE") == "1" {
			t.Fatalf("SWITCHBOARD_REQUIRE_SOFFICE=1 but soffice is not on PATH; install it with: %s", sofficeInstall)
		}
		t.Skipf("soffice not on PATH (install: %s; SWITCHBOARD_REQUIRE_SOFFICE=1 turns this skip into a failure)", sofficeInstall)
	}
	adapter := newSofficeAdapter(t, soffice)
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

// lokFilters names the export filter where soffice's own choice differs from
// Collabora's: LOK's doc_saveAs maps the extension through its
// aWriterExtensionMap ("docx" → "MS Word 2007 XML") for any text document,
// while soffice --convert-to docx finds no filter for HTML, which it opens
// in Writer/Web.
var lokFilters = map[string]string{"docx": "docx:MS Word 2007 XML"}

// newSofficeAdapter serves /cool/convert-to/{format} through soffice. One
// LibreOffice profile, one conversion at a time: instances sharing a
// profile block each other.
func newSofficeAdapter(t *testing.T, soffice string) *httptest.Server {
	t.Helper()
	root := t.TempDir()
	profile := "file://" + filepath.ToSlash(filepath.Join(root, "profile"))
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		format, ok := strings.CutPrefix(r.URL.Path, "/cool/convert-to/")
		if !ok || r.Method != http.MethodPost || format == "" || strings.ContainsAny(format, "/.") {
			http.NotFound(w, r)
			return
		}
		mr, err := r.MultipartReader()
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		dir, err := os.MkdirTemp(root, "job")
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		in := ""
		for {
			part, err := mr.NextPart()
			if err != nil {
				break
			}
			if part.FormName() != "data" || part.FileName() == "" {
				continue
			}
			in = filepath.Join(dir, filepath.Base(part.FileName()))
			f, err := os.Create(in)
			if err == nil {
				_, err = io.Copy(f, part)
				err = errors.Join(err, f.Close())
			}
			if err != nil {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
		}
		if in == "" {
			w.WriteHeader(http.StatusBadRequest) // Collabora: no file
			return
		}
		spec := format
		if f, ok := lokFilters[format]; ok {
			spec = f
		}
		outDir := filepath.Join(dir, "out")
		ctx, cancel := context.WithTimeout(r.Context(), 90*time.Second)
		defer cancel()
		mu.Lock()
		cmd := exec.CommandContext(ctx, soffice, "-env:UserInstallation="+profile, "--headless", "--norestore",
			"--convert-to", spec, "--outdir", outDir, in)
		cmd.Env = append(os.Environ(), "HOME="+root)
		output, err := cmd.CombinedOutput()
		mu.Unlock()
		name := strings.TrimSuffix(filepath.Base(in), filepath.Ext(in)) + "." + format
		doc, rerr := os.ReadFile(filepath.Join(outDir, name))
		if err != nil || rerr != nil {
			t.Logf("soffice %s: %v %v\n%s", spec, err, rerr, output)
			w.WriteHeader(http.StatusBadRequest) // no filter, or the input did not load
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
		_, _ = w.Write(doc)
	}))
	t.Cleanup(srv.Close)
	return srv
}
