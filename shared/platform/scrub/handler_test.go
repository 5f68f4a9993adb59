package scrub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"
)

const planted = "hunter2hunter2"

type credentials struct{ user, pass string }

// LogValue deliberately leaks, as careless code would.
func (c credentials) LogValue() slog.Value {
	return slog.GroupValue(slog.String("user", c.user), slog.String("note", "pass "+c.pass))
}

type request struct {
	Room  string `json:"room"`
	Token string `json:"token"`
	Note  string `json:"note"`
}

type stringer struct{ s string }

func (s stringer) String() string { return s.s }

func newTestLogger(t *testing.T, text bool) (*slog.Logger, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	var inner slog.Handler = slog.NewJSONHandler(&buf, nil)
	if text {
		inner = slog.NewTextHandler(&buf, nil)
	}
	return slog.New(NewHandler(inner, New([]string{planted}))), &buf
}

func TestHandlerScrubsEverything(t *testing.T) {
	for _, text := range []bool{false, true} {
		t.Run(fmt.Sprintf("text=%v", text), func(t *testing.T) {
			log, buf := newTestLogger(t, text)
			u, _ := url.Parse("https://bob:" + planted + "@nc.example/remote.php")
			log.With("init", "pw "+planted).WithGroup("g").Info("login with "+planted,
				"s", planted,
				"err", fmt.Errorf("upload: %w", errors.New("401 for token="+planted)),
				slog.Group("inner", "deep", "x"+planted+"x", slog.Group("deeper", "v", planted)),
				"valuer", credentials{"bob", planted},
				"struct", request{Room: "general", Token: "t0ken-value", Note: planted},
				"map", map[string]any{"password": "abc", "n": planted},
				"raw", json.RawMessage(`{"apiKey":"zz","k":"`+planted+`"}`),
				"bytes", []byte("b "+planted),
				"stringer", stringer{"s " + planted},
				"url", u,
				"any", []string{planted},
			)
			out := buf.String()
			for _, leak := range []string{planted, "t0ken-value", `"abc"`, "zz"} {
				if strings.Contains(out, leak) {
					t.Errorf("log leaks %q:\n%s", leak, out)
				}
			}
			for _, keep := range []string{"general", "bob", "upload: 401 for token=***", "login with ***"} {
				if !strings.Contains(out, keep) {
					t.Errorf("log lost %q:\n%s", keep, out)
				}
			}
			if !text && !json.Valid(bytes.TrimSpace(buf.Bytes())) {
				t.Errorf("JSON handler output is not JSON: %s", out)
			}
		})
	}
}

func TestHandlerSecretKeys(t *testing.T) {
	log, buf := newTestLogger(t, false)
	log.Info("m",
		"token", "abc", "authToken", "def", "password", 1234, "apiKey", 3.5,
		"hasPassword", true, "secret", "", "tokenizer", "bpe", "max_tokens", 100,
		slog.Group("botToken", "value", "ghi", "n", 7),
	)
	log.WithGroup("webhookSecret").Info("m2", "value", "jkl")
	log.With("signingKey", "mno").Info("m3")

	var got []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("bad line %s: %v", line, err)
		}
		got = append(got, m)
	}
	want := map[string]any{
		"token": Mask, "authToken": Mask, "password": Mask, "apiKey": Mask,
		"hasPassword": true, "secret": "", "tokenizer": "bpe", "max_tokens": float64(100),
		"botToken": map[string]any{"value": Mask, "n": Mask},
	}
	for k, v := range want {
		if fmt.Sprint(got[0][k]) != fmt.Sprint(v) {
			t.Errorf("%s = %v, want %v", k, got[0][k], v)
		}
	}
	if v := got[1]["webhookSecret"].(map[string]any)["value"]; v != Mask {
		t.Errorf("attr in secret group = %v, want %v", v, Mask)
	}
	if v := got[2]["signingKey"]; v != Mask {
		t.Errorf("WithAttrs signingKey = %v, want %v", v, Mask)
	}
}

type recorder struct {
	slog.Handler
	enabled bool
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return r.enabled }

func TestHandlerEnabledDelegates(t *testing.T) {
	for _, want := range []bool{true, false} {
		h := NewHandler(&recorder{enabled: want}, nil)
		if got := h.Enabled(context.Background(), slog.LevelInfo); got != want {
			t.Errorf("Enabled = %v, want %v", got, want)
		}
	}
}
