package sfn_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/switchboard-dev/switchboard/shared/adapters/sfn/sfntest"
	"github.com/switchboard-dev/switchboard/shared/adapters/sfntoken"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// The functions start the ask-agent machine with sfntoken's signed
// StartSyncExecution, not this package's SDK client: the same outcomes.
func TestSignedSyncMachine(t *testing.T) {
	t.Parallel()
	env := sfntest.Start(t, (&askWorld{}).handlers(), askMachine())
	client := sfntoken.New(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")},
		func(k string) string { return map[string]string{"AWS_ENDPOINT_URL_SFN": env.Runtime.Endpoint}[k] })
	in, _ := json.Marshal(question("alice", "bob"))
	ctx := context.Background()

	out, err := sfntoken.SyncMachine{Client: client, ARN: func() string { return env.ARN(t, "ask-agent") }}.StartSync(ctx, string(in))
	if err != nil || !strings.Contains(out, `"status":"delivered"`) {
		t.Fatalf("StartSync = %s, %v; want the delivered outcome", out, err)
	}
	if _, err := (sfntoken.SyncMachine{Client: client, ARN: func() string { return "" }}).StartSync(ctx, "{}"); sb.ErrorCode(err) != sb.ENOTFOUND {
		t.Errorf("without an ARN: %v, want not_found", err)
	}
	missing := strings.Replace(env.ARN(t, "ask-agent"), "ask-agent", "no-such-machine", 1)
	_, err = sfntoken.SyncMachine{Client: client, ARN: func() string { return missing }}.StartSync(ctx, "{}")
	if sb.ErrorCode(err) != sb.EUNAVAILABLE || strings.Contains(sb.ErrorMessage(err), "no-such-machine") {
		t.Errorf("unknown machine: %v (message %q), want unavailable without the details", err, sb.ErrorMessage(err))
	}
}
