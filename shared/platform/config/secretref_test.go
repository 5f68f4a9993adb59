package config

import (
	"context"
	"github.com/switchboard-dev/switchboard/shared/platform/config/configtest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refusingResolver fails the test when any secret is resolved.
type refusingResolver struct{ t *testing.T }

func (r refusingResolver) Resolve(_ context.Context, ref string) (string, error) {
	r.t.Errorf("a secret was resolved (%.12q…) for a config that cannot run", ref)
	return "", nil
}

// A secret value that reads as "<scheme>:<rest>" with a scheme Switchboard
// does not read is a config error at its line, with a did-you-mean and the
// supported schemes — not an inline secret that is the typo itself. No
// secret is resolved for such a config, and the message names the scheme,
// never the rest of the value.
func TestMistypedSecretSchemeIsAnError(t *testing.T) {
	tests := []struct {
		name, field, value string
		want               string // after "t.yaml:<line>: <path>: "
	}{
		{"env transposed", "toolApiToken", "evn:SWITCHBOARD_TOOL_TOKEN", `did you mean "env:"?`},
		{"env upper case", "toolApiToken", "ENV:SWITCHBOARD_TOOL_TOKEN", `did you mean "env:"?`},
		{"env one letter off", "toolApiToken", "emv:SWITCHBOARD_TOOL_TOKEN", `did you mean "env:"?`},
		{"secretsmanager without s", "approvals: {signingKey", "secretmanager:switchboard/approval-signing-key}", `did you mean "secretsmanager:"?`},
		{"secretsmanager with a dash", "approvals: {signingKey", "secrets-manager:switchboard/approval-signing-key}", `did you mean "secretsmanager:"?`},
		{"secretsmanager capitalised", "toolApiToken", "SecretsManager:switchboard/tool-token", `did you mean "secretsmanager:"?`},
		{"ssm is not supported", "toolApiToken", "ssm:/switchboard/tool-token", "SSM Parameter Store is not read"},
		{"a bare ARN", "toolApiToken", "arn:aws:secretsmanager:eu-central-1:123456789012:secret:switchboard/tool-AbCdEf", `did you mean "secretsmanager:arn:…"?`},
		{"another store", "toolApiToken", "vault:secret/data/switchboard#token", "not a secret store Switchboard reads"},
		{"unknown word before a variable name", "toolApiToken", "environ:SWITCHBOARD_TOOL_TOKEN", `did you mean "env:"?`},
		{"unknown word before an ARN", "toolApiToken", "ref:arn:aws:secretsmanager:eu-central-1:1:secret:x", `did you mean "secretsmanager:"?`},
		{"in a list", "rocketchat: {webhookTokens", "[rc-token-inline, evn:RC_WEBHOOK_TOKEN]}", `did you mean "env:"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := strings.Replace(base, "  model:", "  "+tt.field+": "+tt.value+"\n  model:", 1)
			_, err := Parse(context.Background(), "t.yaml", []byte(doc), refusingResolver{t})
			if err == nil {
				t.Fatalf("Parse accepted %s: %s", tt.field, tt.value)
			}
			msg := err.Error()
			scheme, rest, _ := strings.Cut(strings.Trim(strings.TrimPrefix(tt.value, "["), "]}"), ":")
			if strings.Contains(scheme, ",") { // the list case: the second element
				_, second, _ := strings.Cut(tt.value, ", ")
				scheme, rest, _ = strings.Cut(strings.Trim(second, "]}"), ":")
			}
			for _, w := range []string{"t.yaml:3: instance.", `"` + scheme + `:"`, tt.want, "env:NAME", "secretsmanager:<name-or-arn>"} {
				if !strings.Contains(msg, w) {
					t.Errorf("error:\n%s\ndoes not contain %q", msg, w)
				}
			}
			if len(rest) >= 6 && strings.Contains(msg, rest) {
				t.Errorf("error shows the value after the scheme (%q):\n%s", rest, msg)
			}
		})
	}
}

// Inline values that merely contain a colon stay inline secrets: a URL, a
// user:password pair, a word that is no typo of a scheme, a Telegram bot
// token (digits first), a one-letter prefix.
func TestInlineSecretsWithAColonStayInline(t *testing.T) {
	for _, v := range []string{
		"https://hooks.example.org/x?y=1",
		"abc:def",
		"user:pass",
		"dev:hunter2hunter2",
		"admin:Secret_Value",
		"123456789:AAHk-telegram-bot-token_0123456789ab",
		"a:SWITCHBOARD_TOOL_TOKEN",
		"p@ss:word",
		":leading-colon",
		"environment-is-not:lower/case-rest",
	} {
		t.Run(v, func(t *testing.T) {
			doc := strings.Replace(base, "  model:", "  toolApiToken: "+yamlQuote(v)+"\n  model:", 1)
			c, err := Parse(context.Background(), "t.yaml", []byte(doc), noEnv)
			if err != nil {
				t.Fatalf("Parse refused the inline secret %q: %v", v, err)
			}
			if c.Instance.ToolAPIToken != v {
				t.Errorf("toolApiToken = %q, want the inline value %q", c.Instance.ToolAPIToken, v)
			}
		})
	}
}

func yamlQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// The resolver itself refuses a mistyped scheme, for callers that resolve
// a reference without Parse.
func TestEnvResolverRefusesAMistypedScheme(t *testing.T) {
	configtest.ResolveCases(t, envOf(map[string]string{"X": "value"}), []configtest.ResolveCase{
		{Name: "transposed", Ref: "evn:X", WantErr: `did you mean "env:"?`},
		{Name: "still inline", Ref: "abc:def", Want: "abc:def"},
	})
}

func writeConfig(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sb.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Check validates a config without reading a secret; for AWS it refuses
// inline secret values (make build copies the config into every zip), for
// dev it allows them. Unset variables and Secrets Manager references are
// fine: they are read by the functions, not by the build.
func TestCheck(t *testing.T) {
	refs := strings.Replace(base, "  model:", "  toolApiToken: env:SB_CHECK_UNSET_TOKEN\n"+
		"  approvals: {signingKey: secretsmanager:switchboard/approval-signing-key}\n  model:", 1)
	inline := strings.Replace(base, "  model:", "  toolApiToken: inline-tool-token-value\n"+
		"  rocketchat: {webhookTokens: [env:SB_CHECK_RC, inline-webhook-token]}\n  model:", 1)
	short := strings.Replace(base, "  model:", "  approvals: {signingKey: short}\n  model:", 1)
	tests := []struct {
		name   string
		doc    string
		target Target
		want   []string // substrings of the error; none = no error
	}{
		{"references for AWS", refs, ForAWS, nil},
		{"references for dev", refs, ForDev, nil},
		{"inline for dev", inline, ForDev, nil},
		{"inline for AWS", inline, ForAWS, []string{
			"sb.yaml:3: instance.toolApiToken: is an inline secret value",
			"sb.yaml:4: instance.rocketchat.webhookTokens[1]: is an inline secret value",
			"secretsmanager:switchboard/",
		}},
		{"a typo for dev", strings.Replace(refs, "env:", "evn:", 1), ForDev, []string{`did you mean "env:"?`}},
		{"a typo for AWS is reported once", strings.Replace(refs, "env:", "evn:", 1), ForAWS, []string{`sb.yaml:3: instance.toolApiToken: "evn:" is not a secret reference`}},
		{"a weak inline key", short, ForDev, []string{"instance.approvals.signingKey: is shorter than 16 characters"}},
		{"not a config", "instance: [", ForDev, []string{"not valid YAML"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(writeConfig(t, tt.doc), tt.target)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Check = %v, want no error", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check accepted it, want an error with %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error:\n%v\ndoes not contain %q", err, w)
				}
			}
			if n := strings.Count(err.Error(), "instance.toolApiToken:"); n > 1 {
				t.Errorf("instance.toolApiToken reported %d times, want once:\n%v", n, err)
			}
			for _, secret := range []string{"inline-tool-token-value", "inline-webhook-token", "short"} {
				if strings.Contains(err.Error(), ": "+secret) || strings.Contains(err.Error(), `"`+secret) {
					t.Errorf("error shows the inline secret %q:\n%v", secret, err)
				}
			}
		})
	}
}

// The repository's example is a dev config: fine for dev, and for AWS
// refused at each of its inline demo secrets.
func TestCheckExample(t *testing.T) {
	const example = "../../../switchboard.example.yaml"
	if err := Check(example, ForDev); err != nil {
		t.Fatalf("Check(example, dev) = %v", err)
	}
	err := Check(example, ForAWS)
	if err == nil {
		t.Fatal("Check(example, aws) accepted the example's inline demo secrets")
	}
	for _, f := range []string{"instance.toolApiToken", "instance.rocketchat.webhookTokens[0]", "instance.approvals.signingKey"} {
		if !strings.Contains(err.Error(), f+": is an inline secret value") {
			t.Errorf("error:\n%v\ndoes not name %s", err, f)
		}
	}
}
