// Package smfake is an in-memory AWS Secrets Manager for tests: the
// GetSecretValue, CreateSecret and PutSecretValue the secrets adapter
// calls, with Secrets Manager's error types (ResourceNotFound,
// ResourceExists), injectable failures and a call log.
package smfake

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
)

// Fake is the in-memory Secrets Manager. Set the Fail fields before the
// calls they affect. Safe for concurrent use.
type Fake struct {
	// FailGet maps a secret id to the error GetSecretValue returns for it.
	FailGet map[string]error
	// FailCreate and FailPut are returned instead of creating or writing.
	FailCreate, FailPut error

	mu         sync.Mutex
	secrets    map[string]string
	versions   map[string]int
	calls      []string // "GetSecretValue id", "CreateSecret name", "PutSecretValue id"
	lastCreate *secretsmanager.CreateSecretInput
}

// New returns a fake holding secrets (id → SecretString).
func New(secrets map[string]string) *Fake {
	f := &Fake{secrets: map[string]string{}, versions: map[string]int{}}
	for id, v := range secrets {
		f.secrets[id], f.versions[id] = v, 1
	}
	return f
}

// GetSecretValue returns the SecretString of the secret.
func (f *Fake) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := aws.ToString(in.SecretId)
	f.calls = append(f.calls, "GetSecretValue "+id)
	if err := f.FailGet[id]; err != nil {
		return nil, err
	}
	s, ok := f.secrets[id]
	if !ok {
		return nil, &types.ResourceNotFoundException{Message: aws.String("Secrets Manager can't find the specified secret.")}
	}
	return &secretsmanager.GetSecretValueOutput{SecretString: aws.String(s)}, nil
}

// ReadSecret is GetSecretValue for secrets.Resolver: the SecretString.
func (f *Fake) ReadSecret(ctx context.Context, id string) (string, error) {
	out, err := f.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.SecretString), nil
}

// CreateSecret creates the secret, ResourceExistsException when it exists.
func (f *Fake) CreateSecret(_ context.Context, in *secretsmanager.CreateSecretInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.CreateSecretOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := aws.ToString(in.Name)
	f.calls = append(f.calls, "CreateSecret "+name)
	f.lastCreate = in
	if f.FailCreate != nil {
		return nil, f.FailCreate
	}
	if _, ok := f.secrets[name]; ok {
		return nil, &types.ResourceExistsException{Message: aws.String("the secret " + name + " already exists.")}
	}
	f.secrets[name], f.versions[name] = aws.ToString(in.SecretString), 1
	return &secretsmanager.CreateSecretOutput{Name: in.Name}, nil
}

// PutSecretValue writes a new version, ResourceNotFoundException when the
// secret does not exist.
func (f *Fake) PutSecretValue(_ context.Context, in *secretsmanager.PutSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.PutSecretValueOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := aws.ToString(in.SecretId)
	f.calls = append(f.calls, "PutSecretValue "+name)
	if f.FailPut != nil {
		return nil, f.FailPut
	}
	if _, ok := f.secrets[name]; !ok {
		return nil, &types.ResourceNotFoundException{Message: aws.String("Secrets Manager can't find the specified secret.")}
	}
	f.secrets[name] = aws.ToString(in.SecretString)
	f.versions[name]++
	return &secretsmanager.PutSecretValueOutput{Name: in.SecretId}, nil
}

// Set stores a new version of the secret, creating it if need be.
func (f *Fake) Set(id, value string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.secrets[id] = value
	f.versions[id]++
}

// Secret is the current value of the secret.
func (f *Fake) Secret(id string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.secrets[id]
	return v, ok
}

// Versions is how many values the secret has had.
func (f *Fake) Versions(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.versions[id]
}

// Calls is the call log, oldest first.
func (f *Fake) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// Count is how many calls the log holds for op ("GetSecretValue") and id.
func (f *Fake) Count(op, id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c == fmt.Sprintf("%s %s", op, id) {
			n++
		}
	}
	return n
}

// LastCreate is the input of the last CreateSecret, nil before one.
func (f *Fake) LastCreate() *secretsmanager.CreateSecretInput {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastCreate
}
