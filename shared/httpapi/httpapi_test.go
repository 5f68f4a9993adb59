package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/switchboard-dev/switchboard/shared/httpapi"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestStatus(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{name: "EINVALID", err: sb.E("op", sb.EINVALID, "m"), want: http.StatusBadRequest},
		{name: "ENOTFOUND", err: sb.E("op", sb.ENOTFOUND, "m"), want: http.StatusNotFound},
		{name: "ECONFLICT", err: sb.E("op", sb.ECONFLICT, "m"), want: http.StatusConflict},
		{name: "EUNAUTHORIZED", err: sb.E("op", sb.EUNAUTHORIZED, "m"), want: http.StatusUnauthorized},
		{name: "EFORBIDDEN", err: sb.E("op", sb.EFORBIDDEN, "m"), want: http.StatusForbidden},
		{name: "ERATELIMITED", err: sb.E("op", sb.ERATELIMITED, "m"), want: http.StatusTooManyRequests},
		{name: "EUNAVAILABLE", err: sb.E("op", sb.EUNAVAILABLE, "m"), want: http.StatusServiceUnavailable},
		{name: "EINTERNAL", err: sb.E("op", sb.EINTERNAL, "m"), want: http.StatusInternalServerError},
		{name: "wrapped domain error", err: fmt.Errorf("ctx: %w", sb.E("op", sb.ENOTFOUND, "m")), want: http.StatusNotFound},
		{name: "plain error", err: errors.New("boom"), want: http.StatusInternalServerError},
		{name: "unknown code", err: sb.E("op", "teapot", "m"), want: http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := httpapi.Status(tt.err); got != tt.want {
				t.Errorf("Status(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

// TestStatusCoversEveryCode reads the error vocabulary from the domain
// package's source, so that a code added there without a row in the status
// table fails here instead of silently answering 500.
func TestStatusCoversEveryCode(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../switchboard/errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if ok && lit.Kind == token.STRING && strings.HasPrefix(name.Name, "E") {
					codes[name.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
	}
	if len(codes) < 8 {
		t.Fatalf("found %d error codes in errors.go (%v), want at least 8", len(codes), codes)
	}
	seen := map[int]string{}
	for name, code := range codes {
		status := httpapi.Status(sb.E("op", code, "m"))
		if status == http.StatusInternalServerError && name != "EINTERNAL" {
			t.Errorf("%s (%q) maps to 500; add it to the status table in httpapi.go", name, code)
		}
		if other, dup := seen[status]; dup {
			t.Errorf("%s and %s both map to %d", name, other, status)
		}
		seen[status] = name
	}
}

func TestWriteError(t *testing.T) {
	const internal = "dial tcp 10.1.2.3:443: i/o timeout (table prod-audit)"
	tests := []struct {
		name           string
		err            error
		wantStatus     int
		wantMessage    string
		wantCode       string
		wantRetryAfter string
		wantLogged     bool
	}{
		{name: "invalid", err: sb.Wrap("op", sb.EINVALID, "path must start with personal:", errors.New(internal)),
			wantStatus: 400, wantMessage: "path must start with personal:", wantCode: sb.EINVALID},
		{name: "rate limited with Retry-After", err: &sb.Error{Op: "op", Code: sb.ERATELIMITED,
			Message: "slow down", RetryAfter: 30 * time.Second, Err: errors.New(internal)},
			wantStatus: 429, wantMessage: "slow down", wantCode: sb.ERATELIMITED, wantRetryAfter: "30"},
		{name: "Retry-After rounds up", err: &sb.Error{Op: "op", Code: sb.EUNAVAILABLE,
			Message: "busy", RetryAfter: 1500 * time.Millisecond},
			wantStatus: 503, wantMessage: "busy", wantCode: sb.EUNAVAILABLE, wantRetryAfter: "2", wantLogged: true},
		{name: "Retry-After from a wrapped error", err: fmt.Errorf("rc post: %w", &sb.Error{Op: "op",
			Code: sb.ERATELIMITED, Message: "wait", RetryAfter: 2 * time.Minute}),
			wantStatus: 429, wantMessage: "wait", wantCode: sb.ERATELIMITED, wantRetryAfter: "120"},
		{name: "no Retry-After without RetryAfter", err: sb.E("op", sb.ERATELIMITED, "slow down"),
			wantStatus: 429, wantMessage: "slow down", wantCode: sb.ERATELIMITED},
		{name: "plain error hides its text", err: errors.New(internal),
			wantStatus: 500, wantMessage: "internal error; the operator can find details in the logs",
			wantCode: sb.EINTERNAL, wantLogged: true},
		{name: "internal domain error hides its cause", err: sb.Wrap("op", sb.EINTERNAL, "could not save; try again", errors.New(internal)),
			wantStatus: 500, wantMessage: "could not save; try again", wantCode: sb.EINTERNAL, wantLogged: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&logs, nil))
			w := httptest.NewRecorder()
			httpapi.WriteError(w, httptest.NewRequest("POST", "/tools/invoke", nil), log, tt.err)

			if w.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", w.Code, tt.wantStatus)
			}
			if got := w.Header().Get("Retry-After"); got != tt.wantRetryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tt.wantRetryAfter)
			}
			if got := w.Header().Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", got)
			}
			if got := w.Header().Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", got)
			}
			body := decodeEnvelope(t, w.Body.Bytes())
			if body["status"] != "error" || body["error"] != tt.wantMessage || body["code"] != tt.wantCode {
				t.Errorf("body = %v, want status error, error %q, code %q", body, tt.wantMessage, tt.wantCode)
			}
			if strings.Contains(w.Body.String(), "10.1.2.3") || strings.Contains(w.Body.String(), "op:") {
				t.Errorf("body leaks internal text: %s", w.Body.String())
			}
			logged := strings.Contains(logs.String(), "10.1.2.3") || strings.Contains(logs.String(), "request failed")
			if logged != tt.wantLogged {
				t.Errorf("logged = %v, want %v; log: %s", logged, tt.wantLogged, logs.String())
			}
		})
	}
}

func TestDecodeJSON(t *testing.T) {
	type target struct {
		Agent string `json:"agent"`
		N     int    `json:"n"`
		Run   *struct {
			RunID string `json:"runId"`
		} `json:"run"`
	}
	exact := `{"agent":"` + strings.Repeat("a", httpapi.MaxBody-len(`{"agent":""}`)) + `"}`
	tests := []struct {
		name        string
		contentType string
		body        io.Reader
		wantErr     string // a part of the caller-safe message; "" = success
	}{
		{name: "ok", contentType: "application/json", body: strings.NewReader(`{"agent":"hermes","n":2}`)},
		{name: "ok with charset", contentType: "application/json; charset=utf-8", body: strings.NewReader(`{"agent":"hermes"}`)},
		{name: "ok without content type", body: strings.NewReader(`{"agent":"hermes"}`)},
		{name: "ok with surrounding whitespace", contentType: "application/json", body: strings.NewReader("\n {\"agent\":\"hermes\"} \n\t")},
		{name: "ok at exactly MaxBody", contentType: "application/json", body: strings.NewReader(exact)},
		{name: "unknown field", contentType: "application/json", body: strings.NewReader(`{"agnet":"hermes"}`),
			wantErr: `unknown field "agnet" (check the spelling)`},
		{name: "unknown nested field", contentType: "application/json", body: strings.NewReader(`{"run":{"run_id":"x"}}`),
			wantErr: `unknown field "run_id" (check the spelling)`},
		{name: "trailing object", contentType: "application/json", body: strings.NewReader(`{"agent":"a"} {"agent":"b"}`),
			wantErr: "has data after the JSON object; send exactly one object"},
		{name: "trailing garbage", contentType: "application/json", body: strings.NewReader(`{"agent":"a"}x`),
			wantErr: "has data after the JSON object; send exactly one object"},
		{name: "too large", contentType: "application/json", body: strings.NewReader(exact + " "),
			wantErr: fmt.Sprintf("the request body is larger than %d bytes", httpapi.MaxBody)},
		{name: "far too large", contentType: "application/json", body: io.MultiReader(strings.NewReader(`{"agent":"`), zeros{}),
			wantErr: fmt.Sprintf("the request body is larger than %d bytes", httpapi.MaxBody)},
		{name: "wrong content type", contentType: "text/plain", body: strings.NewReader(`{"agent":"hermes"}`),
			wantErr: "send the body as application/json"},
		{name: "form content type", contentType: "application/x-www-form-urlencoded", body: strings.NewReader(`agent=hermes`),
			wantErr: "send the body as application/json"},
		{name: "empty body", contentType: "application/json", body: strings.NewReader(``),
			wantErr: "the request body is empty"},
		{name: "whitespace body", contentType: "application/json", body: strings.NewReader(" \n"),
			wantErr: "the request body is empty"},
		{name: "type error", contentType: "application/json", body: strings.NewReader(`{"agent":5}`),
			wantErr: `field "agent" must be a string`},
		{name: "nested type error", contentType: "application/json", body: strings.NewReader(`{"run":{"runId":5}}`),
			wantErr: `field "run.runId" must be a string`},
		{name: "number type error", contentType: "application/json", body: strings.NewReader(`{"n":"2"}`),
			wantErr: `field "n" must be a whole number`},
		{name: "syntax error", contentType: "application/json", body: strings.NewReader(`{"agent":'hermes'}`),
			wantErr: "syntax error at byte 10"},
		{name: "truncated", contentType: "application/json", body: strings.NewReader(`{"agent":"her`),
			wantErr: "the request body is not the expected JSON object"},
		{name: "unreadable body", contentType: "application/json", body: failingReader{},
			wantErr: "the request body could not be read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/tools/invoke", tt.body)
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			var got target
			err := httpapi.DecodeJSON(r, &got)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("DecodeJSON: %v", err)
				}
				if got.Agent == "" {
					t.Errorf("agent not decoded: %+v", got)
				}
				return
			}
			if err == nil {
				t.Fatalf("DecodeJSON succeeded (%+v), want an error containing %q", got, tt.wantErr)
			}
			if code := sb.ErrorCode(err); code != sb.EINVALID {
				t.Errorf("ErrorCode = %q, want %q (err %v)", code, sb.EINVALID, err)
			}
			if msg := sb.ErrorMessage(err); !strings.Contains(msg, tt.wantErr) {
				t.Errorf("message = %q, want it to contain %q", msg, tt.wantErr)
			}
			if status := httpapi.Status(err); status != http.StatusBadRequest {
				t.Errorf("Status = %d, want 400", status)
			}
		})
	}
}

// zeros is an endless body.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset by peer") }

func TestBearer(t *testing.T) {
	tests := []struct {
		name   string
		tokens []string
		header string // "" = no Authorization header
		want   int
	}{
		{name: "right token", tokens: []string{"s3cret-token"}, header: "Bearer s3cret-token", want: 200},
		{name: "no tokens configured refuses a token", tokens: nil, header: "Bearer s3cret-token", want: 401},
		{name: "no tokens configured refuses an empty token", tokens: nil, header: "Bearer ", want: 401},
		{name: "empty tokens configured refuse an empty token", tokens: []string{"", ""}, header: "Bearer ", want: 401},
		{name: "empty tokens configured refuse no header", tokens: []string{""}, want: 401},
		{name: "rotation: old token", tokens: []string{"old-token", "new-token"}, header: "Bearer old-token", want: 200},
		{name: "rotation: new token", tokens: []string{"old-token", "new-token"}, header: "Bearer new-token", want: 200},
		{name: "rotation: empty entry ignored", tokens: []string{"", "new-token"}, header: "Bearer ", want: 401},
		{name: "rotation: other token", tokens: []string{"old-token", "new-token"}, header: "Bearer mid-token", want: 401},
		{name: "no header", tokens: []string{"s3cret-token"}, want: 401},
		{name: "empty token", tokens: []string{"s3cret-token"}, header: "Bearer ", want: 401},
		{name: "scheme only", tokens: []string{"s3cret-token"}, header: "Bearer", want: 401},
		{name: "wrong token", tokens: []string{"s3cret-token"}, header: "Bearer s3cret-tokeN", want: 401},
		{name: "token in other case", tokens: []string{"s3cret-token"}, header: "Bearer S3CRET-TOKEN", want: 401},
		{name: "prefix of the token", tokens: []string{"s3cret-token"}, header: "Bearer s3cret", want: 401},
		{name: "token with a suffix", tokens: []string{"s3cret-token"}, header: "Bearer s3cret-token2", want: 401},
		{name: "token with trailing space", tokens: []string{"s3cret-token"}, header: "Bearer s3cret-token ", want: 401},
		{name: "two spaces", tokens: []string{"s3cret-token"}, header: "Bearer  s3cret-token", want: 401},
		{name: "token without scheme", tokens: []string{"s3cret-token"}, header: "s3cret-token", want: 401},
		{name: "basic scheme", tokens: []string{"s3cret-token"}, header: "Basic s3cret-token", want: 401},
		{name: "both tokens at once", tokens: []string{"old-token", "new-token"}, header: "Bearer old-token,new-token", want: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reached := false
			h := httpapi.Bearer(tt.tokens, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached = true
				w.WriteHeader(http.StatusOK)
			}))
			r := httptest.NewRequest("POST", "/tools/invoke", nil)
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.want {
				t.Fatalf("status = %d, want %d", w.Code, tt.want)
			}
			if reached != (tt.want == 200) {
				t.Errorf("handler reached = %v, want %v", reached, tt.want == 200)
			}
			if tt.want != 401 {
				return
			}
			if got, want := w.Header().Get("WWW-Authenticate"), `Bearer realm="switchboard"`; got != want {
				t.Errorf("WWW-Authenticate = %q, want %q", got, want)
			}
			env := decodeEnvelope(t, w.Body.Bytes())
			if env["status"] != "error" || !strings.Contains(fmt.Sprint(env["error"]), "in the Authorization header as a bearer token") {
				t.Errorf("body = %v, want an error envelope that says how to authenticate", env)
			}
			for _, tok := range tt.tokens {
				if tok != "" && strings.Contains(w.Body.String(), tok) {
					t.Errorf("body reveals a configured token: %s", w.Body.String())
				}
			}
		})
	}
}

func TestTokenMatches(t *testing.T) {
	d := func(s string) [32]byte { return sha256Sum(s) }
	tests := []struct {
		name    string
		digests [][32]byte
		got     string
		want    bool
	}{
		{name: "no digests", digests: nil, got: "x", want: false},
		{name: "match", digests: [][32]byte{d("a"), d("b")}, got: "b", want: true},
		{name: "no match", digests: [][32]byte{d("a"), d("b")}, got: "c", want: false},
		{name: "empty never matches", digests: [][32]byte{d("")}, got: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := httpapi.TokenMatches(tt.digests, tt.got); got != tt.want {
				t.Errorf("TokenMatches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRequireIAM(t *testing.T) {
	iam := &events.LambdaFunctionURLRequestContextAuthorizerDescription{
		IAM: &events.LambdaFunctionURLRequestContextAuthorizerIAMDescription{
			AccessKey: "ASIAEXAMPLEKEYID1234", AccountID: "123456789012",
			CallerID: "AROAEXAMPLEROLEID1234:agent-runtime",
			UserARN:  "arn:aws:sts::123456789012:assumed-role/switchboard-agent/agent-runtime",
			UserID:   "AROAEXAMPLEROLEID1234:agent-runtime",
		},
	}
	tests := []struct {
		name       string
		authorizer *events.LambdaFunctionURLRequestContextAuthorizerDescription
		want       int
	}{
		{name: "IAM identity", authorizer: iam, want: 200},
		{name: "caller id only", authorizer: &events.LambdaFunctionURLRequestContextAuthorizerDescription{
			IAM: &events.LambdaFunctionURLRequestContextAuthorizerIAMDescription{CallerID: "AROA:x"}}, want: 200},
		{name: "user ARN only", authorizer: &events.LambdaFunctionURLRequestContextAuthorizerDescription{
			IAM: &events.LambdaFunctionURLRequestContextAuthorizerIAMDescription{UserARN: "arn:aws:iam::1:user/x"}}, want: 200},
		{name: "no authorizer (AuthType NONE)", authorizer: nil, want: 403},
		{name: "authorizer without IAM", authorizer: &events.LambdaFunctionURLRequestContextAuthorizerDescription{}, want: 403},
		{name: "IAM without caller", authorizer: &events.LambdaFunctionURLRequestContextAuthorizerDescription{
			IAM: &events.LambdaFunctionURLRequestContextAuthorizerIAMDescription{AccountID: "123456789012"}}, want: 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reached := false
			handler := lambdaurl.Wrap(httpapi.RequireIAM(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached = true
				httpapi.WriteJSON(w, http.StatusOK, sb.OK(nil))
			})))
			req := &events.LambdaFunctionURLRequest{
				Version: "2.0", RawPath: "/tools", Headers: map[string]string{"accept": "application/json"},
				RequestContext: events.LambdaFunctionURLRequestContext{
					AccountID: "123456789012", RequestID: "req-1", Authorizer: tt.authorizer,
					DomainName: "abc.lambda-url.eu-central-1.on.aws",
					HTTP:       events.LambdaFunctionURLRequestContextHTTPDescription{Method: "GET", Path: "/tools"},
				},
			}
			resp, err := handler(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.want {
				t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, tt.want, body)
			}
			if reached != (tt.want == 200) {
				t.Errorf("handler reached = %v, want %v", reached, tt.want == 200)
			}
			env := decodeEnvelope(t, body)
			if tt.want == 403 && (env["status"] != "error" || !strings.Contains(fmt.Sprint(env["error"]), "AWS_IAM")) {
				t.Errorf("body = %v, want an error envelope naming AWS_IAM", env)
			}
		})
	}
}

// TestRequireIAMOutsideLambda: a plain HTTP request (the dev listener, a
// misrouted server) carries no Lambda context and is refused.
func TestRequireIAMOutsideLambda(t *testing.T) {
	reached := false
	h := httpapi.RequireIAM(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached = true }))
	r := httptest.NewRequest("GET", "/tools", nil)
	// Headers a client could forge do not count as an identity.
	r.Header.Set("X-Amz-Security-Token", "FwoGZXIvYXdzEXAMPLE")
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=ASIA/20261202/eu-central-1/lambda/aws4_request")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden || reached {
		t.Errorf("status = %d, reached = %v; want 403 and the handler not reached", w.Code, reached)
	}
}

func decodeEnvelope(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body is not a JSON object (%v): %q", err, b)
	}
	return m
}

func sha256Sum(s string) [32]byte { return sha256.Sum256([]byte(s)) }
