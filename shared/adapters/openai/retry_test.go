package openai_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/modelretry"
	"github.com/switchboard-dev/switchboard/shared/adapters/modelretry/retrytest"
	"github.com/switchboard-dev/switchboard/shared/adapters/openai"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// oneAttempt turns retries off, for tests of how one answer is mapped.
var oneAttempt = modelretry.Policy{MaxAttempts: 1}

var hi = sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}}}

// retrying is the fake's model with the default policy on a fake clock.
func (f *fake) retrying(t *testing.T, key string, clock *retrytest.Clock) *openai.Model {
	t.Helper()
	return f.model(t, key).WithRetry(clock.Policy(modelretry.Default()))
}

const serverError = `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error"}}`

func TestRetries(t *testing.T) {
	tests := []struct {
		name      string
		key       string // configured key; default apiKey
		replies   []reply
		wantCalls int
		wantWaits string
		wantCode  string // "" means the answer arrives
	}{
		{name: "500 twice then the answer",
			replies:   []reply{{status: 500, body: serverError}, {status: 500, body: serverError}, {body: answerText}},
			wantCalls: 3, wantWaits: "[1s 2s]"},
		{name: "502 from a proxy, 503, 504 then the answer",
			replies:   []reply{{status: 502, body: "<html>Bad Gateway</html>"}, {status: 503, body: `{"error":{"message":"overloaded"}}`}, {status: 504}, {body: answerText}},
			wantCalls: 4, wantWaits: "[1s 2s 4s]"},
		{name: "429 with Retry-After 2 is waited for",
			replies:   []reply{{status: 429, header: map[string]string{"Retry-After": "2"}, body: `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`}, {body: answerText}},
			wantCalls: 2, wantWaits: "[2s]"},
		{name: "429 with a Retry-After date is waited for",
			replies:   []reply{{status: 429, header: map[string]string{"Retry-After": "DATE+3s"}, body: `{"error":{"message":"slow down"}}`}, {body: answerText}},
			wantCalls: 2, wantWaits: "[3s]"},
		{name: "401 is not retried", key: "sk-wrong-key-000",
			wantCalls: 1, wantWaits: "[]", wantCode: sb.EUNAUTHORIZED},
		{name: "400 is not retried", replies: []reply{{status: 400, body: `{"error":{"message":"bad"}}`}},
			wantCalls: 1, wantWaits: "[]", wantCode: sb.EINVALID},
		{name: "404 is not retried", replies: []reply{{status: 404, body: `{"error":{"message":"model not found"}}`}},
			wantCalls: 1, wantWaits: "[]", wantCode: sb.ENOTFOUND},
		{name: "always 500 gives up after six attempts",
			wantCalls: 6, wantWaits: "[1s 2s 4s 8s 16s]", wantCode: sb.EUNAVAILABLE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// On a whole second, so that an HTTP date (whole seconds) 3 s
			// later is exactly 3 s away.
			clock := retrytest.NewAt(time.Now().Truncate(time.Second))
			for i, r := range tt.replies {
				if r.header["Retry-After"] == "DATE+3s" {
					tt.replies[i].header = map[string]string{"Retry-After": clock.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)}
				}
			}
			f := newFake(t, apiKey, tt.replies...)
			key := apiKey
			if tt.key != "" {
				key = tt.key
			}
			m := f.retrying(t, key, clock)
			var rec sb.ModelCallCounter
			got, err := m.Complete(sb.WithModelCallCounter(context.Background(), &rec), hi)
			if n := f.requests(); n != tt.wantCalls {
				t.Errorf("server saw %d requests, want %d", n, tt.wantCalls)
			}
			if g := fmt.Sprint(clock.Sleeps()); g != tt.wantWaits {
				t.Errorf("waits %s, want %s", g, tt.wantWaits)
			}
			if st := rec.Calls(); st.Attempts != tt.wantCalls || st.Retries != tt.wantCalls-1 {
				t.Errorf("recorded %+v, want %d attempts", st, tt.wantCalls)
			}
			if tt.wantCode == "" {
				if err != nil || got.Text != "Done: notes.md is written." {
					t.Fatalf("Complete = %+v, %v; want the answer", got, err)
				}
				return
			}
			checkErr(t, err, key, tt.wantCode, nil, nil)
		})
	}
}

func TestGivesUpWithAClearError(t *testing.T) {
	f := newFake(t, apiKey) // answers 500 to everything
	clock := retrytest.New()
	_, err := f.retrying(t, apiKey, clock).Complete(context.Background(), hi)
	checkErr(t, err, apiKey, sb.EUNAVAILABLE, []string{
		"the model server is unavailable after 6 attempts over 31s; try again later",
		"failed (HTTP 500)"}, nil)
	var g *modelretry.GaveUp
	if !errors.As(err, &g) || g.Attempts != 6 || g.Waited != 31*time.Second {
		t.Errorf("GaveUp %+v, want 6 attempts and 31s waited", g)
	}
}

// TestConnectionRefusedIsRetried: the server is down at the first attempt
// and up by the second.
func TestConnectionRefusedIsRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens: connection refused

	f := &fake{t: t, wantKey: apiKey, replies: []reply{{body: answerText}}}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	clock := retrytest.New()
	p := clock.Policy(modelretry.Default())
	sleeps := 0
	p.Sleep = func(ctx context.Context, d time.Duration) error {
		if sleeps++; sleeps == 1 { // the server comes up while we wait
			l, err := net.Listen("tcp", addr)
			if err != nil {
				t.Fatalf("listen again on %s: %v", addr, err)
			}
			f.srv.Listener = l
			f.srv.Start()
		}
		return clock.Sleep(ctx, d)
	}
	m, err := openai.New("http://"+addr+"/v1", apiKey, "gpt-4o-mini", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.WithRetry(p).Complete(context.Background(), hi)
	if err != nil || got.Text != "Done: notes.md is written." {
		t.Fatalf("Complete = %+v, %v; want the answer after the server came up", got, err)
	}
	if sleeps != 1 || f.requests() != 1 {
		t.Errorf("waited %d times, server saw %d requests; want 1 and 1", sleeps, f.requests())
	}
}

// TestDeadlineIsRespected: with 10 s left and a server that always fails,
// the model gives up before the deadline (1+2+4 s waited; 8 s more would
// pass it), never after.
func TestDeadlineIsRespected(t *testing.T) {
	f := newFake(t, apiKey)
	clock := retrytest.New()
	deadline := clock.Now().Add(10 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	_, err := f.retrying(t, apiKey, clock).Complete(ctx, hi)
	checkErr(t, err, apiKey, sb.EUNAVAILABLE, []string{"no time left to retry", "try again later"}, nil)
	if f.requests() != 4 || clock.Total() != 7*time.Second {
		t.Errorf("%d requests, waited %v; want 4 and 7s", f.requests(), clock.Total())
	}
	if !clock.Now().Before(deadline) {
		t.Errorf("gave up at %v, not before the deadline %v", clock.Now(), deadline)
	}
}
