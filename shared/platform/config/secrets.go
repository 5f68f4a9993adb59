package config

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
)

// SecretResolver turns a secret reference into its value. A reference is
// one of
//
//	an inline literal                   used as is (local use only)
//	env:NAME                            the environment variable NAME
//	secretsmanager:<name-or-arn>        the SecretString of an AWS Secrets Manager secret
//	secretsmanager:<name-or-arn>#key    one key of a JSON SecretString
//
// Errors say what is wrong and, after "; ", what to do; they never contain
// a secret value. The loader prefixes them with file, line and field.
type SecretResolver interface {
	Resolve(ctx context.Context, ref string) (string, error)
}

const (
	envPrefix = "env:"
	smPrefix  = "secretsmanager:"
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// EnvResolver resolves inline literals and env:NAME references. It refuses
// secretsmanager: references, which need AWS (see SecretsManagerResolver).
type EnvResolver struct {
	// LookupEnv reads a variable; nil means os.LookupEnv.
	LookupEnv func(name string) (string, bool)
}

// Resolve implements SecretResolver.
func (r EnvResolver) Resolve(_ context.Context, ref string) (string, error) {
	switch {
	case strings.HasPrefix(ref, envPrefix):
		name := strings.TrimPrefix(ref, envPrefix)
		if !envName.MatchString(name) {
			return "", fmt.Errorf("%q is not a valid environment variable reference; write env:NAME with a name of letters, digits and _", shorten(ref))
		}
		lookup := r.LookupEnv
		if lookup == nil {
			lookup = os.LookupEnv
		}
		v, ok := lookup(name)
		if !ok {
			return "", fmt.Errorf("environment variable %s is not set; export %s=… before starting, or put the value inline for local use", name, name)
		}
		if v == "" {
			return "", fmt.Errorf("environment variable %s is empty; give %s a value", name, name)
		}
		return v, nil
	case strings.HasPrefix(ref, smPrefix):
		return "", fmt.Errorf("%s references are only available in AWS or with AWS credentials; deploy with the Secrets Manager resolver, or locally use env:NAME or an inline value", strings.TrimSuffix(smPrefix, ":"))
	default:
		return ref, nil
	}
}

// Chain sends secretsmanager: references to SecretsManager and everything
// else (env: and inline) to Env. A nil SecretsManager makes
// secretsmanager: references fail with EnvResolver's explanation.
type Chain struct {
	SecretsManager SecretResolver
	Env            SecretResolver // nil = EnvResolver{}
}

// Resolve implements SecretResolver.
func (c Chain) Resolve(ctx context.Context, ref string) (string, error) {
	env := c.Env
	if env == nil {
		env = EnvResolver{}
	}
	if strings.HasPrefix(ref, smPrefix) && c.SecretsManager != nil {
		return c.SecretsManager.Resolve(ctx, ref)
	}
	return env.Resolve(ctx, ref)
}

// resolveSecrets replaces every secret reference in c with its value.
func resolveSecrets(ctx context.Context, c *Config, r SecretResolver, ps *problems) {
	walkSecrets(reflect.ValueOf(c).Elem(), "", func(path string, s *string) {
		if *s == "" {
			return
		}
		v, err := r.Resolve(ctx, *s)
		if err != nil {
			what, fix := err.Error(), ""
			if i := strings.LastIndex(what, "; "); i >= 0 {
				what, fix = what[:i], what[i+2:]
			}
			ps.at(path, what, fix)
			*s = ""
			return
		}
		*s = v
	})
}
