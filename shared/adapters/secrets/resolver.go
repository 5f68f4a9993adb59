package secrets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// CallTimeout bounds one GetSecretValue call, retries included.
var CallTimeout = 5 * time.Second

// prefix starts every reference Resolver reads.
const prefix = "secretsmanager:"

// ReaderAPI is what Resolver reads secrets with: ReadSecret returns the
// secret's current value (SecretString, else SecretBinary), and an error
// whose ErrorCode() names Secrets Manager's refusal
// (ResourceNotFoundException, AccessDeniedException, …). *Client
// implements it, tests use smfake.
type ReaderAPI interface {
	ReadSecret(ctx context.Context, id string) (string, error)
}

// Resolver resolves secretsmanager:<name-or-arn>[#jsonKey] references.
// Each secret is fetched once and kept for the life of the process (one
// cold start): a Lambda reads its secrets at start, not per invocation, and
// several keys of one JSON secret cost one call. Rotation takes effect with
// the next cold start.
//
// The zero value is not usable; set Client. Safe for concurrent use.
type Resolver struct {
	Client ReaderAPI

	mu    sync.Mutex
	cache map[string]string // secret id → SecretString
}

// NewResolver returns a resolver over client.
func NewResolver(client ReaderAPI) *Resolver {
	return &Resolver{Client: client}
}

// Resolve implements config.SecretResolver. References without the
// secretsmanager: prefix are refused; config.Chain sends only those here
// and the others to the environment.
func (r *Resolver) Resolve(ctx context.Context, ref string) (string, error) {
	rest, ok := strings.CutPrefix(ref, prefix)
	if !ok {
		return "", errors.New("not a secretsmanager: reference; write secretsmanager:<name-or-arn>[#jsonKey]")
	}
	id, key, hasKey := strings.Cut(rest, "#") // secret names and ARNs cannot contain '#'
	if id == "" || (hasKey && key == "") {
		return "", errors.New("incomplete secretsmanager: reference; write secretsmanager:<name-or-arn> or secretsmanager:<name-or-arn>#jsonKey")
	}
	if r.Client == nil {
		return "", errors.New("no Secrets Manager client is configured; build the resolver with NewResolver(client)")
	}
	secret, err := r.secret(ctx, id)
	if err != nil {
		return "", err
	}
	if !hasKey {
		return secret, nil
	}
	var fields map[string]any
	if err := json.Unmarshal([]byte(secret), &fields); err != nil {
		return "", fmt.Errorf("secret %s is not a JSON object, so it has no key %q; drop #%s or store the secret as JSON", id, key, key)
	}
	v, ok := fields[key]
	if !ok {
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return "", fmt.Errorf("secret %s has no key %q; use one of: %s", id, key, strings.Join(keys, ", "))
	}
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case nil:
	default:
		b, _ := json.Marshal(v)
		s = string(b)
	}
	if s == "" {
		return "", fmt.Errorf("key %q of secret %s is empty; give it a value", key, id)
	}
	return s, nil
}

func (r *Resolver) secret(ctx context.Context, id string) (string, error) {
	// Held across the call: start-up resolution is sequential anyway, and
	// this way concurrent callers never fetch the same secret twice.
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.cache[id]; ok {
		return s, nil
	}
	// The secrets are read at cold start, inside Lambda's 10 s init phase:
	// a Secrets Manager that does not answer fails the start with a message
	// rather than the init timeout.
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	s, err := r.Client.ReadSecret(ctx, id)
	if err != nil {
		return "", smError(id, err)
	}
	if s == "" {
		return "", fmt.Errorf("secret %s is empty; store a value with aws secretsmanager put-secret-value --secret-id %s", id, id)
	}
	if r.cache == nil {
		r.cache = map[string]string{}
	}
	r.cache[id] = s
	return s, nil
}

func smError(id string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("reading secret %s: Secrets Manager did not answer within %v; check the network path to it (VPC endpoint or NAT) and start again", id, CallTimeout)
	}
	switch code := apiCode(err); code {
	case "ResourceNotFoundException":
		return fmt.Errorf("secret %s does not exist in Secrets Manager (in this account and region); create it or correct the name", id)
	case "AccessDeniedException":
		return fmt.Errorf("not allowed to read secret %s; grant secretsmanager:GetSecretValue on it to this role", id)
	case "DecryptionFailure":
		return fmt.Errorf("secret %s cannot be decrypted; grant kms:Decrypt on its KMS key to this role", id)
	case "InvalidRequestException":
		return fmt.Errorf("secret %s cannot be read now (%s); restore it if it is scheduled for deletion", id, code)
	}
	return fmt.Errorf("reading secret %s from Secrets Manager failed: %v; check the name, the region (AWS_REGION) and the credentials", id, err)
}
