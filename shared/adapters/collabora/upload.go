package collabora

import (
	"bytes"
	"errors"
	"io"
	"mime/multipart"
	"sync"
	"sync/atomic"
)

// upload is one file as a multipart/form-data body with the single part
// "data". The body is the multipart head, the caller's reader, then the
// closing boundary: it streams with no goroutine and no copy, and its length
// is known whenever the reader's is. (An io.Pipe fed by a multipart.Writer
// would stream too, but could never say how long it is.)
type upload struct {
	head, tail []byte
	ctype      string
	r          io.Reader
	size       int64 // of r from its start position; -1 when unknown
	seeker     io.Seeker
	start      int64
	last       *attemptBody
}

func newUpload(fileName string, r io.Reader) (*upload, error) {
	var head, tail bytes.Buffer
	sw := &switchWriter{w: &head}
	mw := multipart.NewWriter(sw)
	// Field "data" as in Collabora's SDK documentation; Collabora takes any
	// part that has a filename, and the filename picks the import filter.
	if _, err := mw.CreateFormFile("data", fileName); err != nil {
		return nil, err
	}
	sw.w = &tail
	if err := mw.Close(); err != nil {
		return nil, err
	}
	u := &upload{head: head.Bytes(), tail: tail.Bytes(), ctype: mw.FormDataContentType(), r: r, size: -1}
	if s, ok := r.(io.Seeker); ok {
		if cur, err := s.Seek(0, io.SeekCurrent); err == nil {
			if end, err := s.Seek(0, io.SeekEnd); err == nil {
				if _, err := s.Seek(cur, io.SeekStart); err != nil {
					return nil, err
				}
				u.seeker, u.start, u.size = s, cur, max(end-cur, 0)
			}
		}
	}
	if u.size < 0 {
		if l, ok := r.(interface{ Len() int }); ok { // bytes.Buffer
			u.size = int64(l.Len())
		}
	}
	return u, nil
}

func (u *upload) contentType() string { return u.ctype }

// replayable reports whether the body can be sent a second time.
func (u *upload) replayable() bool { return u.seeker != nil }

// attempt returns a fresh body for one request and its length (-1 unknown).
func (u *upload) attempt() (*attemptBody, int64) {
	b := &attemptBody{}
	b.mr = io.MultiReader(bytes.NewReader(u.head), &inputTap{r: u.r, b: b}, bytes.NewReader(u.tail))
	u.last = b
	length := int64(-1)
	if u.size >= 0 {
		length = int64(len(u.head)) + u.size + int64(len(u.tail))
	}
	return b, length
}

// rewind puts the reader back to where Convert found it, after the previous
// attempt's body can no longer be read (the transport may still hold it).
func (u *upload) rewind() error {
	if u.seeker == nil {
		return errors.New("input cannot seek")
	}
	if u.last != nil {
		u.last.finish()
		u.last.waitForRead()
	}
	_, err := u.seeker.Seek(u.start, io.SeekStart)
	return err
}

var errAttemptOver = errors.New("collabora: request body read after its request ended")

// attemptBody is the body of one request. Once finished it refuses further
// reads, so that a transport still holding it after Do returned never reads
// the caller's reader again.
type attemptBody struct {
	mu   sync.Mutex // held during Read
	done atomic.Bool
	mr   io.Reader

	errMu sync.Mutex
	inErr error // first error reading the caller's reader
}

func (b *attemptBody) Read(p []byte) (int, error) {
	if b.done.Load() {
		return 0, errAttemptOver
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done.Load() {
		return 0, errAttemptOver
	}
	return b.mr.Read(p)
}

// finish ends the attempt without waiting for a Read in flight: a reader
// blocked past a timeout must not hold Convert.
// waitForRead returns once no Read of b is in flight.
func (b *attemptBody) waitForRead() {
	b.mu.Lock()
	b.mu.Unlock() //lint:ignore SA2001 taking the lock is the wait: Read holds it while it runs
}

func (b *attemptBody) finish() { b.done.Store(true) }

func (b *attemptBody) readErr() error {
	b.errMu.Lock()
	defer b.errMu.Unlock()
	return b.inErr
}

// inputTap reads the caller's reader and keeps its first error, so that a
// failing input is reported as such and not as Collabora being unreachable.
type inputTap struct {
	r io.Reader
	b *attemptBody
}

func (t *inputTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF {
		t.b.errMu.Lock()
		if t.b.inErr == nil {
			t.b.inErr = err
		}
		t.b.errMu.Unlock()
	}
	return n, err
}

// switchWriter lets one multipart.Writer write the head and the closing
// boundary into different buffers.
type switchWriter struct{ w io.Writer }

func (s *switchWriter) Write(p []byte) (int, error) { return s.w.Write(p) }

// form is a complete small multipart body.
type form struct {
	body        string
	contentType string
}

// emptyForm is a multipart form without parts: the probe that reaches
// Collabora's convert-to handler without sending a file.
func emptyForm() form {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	_ = mw.Close() // writes into a bytes.Buffer: cannot fail
	return form{body: b.String(), contentType: mw.FormDataContentType()}
}
