// Package sofficetest serves Collabora's convert-to endpoint through a real
// LibreOffice (soffice --headless --convert-to), the engine behind
// Collabora, for tests that want real documents: POST
// /cool/convert-to/{format} with the file in the multipart field "data",
// answered with application/octet-stream and Content-Disposition as
// Collabora does.
package sofficetest

import (
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

// Install is what CI runs to get soffice (Debian 12: LibreOffice 7.4, 64
// packages, about 100 MB download, 308 MB installed).
const Install = "apt-get install -y --no-install-recommends libreoffice-calc-nogui libreoffice-writer-nogui"

// Find returns the soffice binary on PATH. Without one it skips the test,
// or fails it when SWITCHBOARD_REQUIRE_SOFFICE=1.
func Find(tb testing.TB) string {
	tb.Helper()
	soffice, err := exec.LookPath("soffice")
	if err != nil {
		if os.Getenv("SWITCHBOARD_REQUIRE_SOFFICE") == "1" {
			tb.Fatalf("SWITCHBOARD_REQUIRE_SOFFICE=1 but soffice is not on PATH; install it with: %s", Install)
		}
		tb.Skipf("soffice not on PATH (install: %s; SWITCHBOARD_REQUIRE_SOFFICE=1 turns this skip into a failure)", Install)
	}
	return soffice
}

// lokFilters names the export filter where soffice's own choice differs from
// Collabora's: LOK's doc_saveAs maps the extension through its
// aWriterExtensionMap ("docx" → "MS Word 2007 XML") for any text document,
// while soffice --convert-to docx finds no filter for HTML, which it opens
// in Writer/Web.
var lokFilters = map[string]string{"docx": "docx:MS Word 2007 XML"}

// Start serves /cool/convert-to/{format} through soffice. One
// LibreOffice profile, one conversion at a time: instances sharing a
// profile block each other.
func Start(t testing.TB, soffice string) *httptest.Server {
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
