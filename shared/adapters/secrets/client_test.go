package secrets_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/adapters/secrets"
)

// fakeSecretsManager answers GetSecretValue as Secrets Manager's JSON
// protocol does: the secret by SecretId, or an error document.
func fakeSecretsManager(t *testing.T, answer func(id string) (int, string)) (*secrets.Client, *[]string) {
	t.Helper()
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("X-Amz-Target"); got != "secretsmanager.GetSecretValue" {
			t.Errorf("X-Amz-Target = %q", got)
		}
		if !strings.Contains(r.Header.Get("Authorization"), "/secretsmanager/aws4_request") {
			t.Errorf("Authorization = %q, want a SigV4 signature for secretsmanager", r.Header.Get("Authorization"))
		}
		b, _ := io.ReadAll(r.Body)
		var in struct{ SecretId string }
		if err := json.Unmarshal(b, &in); err != nil {
			t.Errorf("body %s: %v", b, err)
		}
		seen = append(seen, in.SecretId)
		status, body := answer(in.SecretId)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", srv.URL)
	c := secrets.NewClient(aws.Config{Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})
	return c, &seen
}

func TestClientReadsSecrets(t *testing.T) {
	calls := 0
	c, seen := fakeSecretsManager(t, func(id string) (int, string) {
		calls++
		switch id {
		case "plain":
			return 200, `{"Name":"plain","SecretString":"s3cr\"et"}`
		case "binary":
			return 200, `{"Name":"binary","SecretBinary":"Ynl0ZXM="}`
		case "flaky":
			if calls == 3 { // the first attempt of this id
				return 500, `{"__type":"InternalServiceError","message":"boom"}`
			}
			return 200, `{"SecretString":"after a retry"}`
		case "denied":
			return 400, `{"__type":"com.amazonaws.secretsmanager#AccessDeniedException","Message":"no"}`
		}
		return 400, `{"__type":"ResourceNotFoundException","message":"Secrets Manager can't find the specified secret."}`
	})
	tests := []struct {
		id, want, wantCode string
	}{
		{id: "plain", want: `s3cr"et`},
		{id: "binary", want: "bytes"},
		{id: "flaky", want: "after a retry"},
		{id: "denied", wantCode: "AccessDeniedException"},
		{id: "missing", wantCode: "ResourceNotFoundException"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got, err := c.ReadSecret(context.Background(), tt.id)
			if tt.wantCode != "" {
				api, ok := err.(interface{ ErrorCode() string })
				if !ok || api.ErrorCode() != tt.wantCode {
					t.Errorf("error = %v, want code %s", err, tt.wantCode)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ReadSecret(%s) = %q, %v; want %q", tt.id, got, err, tt.want)
			}
		})
	}
	// A refusal is not retried; the 500 was, once.
	if want := "plain,binary,flaky,flaky,denied,missing"; strings.Join(*seen, ",") != want {
		t.Errorf("calls = %v, want %s", *seen, want)
	}
}

// The resolver's messages hold for the signed client's errors too.
func TestResolverOverTheClient(t *testing.T) {
	c, _ := fakeSecretsManager(t, func(string) (int, string) {
		return 400, `{"__type":"ResourceNotFoundException","message":"no"}`
	})
	_, err := secrets.NewResolver(c).Resolve(context.Background(), "secretsmanager:gone")
	if err == nil || !strings.Contains(err.Error(), "secret gone does not exist in Secrets Manager") {
		t.Errorf("error = %v", err)
	}
}

// Nothing listening: the call is tried three times and fails with the
// connection's error, which the resolver reports as a failed read.
func TestClientWithoutAServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	t.Setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", srv.URL)
	c := secrets.NewClient(aws.Config{Region: "eu-central-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})
	_, err := secrets.NewResolver(c).Resolve(context.Background(), "secretsmanager:any")
	if err == nil || !strings.Contains(err.Error(), "reading secret any from Secrets Manager failed") || !strings.Contains(err.Error(), "connect") {
		t.Errorf("error = %v, want a failed read naming the connection", err)
	}
}
