package config

import (
	"context"
	"fmt"
	"reflect"
)

// Target is where a configuration is meant to run (see Check).
type Target string

const (
	// ForDev is `switchboard dev`, the CLI and tests: inline secret values
	// are allowed.
	ForDev Target = "dev"
	// ForAWS is the deployed functions: every secret must be an env: or
	// secretsmanager: reference.
	ForAWS Target = "aws"
)

// Check reads and validates the configuration file at path as Load does,
// every problem at once as file:line, but reads no secret: env: and
// secretsmanager: references are checked for their form only (the
// functions resolve them at their cold start), inline values get the
// checks a resolved value gets. ForAWS also refuses every inline secret
// value: make build copies the config into every function's zip, so an
// inline secret would travel in each of them (and the example's demo
// values are known to everyone). Check needs no environment and no AWS.
func Check(path string, target Target) error {
	if target != ForDev && target != ForAWS {
		return fmt.Errorf("config check: unknown target %q; use %q or %q", target, ForDev, ForAWS)
	}
	data, err := readFile(path)
	if err != nil {
		return err
	}
	_, err = parse(context.Background(), path, data, nil, target)
	return err
}

// checkUnresolved finishes a Check after validate: inline secrets refused
// for AWS, then the checks of resolved values on the inline ones (what the
// references hold is not known here).
func checkUnresolved(c *Config, ps *problems, target Target) (*Config, error) {
	walkSecrets(reflect.ValueOf(c).Elem(), "", func(path string, s *string) {
		switch {
		case *s == "":
		case isReference(*s) || checkRef(*s) != nil: // a mistyped reference is reported already
			*s = ""
		case target == ForAWS:
			ps.at(path, "is an inline secret value, which make build would copy into every function's zip",
				"store it in Secrets Manager, best as a key of the stack's instance secret (secretsmanager:switchboard/instance#<key>; any secretsmanager:switchboard/<name> works, the functions may read switchboard/*), or write env:NAME; inline values are for switchboard dev only")
			*s = ""
		}
	})
	validateResolved(c, ps)
	if err := ps.err(); err != nil {
		return nil, err
	}
	return c, nil
}
