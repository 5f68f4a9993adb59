package smstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/smithy-go"

	"github.com/switchboard-dev/switchboard/shared/adapters/secrets"
	"github.com/switchboard-dev/switchboard/shared/adapters/secrets/smfake"
	"github.com/switchboard-dev/switchboard/shared/adapters/secrets/smstore"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestStorePut(t *testing.T) {
	sm := smfake.New(nil)
	store := &smstore.Store{Client: sm, Instance: "acme", KMSKeyID: "alias/switchboard"}

	ref, err := store.Put(context.Background(), "agent-hermes", "pat-1")
	if err != nil {
		t.Fatal(err)
	}
	if want := "secretsmanager:switchboard/acme/agent-hermes"; ref != want {
		t.Errorf("ref = %q, want %q", ref, want)
	}
	if v, _ := sm.Secret("switchboard/acme/agent-hermes"); v != "pat-1" {
		t.Errorf("stored %q", v)
	}
	if got := aws.ToString(sm.LastCreate().KmsKeyId); got != "alias/switchboard" {
		t.Errorf("KmsKeyId = %q", got)
	}
	if d := aws.ToString(sm.LastCreate().Description); !strings.Contains(d, "agent-hermes") || strings.Contains(d, "pat-1") {
		t.Errorf("Description = %q", d)
	}

	// Provisioned again: a new version of the same secret.
	if _, err := store.Put(context.Background(), "agent-hermes", "pat-2"); err != nil {
		t.Fatal(err)
	}
	if v, _ := sm.Secret("switchboard/acme/agent-hermes"); v != "pat-2" || sm.Versions("switchboard/acme/agent-hermes") != 2 {
		t.Errorf("after the second Put: %q, %d versions", v, sm.Versions("switchboard/acme/agent-hermes"))
	}
	want := []string{"CreateSecret switchboard/acme/agent-hermes", "CreateSecret switchboard/acme/agent-hermes", "PutSecretValue switchboard/acme/agent-hermes"}
	if got := sm.Calls(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("calls = %v, want %v", got, want)
	}
}

func TestStoreErrors(t *testing.T) {
	denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "User is not authorized to perform: secretsmanager:CreateSecret"}
	tests := []struct {
		name     string
		store    func(sm *smfake.Fake) *smstore.Store
		key, val string
		wantCode string
		wantMsg  string
	}{
		{"access denied", func(sm *smfake.Fake) *smstore.Store {
			sm.FailCreate = denied
			return &smstore.Store{Client: sm, Instance: "acme"}
		}, "agent-hermes", "pat", sb.EFORBIDDEN, "grant secretsmanager:CreateSecret, GetSecretValue and PutSecretValue"},
		{"scheduled for deletion", func(sm *smfake.Fake) *smstore.Store {
			sm.Set("switchboard/acme/agent-hermes", "old")
			sm.FailPut = &types.InvalidRequestException{Message: aws.String("You can't perform this operation on the secret because it was marked for deletion.")}
			return &smstore.Store{Client: sm, Instance: "acme"}
		}, "agent-hermes", "pat", sb.ECONFLICT, "restore-secret --secret-id switchboard/acme/agent-hermes"},
		{"network", func(sm *smfake.Fake) *smstore.Store {
			sm.FailCreate = errors.New("dial tcp: connection refused")
			return &smstore.Store{Client: sm, Instance: "acme"}
		}, "agent-hermes", "pat", sb.EUNAVAILABLE, "AWS_REGION"},
		{"instance is not a slug", func(sm *smfake.Fake) *smstore.Store {
			return &smstore.Store{Client: sm, Instance: "Acme Corp"}
		}, "agent-hermes", "pat", sb.EINVALID, "not a slug"},
		{"no instance", func(sm *smfake.Fake) *smstore.Store {
			return &smstore.Store{Client: sm}
		}, "agent-hermes", "pat", sb.EINVALID, "not a slug"},
		{"name with a slash", func(sm *smfake.Fake) *smstore.Store {
			return &smstore.Store{Client: sm, Instance: "acme"}
		}, "../x", "pat", sb.EINVALID, "cannot be part of a secret name"},
		{"empty token", func(sm *smfake.Fake) *smstore.Store {
			return &smstore.Store{Client: sm, Instance: "acme"}
		}, "agent-hermes", "", sb.EINVALID, "token is empty"},
		{"no client", func(*smfake.Fake) *smstore.Store {
			return &smstore.Store{Instance: "acme"}
		}, "agent-hermes", "pat", sb.EINVALID, "no Secrets Manager client"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, err := tt.store(smfake.New(nil)).Put(context.Background(), tt.key, tt.val)
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

// With JSONSecret the token becomes a key of the instance's JSON secret,
// next to the keys already there, and the reference names that key.
func TestStorePutKeyOfTheInstanceSecret(t *testing.T) {
	const id = "switchboard/instance"
	sm := smfake.New(map[string]string{id: `{"approvalSigningKey":"k","telegramBotToken":"REPLACE_ME"}`})
	store := &smstore.Store{Client: sm, Instance: "acme", JSONSecret: id}
	ref, err := store.Put(context.Background(), "agent-hermes", "pat-1")
	if err != nil {
		t.Fatal(err)
	}
	if want := "secretsmanager:switchboard/instance#agent-hermes"; ref != want {
		t.Errorf("ref = %q, want %q", ref, want)
	}
	if _, err := store.Put(context.Background(), "agent-atlas", "pat-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(context.Background(), "agent-hermes", "pat-3"); err != nil { // provisioned again
		t.Fatal(err)
	}
	got, _ := sm.Secret(id)
	if want := `{"agent-atlas":"pat-2","agent-hermes":"pat-3","approvalSigningKey":"k","telegramBotToken":"REPLACE_ME"}`; got != want {
		t.Errorf("secret = %s\nwant     %s", got, want)
	}
	if n := sm.Count("CreateSecret", id); n != 0 {
		t.Errorf("%d CreateSecret calls, want none: the secret is the stack's", n)
	}
	// The resolver reads what the store wrote.
	v, err := secrets.NewResolver(sm).Resolve(context.Background(), ref)
	if err != nil || v != "pat-3" {
		t.Errorf("Resolve(%s) = %q, %v; want pat-3", ref, v, err)
	}
}

func TestStorePutKeyErrors(t *testing.T) {
	denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not authorized"}
	tests := []struct {
		name     string
		secrets  map[string]string
		failGet  error
		failPut  error
		wantCode string
		wantMsg  string
	}{
		{name: "no such secret", secrets: nil, wantCode: sb.EINVALID, wantMsg: "secret switchboard/instance does not exist; deploy the stack first"},
		{name: "not JSON", secrets: map[string]string{"switchboard/instance": "plain"}, wantCode: sb.EINVALID, wantMsg: "is not a JSON object"},
		{name: "read denied", secrets: map[string]string{"switchboard/instance": "{}"}, failGet: denied, wantCode: sb.EFORBIDDEN, wantMsg: "GetSecretValue"},
		{name: "write denied", secrets: map[string]string{"switchboard/instance": "{}"}, failPut: denied, wantCode: sb.EFORBIDDEN, wantMsg: "PutSecretValue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sm := smfake.New(tt.secrets)
			if tt.failGet != nil {
				sm.FailGet = map[string]error{"switchboard/instance": tt.failGet}
			}
			sm.FailPut = tt.failPut
			store := &smstore.Store{Client: sm, Instance: "acme", JSONSecret: "switchboard/instance"}
			ref, err := store.Put(context.Background(), "agent-hermes", "pat")
			if ref != "" {
				t.Errorf("ref = %q on failure", ref)
			}
			if got := sb.ErrorCode(err); got != tt.wantCode {
				t.Errorf("code = %q, want %q (%v)", got, tt.wantCode, err)
			}
			if msg := sb.ErrorMessage(err); !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("message %q does not contain %q", msg, tt.wantMsg)
			}
			if v, _ := sm.Secret("switchboard/instance"); tt.secrets != nil && v != tt.secrets["switchboard/instance"] {
				t.Errorf("secret changed to %q on failure", v)
			}
		})
	}
}
