package wakequeue_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/adapters/wakequeue"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

const queueURL = "https://sqs.eu-central-1.amazonaws.com/123456789012/switchboard-wakes.fifo"

// fakeSQS records the calls and answers each with the next of answers
// (status, error type), then 200.
type fakeSQS struct {
	mu      sync.Mutex
	calls   []call
	answers [][2]any
}

type call struct {
	target, auth string
	body         map[string]any
}

func (f *fakeSQS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	f.mu.Lock()
	f.calls = append(f.calls, call{r.Header.Get("X-Amz-Target"), r.Header.Get("Authorization"), body})
	var a [2]any
	if len(f.answers) > 0 {
		a, f.answers = f.answers[0], f.answers[1:]
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if a[0] == nil {
		_, _ = io.WriteString(w, `{"MessageId":"m1","SequenceNumber":"1"}`)
		return
	}
	w.WriteHeader(a[0].(int))
	_, _ = io.WriteString(w, `{"__type":"com.amazonaws.sqs#`+a[1].(string)+`","message":"no"}`)
}

func newQueue(t *testing.T, f *fakeSQS) *wakequeue.Queue {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	base := srv.URL
	cfg := aws.Config{Region: "eu-central-1", BaseEndpoint: &base,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
	q := wakequeue.New(cfg, queueURL, func(string) string { return "" })
	q.Backoff = []time.Duration{time.Millisecond, time.Millisecond}
	return q
}

// TestDispatchSendsTheJobInItsAgentsGroup checks the SendMessage call as
// SQS's JSON protocol wants it: the target, a SigV4 signature for sqs in
// the region, the queue, the job as the body, the agent's lane as message
// group and a deduplication id that is the same for the same job.
func TestDispatchSendsTheJobInItsAgentsGroup(t *testing.T) {
	f := &fakeSQS{}
	q := newQueue(t, f)
	job := sb.WakeJob{AgentID: "hermes", Source: "rocketchat-webhook", Text: "hello"}
	for range 2 {
		if err := q.Dispatch(context.Background(), job); err != nil {
			t.Fatalf("Dispatch: %v", err)
		}
	}
	if err := q.Dispatch(context.Background(), sb.WakeJob{AgentID: "atlas", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	c := f.calls[0]
	if c.target != "AmazonSQS.SendMessage" {
		t.Errorf("X-Amz-Target = %q, want AmazonSQS.SendMessage", c.target)
	}
	if !strings.HasPrefix(c.auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(c.auth, "/eu-central-1/sqs/aws4_request") {
		t.Errorf("Authorization = %q, want a SigV4 signature for sqs in eu-central-1", c.auth)
	}
	if c.body["QueueUrl"] != queueURL || c.body["MessageGroupId"] != "agent-hermes" {
		t.Errorf("body %v, want the queue and the group agent-hermes", c.body)
	}
	var sent sb.WakeJob
	if err := json.Unmarshal([]byte(c.body["MessageBody"].(string)), &sent); err != nil || sent.AgentID != "hermes" || sent.Text != "hello" {
		t.Errorf("MessageBody %v (%v), want the job", c.body["MessageBody"], err)
	}
	if d := c.body["MessageDeduplicationId"]; d == "" || d != f.calls[1].body["MessageDeduplicationId"] || d == f.calls[2].body["MessageDeduplicationId"] {
		t.Errorf("deduplication ids %v, %v, %v: want the same for the same job and another for another",
			d, f.calls[1].body["MessageDeduplicationId"], f.calls[2].body["MessageDeduplicationId"])
	}
	if g := f.calls[2].body["MessageGroupId"]; g != "agent-atlas" {
		t.Errorf("atlas's job in group %v, want agent-atlas", g)
	}
}

func TestDispatchErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers [][2]any
		want    string
		calls   int
	}{
		{"throttled once, then sent", [][2]any{{400, "RequestThrottled"}}, "", 2},
		{"server errors past the retries", [][2]any{{500, "InternalError"}, {503, "ServiceUnavailable"}, {500, "InternalError"}}, sb.EUNAVAILABLE, 3},
		{"no such queue", [][2]any{{400, "QueueDoesNotExist"}}, sb.EINTERNAL, 1},
		{"no grant", [][2]any{{400, "AccessDeniedException"}}, sb.EINTERNAL, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeSQS{answers: tc.answers}
			err := newQueue(t, f).Dispatch(context.Background(), sb.WakeJob{AgentID: "hermes"})
			if sb.ErrorCode(err) != tc.want || len(f.calls) != tc.calls {
				t.Errorf("err %v (code %q) after %d calls, want code %q after %d", err, sb.ErrorCode(err), len(f.calls), tc.want, tc.calls)
			}
		})
	}
}

func TestRetryInChangesTheVisibility(t *testing.T) {
	f := &fakeSQS{}
	if err := newQueue(t, f).RetryIn(context.Background(), "receipt-1", 90*time.Second); err != nil {
		t.Fatal(err)
	}
	c := f.calls[0]
	if c.target != "AmazonSQS.ChangeMessageVisibility" || c.body["ReceiptHandle"] != "receipt-1" || c.body["VisibilityTimeout"] != float64(90) {
		t.Errorf("call %s %v, want ChangeMessageVisibility of receipt-1 to 90 s", c.target, c.body)
	}
}

func TestQueueURLFromTheARN(t *testing.T) {
	cfg := aws.Config{Region: "us-east-1"}
	none := func(string) string { return "" }
	got, err := wakequeue.QueueURL(cfg, none, "arn:aws:sqs:eu-central-1:123456789012:switchboard-wakes.fifo")
	if err != nil || got != "https://sqs.eu-central-1.amazonaws.com/123456789012/switchboard-wakes.fifo" {
		t.Errorf("QueueURL = %q, %v; want the queue's URL in its own region", got, err)
	}
	local := func(k string) string {
		if k == "AWS_ENDPOINT_URL_SQS" {
			return "http://127.0.0.1:4566/"
		}
		return ""
	}
	if got, _ := wakequeue.QueueURL(cfg, local, "arn:aws:sqs:us-east-1:000000000000:wakes.fifo"); got != "http://127.0.0.1:4566/000000000000/wakes.fifo" {
		t.Errorf("QueueURL with an endpoint = %q", got)
	}
	for _, bad := range []string{"", "arn:aws:lambda:eu-central-1:1:function:x", "arn:aws:sqs:eu-central-1::q", "sqs"} {
		if _, err := wakequeue.QueueURL(cfg, none, bad); sb.ErrorCode(err) != sb.EINVALID {
			t.Errorf("QueueURL(%q): %v, want EINVALID", bad, err)
		}
	}
}
