package wake_test

// Tests that expose issues in shared/usecases/wake/webhook.go. They use the helpers
// of the committed webhook_test.go. Kept out of the commit.

import (
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/rocketchat/rcfake"
)

// A mention at the end of a sentence ("…, @agent-hermes.") is in the
// message's mentions[] (rcfake: "a trailing dot belongs to the sentence"),
// but mentionsInText treats '.' as part of a username and drops the
// delivery: the agent is not woken by the webhook (only a poll would catch
// it, a minute later, if the poll runs at all).
func TestReceiverMentionAtSentenceEnd(t *testing.T) {
	e := newHookEnv(t, []string{hookToken}, nil, nil)
	m := e.post(t, "richard", e.general, "Kannst du das bitte prüfen, @agent-hermes.", rcfake.PostOptions{})
	if len(m.Mentions) != 1 || m.Mentions[0] != "agent-hermes" {
		t.Fatalf("precondition: rcfake mentions = %v", m.Mentions)
	}
	checkOK(t, e.deliver(t, e.payload(t, m, nil)))
	if e.disp.Len() != 1 {
		t.Errorf("%d jobs for a message whose mentions[] names the agent, want 1", e.disp.Len())
	}
}

// Rocket.Chat's payload timestamp is message.ts, which an edit does not
// change. The edit
// claim key is "...#edit#"+timestamp, so only the FIRST edit of a message
// wakes again; every later edit is taken for a duplicate.
func TestReceiverSecondEditWakesAgain(t *testing.T) {
	e := newHookEnv(t, []string{hookToken}, nil, nil)
	m := e.post(t, "richard", e.general, "@agent-hermes v1", rcfake.PostOptions{})
	checkOK(t, e.deliver(t, e.payload(t, m, nil)))
	for i, text := range []string{"@agent-hermes v2", "@agent-hermes v3"} {
		e.clk.Add(time.Minute)
		if err := e.rc.Edit(m.ID, text); err != nil {
			t.Fatal(err)
		}
		checkOK(t, e.deliver(t, e.payload(t, m, nil)))
		if got, want := e.disp.Len(), i+2; got != want {
			t.Errorf("after edit %d: %d jobs, want %d", i+1, got, want)
		}
	}
}
