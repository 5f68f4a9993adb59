package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics and returns either a configuration or an
// error that names the file.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"../../../switchboard.example.yaml"} {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	files, _ := filepath.Glob("testdata/*")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{base, withRC, withNC, "", "a: &a [*a]", "x: &x {<<: *x}", "[", "instance: {name: x}\n---\n"} {
		f.Add([]byte(s))
	}
	env := EnvResolver{LookupEnv: func(k string) (string, bool) { return "v-" + k, k != "UNSET" }}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(context.Background(), "fuzz.yaml", data, env)
		switch {
		case err != nil && c != nil:
			t.Fatalf("both a config and an error: %v", err)
		case err != nil && !strings.Contains(err.Error(), "fuzz.yaml"):
			t.Fatalf("error does not name the file: %v", err)
		case err == nil && c == nil:
			t.Fatal("neither a config nor an error")
		case err == nil:
			if c.Instance.Name == "" || len(c.Agents) == 0 {
				t.Fatalf("accepted a config without name or agents: %+v", c)
			}
			_ = c.Secrets()
		}
	})
}
