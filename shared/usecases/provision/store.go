package provision

import (
	"context"
	"strings"
)

// SecretStore keeps an agent's token. Put stores value under name (the
// agent's Rocket.Chat username) and returns the reference the config's
// RocketChat.authToken takes: "secretsmanager:<name>" or "env:<VAR>".
// PrintOnce implements it here; shared/adapters/secrets.Store keeps the
// token in Secrets Manager. Put returns EINVALID for a name or value it
// cannot store, EFORBIDDEN when it may not write, ECONFLICT when the secret
// cannot be written now, EUNAVAILABLE otherwise.
type SecretStore interface {
	Put(ctx context.Context, name, value string) (ref string, err error)
}

var _ SecretStore = PrintOnce{}

// PrintOnce keeps nothing: Agent returns the token in Result.Token for the
// operator to copy once, and the config refers to it as an environment
// variable (local setups).
type PrintOnce struct {
	// EnvVar names the variable; "" derives it from the username:
	// agent-hermes → AGENT_HERMES_RC_TOKEN.
	EnvVar string
}

// Put returns "env:<EnvVar>" and stores nothing.
func (p PrintOnce) Put(_ context.Context, name, _ string) (string, error) {
	v := p.EnvVar
	if v == "" {
		v = EnvVarFor(name)
	}
	return "env:" + v, nil
}

func (PrintOnce) returnsToken() {}

// EnvVarFor is the environment variable PrintOnce proposes for a username:
// upper case, every other character an underscore, plus _RC_TOKEN.
func EnvVarFor(username string) string {
	v := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, username)
	if v == "" || (v[0] >= '0' && v[0] <= '9') {
		v = "RC_" + v
	}
	return v + "_RC_TOKEN"
}
