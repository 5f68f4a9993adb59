package approvals_test

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/usecases/approvals"
)

func TestScopeOf(t *testing.T) {
	tests := []struct {
		name, tool, args, want string
	}{
		{"room", "RocketChat", `{"room":"#general","path":"personal:x.md"}`, "room:general"},
		{"room without one", "RocketChat", `{"path":"personal:x.md"}`, ""},
		{"nextcloud folder", "Nextcloud", `{"path":"Reports/2025/q3.md"}`, "folder:/Reports/2025/"},
		{"same folder with a leading slash", "Nextcloud", `{"path":"/Reports/2025/q3.md"}`, "folder:/Reports/2025/"},
		{"root file", "Nextcloud", `{"path":"q3.md"}`, "folder:/"},
		{"dot-dot cannot climb out of the folder it names", "Nextcloud", `{"path":"a/../../b/x.md"}`, "folder:/b/"},
		{"workspace area", "Workspace", `{"path":"personal:old.md"}`, "folder:personal:/"},
		{"workspace subfolder", "Workspace", `{"path":"personal:drafts/a.md"}`, "folder:personal:/drafts/"},
		{"upload target", "Nextcloud", `{"localPath":"personal:a.md","remotePath":"/Out/a.md"}`, "folder:/Out/"},
		{"no place", "Telegram", `{"text":"hi"}`, ""},
		{"not JSON", "Nextcloud", `{`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := approvals.ScopeOf(tt.tool, json.RawMessage(tt.args)); got != tt.want {
				t.Errorf("ScopeOf(%s, %s) = %q, want %q", tt.tool, tt.args, got, tt.want)
			}
		})
	}
}

func TestCheckAllowForHours(t *testing.T) {
	for _, tt := range []struct {
		name    string
		hours   []float64
		wantErr bool
	}{
		{"defaults", approvals.DefaultAllowForHours, false},
		{"fraction", []float64{0.5}, false},
		{"zero", []float64{0}, true},
		{"over a week", []float64{169}, true},
		{"twice", []float64{4, 4}, true},
	} {
		if err := approvals.CheckAllowForHours(tt.hours); (err != nil) != tt.wantErr {
			t.Errorf("%s: CheckAllowForHours(%v) = %v, wantErr %v", tt.name, tt.hours, err, tt.wantErr)
		}
	}
}
