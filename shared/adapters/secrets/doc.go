// Package secrets is the AWS Secrets Manager adapter, the one package that
// talks to Secrets Manager: Resolver reads the config's
// secretsmanager:<name-or-arn>[#jsonKey] references (it implements
// shared/platform/config's SecretResolver), Store writes an agent's
// Rocket.Chat token for provision-agent, as a key of the instance's JSON
// secret or as a secret of its own (it implements provision's
// SecretStore). Build the client with NewClient from the config
// shared/adapters/awsconfig loads.
package secrets
