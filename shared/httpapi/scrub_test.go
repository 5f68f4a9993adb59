package httpapi_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/httpapi"
	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

const planted = "signing-key-Zq81xW-planted"

var awsID = "AKIA" + "QWERTYUIOPASDFGH"

func TestScrubResponses(t *testing.T) {
	s := scrub.New([]string{planted})
	binary := "\x00\x01PK\x03\x04 " + planted + " token=abc"
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		wantBody string // exact body; "" checks only the leak and the mask
		verbatim bool   // the planted secret must arrive unchanged
		wantType string
	}{
		{name: "error envelope", handler: func(w http.ResponseWriter, r *http.Request) {
			httpapi.WriteError(w, r, slog.New(slog.DiscardHandler), sb.E("x", sb.EINVALID, "key "+planted+" and "+awsID+" are wrong"))
		}, wantBody: `{"code":"invalid","error":"key *** and AKIA*** are wrong","status":"error"}` + "\n", wantType: "application/json"},
		{name: "json answer", handler: func(w http.ResponseWriter, r *http.Request) {
			httpapi.WriteJSON(w, http.StatusOK, map[string]any{"answer": "see https://bob:hunter22@nc.example/x", "apiKey": planted, "room": "aBcD2345EfGh6789j"})
		}, wantBody: `{"answer":"see https://bob:***@nc.example/x","apiKey":"***","room":"aBcD2345EfGh6789j"}` + "\n", wantType: "application/json"},
		{name: "html page", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<p>%s</p>", planted)
		}, wantBody: "<p>***</p>", wantType: "text/html; charset=utf-8"},
		{name: "secret split across writes", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "a "+planted[:9])
			io.WriteString(w, planted[9:]+" b")
		}, wantBody: "a *** b"},
		{name: "sniffed text", handler: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "plain "+planted)
		}, wantBody: "plain ***", wantType: "text/plain; charset=utf-8"},
		{name: "header before an untyped body", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusTeapot)
			io.WriteString(w, "plain "+planted)
		}, wantBody: "plain ***"},
		{name: "handler's Content-Length is replaced", handler: func(w http.ResponseWriter, r *http.Request) {
			body := "len " + planted
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			io.WriteString(w, body)
		}, wantBody: "len ***"},
		{name: "binary download unchanged", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			io.WriteString(w, binary)
		}, wantBody: binary, verbatim: true},
		{name: "text attachment unchanged", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Disposition", `attachment; filename="notes.txt"`)
			io.WriteString(w, "file "+planted)
		}, wantBody: "file " + planted, verbatim: true},
		{name: "untyped binary unchanged", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, binary)
		}, wantBody: binary, verbatim: true},
		{name: "verbatim handler", handler: httpapi.Verbatim(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			httpapi.WriteJSON(w, http.StatusOK, map[string]any{"token": planted})
		})).ServeHTTP, wantBody: `{"token":"` + planted + `"}` + "\n", verbatim: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := httptest.NewRecorder()
			tt.handler(want, httptest.NewRequest("GET", "/x", nil))
			srv := httptest.NewServer(httpapi.ScrubResponses(tt.handler, s))
			defer srv.Close()
			resp, err := http.Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("reading the body: %v (a wrong Content-Length?)", err)
			}
			if resp.StatusCode != want.Code {
				t.Errorf("status = %d, want the handler's %d", resp.StatusCode, want.Code)
			}
			if tt.wantBody != "" && string(body) != tt.wantBody {
				t.Errorf("body = %q, want %q", body, tt.wantBody)
			}
			if got := strings.Contains(string(body), planted); got != tt.verbatim {
				t.Errorf("body carries the secret: %v, want %v: %q", got, tt.verbatim, body)
			}
			if tt.wantType != "" && resp.Header.Get("Content-Type") != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", resp.Header.Get("Content-Type"), tt.wantType)
			}
			if resp.ContentLength >= 0 && resp.ContentLength != int64(len(body)) {
				t.Errorf("Content-Length %d for %d bytes", resp.ContentLength, len(body))
			}
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && !json.Valid(body) {
				t.Errorf("scrubbed JSON is not valid: %s", body)
			}
		})
	}
}

// TestScrubResponsesStreams: a handler that flushes still streams, each
// flushed piece scrubbed, and the headers it set survive.
func TestScrubResponsesStreams(t *testing.T) {
	s := scrub.New([]string{planted})
	next := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Run", "r-1")
		fmt.Fprintf(w, "data: first %s\n\n", planted)
		http.NewResponseController(w).Flush()
		<-next // the client has read the first event: it was not held back
		fmt.Fprintf(w, "data: second %s\n\n", planted)
	})
	srv := httptest.NewServer(httpapi.ScrubResponses(h, s))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	line, err := rd.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	close(next)
	rest, _ := io.ReadAll(rd)
	got := line + string(rest)
	if want := "data: first ***\n\ndata: second ***\n\n"; got != want {
		t.Errorf("stream = %q, want %q", got, want)
	}
	if resp.Header.Get("X-Run") != "r-1" {
		t.Errorf("header lost: %v", resp.Header)
	}
}

// TestScrubResponsesHead: a HEAD answer keeps the status and the length the
// handler announced.
func TestScrubResponsesHead(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", "1234")
		w.WriteHeader(http.StatusOK)
	})
	srv := httptest.NewServer(httpapi.ScrubResponses(h, scrub.New(nil)))
	defer srv.Close()
	resp, err := http.Head(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != 1234 {
		t.Errorf("HEAD = %d, length %d", resp.StatusCode, resp.ContentLength)
	}
}

// TestScrubResponsesPanics: a handler that aborts does not get half an
// answer written for it.
func TestScrubResponsesPanics(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "partial "+planted)
		panic(http.ErrAbortHandler)
	})
	srv := httptest.NewServer(httpapi.ScrubResponses(h, scrub.New([]string{planted})))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), planted) {
			t.Errorf("aborted answer leaked %q", body)
		}
	} else if !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "EOF") {
		t.Logf("aborted request: %v", err)
	}
}

// BenchmarkScrubResponses is the cost the middleware adds to a typical
// JSON answer (a /dev run result of about 1 KB).
func BenchmarkScrubResponses(b *testing.B) {
	answer := map[string]any{"answer": strings.Repeat("Hermes heard: the Q3 numbers are in /Reports/Q3.pdf. ", 18), "steps": 2, "costUsd": 0.0012}
	plain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { httpapi.WriteJSON(w, http.StatusOK, answer) })
	scrubbed := httpapi.ScrubResponses(plain, scrub.New([]string{planted, "tool-api-token-123", "nc-app-pass-456"}))
	req := httptest.NewRequest("POST", "/dev/agents/hermes/run", nil)
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"without", plain}, {"with", scrubbed}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.h.ServeHTTP(httptest.NewRecorder(), req)
			}
		})
	}
}

// TestAllowInAnswerKeepsMintedTokens: a page that shows a person a link
// Switchboard signed for them (the console's approval links) keeps the
// token the scrubber would mask after "token=", and only that: a secret
// next to it is still masked, and a value containing a configured secret
// is never let through.
func TestAllowInAnswerKeepsMintedTokens(t *testing.T) {
	s := scrub.New([]string{planted})
	minted := "Abc123signedTOKENxyz789longer"
	h := httpapi.ScrubResponses(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.AllowInAnswer(r, minted, "short", "x"+planted)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<a href="/approvals/1?decision=approve&amp;token=%s">Approve</a> key %s; token=%s`, minted, planted, "x"+planted)
	}), s)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/console/approvals", nil))
	body := rec.Body.String()
	if !strings.Contains(body, "token="+minted+`">`) {
		t.Errorf("the minted token was masked: %s", body)
	}
	if strings.Contains(body, planted) {
		t.Errorf("a configured secret leaked: %s", body)
	}
	// Without the allowance the same page is masked as before.
	h = httpapi.ScrubResponses(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<a href="/x?token=%s">`, minted)
	}), s)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if strings.Contains(rec.Body.String(), minted) {
		t.Errorf("a token= value passed without an allowance: %s", rec.Body.String())
	}
}
