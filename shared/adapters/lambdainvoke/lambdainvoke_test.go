package lambdainvoke_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/adapters/lambdainvoke"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

func newDispatcher(url string) *lambdainvoke.Dispatcher {
	base := url
	cfg := aws.Config{Region: "eu-central-1", BaseEndpoint: &base,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
	d := lambdainvoke.New(cfg, "switchboard-agent-worker", func(string) string { return "" })
	d.Backoff = []time.Duration{time.Millisecond, time.Millisecond}
	return d
}

// TestDispatchSendsASignedAsyncInvoke checks the request as Lambda's
// Invoke API wants it: the path, InvocationType Event, a SigV4 signature
// for service lambda in the region, and the job as the body.
func TestDispatchSendsASignedAsyncInvoke(t *testing.T) {
	var got *http.Request
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, body = r, must(io.ReadAll(r.Body))
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	job := sb.WakeJob{AgentID: "hermes", Text: "hello"}
	if err := newDispatcher(srv.URL).Dispatch(context.Background(), job); err != nil {
		t.Fatalf("Dispatch: %v", err)
	}
	if got.Method != "POST" || got.URL.Path != "/2015-03-31/functions/switchboard-agent-worker/invocations" {
		t.Errorf("request = %s %s, want POST /2015-03-31/functions/switchboard-agent-worker/invocations", got.Method, got.URL.Path)
	}
	if v := got.Header.Get("X-Amz-Invocation-Type"); v != "Event" {
		t.Errorf("X-Amz-Invocation-Type = %q, want Event", v)
	}
	auth := got.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(auth, "/eu-central-1/lambda/aws4_request") {
		t.Errorf("Authorization = %q, want a SigV4 signature for lambda in eu-central-1", auth)
	}
	var sent sb.WakeJob
	if err := json.Unmarshal(body, &sent); err != nil || sent.AgentID != "hermes" || sent.Text != "hello" {
		t.Errorf("body = %s (%v), want the job", body, err)
	}
}

func TestDispatchErrors(t *testing.T) {
	tests := []struct {
		name      string
		answers   []int // status per attempt
		errorType string
		wantCode  string
		wantCalls int32
	}{
		{name: "accepted after a throttle", answers: []int{429, 202}, wantCalls: 2},
		{name: "throttled throughout", answers: []int{429, 429, 429}, errorType: "TooManyRequestsException", wantCode: sb.EUNAVAILABLE, wantCalls: 3},
		{name: "server error throughout", answers: []int{500, 503, 500}, errorType: "ServiceException", wantCode: sb.EUNAVAILABLE, wantCalls: 3},
		{name: "unknown function", answers: []int{404}, errorType: "ResourceNotFoundException", wantCode: sb.EINTERNAL, wantCalls: 1},
		{name: "no invoke grant", answers: []int{403}, errorType: "AccessDeniedException", wantCode: sb.EINTERNAL, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := calls.Add(1)
				status := tt.answers[min(int(n), len(tt.answers))-1]
				if status != 202 {
					w.Header().Set("X-Amzn-ErrorType", tt.errorType+":http://internal.amazon.com/")
				}
				w.WriteHeader(status)
				_, _ = w.Write([]byte(`{"Type":"User","message":"x"}`))
			}))
			defer srv.Close()
			err := newDispatcher(srv.URL).Dispatch(context.Background(), sb.WakeJob{AgentID: "hermes"})
			if got := sb.ErrorCode(err); got != tt.wantCode && !(tt.wantCode == "" && err == nil) {
				t.Errorf("Dispatch = %v (code %q), want code %q", err, got, tt.wantCode)
			}
			if tt.wantCode == "" && err != nil {
				t.Errorf("Dispatch = %v, want nil", err)
			}
			if calls.Load() != tt.wantCalls {
				t.Errorf("calls = %d, want %d", calls.Load(), tt.wantCalls)
			}
		})
	}
}

func TestDispatchUnreachableIsUnavailable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	err := newDispatcher(url).Dispatch(context.Background(), sb.WakeJob{AgentID: "hermes"})
	if sb.ErrorCode(err) != sb.EUNAVAILABLE {
		t.Errorf("Dispatch = %v, want EUNAVAILABLE", err)
	}
}

func TestDispatchRefusesOversizedJobs(t *testing.T) {
	err := newDispatcher("http://127.0.0.1:9").Dispatch(context.Background(), sb.WakeJob{AgentID: "hermes", Text: strings.Repeat("x", 300<<10)})
	if sb.ErrorCode(err) != sb.EINVALID || !strings.Contains(err.Error(), "256 KB") {
		t.Errorf("Dispatch = %v, want EINVALID naming the 256 KB limit", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
