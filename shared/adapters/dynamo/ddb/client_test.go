package ddb_test

import (
	"context"
	"errors"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/adapters/awssigned"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
)

type answer struct {
	status int
	body   string
	crc    string // X-Amz-Crc32; "" = the body's
}

// scripted answers the i-th request with answers[i] (the last one for
// every request after) and counts them.
func scripted(t *testing.T, answers ...answer) (*ddb.Client, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		a := answers[min(int(n.Add(1))-1, len(answers)-1)]
		crc := a.crc
		if crc == "" {
			crc = strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(a.body))), 10)
		}
		w.Header().Set("X-Amz-Crc32", crc)
		w.Header().Set("X-Amzn-Requestid", "req-1")
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return client(srv.URL), &n
}

func client(endpoint string) *ddb.Client {
	return &ddb.Client{
		Endpoint: endpoint,
		Signer: awssigned.Signer{Service: "dynamodb", Region: "us-east-1",
			Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""), HTTP: http.DefaultClient},
		MaxAttempts: 3,
	}
}

func put(ctx context.Context, c *ddb.Client) error {
	_, err := c.PutItem(ctx, &ddb.PutItemInput{TableName: aws.String("t"),
		Item: map[string]ddb.AttributeValue{"pk": &ddb.AttributeValueMemberS{Value: "p"}}})
	return err
}

const (
	throttled = `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"slow down"}`
	ok        = `{}`
)

// TestRetries: throttling, 5xx answers and a dropped connection are tried
// again, up to MaxAttempts; a refusal or an answer with a wrong checksum is
// not.
func TestRetries(t *testing.T) {
	tests := []struct {
		name      string
		answers   []answer
		wantCalls int32
		wantCode  string // "" = success
	}{
		{"throttled then fine", []answer{{400, throttled, ""}, {200, ok, ""}}, 2, ""},
		{"throttled throughout", []answer{{400, throttled, ""}}, 3, "ProvisionedThroughputExceededException"},
		{"throttling code", []answer{{400, `{"__type":"ThrottlingException"}`, ""}, {200, ok, ""}}, 2, ""},
		{"server error", []answer{{500, `{"__type":"InternalServerError","message":"boom"}`, ""}, {200, ok, ""}}, 2, ""},
		{"proxy 503 without a code", []answer{{503, `<html>unavailable</html>`, ""}}, 3, "Service Unavailable"},
		{"validation", []answer{{400, `{"__type":"com.amazon.coral.validate#ValidationException","message":"bad"}`, ""}}, 1, "ValidationException"},
		{"condition failed", []answer{{400, `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"no"}`, ""}}, 1, ddb.ConditionalCheckFailed},
		{"checksum mismatch", []answer{{200, ok, "1"}}, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, calls := scripted(t, tt.answers...)
			err := put(t.Context(), c)
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("%d requests, want %d", got, tt.wantCalls)
			}
			switch {
			case tt.name == "checksum mismatch":
				if err == nil {
					t.Error("an answer that fails its checksum was taken")
				}
			case tt.wantCode == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.wantCode != "" && ddb.Code(err) != tt.wantCode:
				t.Errorf("error %v (code %q), want code %q", err, ddb.Code(err), tt.wantCode)
			}
		})
	}
}

// A refused conditional write that asked for the old item carries it, and
// the error reads as the SDK's.
func TestConditionFailureCarriesTheOldItem(t *testing.T) {
	c, _ := scripted(t, answer{400, `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",` +
		`"message":"The conditional request failed","Item":{"n":{"N":"3"}}}`, ""})
	err := put(t.Context(), c)
	var e *ddb.Error
	if !errors.As(err, &e) || e.Status != 400 || e.RequestID != "req-1" {
		t.Fatalf("error %v, want a *ddb.Error with status and request id", err)
	}
	if n, _ := e.Item["n"].(*ddb.AttributeValueMemberN); n == nil || n.Value != "3" {
		t.Errorf("Item %v, want n = 3", e.Item)
	}
	want := "dynamodb PutItem: https response error StatusCode: 400, RequestID: req-1, api error ConditionalCheckFailedException: The conditional request failed"
	if err.Error() != want {
		t.Errorf("text %q,\nwant %q", err.Error(), want)
	}
}

// A request that gets no answer is a *awssigned.SendError, retried; the
// call ends at its OperationTimeout however many attempts are left.
func TestNoAnswer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := client("http://" + addr)
	var waits []int
	c.Backoff = func(attempt int) time.Duration { waits = append(waits, attempt); return 0 }
	err = put(t.Context(), c)
	var send *awssigned.SendError
	if !errors.As(err, &send) || len(waits) != 2 {
		t.Errorf("error %v after waits %v; want a SendError after 3 attempts", err, waits)
	}

	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	t.Cleanup(func() { close(hang); srv.Close() })
	c = client(srv.URL)
	c.OperationTimeout = 50 * time.Millisecond
	start := time.Now()
	if err := put(context.Background(), c); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want the deadline", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned after %v, want at the 50 ms deadline", d)
	}
}
