package toolnames_test

import (
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/toolnames"
)

func TestRoundTrip(t *testing.T) {
	tests := []struct{ tool, action, name string }{
		{"Workspace", "write", "Workspace__write"},
		{"RocketChat", "send_message", "RocketChat__send_message"},
		{"Taskboard", "task_create", "Taskboard__task_create"},
		{"my-tool", "do-it", "my-tool__do-it"},
		{"Tool", "_private", "Tool___private"}, // first separator wins
		{"Tool", "a__b", "Tool__a__b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := toolnames.Check(tt.tool, tt.action); err != nil {
				t.Fatalf("Check: %v", err)
			}
			if got := toolnames.FunctionName(tt.tool, tt.action); got != tt.name {
				t.Errorf("FunctionName = %q, want %q", got, tt.name)
			}
			tool, action, ok := toolnames.SplitFunctionName(tt.name)
			if !ok || tool != tt.tool || action != tt.action {
				t.Errorf("SplitFunctionName(%q) = %q, %q, %v; want %q, %q, true", tt.name, tool, action, ok, tt.tool, tt.action)
			}
		})
	}
}

func TestSplitRejectsMadeUpNames(t *testing.T) {
	for _, name := range []string{"", "Workspace", "Workspace.write", "__write", "Workspace__", "multi_tool_use.parallel"} {
		if tool, action, ok := toolnames.SplitFunctionName(name); ok {
			t.Errorf("SplitFunctionName(%q) = %q, %q, true; want ok=false", name, tool, action)
		}
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name         string
		tool, action string
		wantErr      string // substring; "" = valid
	}{
		{name: "ordinary", tool: "Workspace", action: "write"},
		{name: "exactly 64", tool: strings.Repeat("T", 30), action: strings.Repeat("a", 32)},
		{name: "65 is too long", tool: strings.Repeat("T", 31), action: strings.Repeat("a", 32), wantErr: "is 65 characters; models accept at most 64"},
		{name: "dot", tool: "Work.space", action: "write", wantErr: "only letters, digits"},
		{name: "space", tool: "Workspace", action: "write file", wantErr: "only letters, digits"},
		{name: "non-ASCII", tool: "Wörkspace", action: "write", wantErr: "only letters, digits"},
		{name: "empty tool", tool: "", action: "write", wantErr: "must not be empty"},
		{name: "empty action", tool: "Workspace", action: "", wantErr: "must not be empty"},
		{name: "separator in tool", tool: "Work__space", action: "write", wantErr: "would not read back"},
		{name: "tool ends in underscore", tool: "Workspace_", action: "write", wantErr: "would not read back"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := toolnames.Check(tt.tool, tt.action)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Check = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Check = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}
