package switchboard

import (
	"testing"
	"time"
)

// TestDelegations: each hand-over's outcome from the results that came
// back, by task id, or by chain and pair when the task has none.
func TestDelegations(t *testing.T) {
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	old, young := now.Add(-5*24*time.Hour), now.Add(-time.Hour)
	task := func(id, taskID string, at time.Time, st MessageStatus) AgentMessage {
		return AgentMessage{ID: id, From: "ada", To: "bob", Channel: ChannelTask, Direction: DirectionRequest, TaskID: taskID,
			RootRunID: "root-" + id, Status: st, OccurredAt: at}
	}
	result := func(taskID, root string, ts TaskStatus, st MessageStatus) AgentMessage {
		return AgentMessage{ID: "r-" + taskID + root, From: "bob", To: "ada", Channel: ChannelTaskResult, Direction: DirectionResponse,
			TaskID: taskID, RootRunID: root, TaskStatus: ts, Status: st, OccurredAt: now}
	}
	ms := []AgentMessage{
		task("done", "T1", old, MessageDelivered), result("T1", "x", TaskDone, MessageDelivered),
		task("blocked", "T2", old, MessageDelivered), result("T2", "x", TaskBlocked, MessageDelivered),
		task("unblocked", "T3", old, MessageDelivered), result("T3", "x", TaskBlocked, MessageDelivered), result("T3", "y", TaskDone, MessageDelivered),
		task("refused", "T4", old, MessageDenied),
		task("lost-result", "T5", old, MessageDelivered), result("T5", "x", TaskDone, MessageFailed),
		task("fizzled", "T6", old, MessageDelivered),
		task("open", "T7", young, MessageDelivered),
		task("no-id", "", old, MessageDelivered), result("", "root-no-id", "", MessageDelivered),
	}
	want := map[string]DelegationOutcome{"done": DelegationResult, "blocked": DelegationBlocked, "unblocked": DelegationResult,
		"refused": DelegationFailed, "lost-result": DelegationFailed, "fizzled": DelegationFizzled, "open": DelegationOpen, "no-id": DelegationResult}
	got := Delegations(ms, now.Add(-3*24*time.Hour))
	if len(got) != len(want) {
		t.Fatalf("%d delegations, want %d", len(got), len(want))
	}
	for _, d := range got {
		if d.Outcome != want[d.Message.ID] {
			t.Errorf("%s: %s, want %s", d.Message.ID, d.Outcome, want[d.Message.ID])
		}
	}
}

// TestRepeatedQuestions: the same words from one agent to another, in any
// case and punctuation, count as one question asked again; answers,
// comments and another pair do not.
func TestRepeatedQuestions(t *testing.T) {
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	ask := func(from, to, text string, ch Channel, dir Direction, i int) AgentMessage {
		return AgentMessage{ID: "m" + string(rune('a'+i)), From: from, To: to, Channel: ch, Direction: dir, Content: text,
			OccurredAt: at.Add(time.Duration(i) * time.Minute)}
	}
	ms := []AgentMessage{
		ask("ada", "bob", "Where is the contract?", ChannelAsk, DirectionRequest, 0),
		ask("ada", "bob", "where is THE contract", ChannelAsk, DirectionRequest, 1),
		ask("ada", "bob", "Where is the contract?", ChannelAsk, DirectionResponse, 2),
		ask("ada", "cyd", "Where is the contract?", ChannelAsk, DirectionRequest, 3),
		ask("ada", "bob", "Where is the contract?", ChannelTaskComment, DirectionRequest, 4),
		ask("ada", "bob", "Where is the contract!", ChannelTask, DirectionRequest, 5),
		ask("bob", "ada", "Lunch?", ChannelAsk, DirectionRequest, 6),
	}
	got := RepeatedQuestions(ms)
	if len(got) != 1 {
		t.Fatalf("RepeatedQuestions = %+v, want one group", got)
	}
	g := got[0]
	if g.From != "ada" || g.To != "bob" || len(g.Messages) != 3 || !g.First.Equal(at) || !g.Last.Equal(at.Add(5*time.Minute)) {
		t.Errorf("group = %s→%s, %d messages, %v–%v; want ada→bob, 3 (two asks and the task), 09:00–09:05", g.From, g.To, len(g.Messages), g.First, g.Last)
	}
}
