package provision_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/smithy-go"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/provision"
)

// fakeSM is Secrets Manager's create/put with its ResourceExists rule.
type fakeSM struct {
	mu         sync.Mutex
	secrets    map[string]string
	versions   map[string]int
	calls      []string // "CreateSecret name", "PutSecretValue name"
	lastCreate *secretsmanager.CreateSecretInput
	failCreate error // returned instead of creating
	failPut    error
}

var _ provision.SecretsManagerAPI = (*fakeSM)(nil)

func newFakeSM() *fakeSM { return &fakeSM{secrets: map[string]string{}, versions: map[string]int{}} }

func (f *fakeSM) CreateSecret(_ context.Context, in *secretsmanager.CreateSecretInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.CreateSecretOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := aws.ToString(in.Name)
	f.calls = append(f.calls, "CreateSecret "+name)
	f.lastCreate = in
	if f.failCreate != nil {
		return nil, f.failCreate
	}
	if _, ok := f.secrets[name]; ok {
		return nil, &types.ResourceExistsException{Message: aws.String("the secret " + name + " already exists.")}
	}
	f.secrets[name], f.versions[name] = aws.ToString(in.SecretString), 1
	return &secretsmanager.CreateSecretOutput{Name: in.Name}, nil
}

func (f *fakeSM) PutSecretValue(_ context.Context, in *secretsmanager.PutSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.PutSecretValueOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := aws.ToString(in.SecretId)
	f.calls = append(f.calls, "PutSecretValue "+name)
	if f.failPut != nil {
		return nil, f.failPut
	}
	if _, ok := f.secrets[name]; !ok {
		return nil, &types.ResourceNotFoundException{Message: aws.String("Secrets Manager can't find the specified secret.")}
	}
	f.secrets[name] = aws.ToString(in.SecretString)
	f.versions[name]++
	return &secretsmanager.PutSecretValueOutput{Name: in.SecretId}, nil
}

func (f *fakeSM) secret(name string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.secrets[name]
	return v, ok
}

func (f *fakeSM) callLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func TestSecretsManagerStorePut(t *testing.T) {
	sm := newFakeSM()
	store := &provision.SecretsManagerStore{Client: sm, Instance: "acme", KMSKeyID: "alias/switchboard"}

	ref, err := store.Put(context.Background(), "agent-hermes", "pat-1")
	if err != nil {
		t.Fatal(err)
	}
	if want := "secretsmanager:switchboard/acme/agent-hermes"; ref != want {
		t.Errorf("ref = %q, want %q", ref, want)
	}
	if v, _ := sm.secret("switchboard/acme/agent-hermes"); v != "pat-1" {
		t.Errorf("stored %q", v)
	}
	if got := aws.ToString(sm.lastCreate.KmsKeyId); got != "alias/switchboard" {
		t.Errorf("KmsKeyId = %q", got)
	}
	if d := aws.ToString(sm.lastCreate.Description); !strings.Contains(d, "agent-hermes") || strings.Contains(d, "pat-1") {
		t.Errorf("Description = %q", d)
	}

	// Provisioned again: a new version of the same secret.
	if _, err := store.Put(context.Background(), "agent-hermes", "pat-2"); err != nil {
		t.Fatal(err)
	}
	if v, _ := sm.secret("switchboard/acme/agent-hermes"); v != "pat-2" || sm.versions["switchboard/acme/agent-hermes"] != 2 {
		t.Errorf("after the second Put: %q, %d versions", v, sm.versions["switchboard/acme/agent-hermes"])
	}
	want := []string{"CreateSecret switchboard/acme/agent-hermes", "CreateSecret switchboard/acme/agent-hermes", "PutSecretValue switchboard/acme/agent-hermes"}
	if got := sm.callLog(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("calls = %v, want %v", got, want)
	}
}

func TestSecretsManagerStoreErrors(t *testing.T) {
	denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "User is not authorized to perform: secretsmanager:CreateSecret"}
	tests := []struct {
		name     string
		store    func(sm *fakeSM) *provision.SecretsManagerStore
		key, val string
		wantCode string
		wantMsg  string
	}{
		{"access denied", func(sm *fakeSM) *provision.SecretsManagerStore {
			sm.failCreate = denied
			return &provision.SecretsManagerStore{Client: sm, Instance: "acme"}
		}, "agent-hermes", "pat", sb.EFORBIDDEN, "grant secretsmanager:CreateSecret and secretsmanager:PutSecretValue"},
		{"scheduled for deletion", func(sm *fakeSM) *provision.SecretsManagerStore {
			sm.secrets["switchboard/acme/agent-hermes"] = "old"
			sm.failPut = &types.InvalidRequestException{Message: aws.String("You can't perform this operation on the secret because it was marked for deletion.")}
			return &provision.SecretsManagerStore{Client: sm, Instance: "acme"}
		}, "agent-hermes", "pat", sb.ECONFLICT, "restore-secret --secret-id switchboard/acme/agent-hermes"},
		{"network", func(sm *fakeSM) *provision.SecretsManagerStore {
			sm.failCreate = errors.New("dial tcp: connection refused")
			return &provision.SecretsManagerStore{Client: sm, Instance: "acme"}
		}, "agent-hermes", "pat", sb.EUNAVAILABLE, "AWS_REGION"},
		{"instance is not a slug", func(sm *fakeSM) *provision.SecretsManagerStore {
			return &provision.SecretsManagerStore{Client: sm, Instance: "Acme Corp"}
		}, "agent-hermes", "pat", sb.EINVALID, "not a slug"},
		{"no instance", func(sm *fakeSM) *provision.SecretsManagerStore {
			return &provision.SecretsManagerStore{Client: sm}
		}, "agent-hermes", "pat", sb.EINVALID, "not a slug"},
		{"name with a slash", func(sm *fakeSM) *provision.SecretsManagerStore {
			return &provision.SecretsManagerStore{Client: sm, Instance: "acme"}
		}, "../x", "pat", sb.EINVALID, "cannot be part of a secret name"},
		{"empty token", func(sm *fakeSM) *provision.SecretsManagerStore {
			return &provision.SecretsManagerStore{Client: sm, Instance: "acme"}
		}, "agent-hermes", "", sb.EINVALID, "token is empty"},
		{"no client", func(*fakeSM) *provision.SecretsManagerStore {
			return &provision.SecretsManagerStore{Instance: "acme"}
		}, "agent-hermes", "pat", sb.EINVALID, "no Secrets Manager client"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, err := tt.store(newFakeSM()).Put(context.Background(), tt.key, tt.val)
			if ref != "" {
				t.Errorf("ref = %q on failure", ref)
			}
			if got := sb.ErrorCode(err); got != tt.wantCode {
				t.Errorf("code = %q, want %q (%v)", got, tt.wantCode, err)
			}
			if msg := sb.ErrorMessage(err); !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("message %q does not contain %q", msg, tt.wantMsg)
			}
		})
	}
}

func TestPrintOnce(t *testing.T) {
	tests := []struct {
		name  string
		store provision.PrintOnce
		user  string
		want  string
	}{
		{"derived", provision.PrintOnce{}, "agent-hermes", "env:AGENT_HERMES_RC_TOKEN"},
		{"dots and underscores", provision.PrintOnce{}, "bot.atlas_2", "env:BOT_ATLAS_2_RC_TOKEN"},
		{"leading digit", provision.PrintOnce{}, "42bot", "env:RC_42BOT_RC_TOKEN"},
		{"named", provision.PrintOnce{EnvVar: "HERMES_RC_TOKEN"}, "agent-hermes", "env:HERMES_RC_TOKEN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.store.Put(context.Background(), tt.user, "secret-token")
			if err != nil || got != tt.want {
				t.Errorf("Put = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
