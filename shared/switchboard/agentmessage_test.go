package switchboard

import (
	"context"
	"fmt"
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
		{"stop words and single letters out", "the a I x is über Straße", 0, []string{"straße"}},
		{"German stop words out", "Die Rechnung ist nicht da, aber sie kommt", 0, []string{"rechnung", "kommt"}},
		{"longer than 64 bytes out", strings.Repeat("y", 65) + " ok", 0, []string{"ok"}},
		{"limit", "one two three four", 2, []string{"one", "two"}},
		{"nothing", "", 0, nil},
	} {
		if got := SearchTerms(tc.text, tc.limit); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestIndexTermsKeepsTheLongestWordsOfALongText(t *testing.T) {
	short := "a few words, fewer than the cap"
	if got, want := IndexTerms(short), SearchTerms(short, 0); !reflect.DeepEqual(got, want) {
		t.Errorf("short text: got %q, want its SearchTerms %q", got, want)
	}
	// 30 words of 5 letters, then 20 of 8 and 10 of 3: the 40 longest are
	// the 20 of 8 and the first 20 of 5, in order of appearance.
	var words, want []string
	for i := range 60 {
		var w string
		switch {
		case i < 30:
			w = fmt.Sprintf("w%04d", i)
		case i < 50:
			w = fmt.Sprintf("long%04d", i)
		default:
			w = fmt.Sprintf("s%02d", i)
		}
		words = append(words, w)
		if i < 20 || (i >= 30 && i < 50) {
			want = append(want, w)
		}
	}
	if got := IndexTerms(strings.Join(words, " ")); !reflect.DeepEqual(got, want) {
		t.Errorf("long text: got %d words %q, want %d %q", len(got), got, len(want), want)
	}
}

func TestQueryTermsSaysWhatIsWrong(t *testing.T) {
	for _, tc := range []struct {
		text, want string // want: words joined, or the error's message
	}{
		{"The INVOICE und die Rechnung", "invoice rechnung"},
		{"the and", `"the and" is too common to search for; add a rarer word`},
		{"Was ist das", `"Was ist das" is too common to search for; add a rarer word`},
		{"x y", "search needs at least one word of two or more letters or digits"},
		{"one two three four five six seven eight nine", "search takes at most 8 words"},
	} {
		terms, err := QueryTerms(tc.text)
		got := strings.Join(terms, " ")
		if err != nil {
			if ErrorCode(err) != EINVALID {
				t.Errorf("%q: %v, want EINVALID", tc.text, err)
			}
			got = ErrorMessage(err)
		}
		if got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.text, got, tc.want)
		}
	}
}

type recordingLog struct{ got []AgentMessage }

func (r *recordingLog) Record(_ context.Context, m AgentMessage) error {
	r.got = append(r.got, m)
	return nil
}

func (r *recordingLog) RecordAll(_ context.Context, b MessageBatch) error {
	r.got = append(r.got, b.Messages...)
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
	if err := s.RecordAll(t.Context(), MessageBatch{Messages: ms}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(log.got, []AgentMessage{want}) {
		t.Fatalf("RecordAll recorded %+v, want %+v", log.got, want)
	}
	if ms[0].Content != m.Content {
		t.Errorf("RecordAll scrubbed the caller's slice: %q", ms[0].Content)
	}
}
