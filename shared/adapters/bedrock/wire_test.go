package bedrock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/adapters/bedrock"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

// converseServer answers like bedrock-runtime's Converse operation, as the
// API reference describes it
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html):
// POST /model/{modelId}/converse with a JSON body, a SigV4-signed request
// for service "bedrock", a JSON answer {output:{message}, stopReason, usage,
// metrics}; errors carry their type in X-Amzn-ErrorType and a JSON
// {"message"} body (restJson1, as in the SDK's
// service/bedrockruntime/deserializers and the Smithy model).
type converseServer struct {
	t      *testing.T
	srv    *httptest.Server
	status int
	errTyp string
	answer string

	mu     sync.Mutex
	calls  int
	body   []byte
	before []wireReply // answered first, in order, before the fixed reply
}

// wireReply is one answer of converseServer.
type wireReply struct {
	status int
	errTyp string
	answer string
}

func newConverseServer(t *testing.T, status int, errType, answer string) *converseServer {
	t.Helper()
	s := &converseServer{t: t, status: status, errTyp: errType, answer: answer}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *converseServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.calls++
	s.body = body
	rp := wireReply{s.status, s.errTyp, s.answer}
	if len(s.before) > 0 {
		rp, s.before = s.before[0], s.before[1:]
	}
	s.mu.Unlock()
	// The model id is one path segment; its ':' travels escaped.
	wantPath := "/model/" + strings.ReplaceAll(modelID, ":", "%3A") + "/converse"
	switch {
	case r.Method != http.MethodPost || r.URL.EscapedPath() != wantPath:
		s.t.Errorf("request %s %s, want POST %s", r.Method, r.URL.EscapedPath(), wantPath)
		w.Header().Set("X-Amzn-ErrorType", "UnknownOperationException")
		w.WriteHeader(404)
		return
	case r.Header.Get("Content-Type") != "application/json":
		s.t.Errorf("Content-Type = %q, want application/json", r.Header.Get("Content-Type"))
	case !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") ||
		!strings.Contains(r.Header.Get("Authorization"), "/us-east-1/bedrock/aws4_request"):
		s.t.Errorf("Authorization = %q, want SigV4 for bedrock in us-east-1", r.Header.Get("Authorization"))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Requestid", "5e2c1f8e-0000-4000-8000-000000000001")
	if rp.errTyp != "" {
		w.Header().Set("X-Amzn-ErrorType", rp.errTyp)
	}
	w.WriteHeader(rp.status)
	io.WriteString(w, rp.answer)
}

// wireModel is the provider over a Client pointed at srv with dummy
// credentials; one attempt, so error tests do not retry.
func wireModel(srv *httptest.Server) *bedrock.Model {
	return bedrock.New(wireClient(srv), modelID).WithRetry(oneAttempt)
}

// wireClient is a Client pointed at srv with dummy credentials.
func wireClient(srv *httptest.Server) *bedrock.Client {
	c := bedrock.NewClient(aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""),
		HTTPClient:  srv.Client(),
	})
	c.Endpoint = srv.URL
	return c
}

// answerToolUse is a Converse answer as Bedrock sends it for a tool call.
const answerToolUse = `{
  "metrics": {"latencyMs": 1283},
  "output": {"message": {"role": "assistant", "content": [
    {"text": "I'll write the file."},
    {"toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "Workspace__write",
      "input": {"path": "notes.md", "text": "hi", "copies": 2, "id": 12345678901234567890, "ratio": 0.5, "tags": ["a", "b"], "draft": false}}}
  ]}},
  "stopReason": "tool_use",
  "usage": {"inputTokens": 1043, "outputTokens": 87, "totalTokens": 1130}
}`

// TestWireShapeOnTheWire sends request() through the Client: the body must
// match testdata/converse_request.golden.json (written from what the SDK's
// bedrockruntime client sent for the same request), and the answer must
// map back to a tool call with exact arguments.
func TestWireShape(t *testing.T) {
	s := newConverseServer(t, 200, "", answerToolUse)
	got, err := wireModel(s.srv).Complete(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	want := `text="I'll write the file." in=1043 out=87 call{id="tooluse_kZJMlvQmRJ6eAyJE5GIl7Q" tool="Workspace" action="write" ` +
		`args={"copies":2,"draft":false,"id":12345678901234567890,"path":"notes.md","ratio":0.5,"tags":["a","b"],"text":"hi"}}`
	if g := show(normalizeArgs(t, got)); g != want {
		t.Errorf("got  %s\nwant %s", g, want)
	}

	// The body, with keys sorted and numbers exact.
	var v any
	s.mu.Lock()
	sent := s.body
	s.mu.Unlock()
	dec := json.NewDecoder(bytes.NewReader(sent))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, sent)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	body := buf.Bytes()
	golden := filepath.Join("testdata", "converse_request.golden.json")
	if *update {
		if err := os.WriteFile(golden, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantBody, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update once to create it)", err)
	}
	if string(body) != string(wantBody) {
		t.Errorf("request body differs from %s (go test -update rewrites it)\ngot:\n%s", golden, body)
	}
}

// normalizeArgs re-encodes each call's Args with sorted keys.
func normalizeArgs(t *testing.T, r sb.ModelResponse) sb.ModelResponse {
	t.Helper()
	for i, c := range r.ToolCalls {
		var v any
		dec := json.NewDecoder(bytes.NewReader(c.Args))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("args of %s are not JSON: %s", c.ID, c.Args)
		}
		b, _ := json.Marshal(v)
		r.ToolCalls[i].Args = b
	}
	return r
}

func TestErrorsOnTheWire(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		errType  string
		body     string
		wantCode string
		wantMsg  string
	}{
		{"throttling", 429, "ThrottlingException", `{"message":"Too many requests, please wait before trying again."}`, sb.ERATELIMITED, "throttling requests"},
		{"access denied", 403, "AccessDeniedException", `{"message":"You don't have access to the model with the specified model ID."}`, sb.EUNAUTHORIZED, "grant bedrock:InvokeModel for the model"},
		{"validation", 400, "ValidationException", `{"message":"The provided model identifier is invalid."}`, sb.EINVALID, "The provided model identifier is invalid."},
		{"not found", 404, "ResourceNotFoundException", `{"message":"Model not found."}`, sb.ENOTFOUND, "not found in this region"},
		{"model not ready", 429, "ModelNotReadyException", `{"message":"Model is not ready for inference."}`, sb.EUNAVAILABLE, "not ready yet"},
		{"model timeout", 408, "ModelTimeoutException", `{"message":"Model has timed out in processing the request."}`, sb.EUNAVAILABLE, "took too long"},
		{"service unavailable", 503, "ServiceUnavailableException", `{"message":"Service Unavailable"}`, sb.EUNAVAILABLE, "temporarily unavailable"},
		{"internal", 500, "InternalServerException", `{"message":"Internal Server Error"}`, sb.EUNAVAILABLE, "temporarily unavailable"},
		{"unmodelled 5xx", 502, "", `<html>Bad Gateway</html>`, sb.EUNAVAILABLE, "Bedrock failed"},
		{"bad signature", 403, "UnrecognizedClientException", `{"message":"The security token included in the request is invalid."}`, sb.EINTERNAL, "UnrecognizedClientException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newConverseServer(t, tt.status, tt.errType, tt.body)
			_, err := wireModel(s.srv).Complete(context.Background(), sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}}})
			checkErr(t, err, tt.wantCode, tt.wantMsg)
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.calls != 1 {
				t.Errorf("server got %d calls, want 1", s.calls)
			}
		})
	}
}

func TestUnreachableOnTheWire(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	_, err := wireModel(srv).Complete(context.Background(), sb.ModelRequest{Messages: []sb.ModelMessage{{Role: "user", Content: "hi"}}})
	checkErr(t, err, sb.EUNAVAILABLE, "cannot reach Bedrock")
}
