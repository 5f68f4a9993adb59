package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// BenchmarkInvoke measures the whole path of one call over memstore: schema
// validation, staging, the tool, scrubbing and capping the args, the audit
// write. The store grows by one entry per iteration, as a real table would.
func BenchmarkInvoke(b *testing.B) {
	benches := []struct {
		name string
		call sb.ToolCall
	}{
		{"auto ok", sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(`{"text":"hello there","room":"general"}`)}},
		{"auto ok with secret", sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(`{"text":"key ` + secret + `","password":"pa55word!"}`)}},
		{"schema rejected", sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(`{"text":42}`)}},
		{"pending approval", sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "erase", Args: json.RawMessage(`{}`)}},
	}
	for _, bb := range benches {
		b.Run(bb.name, func(b *testing.B) {
			f := newFixture(b)
			call := bb.call
			call.Run = runCtx("bench")
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if env := f.x.Invoke(ctx, call); env.Status == "" {
					b.Fatal("no status")
				}
			}
		})
	}
}
