package commtool_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo"
	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/dynamotest"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/commtool"
)

// now is the tools' clock in every test: the default range is the 30 days
// before it.
var now = time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC)

// analyst is the agent with the tool; others have none.
const analyst = "analyst"

// harness is the tool on a fresh dynalite store.
type harness struct {
	t     testing.TB
	store *dynamo.Store
	msgs  *dynamo.AgentMessages
	tool  *commtool.Tool
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	c := dynamotest.Client(t)
	s := dynamo.New(c, dynamotest.FreshTables(t, c))
	h := &harness{t: t, store: s, msgs: s.AgentMessages(nil)}
	h.tool = commtool.New(h.msgs, s, s, func(id string) bool { return id == analyst })
	h.tool.SetClock(func() time.Time { return now })
	return h
}

// msg is a delivered message; edit adjusts it.
func msg(id, from, to string, ch sb.Channel, dir sb.Direction, run, parent, root string, at time.Time, content string) sb.AgentMessage {
	return sb.AgentMessage{ID: id, From: from, To: to, Channel: ch, Direction: dir, Content: content,
		RunID: run, ParentRunID: parent, RootRunID: root, Status: sb.MessageDelivered, OccurredAt: at}
}

func (h *harness) record(ms ...sb.AgentMessage) {
	h.t.Helper()
	for _, m := range ms {
		if err := h.msgs.Record(h.t.Context(), m); err != nil {
			h.t.Fatalf("record %s: %v", m.ID, err)
		}
	}
}

func (h *harness) receipt(agent, run, parent, root string, usd float64, in, out int) {
	h.t.Helper()
	r := sb.Receipt{Run: sb.RunContext{RunID: run, ParentRunID: parent, RootRunID: root, AgentID: agent}, AgentID: agent,
		Provider: "openai", Model: "m", StartedAt: now.Add(-48 * time.Hour), Duration: 1500 * time.Millisecond,
		TokensIn: in, TokensOut: out, CostUSD: usd, Steps: 2, Outcome: "answered"}
	if err := h.store.Put(h.t.Context(), r); err != nil {
		h.t.Fatalf("receipt %s: %v", run, err)
	}
}

// invoke calls the tool as agent and decodes the answer as the model sees it.
func (h *harness) invokeAs(agent, action string, args any) map[string]any {
	h.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		h.t.Fatal(err)
	}
	env := h.tool.Invoke(h.t.Context(), sb.ToolCall{AgentID: agent, Tool: commtool.ToolName, Action: action, Args: raw,
		Run: sb.RunContext{RunID: "analysis-run", RootRunID: "analysis-run", AgentID: agent}})
	b, err := json.Marshal(env)
	if err != nil {
		h.t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		h.t.Fatal(err)
	}
	return out
}

func (h *harness) invoke(action string, args any) map[string]any {
	h.t.Helper()
	return h.invokeAs(analyst, action, args)
}

// ok fails unless out is a success and returns it.
func ok(t *testing.T, what string, out map[string]any) map[string]any {
	t.Helper()
	if out["status"] != "ok" {
		t.Fatalf("%s: %v", what, out)
	}
	return out
}

// path walks decoded JSON: keys for objects, ints for arrays.
func path(t *testing.T, v any, keys ...any) any {
	t.Helper()
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, isMap := v.(map[string]any)
			if !isMap {
				t.Fatalf("path %v: %T is not an object at %q", keys, v, k)
			}
			v = m[k]
		case int:
			l, isList := v.([]any)
			if !isList || k >= len(l) {
				t.Fatalf("path %v: no element %d in %v", keys, k, v)
			}
			v = l[k]
		}
	}
	return v
}

// num is a JSON number as float64.
func num(t *testing.T, v any) float64 {
	t.Helper()
	f, isNum := v.(float64)
	if !isNum {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	return f
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
