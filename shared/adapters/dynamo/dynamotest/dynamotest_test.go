package dynamotest_test

import (
	"context"
	"net"
	"net/url"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// A client that goes away in the middle of a request (a route budget
// spent, a cancelled context) must not end the shared dynalite: dynalite
// itself rethrows the request's "aborted" error and exits; the launcher
// keeps it running, so the other clients' tables stay.
func TestDynaliteOutlivesAnAbortedRequest(t *testing.T) {
	c := dynamotest.Client(t)
	u, err := url.Parse(dynamotest.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		// Half a request: the body is announced longer than what is sent.
		_, _ = conn.Write([]byte("POST / HTTP/1.1\r\nHost: " + u.Host + "\r\nContent-Length: 1000\r\n" +
			"X-Amz-Target: DynamoDB_20120810.ListTables\r\n\r\n{\"Limit\":"))
		conn.Close()
	}
	if _, err := c.ListTables(context.Background()); err != nil {
		t.Fatalf("dynalite after three aborted requests: %v", err)
	}
}
