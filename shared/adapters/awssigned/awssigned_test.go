package awssigned

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

func TestEndpointPrefersTheServiceVariable(t *testing.T) {
	base := "http://127.0.0.1:4566"
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		name string
		cfg  aws.Config
		env  map[string]string
		want string
	}{
		{"service variable", aws.Config{Region: "eu-central-1", BaseEndpoint: &base}, map[string]string{"AWS_ENDPOINT_URL_SFN": "http://127.0.0.1:8083"}, "http://127.0.0.1:8083"},
		{"base endpoint", aws.Config{Region: "eu-central-1", BaseEndpoint: &base}, nil, base},
		{"public endpoint", aws.Config{Region: "eu-central-1"}, nil, "https://states.eu-central-1.amazonaws.com"},
		{"overrides ignored", aws.Config{Region: "eu-central-1"}, map[string]string{"AWS_ENDPOINT_URL_SFN": "http://127.0.0.1:8083",
			"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"}, "https://states.eu-central-1.amazonaws.com"},
	} {
		if got := Endpoint(tc.cfg, env(tc.env), "AWS_ENDPOINT_URL_SFN", "states"); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestPostSignsForTheServiceAndRegion(t *testing.T) {
	var auth, target string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, target = r.Header.Get("Authorization"), r.Header.Get("X-Amz-Target")
		w.WriteHeader(http.StatusTeapot)
		w.Write([]byte(strings.Repeat("x", MaxAnswer+100)))
	}))
	defer srv.Close()
	s := Signer{Service: "states", Region: "eu-central-1", HTTP: http.DefaultClient,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
	status, _, body, err := s.Post(t.Context(), srv.URL+"/", map[string]string{"X-Amz-Target": "AWSStepFunctions.SendTaskSuccess"}, []byte(`{}`))
	if err != nil || status != http.StatusTeapot || len(body) != MaxAnswer {
		t.Fatalf("Post: %d, %d bytes, %v; want 418 and the answer cut at %d bytes", status, len(body), err, MaxAnswer)
	}
	if !strings.Contains(auth, "Credential=AKIDTEST/") || !strings.Contains(auth, "/eu-central-1/states/aws4_request") ||
		!strings.Contains(auth, "x-amz-target") || target != "AWSStepFunctions.SendTaskSuccess" {
		t.Errorf("Authorization %q (target %q): want SigV4 for states in eu-central-1, signing the target header", auth, target)
	}
}
