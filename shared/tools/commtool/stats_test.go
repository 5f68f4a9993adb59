package commtool_test

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/commtool"
)

const (
	ask    = sb.ChannelAsk
	task   = sb.ChannelTask
	result = sb.ChannelTaskResult
	cmnt   = sb.ChannelTaskComment
	req    = sb.DirectionRequest
	resp   = sb.DirectionResponse
)

// day is a time in March 2026 (within the default range before now).
func day(d, hour int) time.Time { return time.Date(2026, 3, d, hour, 0, 0, 0, time.UTC) }

func withStatus(m sb.AgentMessage, st sb.MessageStatus) sb.AgentMessage { m.Status = st; return m }
func withTask(m sb.AgentMessage, id string) sb.AgentMessage             { m.TaskID = id; return m }

// seedTeam records a crafted month of a four-agent team whose answers are
// known (see TestStatsAnswersTheFiveQuestions), plus one message older than
// the default range.
func seedTeam(h *harness) {
	h.record(
		// Delegations: T1 ends in a result, T2 fizzles (17 days, no
		// result), T3's result failed, T4 is 2 days old and open, T5 was
		// refused.
		withTask(msg("t1", "lead", "res", task, req, "rA", "", "rA", day(1, 9), "Collect sources on tides"), "T1"),
		withTask(msg("t1r", "res", "lead", result, resp, "rA1", "rA", "rA", day(2, 9), "Done: 12 sources"), "T1"),
		withTask(msg("t2", "lead", "writer", task, req, "rB", "", "rB", day(3, 9), "Draft the intro"), "T2"),
		withTask(msg("t3", "lead", "qa", task, req, "rC", "", "rC", day(5, 9), "Check the figures"), "T3"),
		withStatus(withTask(msg("t3c", "qa", "lead", cmnt, resp, "rC1", "rC", "rC", day(5, 10), "cannot open the file"), "T3"), sb.MessageFailed),
		withStatus(withTask(msg("t3r", "qa", "lead", result, resp, "rC1", "rC", "rC", day(5, 11), "figures"), "T3"), sb.MessageFailed),
		withTask(msg("t4", "lead", "res", task, req, "rD", "", "rD", day(18, 9), "Find a second source"), "T4"),
		withStatus(withTask(msg("t5", "lead", "writer", task, req, "rE", "", "rE", day(6, 9), "Write the outro"), "T5"), sb.MessageDenied),
		// Chain F, depth 2, failed: lead asks res, res asks writer, the
		// answer times out.
		msg("f1", "lead", "res", ask, req, "rF", "", "rF", day(7, 9), "Which sources are peer reviewed?"),
		msg("f2", "res", "writer", ask, req, "rF1", "rF", "rF", day(7, 10), "Do you have the review list?"),
		withStatus(msg("f3", "writer", "res", ask, resp, "rF2", "rF1", "rF", day(7, 11), ""), sb.MessageTimeout),
		// Chain G, depth 2, delivered: lead asks qa, qa asks res.
		msg("g1", "lead", "qa", ask, req, "rG", "", "rG", day(8, 9), "Is chapter 2 checked?"),
		msg("g2", "qa", "res", ask, req, "rG1", "rG", "rG", day(8, 10), "Where is table 3 from?"),
		msg("g3", "res", "qa", ask, resp, "rG2", "rG1", "rG", day(8, 11), "From the 2024 survey."),
		msg("g4", "qa", "lead", ask, resp, "rG1", "rG", "rG", day(8, 12), "Yes."),
		// writer asks res the same question three times (case, punctuation
		// and word repeats differ); res asks it back once.
		msg("h1", "writer", "res", ask, req, "rH1", "", "rH1", day(9, 9), "What is the deadline for the Q3 report?"),
		msg("h2", "writer", "res", ask, req, "rH2", "", "rH2", day(12, 9), "what is the DEADLINE for the q3 report"),
		msg("h3", "writer", "res", ask, req, "rH3", "", "rH3", day(15, 9), "What... is the deadline for the Q3 report?? report!"),
		msg("h4", "res", "writer", ask, req, "rH4", "", "rH4", day(16, 9), "What is the deadline for the Q3 report?"),
		// Outside the default range (30 days before now).
		msg("old", "lead", "res", ask, req, "rOld", "", "rOld", time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC), "old question"),
	)
	h.receipt("lead", "rA", "", "rA", 0.10, 1000, 100)
	h.receipt("res", "rA1", "rA", "rA", 0.05, 500, 50)
	h.receipt("lead", "rF", "", "rF", 0.20, 2000, 200)
	h.receipt("res", "rF1", "rF", "rF", 0.30, 3000, 300)
	h.receipt("writer", "rF2", "rF1", "rF", 0.50, 5000, 500)
	h.receipt("lead", "rG", "", "rG", 0.02, 200, 20)
}

func TestListPairs(t *testing.T) {
	h := newHarness(t)
	seedTeam(h)
	type pair struct {
		Pair     string
		Messages float64
	}
	pairsOf := func(out map[string]any) []pair {
		var got []pair
		for _, p := range path(t, out, "pairs").([]any) {
			p := p.(map[string]any)
			got = append(got, pair{p["pair"].(string), p["messages"].(float64)})
		}
		return got
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want []pair
	}{
		{"all pairs, last 30 days", map[string]any{},
			[]pair{{"res|writer", 6}, {"lead|qa", 5}, {"lead|res", 4}, {"lead|writer", 2}, {"qa|res", 2}}},
		{"one agent", map[string]any{"agent": "writer"}, []pair{{"res|writer", 6}, {"lead|writer", 2}}},
		{"a longer range reaches January", map[string]any{"agent": "res", "since": "2026-01-01T00:00:00Z"},
			[]pair{{"res|writer", 6}, {"lead|res", 5}, {"qa|res", 2}}},
		{"a range with nothing", map[string]any{"since": "2025-01-01T00:00:00Z", "until": "2025-02-01T00:00:00Z"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := ok(t, "list_pairs", h.invoke("list_pairs", tc.args))
			if got := pairsOf(out); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("pairs = %v, want %v", got, tc.want)
			}
			if path(t, out, "coverage", "complete") != true {
				t.Errorf("coverage = %v, want complete", out["coverage"])
			}
		})
	}
	out := ok(t, "list_pairs", h.invoke("list_pairs", map[string]any{}))
	got := path(t, out, "pairs", 1)
	want := map[string]any{"pair": "lead|qa", "a": "lead", "b": "qa", "messages": 5.0,
		"first": "2026-03-05T09:00:00Z", "last": "2026-03-08T12:00:00Z",
		"byChannel": map[string]any{"task": 1.0, "task_comment": 1.0, "task_result": 1.0, "ask": 2.0},
		"failed":    2.0, "timeout": 0.0, "denied": 0.0}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("lead|qa:\n got %v\nwant %v", got, want)
	}
	if out["pairCount"] != 5.0 {
		t.Errorf("pairCount = %v, want 5", out["pairCount"])
	}
}

func TestStatsAnswersTheFiveQuestions(t *testing.T) {
	h := newHarness(t)
	seedTeam(h)
	out := ok(t, "stats", h.invoke("stats", map[string]any{}))

	t.Run("delegations end in a result, fail or fizzle", func(t *testing.T) {
		got := path(t, out, "delegations").(map[string]any)
		want := map[string]any{"total": 5.0, "withResult": 1.0, "blocked": 0.0, "failed": 2.0, "fizzled": 1.0, "open": 1.0,
			"fizzleDays": 7.0, "resultRate": 0.2, "fizzledTasks": []any{"T2"}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("delegations:\n got %v\nwant %v", got, want)
		}
	})
	t.Run("chain depth against failure rate", func(t *testing.T) {
		got := path(t, out, "depth")
		// Depth 1: chains A B C D E H1 H2 H3 H4 (C and E failed); depth 2:
		// F (timed out) and G.
		want := []any{
			map[string]any{"depth": 1.0, "chains": 9.0, "failed": 2.0, "failureRate": 0.222},
			map[string]any{"depth": 2.0, "chains": 2.0, "failed": 1.0, "failureRate": 0.5},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("depth:\n got %v\nwant %v", got, want)
		}
	})
	t.Run("pairs that repeat the same question", func(t *testing.T) {
		got := path(t, out, "repeatedQuestions").([]any)
		if len(got) != 1 {
			t.Fatalf("repeatedQuestions = %v, want one group", got)
		}
		g := got[0].(map[string]any)
		want := map[string]any{"from": "writer", "to": "res", "channel": "ask", "times": 3.0,
			"first": "2026-03-09T09:00:00Z", "last": "2026-03-15T09:00:00Z", "messageIds": []any{"h3", "h2", "h1"}}
		if !reflect.DeepEqual(g, want) {
			t.Fatalf("repeated question:\n got %v\nwant %v", g, want)
		}
	})
	t.Run("cost per chain from the receipts", func(t *testing.T) {
		cost := path(t, out, "chainCost").(map[string]any)
		if cost["chains"] != 11.0 || cost["costed"] != 11.0 {
			t.Fatalf("chainCost counts: %v", cost)
		}
		if got := num(t, cost["totalUsd"]); math.Abs(got-1.17) > 1e-9 {
			t.Errorf("totalUsd = %v, want 1.17", got)
		}
		top := path(t, cost, "perChain", 0).(map[string]any)
		if top["rootRunId"] != "rF" || math.Abs(num(t, top["costUsd"])-1.0) > 1e-9 || top["runs"] != 3.0 ||
			top["tokensIn"] != 10000.0 || top["depth"] != 2.0 || top["failed"] != true {
			t.Errorf("most expensive chain = %v, want rF: 3 runs, $1.00, 10000 tokens in, depth 2, failed", top)
		}
		second := path(t, cost, "perChain", 1).(map[string]any)
		if second["rootRunId"] != "rA" || math.Abs(num(t, second["costUsd"])-0.15) > 1e-9 {
			t.Errorf("second chain = %v, want rA at $0.15", second)
		}
	})
	t.Run("failed, timeout and denied hotspots by pair", func(t *testing.T) {
		got := path(t, out, "hotspots")
		want := []any{
			map[string]any{"pair": "lead|qa", "messages": 5.0, "failed": 2.0, "timeout": 0.0, "denied": 0.0, "notOkRate": 0.4},
			map[string]any{"pair": "res|writer", "messages": 6.0, "failed": 0.0, "timeout": 1.0, "denied": 0.0, "notOkRate": 0.167},
			map[string]any{"pair": "lead|writer", "messages": 2.0, "failed": 0.0, "timeout": 0.0, "denied": 1.0, "notOkRate": 0.5},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("hotspots:\n got %v\nwant %v", got, want)
		}
	})
	t.Run("no message text", func(t *testing.T) {
		b := fmt.Sprint(out)
		for _, text := range []string{"deadline", "tides", "peer reviewed", "survey"} {
			if contains(b, text) {
				t.Errorf("stats answers message text %q: %s", text, b)
			}
		}
	})
}

func TestStatsScopes(t *testing.T) {
	h := newHarness(t)
	seedTeam(h)
	for _, tc := range []struct {
		name        string
		args        map[string]any
		delegations float64
		messages    float64
	}{
		{"one pair", map[string]any{"a": "writer", "b": "lead"}, 2, 2},
		{"one agent", map[string]any{"agent": "qa"}, 1, 5 + 2},
		{"one channel", map[string]any{"channel": "task"}, 5, 5},
		{"a range", map[string]any{"since": "2026-03-05T00:00:00Z", "until": "2026-03-06T00:00:00Z"}, 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := ok(t, "stats", h.invoke("stats", tc.args))
			if got := path(t, out, "delegations", "total"); got != tc.delegations {
				t.Errorf("delegations = %v, want %v", got, tc.delegations)
			}
			if got := path(t, out, "coverage", "messages"); got != tc.messages {
				t.Errorf("messages analysed = %v, want %v", got, tc.messages)
			}
			if note := path(t, out, "delegations", "note"); (note != nil) != (tc.args["channel"] != nil) {
				t.Errorf("delegations note = %v; want one exactly when a channel filter hides results", note)
			}
		})
	}
}

// TestAnalysisIsBoundedAndSaysSo: past the cap the answer covers the
// newest messages and says from when on.
func TestAnalysisIsBoundedAndSaysSo(t *testing.T) {
	h := newHarness(t)
	defer commtool.SetAnalysedCap(3)()
	for i := range 5 {
		h.record(msg(fmt.Sprintf("m%d", i), "a", "b", ask, req, fmt.Sprintf("r%d", i), "", fmt.Sprintf("r%d", i), day(10+i, 9), "hello there"))
	}
	for _, action := range []string{"list_pairs", "stats"} {
		out := ok(t, action, h.invoke(action, map[string]any{}))
		cov := path(t, out, "coverage").(map[string]any)
		if cov["complete"] != false || cov["messages"] != 3.0 || cov["coveredSince"] != "2026-03-12T09:00:00Z" {
			t.Errorf("%s coverage = %v, want 3 messages from 2026-03-12T09:00:00Z, not complete", action, cov)
		}
		if !contains(fmt.Sprint(cov["note"]), "narrow") {
			t.Errorf("%s: the note does not say what to do: %v", action, cov["note"])
		}
	}
}

// A blocked task is no result: the taskboard marks its task_result row
// with the task status, and stats counts it apart.
func TestStatsCountsABlockedDelegationApart(t *testing.T) {
	h := newHarness(t)
	blockedRow := withTask(msg("b1r", "res", "lead", result, resp, "rB1", "rB", "rB", day(2, 9), "blocked: no access"), "B1")
	blockedRow.TaskStatus = sb.TaskBlocked
	h.record(
		withTask(msg("b1", "lead", "res", task, req, "rB", "", "rB", day(1, 9), "Collect sources"), "B1"),
		blockedRow,
		withTask(msg("d1", "lead", "res", task, req, "rD", "", "rD", day(3, 9), "Sum the table"), "D1"),
		withTask(msg("d1b", "res", "lead", result, resp, "rD1", "rD", "rD", day(3, 10), "blocked: which table?"), "D1"),
		withTask(msg("d1r", "res", "lead", result, resp, "rD2", "rD", "rD", day(4, 10), "42"), "D1"),
	)
	// d1b has no task status (rows written before rows carried one): it
	// counts as a result, and D1 ended in one anyway.
	out := ok(t, "stats", h.invoke("stats", map[string]any{}))
	got := path(t, out, "delegations").(map[string]any)
	if got["total"] != 2.0 || got["withResult"] != 1.0 || got["blocked"] != 1.0 || got["fizzled"] != 0.0 {
		t.Fatalf("delegations = %v, want 2 in all: 1 with a result, 1 blocked", got)
	}
}
