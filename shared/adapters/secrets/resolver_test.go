package secrets_test

import (
	"context"
	"errors"
	"github.com/switchboard-dev/switchboard/shared/platform/config/configtest"
	"strings"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/switchboard-dev/switchboard/shared/adapters/secrets"
	"github.com/switchboard-dev/switchboard/shared/adapters/secrets/smfake"
	"github.com/switchboard-dev/switchboard/shared/platform/config"
)

var _ config.SecretResolver = (*secrets.Resolver)(nil)

// newFake is a Secrets Manager with secrets, where "denied" is refused and
// "broken" cannot be reached.
func newFake(secrets map[string]string) *smfake.Fake {
	f := smfake.New(secrets)
	f.FailGet = map[string]error{
		"denied": &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "no"},
		"broken": errors.New("dial tcp: connection refused"),
	}
	return f
}

func TestResolver(t *testing.T) {
	fake := newFake(map[string]string{
		"plain": "plain-secret",
		"json":  `{"token":"json-token","port":5432,"empty":""}`,
		"arn:aws:secretsmanager:eu-central-1:123456789012:secret:sb/rc-AbCdEf": "by-arn",
	})
	r := secrets.NewResolver(fake)
	tests := []configtest.ResolveCase{
		{Name: "plain", Ref: "secretsmanager:plain", Want: "plain-secret", WantErr: ""},
		{Name: "plain again (cached)", Ref: "secretsmanager:plain", Want: "plain-secret", WantErr: ""},
		{Name: "json key", Ref: "secretsmanager:json#token", Want: "json-token", WantErr: ""},
		{Name: "json number", Ref: "secretsmanager:json#port", Want: "5432", WantErr: ""},
		{Name: "json empty key", Ref: "secretsmanager:json#empty", Want: "", WantErr: `key "empty" of secret json is empty`},
		{Name: "json missing key", Ref: "secretsmanager:json#nope", Want: "", WantErr: `secret json has no key "nope"; use one of: empty, port, token`},
		{Name: "not json", Ref: "secretsmanager:plain#k", Want: "", WantErr: "secret plain is not a JSON object"},
		{Name: "arn", Ref: "secretsmanager:arn:aws:secretsmanager:eu-central-1:123456789012:secret:sb/rc-AbCdEf", Want: "by-arn", WantErr: ""},
		{Name: "not found", Ref: "secretsmanager:missing", Want: "", WantErr: "secret missing does not exist in Secrets Manager"},
		{Name: "denied", Ref: "secretsmanager:denied", Want: "", WantErr: "not allowed to read secret denied; grant secretsmanager:GetSecretValue"},
		{Name: "other failure", Ref: "secretsmanager:broken", Want: "", WantErr: "reading secret broken from Secrets Manager failed"},
		{Name: "empty name", Ref: "secretsmanager:", Want: "", WantErr: "incomplete secretsmanager: reference"},
		{Name: "empty key", Ref: "secretsmanager:plain#", Want: "", WantErr: "incomplete secretsmanager: reference"},
		{Name: "not a reference", Ref: "env:X", Want: "", WantErr: "not a secretsmanager: reference"},
	}
	configtest.ResolveCases(t, r, tests)
	// Once per cold start: "plain" was read twice and for a #key, "json"
	// for four keys; each was fetched once.
	for id, want := range map[string]int{"plain": 1, "json": 1} {
		if got := fake.Count("GetSecretValue", id); got != want {
			t.Errorf("GetSecretValue(%s) called %d times, want %d", id, got, want)
		}
	}
	configtest.ResolveCases(t, &secrets.Resolver{}, []configtest.ResolveCase{{Name: "no client", Ref: "secretsmanager:plain", Want: "", WantErr: "no Secrets Manager client is configured"}})
}

// A base configuration and one with a RocketChat block for hermes (lines
// 6–11), as platform/config's tests write them.
const (
	base = `instance:
  name: acme
  model: {provider: scripted}
agents:
  - id: hermes
`
	withRC = base + `    tools:
      RocketChat:
        baseUrl: https://chat.example.org
        userId: u
        authToken: tok
        username: agent-hermes
`
)

// envOf is an environment with exactly vars set.
func envOf(vars map[string]string) config.EnvResolver {
	return config.EnvResolver{LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
}

func TestLoadThroughResolver(t *testing.T) {
	fake := newFake(map[string]string{
		"switchboard/tokens": `{"tool":"sm-tool-token","hermes":"sm-hermes-rc"}`,
	})
	doc := strings.Replace(withRC, "model:", "toolApiToken: secretsmanager:switchboard/tokens#tool\n  model:", 1)
	doc = strings.Replace(doc, "authToken: tok", "authToken: secretsmanager:switchboard/tokens#hermes", 1)
	doc = strings.Replace(doc, "userId: u", "userId: u\n        password: env:SB_TEST_PW", 1) // unknown key, see below
	_, err := config.Parse(context.Background(), "t.yaml", []byte(doc), config.Chain{SecretsManager: secrets.NewResolver(fake)})
	if err == nil || !strings.Contains(err.Error(), `agents[0].tools.RocketChat.password: unknown key`) {
		t.Fatalf("want the unknown key reported, got %v", err)
	}
	if n := len(fake.Calls()); n != 0 {
		t.Errorf("a broken configuration fetched %d secrets, want none", n)
	}

	doc = strings.Replace(doc, "        password: env:SB_TEST_PW\n", "", 1)
	r := config.Chain{SecretsManager: secrets.NewResolver(fake), Env: envOf(nil)}
	c, err := config.Parse(context.Background(), "t.yaml", []byte(doc), r)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Instance.ToolAPIToken, "sm-tool-token"; got != want {
		t.Errorf("toolApiToken = %q, want %q", got, want)
	}
	if got, want := c.Agents[0].Tools.RocketChat.AuthToken, "sm-hermes-rc"; got != want {
		t.Errorf("authToken = %q, want %q", got, want)
	}
	if got := fake.Count("GetSecretValue", "switchboard/tokens"); got != 1 {
		t.Errorf("GetSecretValue called %d times, want 1", got)
	}
	values := c.Secrets()
	if len(values) != 2 || values[0] != "sm-tool-token" || values[1] != "sm-hermes-rc" {
		t.Errorf("Secrets() = %q", values)
	}
}

func TestResolverErrorInConfig(t *testing.T) {
	doc := strings.Replace(base, "model:", "toolApiToken: secretsmanager:switchboard/gone\n  model:", 1)
	_, err := config.Parse(context.Background(), "t.yaml", []byte(doc), config.Chain{SecretsManager: secrets.NewResolver(newFake(nil))})
	want := "t.yaml:3: instance.toolApiToken: secret switchboard/gone does not exist in Secrets Manager (in this account and region); create it or correct the name"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error = %v\nwant containing %q", err, want)
	}
}
