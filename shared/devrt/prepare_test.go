package devrt

import (
	"context"
	"net"
	"strings"
	"testing"
)

// closedEndpoint is a loopback URL nobody listens on.
func closedEndpoint(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// When nothing listens where DynamoDB is expected, the start fails naming
// that endpoint, the variable it came from and what to start, instead of a
// vague "try again".
func TestPrepareNamesTheEndpointNobodyListensOn(t *testing.T) {
	cases := []struct {
		name, key string
		want      []string
	}{
		{"LocalStack for every service", "AWS_ENDPOINT_URL", []string{"AWS_ENDPOINT_URL", "LocalStack", "docker compose -f localstack/docker-compose.yml up -d"}},
		{"DynamoDB alone", "AWS_ENDPOINT_URL_DYNAMODB", []string{"AWS_ENDPOINT_URL_DYNAMODB", "DynamoDB"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			localAWS(t)
			t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "")
			t.Setenv("AWS_ENDPOINT_URL_S3", "")
			endpoint := closedEndpoint(t)
			t.Setenv(c.key, endpoint)
			env, err := Prepare(context.Background(), Options{ConfigPath: "../../switchboard.example.yaml", DataDir: t.TempDir(), S3Addr: "127.0.0.1:0"})
			if err == nil {
				env.Close()
				t.Fatal("Prepare succeeded with nothing listening")
			}
			msg := err.Error()
			for _, w := range append([]string{endpoint, "nothing listens"}, c.want...) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if strings.Contains(msg, "try again") {
				t.Errorf("error %q tells to wait although nothing listens", msg)
			}
		})
	}
}
