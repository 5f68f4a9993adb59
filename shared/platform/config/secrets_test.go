package config

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go"
)

// fakeSecretsManager is an in-memory Secrets Manager that counts calls.
type fakeSecretsManager struct {
	mu      sync.Mutex
	secrets map[string]string
	calls   map[string]int
}

var _ SecretsManagerAPI = (*fakeSecretsManager)(nil)

func (f *fakeSecretsManager) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := aws.ToString(in.SecretId)
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[id]++
	switch id {
	case "denied":
		return nil, &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "no"}
	case "broken":
		return nil, errors.New("dial tcp: connection refused")
	}
	s, ok := f.secrets[id]
	if !ok {
		return nil, &smithy.GenericAPIError{Code: "ResourceNotFoundException", Message: "Secrets Manager can't find the specified secret."}
	}
	return &secretsmanager.GetSecretValueOutput{SecretString: aws.String(s)}, nil
}

func TestEnvResolver(t *testing.T) {
	r := envOf(map[string]string{"SET": "value", "EMPTY": ""})
	tests := []resolveCase{
		{"inline", "literal-value", "literal-value", ""},
		{"env", "env:SET", "value", ""},
		{"env unset", "env:UNSET", "", "environment variable UNSET is not set; export UNSET=…"},
		{"env empty", "env:EMPTY", "", "environment variable EMPTY is empty; give EMPTY a value"},
		{"env bad name", "env:1-X", "", "is not a valid environment variable reference"},
		{"secretsmanager refused", "secretsmanager:switchboard/x", "", "only available in AWS or with AWS credentials"},
	}
	resolveCases(t, r, tests)
}

func TestEnvResolverReadsProcessEnvironment(t *testing.T) {
	t.Setenv("SWITCHBOARD_CONFIG_TEST_SECRET", "from-env")
	got, err := EnvResolver{}.Resolve(context.Background(), "env:SWITCHBOARD_CONFIG_TEST_SECRET")
	if err != nil || got != "from-env" {
		t.Fatalf("got %q, %v", got, err)
	}
}

// A missing variable names the file, the line, the field and the variable.
func TestMissingEnvInConfig(t *testing.T) {
	doc := strings.Replace(base, "model:", "toolApiToken: env:SB_TEST_TOOL_TOKEN\n  model:", 1) +
		"    tools:\n      Nextcloud: {baseUrl: https://c.example.org, username: u, appPassword: env:SB_TEST_NC, rootPath: /x}\n"
	_, err := Parse(context.Background(), "t.yaml", []byte(doc), noEnv)
	if err == nil {
		t.Fatal("Parse succeeded")
	}
	for _, w := range []string{
		"t.yaml:3: instance.toolApiToken: environment variable SB_TEST_TOOL_TOKEN is not set; export SB_TEST_TOOL_TOKEN=…",
		"t.yaml:8: agents[0].tools.Nextcloud.appPassword: environment variable SB_TEST_NC is not set",
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error:\n%v\ndoes not contain:\n%s", err, w)
		}
	}
}

func TestSecretsManagerResolver(t *testing.T) {
	fake := &fakeSecretsManager{secrets: map[string]string{
		"plain": "plain-secret",
		"json":  `{"token":"json-token","port":5432,"empty":""}`,
		"arn:aws:secretsmanager:eu-central-1:123456789012:secret:sb/rc-AbCdEf": "by-arn",
	}}
	r := NewSecretsManagerResolver(fake)
	tests := []resolveCase{
		{"plain", "secretsmanager:plain", "plain-secret", ""},
		{"plain again (cached)", "secretsmanager:plain", "plain-secret", ""},
		{"json key", "secretsmanager:json#token", "json-token", ""},
		{"json number", "secretsmanager:json#port", "5432", ""},
		{"json empty key", "secretsmanager:json#empty", "", `key "empty" of secret json is empty`},
		{"json missing key", "secretsmanager:json#nope", "", `secret json has no key "nope"; use one of: empty, port, token`},
		{"not json", "secretsmanager:plain#k", "", "secret plain is not a JSON object"},
		{"arn", "secretsmanager:arn:aws:secretsmanager:eu-central-1:123456789012:secret:sb/rc-AbCdEf", "by-arn", ""},
		{"not found", "secretsmanager:missing", "", "secret missing does not exist in Secrets Manager"},
		{"denied", "secretsmanager:denied", "", "not allowed to read secret denied; grant secretsmanager:GetSecretValue"},
		{"other failure", "secretsmanager:broken", "", "reading secret broken from Secrets Manager failed"},
		{"empty name", "secretsmanager:", "", "incomplete secretsmanager: reference"},
		{"empty key", "secretsmanager:plain#", "", "incomplete secretsmanager: reference"},
		{"not a reference", "env:X", "", "not a secretsmanager: reference"},
	}
	resolveCases(t, r, tests)
	// Once per cold start: "plain" was read twice and for a #key, "json"
	// for four keys; each was fetched once.
	for id, want := range map[string]int{"plain": 1, "json": 1} {
		if got := fake.calls[id]; got != want {
			t.Errorf("GetSecretValue(%s) called %d times, want %d", id, got, want)
		}
	}
}

func TestLoadThroughAWSResolver(t *testing.T) {
	fake := &fakeSecretsManager{secrets: map[string]string{
		"switchboard/tokens": `{"tool":"sm-tool-token","hermes":"sm-hermes-rc"}`,
	}}
	doc := strings.Replace(withRC, "model:", "toolApiToken: secretsmanager:switchboard/tokens#tool\n  model:", 1)
	doc = strings.Replace(doc, "authToken: tok", "authToken: secretsmanager:switchboard/tokens#hermes", 1)
	doc = strings.Replace(doc, "userId: u", "userId: u\n        password: env:SB_TEST_PW", 1) // unknown key, see below
	_, err := Parse(context.Background(), "t.yaml", []byte(doc), NewAWSResolver(fake))
	if err == nil || !strings.Contains(err.Error(), `agents[0].tools.RocketChat.password: unknown key`) {
		t.Fatalf("want the unknown key reported, got %v", err)
	}
	if n := len(fake.calls); n != 0 {
		t.Errorf("a broken configuration fetched %d secrets, want none", n)
	}

	doc = strings.Replace(doc, "        password: env:SB_TEST_PW\n", "", 1)
	r := Chain{SecretsManager: NewSecretsManagerResolver(fake), Env: envOf(nil)}
	c, err := Parse(context.Background(), "t.yaml", []byte(doc), r)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Instance.ToolAPIToken, "sm-tool-token"; got != want {
		t.Errorf("toolApiToken = %q, want %q", got, want)
	}
	if got, want := c.Agents[0].Tools.RocketChat.AuthToken, "sm-hermes-rc"; got != want {
		t.Errorf("authToken = %q, want %q", got, want)
	}
	if got := fake.calls["switchboard/tokens"]; got != 1 {
		t.Errorf("GetSecretValue called %d times, want 1", got)
	}
	secrets := c.Secrets()
	if len(secrets) != 2 || secrets[0] != "sm-tool-token" || secrets[1] != "sm-hermes-rc" {
		t.Errorf("Secrets() = %q", secrets)
	}
}

func TestChainWithoutSecretsManager(t *testing.T) {
	_, err := Chain{}.Resolve(context.Background(), "secretsmanager:x")
	if err == nil || !strings.Contains(err.Error(), "only available in AWS") {
		t.Fatalf("err = %v", err)
	}
	got, err := Chain{}.Resolve(context.Background(), "inline")
	if err != nil || got != "inline" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestSecretsManagerErrorInConfig(t *testing.T) {
	fake := &fakeSecretsManager{}
	doc := strings.Replace(base, "model:", "toolApiToken: secretsmanager:switchboard/gone\n  model:", 1)
	_, err := Parse(context.Background(), "t.yaml", []byte(doc), NewAWSResolver(fake))
	want := "t.yaml:3: instance.toolApiToken: secret switchboard/gone does not exist in Secrets Manager (in this account and region); create it or correct the name"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error = %v\nwant containing %q", err, want)
	}
}

// resolveCase is one reference, what it resolves to, or a part of the
// error it must give.
type resolveCase struct{ name, ref, want, wantErr string }

// resolveCases resolves every case with r.
func resolveCases(t *testing.T, r SecretResolver, tests []resolveCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Resolve(context.Background(), tc.ref)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Resolve(%q) error = %v, want containing %q", tc.ref, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Resolve(%q) = %q, %v; want %q", tc.ref, got, err, tc.want)
			}
		})
	}
}
