package secrets_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/secrets"
)

// hungSecretsManager never answers; it returns when the call's context ends.
type hungSecretsManager struct{}

func (hungSecretsManager) ReadSecret(ctx context.Context, _ string) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

// A Secrets Manager that does not answer fails the start within
// CallTimeout with a message, even when the caller set no deadline.
func TestSecretsManagerCallHasADeadline(t *testing.T) {
	old := secrets.CallTimeout
	secrets.CallTimeout = 100 * time.Millisecond
	t.Cleanup(func() { secrets.CallTimeout = old })
	r := secrets.NewResolver(hungSecretsManager{})
	start := time.Now()
	_, err := r.Resolve(context.Background(), "secretsmanager:switchboard/rc-token")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned after %v, want at the %v deadline", d, secrets.CallTimeout)
	}
	if err == nil || !strings.Contains(err.Error(), "did not answer within 100ms") {
		t.Errorf("error = %v, want one that says Secrets Manager did not answer", err)
	}
}
