// Package config loads and validates the Switchboard configuration: one YAML
// (or JSON, which is YAML) file with an instance block and a list of agents,
// each agent with its tool blocks under their config key names.
//
// Loading is strict. Unknown keys are errors with a "did you mean" hint,
// every problem is reported at once as "<file>:<line>: <field>: <what is
// wrong>; <the fix>", defaults are filled in, and secret fields (toolApiToken,
// authToken, appPassword, apiKey, …) are resolved through a SecretResolver:
// an inline literal, "env:NAME", or "secretsmanager:<name-or-arn>[#jsonKey]"
// (read by the Secrets Manager adapter the caller hands in as
// Chain.SecretsManager; this package imports no AWS SDK).
// A value that reads as a reference with a mistyped or unsupported scheme
// ("evn:", "secretmanager:", "ssm:") is an error, not an inline literal.
// After Load every secret field holds the resolved value, and
// (*Config).Secrets lists those values for the scrubber. Check validates a
// file without reading a secret and, for AWS, refuses inline values.
package config
