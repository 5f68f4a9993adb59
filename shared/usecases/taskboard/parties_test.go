package taskboard_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/config"
	"github.com/switchboard-dev/switchboard/shared/usecases/taskboard"
)

// The configured agents are the parties: a display name (the id without
// one) and whether the agent has the Taskboard tool.
func TestConfigParties(t *testing.T) {
	ps := taskboard.ConfigParties{Config: &config.Config{Agents: []config.Agent{
		{ID: "hermes", Name: "Hermes", Tools: config.Tools{Taskboard: &config.TaskboardTool{}}},
		{ID: "iris"},
	}}}
	tests := []struct {
		id     string
		want   taskboard.Party
		wantOK bool
	}{
		{"hermes", taskboard.Party{Name: "Hermes", Taskboard: true}, true},
		{"iris", taskboard.Party{Name: "iris"}, true},
		{"zed", taskboard.Party{}, false},
	}
	for _, tt := range tests {
		got, ok := ps.Party(tt.id)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("Party(%q) = %+v, %v; want %+v, %v", tt.id, got, ok, tt.want, tt.wantOK)
		}
	}
}
