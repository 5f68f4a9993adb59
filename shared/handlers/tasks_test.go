package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/platform/taskerr"
	"github.com/switchboard-dev/switchboard/shared/usecases/askagent"
)

// taskEventType is the payload type of a sample that is a state machine
// Task's (it has an op), or nil for a function's own event.
func taskEventType(t *testing.T, raw []byte) any {
	t.Helper()
	var head struct {
		Op string `json:"op"`
	}
	_ = json.Unmarshal(raw, &head)
	switch head.Op {
	case "":
		return nil
	case askagent.OpGuard:
		return &askagent.Question{}
	case askagent.OpRecord:
		return &askagent.Row{}
	case askagent.OpRun:
		return &askagent.Ask{}
	}
	t.Fatalf("sample op %q: no payload type known to this test; add it to taskEventType", head.Op)
	return nil
}

// The ask-agent machine's payloads run through the same handler the
// function hands to lambda.Start (its own events keep working: see
// TestEventsRunThroughHandler): the guard allows Atlas to ask Hermes, the
// record Task writes a failed answer's row with the question's (a retry of
// either succeeds too), and the answering Task records the question and
// runs Hermes on it.
func TestTaskEventsRunThroughHandler(t *testing.T) {
	ran := 0
	for _, ev := range loadEvents(t) {
		if taskEventType(t, ev.raw) == nil {
			continue
		}
		ran++
		t.Run(ev.name(), func(t *testing.T) {
			a := newApp(t)
			resp, err := invoke(t, a, ev.fn, ev.raw)
			if err != nil {
				t.Fatalf("Invoke: %v", err)
			}
			switch v := taskEventType(t, ev.raw).(type) {
			case *askagent.Question, *askagent.Row:
				if string(resp) != "null" {
					t.Errorf("response %s, want null", resp)
				}
				if _, err := invoke(t, a, ev.fn, ev.raw); err != nil {
					t.Errorf("a retried %T Task failed: %v", v, err)
				}
			case *askagent.Ask:
				var reply askagent.Reply
				if err := json.Unmarshal(resp, &reply); err != nil {
					t.Fatalf("response %s: %v", resp, err)
				}
				_ = json.Unmarshal(ev.raw, v)
				if !strings.Contains(reply.Answer, "Hermes") || reply.RunID == "" {
					t.Errorf("reply %+v, want Hermes's answer with its run", reply)
				}
				cost, err := a.Store().ChainCost(context.Background(), v.RootRunID)
				if err != nil || cost.Runs != 1 || cost.Receipts[0].Run.ParentRunID != v.ParentRunID {
					t.Errorf("chain %+v (%v), want Hermes's run as the asking run's child", cost, err)
				}
			}
		})
	}
	if ran == 0 {
		t.Fatal("no Task sample under events/")
	}
}

// A refusal and an unknown op come back as the named error types the
// machine's Catch matches, unwrapped.
func TestTaskErrorsKeepTheirNames(t *testing.T) {
	a := newApp(t)
	_, err := invoke(t, a, "tools", []byte(`{"op":"ask.guard","from":"hermes","to":"ghost","runId":"r","callPath":["hermes"],`+
		`"executionId":"arn:exec:1","askedAt":"2026-12-02T10:15:00Z"}`))
	var denied *taskerr.DeniedError
	if !errors.As(err, &denied) || !strings.Contains(denied.Reason, `there is no agent "ghost"`) {
		t.Errorf("hermes asking an agent that does not exist = %#v, want a DeniedError", err)
	}
	_, err = invoke(t, a, "agent-worker", []byte(`{"op":"nope"}`))
	var perm *taskerr.PermanentError
	if !errors.As(err, &perm) || !strings.Contains(perm.Message, `no task "nope"; it serves ask.run`) {
		t.Errorf("unknown op = %#v, want a PermanentError naming the ops", err)
	}
}
