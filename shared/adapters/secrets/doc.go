// Package secrets reads AWS Secrets Manager: Resolver reads the config's
// secretsmanager:<name-or-arn>[#jsonKey] references (it implements
// shared/platform/config's SecretResolver) through Client, one signed
// GetSecretValue call per secret. Build the client with NewClient from the
// config shared/adapters/awsconfig loads. Writing secrets (provision-agent's
// Store) is in the subpackage smstore, over the SDK's client, which the
// functions do not link.
package secrets
