package sfnlocal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefinition(t *testing.T) {
	file := filepath.Join(t.TempDir(), "m.asl.json")
	def := `{"a":"${One}","b":"${Two}","c":"${One}","d":"$.literal","e":"${Three}"}`
	if err := os.WriteFile(file, []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		subs    map[string]string
		want    string
		wantErr string
	}{
		{"all filled", map[string]string{"One": "1", "Two": "2", "Three": "3"}, `{"a":"1","b":"2","c":"1","d":"$.literal","e":"3"}`, ""},
		{"missing values named", map[string]string{"One": "1"}, "", "no value for Two, Three"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Definition(file, tt.subs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestStartReportsAMissingScript(t *testing.T) {
	_, err := Start(t.Context(), Options{Root: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), Script) {
		t.Fatalf("got %v, want an error naming %s", err, Script)
	}
}
