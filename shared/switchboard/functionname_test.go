package switchboard_test

import (
	"strings"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

func TestFunctionNameRoundTrip(t *testing.T) {
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
			if err := sb.CheckFunctionName(tt.tool, tt.action); err != nil {
				t.Fatalf("CheckFunctionName: %v", err)
			}
			if got := sb.FunctionName(tt.tool, tt.action); got != tt.name {
				t.Errorf("FunctionName = %q, want %q", got, tt.name)
			}
			tool, action, ok := sb.SplitFunctionName(tt.name)
			if !ok || tool != tt.tool || action != tt.action {
				t.Errorf("SplitFunctionName(%q) = %q, %q, %v; want %q, %q, true", tt.name, tool, action, ok, tt.tool, tt.action)
			}
		})
	}
}

func TestSplitFunctionNameRejectsMadeUpNames(t *testing.T) {
	for _, name := range []string{"", "Workspace", "Workspace.write", "__write", "Workspace__", "multi_tool_use.parallel"} {
		if tool, action, ok := sb.SplitFunctionName(name); ok {
			t.Errorf("SplitFunctionName(%q) = %q, %q, true; want ok=false", name, tool, action)
		}
	}
}

func TestCheckFunctionName(t *testing.T) {
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
			err := sb.CheckFunctionName(tt.tool, tt.action)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("CheckFunctionName = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("CheckFunctionName = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseFunctionNameAndCalledFunctionName(t *testing.T) {
	tests := []struct {
		name              string // what the model called
		wantTool, wantAct string
		wantReplay        string // CalledFunctionName of the parsed call
	}{
		{name: "Workspace__write", wantTool: "Workspace", wantAct: "write", wantReplay: "Workspace__write"},
		{name: "Workspace", wantTool: "Workspace", wantReplay: "Workspace"},
		{name: "multi_tool_use.parallel", wantTool: "multi_tool_use.parallel", wantReplay: "multi_tool_use_parallel"},
		{name: "Workspace.write", wantTool: "Workspace.write", wantReplay: "Workspace_write"},
		{name: "", wantReplay: "unknown"},
		{name: strings.Repeat("x", 70), wantTool: strings.Repeat("x", 70), wantReplay: strings.Repeat("x", 64)},
		{name: "wörk", wantTool: "wörk", wantReplay: "w__rk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, action := sb.ParseFunctionName(tt.name)
			if tool != tt.wantTool || action != tt.wantAct {
				t.Errorf("ParseFunctionName(%q) = %q, %q; want %q, %q", tt.name, tool, action, tt.wantTool, tt.wantAct)
			}
			if got := sb.CalledFunctionName(tool, action); got != tt.wantReplay {
				t.Errorf("CalledFunctionName(%q, %q) = %q, want %q", tool, action, got, tt.wantReplay)
			}
		})
	}
}

func TestFunctionDescription(t *testing.T) {
	tests := []struct{ tool, action, want string }{
		{"Files shared with the team.", "Writes a file.", "Files shared with the team.\nWrites a file."},
		{"", "Writes a file.", "Writes a file."},
		{"Files shared with the team.", "", "Files shared with the team."},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := sb.FunctionDescription(tt.tool, tt.action); got != tt.want {
			t.Errorf("FunctionDescription(%q, %q) = %q, want %q", tt.tool, tt.action, got, tt.want)
		}
	}
}
