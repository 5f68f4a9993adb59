package switchboard

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPairKeyIsOrderFree(t *testing.T) {
	if PairKey("bob", "alice") != "alice|bob" || PairKey("alice", "bob") != "alice|bob" {
		t.Fatalf("PairKey: %q, %q", PairKey("bob", "alice"), PairKey("alice", "bob"))
	}
}

func TestSearchTerms(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		limit      int
		want       []string
	}{
		{"lower-cased, distinct, in order", "Invoice INVOICE q3 Q3", 0, []string{"invoice", "q3"}},
		{"punctuation and paths split", "shared:finance/q3.pdf, (done)", 0, []string{"shared", "finance", "q3", "pdf", "done"}},
		{"stop words and single letters out", "the a I x is über", 0, []string{"über"}},
		{"longer than 64 bytes out", strings.Repeat("y", 65) + " ok", 0, []string{"ok"}},
		{"limit", "one two three four", 2, []string{"one", "two"}},
		{"nothing", "", 0, nil},
	} {
		if got := SearchTerms(tc.text, tc.limit); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

type recordingLog struct{ got []AgentMessage }

func (r *recordingLog) Record(_ context.Context, m AgentMessage) error {
	r.got = append(r.got, m)
	return nil
}

func (r *recordingLog) RecordAll(_ context.Context, ms []AgentMessage, _ *Receipt) error {
	r.got = append(r.got, ms...)
	return nil
}

func TestScrubbingMessagesScrubsContentOnly(t *testing.T) {
	log := &recordingLog{}
	s := ScrubbingMessages{Log: log, Scrub: func(s string) string { return strings.ReplaceAll(s, "hunter2", "[secret]") }}
	m := AgentMessage{ID: "hunter2-id", From: "alice", To: "bob", Content: "the password is hunter2",
		Reason: "denied: hunter2", RunID: "r", RootRunID: "r", OccurredAt: time.Now()}
	if err := s.Record(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	want := m
	want.Content, want.Reason = "the password is [secret]", "denied: [secret]"
	if !reflect.DeepEqual(log.got, []AgentMessage{want}) {
		t.Fatalf("recorded %+v, want %+v", log.got, want)
	}
	log.got = nil
	ms := []AgentMessage{m}
	if err := s.RecordAll(t.Context(), ms, nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(log.got, []AgentMessage{want}) {
		t.Fatalf("RecordAll recorded %+v, want %+v", log.got, want)
	}
	if ms[0].Content != m.Content {
		t.Errorf("RecordAll scrubbed the caller's slice: %q", ms[0].Content)
	}
}
