package agentrun_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/agentrun"
)

// askInvoker offers ask_agent beside another tool.
type askInvoker struct{ recInvoker }

func (a *askInvoker) Specs(string) []sb.ToolSpec {
	return []sb.ToolSpec{{Name: "Echo", Actions: []sb.ActionSpec{{Name: "say"}}},
		{Name: sb.AskAgentTool, Actions: []sb.ActionSpec{{Name: "ask"}}}}
}

// A run that answers another agent's question carries the call path the
// engine was given (never one a model wrote) and is not offered ask_agent;
// any other run is.
func TestAnsweringRunIsNotOfferedAskAgent(t *testing.T) {
	tests := []struct {
		name      string
		callPath  string
		wantTools []string
	}{
		{"ordinary run", "", []string{"Echo", sb.AskAgentTool}},
		{"answering run", "alice", []string{"Echo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &stepModel{steps: []step{{resp: sb.ModelResponse{Text: "42"}}}}
			e := &agentrun.Engine{Tools: &askInvoker{}, Receipts: memstore.New()}
			res, err := e.Start(context.Background(), sb.Agent{ID: "bob", Model: m},
				agentrun.Start{Wake: "what is 6×7?", CallPath: tt.callPath})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range m.reqs[0].Tools {
				got = append(got, s.Name)
			}
			if len(got) != len(tt.wantTools) || got[len(got)-1] != tt.wantTools[len(tt.wantTools)-1] {
				t.Errorf("offered %v, want %v", got, tt.wantTools)
			}
			if res.Run.CallPath != tt.callPath || res.Run.Answering() != (tt.callPath != "") {
				t.Errorf("run %+v, want call path %q", res.Run, tt.callPath)
			}
		})
	}
}
