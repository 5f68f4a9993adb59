package dynamo_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	"github.com/switchboard-dev/switchboard/shared/adapters/s3blob"
	"github.com/switchboard-dev/switchboard/shared/adapters/storetest"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// testBlobs is the in-process S3 server with one bucket, for long content.
func testBlobs(t testing.TB) *s3blob.Store {
	t.Helper()
	endpoint, stop, err := s3blob.StartFake("")
	if err != nil {
		t.Fatalf("StartFake: %v", err)
	}
	t.Cleanup(stop)
	c := s3blob.NewClientFromConfig(aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String(endpoint),
	})
	if err := s3blob.EnsureBucket(t.Context(), c, "messages"); err != nil {
		t.Fatalf("EnsureBucket: %v", err)
	}
	return s3blob.New(c, "messages")
}

// newMessages is an AgentMessages on fresh tables and a fresh bucket.
func newMessages(t testing.TB) (*dynamo.Store, *dynamo.AgentMessages) {
	t.Helper()
	c := dynamotest.Client(t)
	s := dynamo.New(c, dynamotest.FreshTables(t, c))
	return s, s.AgentMessages(testBlobs(t))
}

func TestAgentMessages(t *testing.T) {
	storetest.RunAgentMessages(t, func(t *testing.T) switchboard.AgentMessageStore {
		_, m := newMessages(t)
		return m
	})
}
