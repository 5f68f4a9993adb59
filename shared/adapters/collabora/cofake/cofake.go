// Package cofake is an in-process Collabora Online convert-to endpoint for
// tests and dev mode. It answers as Collabora does: POST
// /cool/convert-to/{format} and the legacy /lool/convert-to/{format}, the
// file in a multipart part, 200 with application/octet-stream and
// Content-Disposition: attachment; filename="<base>.<format>", empty bodies
// with every error, 400 when the file is missing or the path under /cool/ is
// unknown, 404 outside /cool/ and /lool/ (what a proxy in front of Collabora
// answers). The documents it returns are small but real: a PDF a reader
// opens, XLSX/DOCX/ODS/ODT zip containers with the input's text (CSV input
// becomes cells), HTML.
//
// It is stricter than Collabora in one point: the file part must be named
// "data" (Collabora takes any part with a filename), so a client sending
// another name fails here with 400.
package cofake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/waittest"
)

// MaxRecorded caps the file bytes kept per request in Request.Body (and used
// to render the answer); Request.Size still counts all of them.
const MaxRecorded = 1 << 20

// Options shape how the fake behaves; change them with SetOptions.
type Options struct {
	// Refuse403: the client is not in net.post_allow; every conversion
	// answers 403 with an empty body, after reading the upload as Collabora
	// does.
	Refuse403 bool
	// LegacyOnly: only /lool/convert-to exists; /cool/ answers 404, as an
	// old server behind a proxy that routes /lool/ only.
	LegacyOnly bool
	// Down: every request answers 503, as a proxy with no Collabora behind it.
	Down bool
	// Slow delays each answer by this much, or until the client gives up.
	Slow time.Duration
	// MaxBytes > 0: a body longer than this answers 413, as a proxy's
	// client_max_body_size does.
	MaxBytes int64
}

// Request is one request as the fake saw it.
type Request struct {
	Method        string
	Path          string
	Prefix        string // "cool" or "lool" ("" for other paths)
	Format        string
	ContentType   string
	ContentLength int64 // -1 when the body was chunked
	FieldName     string
	FileName      string
	Body          []byte // the file's first MaxRecorded bytes
	Size          int64  // the file's length
	Status        int    // the fake's answer
}

// Server is a running fake. It is safe for concurrent use.
type Server struct {
	URL string // base URL, the collaboraUrl to configure

	srv      *httptest.Server
	received atomic.Int64
	changed  waittest.Signal // notified at every file byte received and every request recorded

	mu   sync.Mutex
	opts Options
	reqs []Request
}

// New starts a fake on 127.0.0.1 and a free port. Close stops it.
func New(opts Options) *Server {
	s := &Server{opts: opts}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server, ending requests still in flight.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// SetOptions replaces the options for the requests that follow.
func (s *Server) SetOptions(o Options) {
	s.mu.Lock()
	s.opts = o
	s.mu.Unlock()
}

// Requests returns the requests answered so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Received returns how many file bytes have arrived so far, over all
// requests, counted while they stream in.
func (s *Server) Received() int64 { return s.received.Load() }

// Wait returns true as soon as cond holds, checking it now, at every file
// byte received and after every request recorded (Received, Requests);
// false when ctx ends first. Tests wait with it instead of sleeping.
func (s *Server) Wait(ctx context.Context, cond func() bool) bool { return s.changed.Wait(ctx, cond) }

func (s *Server) options() Options {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rec := Request{Method: r.Method, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), ContentLength: r.ContentLength}
	defer func() {
		s.mu.Lock()
		s.reqs = append(s.reqs, rec)
		s.mu.Unlock()
		s.changed.Notify()
	}()
	fail := func(status int) {
		rec.Status = status
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(status)
	}
	opts := s.options()
	if opts.Down {
		fail(http.StatusServiceUnavailable)
		return
	}
	prefix, format, ok := route(r.URL.Path)
	rec.Prefix, rec.Format = prefix, format
	switch {
	case prefix == "cool" && opts.LegacyOnly, prefix == "" && format == "":
		fail(http.StatusNotFound)
		return
	case !ok || r.Method != http.MethodPost:
		fail(http.StatusBadRequest) // Collabora: "Unknown resource"
		return
	case opts.MaxBytes > 0 && r.ContentLength > opts.MaxBytes:
		fail(http.StatusRequestEntityTooLarge)
		return
	}
	body := io.Reader(r.Body)
	if opts.MaxBytes > 0 {
		body = http.MaxBytesReader(w, r.Body, opts.MaxBytes)
	}
	if opts.Refuse403 {
		// Collabora spools the whole POST before it checks the address.
		_, _ = io.Copy(io.Discard, body)
		fail(http.StatusForbidden)
		return
	}
	status := s.readFile(r, body, &rec)
	if status != http.StatusOK {
		fail(status)
		return
	}
	doc, err := render(format, rec.FileName, rec.Body)
	if err != nil {
		fail(http.StatusBadRequest) // no export filter for this format
		return
	}
	if opts.Slow > 0 {
		select {
		case <-time.After(opts.Slow):
		case <-r.Context().Done():
			rec.Status = 0 // the client gave up; nobody reads an answer
			return
		}
	}
	base := strings.TrimSuffix(rec.FileName, path.Ext(rec.FileName))
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": base + "." + format}))
	w.Header().Set("Content-Length", fmt.Sprint(len(doc)))
	rec.Status = http.StatusOK
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(doc)
}

// route splits /{cool|lool}/convert-to/{format}. ok is false for another
// path under /cool/ or /lool/; prefix and format are both "" for a path
// outside them, which a proxy in front of Collabora answers with 404.
func route(p string) (prefix, format string, ok bool) {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	if len(parts) == 0 || (parts[0] != "cool" && parts[0] != "lool") {
		return "", "", false
	}
	prefix = parts[0]
	if len(parts) != 3 || parts[1] != "convert-to" || parts[2] == "" {
		return prefix, "-", false
	}
	return prefix, strings.ToLower(parts[2]), true
}

// readFile reads the multipart body as it streams in and records the file
// part. It answers 400 without a file part or with one not named "data",
// 413 past MaxBytes.
func (s *Server) readFile(r *http.Request, body io.Reader, rec *Request) int {
	r.Body = io.NopCloser(body)
	mr, err := r.MultipartReader()
	if err != nil {
		return http.StatusBadRequest
	}
	found := false
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return http.StatusRequestEntityTooLarge
		}
		if err != nil {
			return http.StatusBadRequest
		}
		if part.FileName() == "" { // a form field: options, lang, PDFVer …
			_, _ = io.Copy(io.Discard, part)
			continue
		}
		found = true
		rec.FieldName, rec.FileName = part.FormName(), path.Base(part.FileName())
		keep := &capped{max: MaxRecorded, count: &s.received, changed: &s.changed}
		n, err := io.Copy(keep, part)
		rec.Body, rec.Size = keep.buf, n
		if errors.As(err, &tooBig) {
			return http.StatusRequestEntityTooLarge
		}
		if err != nil {
			return http.StatusBadRequest
		}
	}
	if !found || rec.FieldName != "data" {
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// capped keeps the first max bytes written to it and counts all of them.
type capped struct {
	buf     []byte
	max     int
	count   *atomic.Int64
	changed *waittest.Signal
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	c.count.Add(int64(len(p)))
	c.changed.Notify()
	return len(p), nil
}
