package s3blob

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// shortDeadlines makes the call deadlines short for one test.
func shortDeadlines(t *testing.T) {
	t.Helper()
	oldCall, oldTransfer := callTimeout, transferTimeout
	callTimeout, transferTimeout = 200*time.Millisecond, 300*time.Millisecond
	t.Cleanup(func() { callTimeout, transferTimeout = oldCall, oldTransfer })
}

// hungS3 accepts requests and never answers them; with stallBody it sends
// the headers and part of the body of a GET, then goes silent.
func hungS3(t *testing.T, stallBody bool) *Store {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stallBody && r.Method == http.MethodGet {
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	c := NewClientFromConfig(aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})
	return New(c, "bucket")
}

// Every S3 call ends at its deadline on a server that never answers, also
// without a deadline of the caller's (a job, a write under WithoutCancel).
func TestHungS3CallsEndAtTheirDeadline(t *testing.T) {
	shortDeadlines(t)
	store := hungS3(t, false)
	ctx := context.Background()
	tests := []struct {
		name string
		call func() error
	}{
		{"delete", func() error { return store.Delete(ctx, "a") }},
		{"list", func() error { _, err := store.List(ctx, "", 0); return err }},
		{"put", func() error { return store.Put(ctx, "a", io.NopCloser(io.LimitReader(zeros{}, 10)), 10, "") }},
		{"get", func() error { _, _, err := store.Get(ctx, "a"); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			err := tt.call()
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("returned after %v, want at its deadline (≤ 300ms plus retries' waits)", d)
			}
			if sb.ErrorCode(err) != sb.EUNAVAILABLE {
				t.Errorf("error = %v, want EUNAVAILABLE", err)
			}
		})
	}
}

// A GET whose body stalls half-way fails the read at the deadline instead
// of blocking the reader forever.
func TestStalledGetBodyFailsAtTheDeadline(t *testing.T) {
	shortDeadlines(t)
	store := hungS3(t, true)
	body, _, err := store.Get(context.Background(), "a")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	defer body.Close()
	start := time.Now()
	_, err = io.ReadAll(body)
	if err == nil {
		t.Error("reading a stalled body succeeded")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("read failed after %v, want at the 300ms deadline", d)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
