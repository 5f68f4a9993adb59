package config

import (
	"context"
	"fmt"
	"github.com/switchboard-dev/switchboard/shared/platform/config/configtest"
	"strings"
	"testing"
)

func TestEnvResolver(t *testing.T) {
	r := envOf(map[string]string{"SET": "value", "EMPTY": ""})
	tests := []configtest.ResolveCase{
		{Name: "inline", Ref: "literal-value", Want: "literal-value", WantErr: ""},
		{Name: "env", Ref: "env:SET", Want: "value", WantErr: ""},
		{Name: "env unset", Ref: "env:UNSET", Want: "", WantErr: "environment variable UNSET is not set; export UNSET=…"},
		{Name: "env empty", Ref: "env:EMPTY", Want: "", WantErr: "environment variable EMPTY is empty; give EMPTY a value"},
		{Name: "env bad name", Ref: "env:1-X", Want: "", WantErr: "is not a valid environment variable reference"},
		{Name: "secretsmanager refused", Ref: "secretsmanager:switchboard/x", Want: "", WantErr: "only available in AWS or with AWS credentials"},
	}
	configtest.ResolveCases(t, r, tests)
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

// mapResolver stands in for the Secrets Manager adapter: it resolves the
// references it holds and counts the calls.
type mapResolver struct {
	values map[string]string
	calls  int
}

func (r *mapResolver) Resolve(_ context.Context, ref string) (string, error) {
	r.calls++
	if v, ok := r.values[ref]; ok {
		return v, nil
	}
	return "", fmt.Errorf("secret %s is not here; create it", ref)
}

// Chain hands secretsmanager: references to its SecretsManager and the
// others to its Env, and a configuration with errors resolves nothing.
func TestLoadThroughChain(t *testing.T) {
	sm := &mapResolver{values: map[string]string{"secretsmanager:switchboard/tool": "sm-tool-token"}}
	doc := strings.Replace(withRC, "model:", "toolApiToken: secretsmanager:switchboard/tool\n  model:", 1)
	doc = strings.Replace(doc, "authToken: tok", "authToken: env:SB_TEST_RC", 1)
	r := Chain{SecretsManager: sm, Env: envOf(map[string]string{"SB_TEST_RC": "env-rc"})}
	broken := strings.Replace(doc, "userId: u", "userId: u\n        password: x", 1)
	if _, err := Parse(context.Background(), "t.yaml", []byte(broken), r); err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Fatalf("want the unknown key reported, got %v", err)
	}
	if sm.calls != 0 {
		t.Errorf("a broken configuration resolved %d secretsmanager: references, want none", sm.calls)
	}
	c, err := Parse(context.Background(), "t.yaml", []byte(doc), r)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Instance.ToolAPIToken, "sm-tool-token"; got != want {
		t.Errorf("toolApiToken = %q, want %q", got, want)
	}
	if got, want := c.Agents[0].Tools.RocketChat.AuthToken, "env-rc"; got != want {
		t.Errorf("authToken = %q, want %q", got, want)
	}
	if sm.calls != 1 {
		t.Errorf("SecretsManager resolved %d references, want 1", sm.calls)
	}

	doc = strings.Replace(doc, "switchboard/tool", "switchboard/gone", 1)
	_, err = Parse(context.Background(), "t.yaml", []byte(doc), r)
	if want := "t.yaml:3: instance.toolApiToken: secret secretsmanager:switchboard/gone is not here; create it"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v\nwant containing %q", err, want)
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
