// Package smstore writes agents' Rocket.Chat tokens to AWS Secrets Manager
// for provision-agent (Store, over the SDK's Secrets Manager client,
// NewClient). It is apart from package secrets, which the functions link to
// read their secrets, so that no function links the SDK client.
package smstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// WriterAPI is the part of the Secrets Manager client Store uses;
// *secretsmanager.Client satisfies it, tests use a fake.
type WriterAPI interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
	CreateSecret(ctx context.Context, in *secretsmanager.CreateSecretInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.CreateSecretOutput, error)
	PutSecretValue(ctx context.Context, in *secretsmanager.PutSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.PutSecretValueOutput, error)
}

// Store keeps agents' Rocket.Chat tokens in AWS Secrets Manager, which the
// config loader resolves at a cold start (through Resolver), in one of two
// ways:
//
//   - JSONSecret set (the stack's instance secret, "switchboard/instance"):
//     the token becomes the key <username> of that JSON secret, read,
//     changed and written back as a new version; Put returns
//     "secretsmanager:<JSONSecret>#<username>". One secret for all agents:
//     Secrets Manager bills $0.40 a month per secret, whatever it holds.
//     The read-modify-write is not atomic: run one provision-agent at a
//     time, or a token written at the same moment may be lost.
//   - otherwise one secret per agent, switchboard/<Instance>/<username>;
//     Put returns "secretsmanager:switchboard/<Instance>/<username>".
//
// A secret that already exists (an agent provisioned again) gets a new
// version; the old one stays as AWSPREVIOUS.
//
// The caller needs secretsmanager:GetSecretValue and PutSecretValue on the
// JSON secret, or CreateSecret and PutSecretValue on
// arn:aws:secretsmanager:<region>:<account>:secret:switchboard/<Instance>/*.
type Store struct {
	Client   WriterAPI
	Instance string // instance.name, a slug
	KMSKeyID string // optional; "" means the account's aws/secretsmanager key
	// JSONSecret is the name or ARN of a JSON secret to keep the tokens
	// in as keys; "" for one secret per agent.
	JSONSecret string
}

var (
	instanceSlug = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	// secretPart is what a secret name may contain, less "/".
	secretPart = regexp.MustCompile(`^[A-Za-z0-9._+=@-]+$`)
)

// SecretName is the secret that holds the token of username.
func (s *Store) SecretName(username string) string {
	return "switchboard/" + s.Instance + "/" + username
}

// Put stores value as the secret SecretName(name): CreateSecret, or
// PutSecretValue when the secret exists.
// Errors: EINVALID for a bad instance or name; EFORBIDDEN when the caller
// may not write the secret; ECONFLICT when it is scheduled for deletion;
// EUNAVAILABLE otherwise.
func (s *Store) Put(ctx context.Context, name, value string) (string, error) {
	const op = "provision.secretsmanager" // the command it serves, as before the move
	switch {
	case s.Client == nil:
		return "", sb.E(op, sb.EINVALID, "no Secrets Manager client; build one from the AWS config")
	case !instanceSlug.MatchString(s.Instance):
		return "", sb.E(op, sb.EINVALID, fmt.Sprintf("instance name %q is not a slug; use instance.name from the config (letters a-z, digits, hyphens)", s.Instance))
	case !secretPart.MatchString(name):
		return "", sb.E(op, sb.EINVALID, fmt.Sprintf("%q cannot be part of a secret name; use letters, digits and . _ + = @ -", name))
	case value == "":
		return "", sb.E(op, sb.EINVALID, "the token is empty; nothing to store")
	}
	if s.JSONSecret != "" {
		return s.putKey(ctx, op, name, value)
	}
	id := s.SecretName(name)
	in := &secretsmanager.CreateSecretInput{
		Name:         aws.String(id),
		SecretString: aws.String(value),
		Description:  aws.String(fmt.Sprintf("Rocket.Chat personal access token of agent user %s (switchboard provision-agent)", name)),
	}
	if s.KMSKeyID != "" {
		in.KmsKeyId = aws.String(s.KMSKeyID)
	}
	_, err := s.Client.CreateSecret(ctx, in)
	if apiCode(err) == "ResourceExistsException" {
		_, err = s.Client.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(id), SecretString: aws.String(value)})
	}
	if err != nil {
		return "", smFailure(op, id, err)
	}
	return "secretsmanager:" + id, nil
}

// putKey writes value as the key name of the JSON secret.
func (s *Store) putKey(ctx context.Context, op, name, value string) (string, error) {
	id := s.JSONSecret
	out, err := s.Client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
	if apiCode(err) == "ResourceNotFoundException" {
		return "", sb.Wrap(op, sb.EINVALID, fmt.Sprintf("secret %s does not exist; deploy the stack first (it creates it) or name an existing JSON secret", id), err)
	}
	if err != nil {
		return "", smFailure(op, id, err)
	}
	fields := map[string]any{}
	if err := json.Unmarshal([]byte(aws.ToString(out.SecretString)), &fields); err != nil {
		return "", sb.E(op, sb.EINVALID, fmt.Sprintf("secret %s is not a JSON object, so the token cannot be added as a key; name a JSON secret (the stack's instance secret) or leave it out for one secret per agent", id))
	}
	fields[name] = value
	b, err := json.Marshal(fields)
	if err != nil {
		return "", sb.Wrap(op, sb.EINTERNAL, "the secret's keys could not be encoded", err)
	}
	if _, err := s.Client.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(id), SecretString: aws.String(string(b))}); err != nil {
		return "", smFailure(op, id, err)
	}
	return "secretsmanager:" + id + "#" + name, nil
}

func smFailure(op, id string, err error) error {
	switch apiCode(err) {
	case "AccessDeniedException":
		return sb.Wrap(op, sb.EFORBIDDEN, fmt.Sprintf("not allowed to write secret %s; grant secretsmanager:CreateSecret, GetSecretValue and PutSecretValue on it (and kms:Encrypt/GenerateDataKey on its key) to the role that runs provision-agent", id), err)
	case "InvalidRequestException":
		return sb.Wrap(op, sb.ECONFLICT, fmt.Sprintf("secret %s cannot be written now, probably because it is scheduled for deletion; restore it (aws secretsmanager restore-secret --secret-id %s) and run provision-agent again", id, id), err)
	case "EncryptionFailure", "KMSInvalidStateException":
		return sb.Wrap(op, sb.EFORBIDDEN, fmt.Sprintf("secret %s cannot be encrypted; check the KMS key and kms:GenerateDataKey for this role", id), err)
	}
	return sb.Wrap(op, sb.EUNAVAILABLE, fmt.Sprintf("writing secret %s to Secrets Manager failed; check the region (AWS_REGION), the credentials and the endpoint, then try again", id), err)
}

// NewClient builds the Secrets Manager client from the loaded AWS config;
// AWS_ENDPOINT_URL_SECRETS_MANAGER or AWS_ENDPOINT_URL points it at
// LocalStack.
func NewClient(cfg aws.Config) *secretsmanager.Client { return secretsmanager.NewFromConfig(cfg) }

// apiCode is the error code of a Secrets Manager API error, "" for any
// other error.
func apiCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}
