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
// A value that reads as a mistyped reference is refused rather than taken
// as an inline literal (see checkRef). Errors say what is wrong and, after
// "; ", what to do; they never contain a secret value. The loader prefixes
// them with file, line and field.
type SecretResolver interface {
	Resolve(ctx context.Context, ref string) (string, error)
}

const (
	envPrefix = "env:"
	smPrefix  = "secretsmanager:"
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// EnvResolver resolves inline literals and env:NAME references. It refuses
// secretsmanager: references, which need AWS (Chain sends them to the
// Secrets Manager adapter, shared/adapters/secrets).
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
		if err := checkRef(ref); err != nil {
			return "", err
		}
		return ref, nil
	}
}

// Chain sends secretsmanager: references to SecretsManager and everything
// else (env: and inline) to Env. The composition root sets SecretsManager
// to the Secrets Manager adapter (shared/adapters/secrets.Resolver), so this
// package needs no AWS SDK. A nil SecretsManager makes secretsmanager:
// references fail with EnvResolver's explanation.
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

// supportedRefs is what the messages list as the references there are.
const supportedRefs = "the references Switchboard reads are env:NAME and secretsmanager:<name-or-arn>[#jsonKey]"

// inlineEscape is the way out for an inline value the rule below refuses.
const inlineEscape = "if this really is the secret itself, put it in an environment variable and write env:NAME"

// schemeRe matches what reads as "<scheme>:": a letter, then 1 to 19
// letters, digits, "-" or "_", then a colon.
var schemeRe = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_-]{1,19}):`)

// envLike is an environment variable name as people write them, upper case
// with an underscore (SWITCHBOARD_TOOL_TOKEN); arnLike starts an AWS ARN.
var (
	envLike = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$`)
	arnLike = regexp.MustCompile(`^arn:aws[a-z-]*:`)
)

// otherStores are schemes of secret stores and tools that Switchboard does
// not read, each with its fix.
var otherStores = map[string]string{
	"ssm":            ssmFix,
	"param":          ssmFix,
	"parameter":      ssmFix,
	"parameterstore": ssmFix,
	"arn":            `did you mean "secretsmanager:arn:…"? An ARN alone is not a reference; write secretsmanager: before it`,
	"sm":             `did you mean "secretsmanager:"?`,
	"asm":            `did you mean "secretsmanager:"?`,
	"aws":            `did you mean "secretsmanager:"?`,
	"awssm":          `did you mean "secretsmanager:"?`,
	"secretsmgr":     `did you mean "secretsmanager:"?`,
	"secret":         `did you mean "secretsmanager:"?`,
	"secrets":        `did you mean "secretsmanager:"?`,
	"vault":          otherFix,
	"file":           otherFix,
	"op":             otherFix,
	"gcp":            otherFix,
	"gsm":            otherFix,
	"azure":          otherFix,
	"keyvault":       otherFix,
	"k8s":            otherFix,
	"sops":           otherFix,
	"kms":            otherFix,
}

const (
	ssmFix   = "SSM Parameter Store is not read; keep the value as a key of a JSON secret in Secrets Manager and write secretsmanager:<name>#<key> (the stack's switchboard/instance takes more keys), or use env:NAME"
	otherFix = "not a secret store Switchboard reads; keep the value in Secrets Manager (secretsmanager:<name>) or an environment variable (env:NAME)"
)

// checkRef refuses a value that is not an env: or secretsmanager:
// reference but reads as a reference with a mistyped or unsupported scheme,
// which would otherwise become an inline secret made of the typo (the real
// secret then fails as a wrong token). The rule, for a value that starts
// with <word>: (a letter, then 1–19 letters, digits, "-" or "_"):
//
//  1. the word is env or secretsmanager in other letter case (ENV:), or
//  2. the word is one edit from env or at most three from secretsmanager,
//     case ignored, a swap of two neighbouring letters counting as one
//     (evn:, emv:, secretmanager:, secrets-manager:), or
//  3. the word names a store Switchboard does not read (ssm:, vault:,
//     arn:, … see otherStores), or
//  4. the word is lower case and the rest is an upper-case variable name
//     with an underscore (environ:SWITCHBOARD_TOOL_TOKEN) or an ARN.
//
// Everything else is an inline literal, colon or not: https://…, abc:def,
// user:pass, dev:hunter2, a Telegram bot token (digits before the colon).
// The error names only the word, never the rest of the value.
func checkRef(ref string) error {
	m := schemeRe.FindStringSubmatch(ref)
	if m == nil {
		return nil
	}
	word, rest := m[1], ref[len(m[0]):]
	lower := strings.ToLower(word)
	refuse := func(fix string) error {
		return fmt.Errorf("%q is not a secret reference Switchboard reads, so the whole value would become the secret; %s (%s; %s)",
			word+":", fix, supportedRefs, inlineEscape)
	}
	for _, s := range []string{"env", "secretsmanager"} {
		limit := 1
		if s == "secretsmanager" {
			limit = 3
		}
		if lower == s || typoDistance(lower, s) <= limit {
			return refuse(fmt.Sprintf("did you mean %q?", s+":"))
		}
	}
	if fix, ok := otherStores[lower]; ok {
		return refuse(fix)
	}
	if word == lower {
		switch {
		case envLike.MatchString(rest):
			return refuse(`did you mean "env:"?`)
		case arnLike.MatchString(rest):
			return refuse(`did you mean "secretsmanager:"?`)
		}
	}
	return nil
}

// typoDistance is the edit distance between a and b counting a swap of two
// neighbouring letters as one edit (optimal string alignment), so that
// "evn" is one typo away from "env", not two.
func typoDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// checkSecretRefs reports every secret value that reads as a mistyped
// reference (checkRef), before any secret is resolved.
func checkSecretRefs(c *Config, ps *problems) {
	walkSecrets(reflect.ValueOf(c).Elem(), "", func(path string, s *string) {
		if *s == "" || isReference(*s) {
			return
		}
		if err := checkRef(*s); err != nil {
			what, fix, _ := strings.Cut(err.Error(), "; ")
			ps.at(path, what, fix)
		}
	})
}

// isReference reports whether a secret value is an env: or secretsmanager:
// reference rather than an inline literal.
func isReference(s string) bool {
	return strings.HasPrefix(s, envPrefix) || strings.HasPrefix(s, smPrefix)
}
