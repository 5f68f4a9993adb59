package provision

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestRandomPassword(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		p, err := randomPassword()
		if err != nil {
			t.Fatal(err)
		}
		if len(p) != 32 || !acceptable(p) || seen[p] {
			t.Fatalf("password %q: length %d, acceptable %v, repeated %v", p, len(p), acceptable(p), seen[p])
		}
		seen[p] = true
	}
}

func TestAcceptable(t *testing.T) {
	tests := []struct {
		name, p string
		want    bool
	}{
		{"all classes", "aB3-xyzQ", true},
		{"no symbol", "aB3xyzQ", false},
		{"no digit", "aB-xyzQ", false},
		{"no upper", "ab3-xyz", false},
		{"no lower", "AB3-XYZ", false},
		{"three in a row", "aB3-xxxQ", false},
		{"two in a row", "aB3-xxQ", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := acceptable(tt.p); got != tt.want {
				t.Errorf("acceptable(%q) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

func TestYAMLScalarReadsBackAsTheSameString(t *testing.T) {
	for _, s := range []string{"agent-hermes", "bot.atlas_2", "true", "NO", "null", "12345", "1e5", "", "a: b", "#x", "@x",
		"-x", "x #y", "secretsmanager:switchboard/acme/agent-hermes", "env:AGENT_HERMES_RC_TOKEN",
		"https://chat.example.org", "http://127.0.0.1:41234", "https://example.org/chat?x=1", "Grüße", "a\"b", "x\ny"} {
		var got struct{ V string }
		if err := yaml.Unmarshal([]byte("v: "+yamlScalar(s)+"\n"), &got); err != nil || got.V != s {
			t.Errorf("%q → %s → %q, %v", s, yamlScalar(s), got.V, err)
		}
	}
	if got := yamlScalar("https://chat.example.org"); strings.HasPrefix(got, `"`) {
		t.Errorf("a plain URL is quoted: %s", got)
	}
}
