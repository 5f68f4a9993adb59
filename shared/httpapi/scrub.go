package httpapi

import (
	"bytes"
	"context"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
)

// ScrubResponses masks secrets in every text answer h writes: JSON (error
// envelopes, /dev/ answers) through Scrubber.JSON, which keeps it valid;
// HTML (approval pages), plain text and other text types through
// Scrubber.String. Bodies that are not text (application/octet-stream,
// images, archives), compressed bodies and downloads (Content-Disposition:
// attachment) stream through unchanged, and so do answers of handlers
// wrapped in Verbatim.
//
// A text body is buffered until the handler returns, then scrubbed whole (a
// secret split across two writes is still found) and sent with a
// Content-Length that fits the scrubbed body; a Content-Length the handler
// set is replaced, since masking changes the length. When the handler
// flushes, what it wrote so far is scrubbed and sent, and the answer goes
// on without a Content-Length: streaming keeps working, but a secret split
// across a flush is scrubbed in two halves. Mount it once around each route
// table, outermost, so that no route can be added without it.
func ScrubResponses(h http.Handler, s *scrub.Scrubber) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := &scrubState{}
		sw := &scrubWriter{w: w, s: s, st: st, head: r.Method == http.MethodHead}
		h.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), scrubStateKey{}, st)))
		sw.finish()
	})
}

// Verbatim marks h's answers as data for a program under a documented
// contract, which ScrubResponses passes unchanged. The tool API uses it: a
// tool result is the calling agent's data (a share's link token and
// one-time password are what the agent asked for), and the tool executor
// already scrubs its error texts and audit. Nothing a person reads should
// be marked.
func Verbatim(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st, ok := r.Context().Value(scrubStateKey{}).(*scrubState); ok {
			st.verbatim = true
		}
		h.ServeHTTP(w, r)
	})
}

// AllowInAnswer lets these exact values through the scrubbing of r's
// answer (see scrub.Allow): for credentials Switchboard minted for the
// person reading the page, such as the signed token of an approval link,
// which the scrubber would mask after "token=". Values shorter than 16
// bytes or containing a configured secret are masked as usual. Outside
// ScrubResponses it does nothing.
func AllowInAnswer(r *http.Request, values ...string) {
	if st, ok := r.Context().Value(scrubStateKey{}).(*scrubState); ok {
		st.allow = append(st.allow, values...)
	}
}

type scrubStateKey struct{}

// scrubState is how Verbatim, deeper in the chain, reaches the writer that
// ScrubResponses made (other middleware may have wrapped the writer since).
type scrubState struct {
	verbatim bool
	allow    []string // AllowInAnswer
}

type scrubWriter struct {
	w    http.ResponseWriter
	s    *scrub.Scrubber
	st   *scrubState
	head bool

	status  int  // 0 until the handler writes a header or a body
	buffer  bool // the body is text and is held back for scrubbing
	flushed bool // part of a buffered body went out: no Content-Length
	buf     bytes.Buffer
	json    bool
}

func (sw *scrubWriter) Header() http.Header { return sw.w.Header() }

// Unwrap lets http.ResponseController reach deadlines and the connection.
func (sw *scrubWriter) Unwrap() http.ResponseWriter { return sw.w }

func (sw *scrubWriter) WriteHeader(code int) {
	if sw.status != 0 {
		return // superfluous, as net/http treats it
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		sw.w.WriteHeader(code) // informational: headers only, more follows
		return
	}
	sw.status = code
	h := sw.w.Header()
	sw.json, sw.buffer = scrubbable(h)
	if sw.st.verbatim {
		sw.buffer = false
	}
	if !sw.buffer {
		sw.w.WriteHeader(code)
	}
}

func (sw *scrubWriter) Write(p []byte) (int, error) {
	if sw.status == 0 {
		if sw.w.Header().Get("Content-Type") == "" && len(p) > 0 {
			// What net/http would send; decided here so that the type
			// check sees it.
			sw.w.Header().Set("Content-Type", http.DetectContentType(p))
		}
		sw.WriteHeader(http.StatusOK)
	}
	if !sw.buffer {
		return sw.w.Write(p)
	}
	return sw.buf.Write(p)
}

// Flush sends the scrubbed body so far, then flushes the connection.
func (sw *scrubWriter) Flush() {
	if sw.status == 0 {
		sw.WriteHeader(http.StatusOK)
	}
	if sw.buffer {
		out := sw.scrubbed() // may settle the Content-Type: before the header
		if !sw.flushed {
			sw.w.Header().Del("Content-Length")
			sw.w.WriteHeader(sw.status)
			sw.flushed = true
		}
		if len(out) > 0 {
			_, _ = sw.w.Write(out)
		}
		sw.buf.Reset()
	}
	_ = http.NewResponseController(sw.w).Flush()
}

// finish sends a buffered body once the handler has returned.
func (sw *scrubWriter) finish() {
	if sw.status == 0 {
		sw.WriteHeader(http.StatusOK)
	}
	if !sw.buffer {
		return
	}
	if sw.flushed {
		if sw.buf.Len() > 0 {
			_, _ = sw.w.Write(sw.scrubbed())
		}
		return
	}
	out := sw.scrubbed()
	// A HEAD answer has no body to measure: keep the handler's length.
	if !sw.head || len(out) > 0 {
		sw.w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	}
	sw.w.WriteHeader(sw.status)
	if len(out) > 0 {
		_, _ = sw.w.Write(out)
	}
}

func (sw *scrubWriter) scrubbed() []byte {
	if h := sw.w.Header(); h.Get("Content-Type") == "" && sw.buf.Len() > 0 {
		h.Set("Content-Type", http.DetectContentType(sw.buf.Bytes()))
		var text bool
		if sw.json, text = scrubbable(h); !text {
			return sw.buf.Bytes()
		}
	}
	if sw.json {
		return sw.s.JSON(sw.buf.Bytes())
	}
	if len(sw.st.allow) > 0 {
		return []byte(sw.s.StringContext(scrub.Allow(context.Background(), sw.st.allow...), sw.buf.String()))
	}
	return sw.s.Bytes(sw.buf.Bytes())
}

// scrubbable reports whether a body with these headers is text to scrub,
// and whether it is JSON.
func scrubbable(h http.Header) (isJSON, text bool) {
	if h.Get("Content-Encoding") != "" && !strings.EqualFold(h.Get("Content-Encoding"), "identity") {
		return false, false
	}
	if d, _, err := mime.ParseMediaType(h.Get("Content-Disposition")); err == nil && d == "attachment" {
		return false, false
	}
	ct := h.Get("Content-Type")
	if ct == "" {
		// Not known yet (WriteHeader before the first Write): hold the
		// body; scrubbed decides by sniffing it, as net/http would.
		return false, true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false, true // unreadable type: treat as text, the safe side
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return true, true
	case strings.HasPrefix(mt, "text/"),
		mt == "application/xml", strings.HasSuffix(mt, "+xml"),
		mt == "application/javascript", mt == "application/x-www-form-urlencoded":
		return false, true
	}
	return false, false
}
