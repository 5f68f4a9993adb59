package staging

import (
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestDecide(t *testing.T) {
	p, err := New(map[string]string{"Workspace.delete": "approve", "Nextcloud.share:public": "deny"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		call      sb.ToolCall
		condition string
		want      sb.Decision
	}{
		{"default auto", sb.ToolCall{Tool: "Workspace", Action: "write"}, "", sb.DecisionAuto},
		{"override to approve", sb.ToolCall{Tool: "Workspace", Action: "delete"}, "", sb.DecisionApprove},
		{"unknown action fails closed", sb.ToolCall{Tool: "Workspace", Action: "format_disk"}, "", sb.DecisionApprove},
		{"unknown tool fails closed", sb.ToolCall{Tool: "Shell", Action: "run"}, "", sb.DecisionApprove},
		{"condition rule wins", sb.ToolCall{Tool: "RocketChat", Action: "send_message"}, "other_room", sb.DecisionDeny},
		{"unknown condition falls back to action", sb.ToolCall{Tool: "RocketChat", Action: "send_message"}, "weird", sb.DecisionAuto},
		{"override of a condition", sb.ToolCall{Tool: "Nextcloud", Action: "share"}, "public", sb.DecisionDeny},
		{"router bypasses approval", sb.ToolCall{Tool: "Telegram", Action: "send_message", Origin: sb.OriginRouter}, "", sb.DecisionAuto},
		{"agent needs approval", sb.ToolCall{Tool: "Telegram", Action: "send_message", Origin: sb.OriginAgent}, "", sb.DecisionApprove},
		{"approved call runs", sb.ToolCall{Tool: "Nextcloud", Action: "delete", Approved: true}, "", sb.DecisionAuto},
		{"router never bypasses deny", sb.ToolCall{Tool: "RocketChat", Action: "send_message", Origin: sb.OriginRouter}, "other_room", sb.DecisionDeny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Decide(tt.call, tt.condition); got != tt.want {
				t.Errorf("Decide = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNewRejectsBadRules(t *testing.T) {
	for _, tt := range []struct{ key, val string }{
		{"Workspace.delete", "maybe"},
		{"Workspace", "auto"},
		{".delete", "auto"},
		{"Workspace.", "deny"},
	} {
		if _, err := New(map[string]string{tt.key: tt.val}); err == nil {
			t.Errorf("New(%q: %q) accepted a bad rule", tt.key, tt.val)
		}
	}
}

func TestDefaultsAreValid(t *testing.T) {
	for k, d := range Defaults {
		if !d.Valid() {
			t.Errorf("default %q has invalid decision %q", k, d)
		}
	}
}
