package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/taskerr"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/pipeline"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// scriptedTools answers each "Tool.action" with its next scripted
// envelope (the last one again when the script runs out) and keeps the calls.
type scriptedTools struct {
	mu      sync.Mutex
	answers map[string][]sb.Envelope
	calls   []sb.ToolCall
}

func (s *scriptedTools) Invoke(_ context.Context, call sb.ToolCall) sb.Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, call)
	k := call.Tool + "." + call.Action
	q := s.answers[k]
	if len(q) == 0 {
		return sb.Envelope{Status: "error", Error: "no answer scripted for " + k}
	}
	env := q[0]
	if len(q) > 1 {
		s.answers[k] = q[1:]
	}
	return env
}

// args returns the arguments of the calls of "Tool.action".
func (s *scriptedTools) args(t *testing.T, k string) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, c := range s.calls {
		if c.Tool+"."+c.Action == k {
			var m map[string]any
			if err := json.Unmarshal(c.Args, &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	return out
}

// newSteps is Steps over scripted tools, an in-memory state table and the
// real router in front of one channel.
func newSteps(answers map[string][]sb.Envelope) (*pipeline.Steps, *scriptedTools, *toldChannel) {
	tools := &scriptedTools{answers: answers}
	told := &toldChannel{}
	store := memstore.New()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return &pipeline.Steps{Tools: tools, KV: store.KV(), Notify: router.New([]router.Channel{told}, store, log),
		Waker: &jobRecorder{}, Audit: store, Log: log}, tools, told
}

// Nextcloud 34's share limit: a bare 429, no Retry-After.
var (
	bare429   = sb.Envelope{Status: "error", Error: "cannot share /reports/q3.csv: rate limited", HTTPStatus: 429, Data: map[string]any{"code": sb.ERATELIMITED}}
	codeOnly  = sb.Envelope{Status: "error", Error: "cannot share /reports/q3.csv: rate limited", Data: map[string]any{"code": sb.ERATELIMITED}}
	asked30   = sb.Envelope{Status: "error", Error: "cannot share /reports/q3.csv: rate limited", HTTPStatus: 429, Data: map[string]any{"code": sb.ERATELIMITED, "retryAfterSeconds": 30}}
	sharedOK  = sb.Envelope{Status: "ok", Data: map[string]any{"share_id": "7", "internal_url": "https://cloud.example.org/f/42"}}
	shareStep = pipeline.StepInput{Op: pipeline.OpShare, Execution: "doc-hermes-1", State: pipeline.State{
		Delivery: pipeline.Delivery{AgentID: agentID, Run: run, Share: &pipeline.Share{With: "richard"}, HasShare: true},
		Done:     pipeline.Progress{Uploaded: "/reports/q3.csv"},
	}}
)

// A share the limit refuses without Retry-After waits 60, 120, 240, 240 s
// (the default schedule), then fails for good; the human hears of the
// wait once.
func TestShareLimitScheduleThenPermanentFailure(t *testing.T) {
	steps, tools, told := newSteps(map[string][]sb.Envelope{"Nextcloud.share": {bare429, codeOnly, bare429}})
	var waits []int
	for range 4 {
		st, err := steps.Share(context.Background(), shareStep)
		if err != nil {
			t.Fatalf("wait %d: %v, want a wait", len(waits)+1, err)
		}
		waits = append(waits, st.Wait)
	}
	if want := []int{60, 120, 240, 240}; !slices.Equal(waits, want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
	_, err := steps.Share(context.Background(), shareStep)
	var perm *taskerr.PermanentError
	if !errors.As(err, &perm) || !strings.Contains(err.Error(), "after 4 waits of 11 min in all") || !strings.Contains(err.Error(), "Nextcloud.share") {
		t.Errorf("after the schedule: %T %v, want a PermanentError saying it waited 4 times, 11 min, and what to do", err, err)
	}
	if n := len(tools.args(t, "Nextcloud.share")); n != 5 {
		t.Errorf("%d share calls, want 5 (one per try)", n)
	}
	got := told.all()
	if len(got) != 1 {
		t.Fatalf("human told %d times %q, want once", len(got), got)
	}
	for _, want := range []string{"doc-hermes-1", "/reports/q3.csv is uploaded", "sharing it with richard waits for Nextcloud's share limit",
		"tried again in 1 min", "up to 11 min in all"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("notice %q does not say %q", got[0], want)
		}
	}
}

// A 429 with Retry-After waits as long as Nextcloud asked; a bare one
// next takes the schedule's wait for that try; then the share succeeds.
func TestShareLimitRetryAfterIsKept(t *testing.T) {
	steps, _, told := newSteps(map[string][]sb.Envelope{"Nextcloud.share": {asked30, bare429, sharedOK}})
	steps.ShareLimitWaitSeconds = 2
	var waits []int
	var last pipeline.State
	for range 3 {
		st, err := steps.Share(context.Background(), shareStep)
		if err != nil {
			t.Fatal(err)
		}
		waits, last = append(waits, st.Wait), st
	}
	if want := []int{30, 4, 0}; !slices.Equal(waits, want) {
		t.Errorf("waits %v, want %v (Retry-After, then the schedule's second wait of a 2 s base, then go on)", waits, want)
	}
	if last.Done.ShareID != "7" || last.Done.Link != "https://cloud.example.org/f/42" {
		t.Errorf("done %+v, want the share", last.Done)
	}
	if got := told.all(); len(got) != 1 || !strings.Contains(got[0], "Nextcloud asked to wait 30 s") {
		t.Errorf("human told %q, want once, with the wait Nextcloud asked for", got)
	}
	// The step is done: a repeated Task answers the stored share, calling nothing.
	if st, err := steps.Share(context.Background(), shareStep); err != nil || st.Done.ShareID != "7" || st.Wait != 0 {
		t.Errorf("repeated Share = %+v, %v; want the stored share", st, err)
	}
}

// Other failures are not rate limits: a 503 without Retry-After is
// retried by the machine (TransientError), a 403 caught (PermanentError).
func TestShareOtherFailuresAreNoWait(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  sb.Envelope
		want string
	}{
		{"503", sb.Envelope{Status: "error", Error: "unavailable", HTTPStatus: 503, Data: map[string]any{"code": sb.EUNAVAILABLE}}, "*taskerr.TransientError"},
		{"403", sb.Envelope{Status: "error", Error: "forbidden", HTTPStatus: 403, Data: map[string]any{"code": sb.EFORBIDDEN}}, "*taskerr.PermanentError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps, _, told := newSteps(map[string][]sb.Envelope{"Nextcloud.share": {tc.env}})
			_, err := steps.Share(context.Background(), shareStep)
			var tr *taskerr.TransientError
			var pe *taskerr.PermanentError
			got := "nil"
			switch {
			case errors.As(err, &tr):
				got = "*taskerr.TransientError"
			case errors.As(err, &pe):
				got = "*taskerr.PermanentError"
			}
			if got != tc.want {
				t.Errorf("Share = %v (%s), want %s", err, got, tc.want)
			}
			if n := len(told.all()); n != 0 {
				t.Errorf("human told %d times, want no wait notice", n)
			}
		})
	}
}

// The upload's file_id and link go into Progress; the post offers the
// share's link, else the file's internal link with its path, else says
// why there is no link (an older tool answers neither).
func TestPostLinks(t *testing.T) {
	tests := []struct {
		name    string
		upload  map[string]any
		share   *pipeline.Progress // the share step's result, nil = no share
		message string
		want    []string
		wantNot []string
		wantID  int64
	}{
		{name: "no share, link from the upload", upload: map[string]any{"path": "/reports/q3.md", "file_id": int64(42), "link": "https://cloud.example.org/f/42"},
			want: []string{"The document is ready: /reports/q3.md — https://cloud.example.org/f/42"}, wantID: 42},
		{name: "no share, link after JSON (file_id a float)", upload: map[string]any{"path": "/reports/q3.md", "file_id": float64(42), "link": "https://cloud.example.org/f/42"},
			message: "Q3 numbers", want: []string{"Q3 numbers\n/reports/q3.md — https://cloud.example.org/f/42"}, wantID: 42},
		{name: "no share, older tool without link", upload: map[string]any{"path": "/reports/q3.md", "fileid": int64(42)},
			want:    []string{"saved to /reports/q3.md in the agent's Nextcloud (no share was asked for, so there is no link)"},
			wantNot: []string{"/f/"}, wantID: 42},
		{name: "public link wins", upload: map[string]any{"path": "/reports/q3.md", "file_id": int64(42), "link": "https://cloud.example.org/f/42"},
			share: &pipeline.Progress{ShareID: "9", Link: "https://cloud.example.org/s/AbC"}, message: "Q3 for everyone",
			want: []string{"Q3 for everyone\nhttps://cloud.example.org/s/AbC"}, wantNot: []string{"/f/42"}, wantID: 42},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			steps, tools, _ := newSteps(map[string][]sb.Envelope{
				"Nextcloud.upload":        {{Status: "ok", Data: tc.upload}},
				"RocketChat.send_message": {{Status: "ok", Data: map[string]any{"messageId": "m1"}}},
			})
			in := pipeline.StepInput{Op: pipeline.OpUpload, Execution: "doc-hermes-2", State: pipeline.State{
				Delivery: pipeline.Delivery{AgentID: agentID, Run: run, LocalPath: "personal:q3.md", Message: tc.message}}}
			up, err := steps.Upload(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if up.Done.FileID != tc.wantID || up.Done.FileLink != str(tc.upload["link"]) {
				t.Errorf("upload done %+v, want file id %d and link %q", up.Done, tc.wantID, str(tc.upload["link"]))
			}
			// The agent's follow-up says where the file is, with its link.
			facts := pipeline.Facts(in.Execution, pipeline.Outcome{Status: "delivered", Done: up.Done})
			if l := up.Done.FileLink; l != "" && !strings.Contains(facts, "uploaded to /reports/q3.md ("+l+")") {
				t.Errorf("facts %q, want the file's link with its path", facts)
			}
			in.Op, in.State = pipeline.OpPost, up
			if tc.share != nil {
				in.Done.ShareID, in.Done.Link = tc.share.ShareID, tc.share.Link
			}
			if _, err := steps.Post(context.Background(), in); err != nil {
				t.Fatal(err)
			}
			posts := tools.args(t, "RocketChat.send_message")
			if len(posts) != 1 {
				t.Fatalf("%d posts, want 1", len(posts))
			}
			text := str(posts[0]["text"])
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("posted %q, want %q in it", text, w)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(text, w) {
					t.Errorf("posted %q, want no %q", text, w)
				}
			}
		})
	}
}

// Progress stays readable both ways: the new fields are left out when
// empty, and a marker written before them decodes.
func TestProgressJSONBackwardsCompatible(t *testing.T) {
	b, _ := json.Marshal(pipeline.Progress{Uploaded: "/reports/q3.md"})
	if string(b) != `{"uploaded":"/reports/q3.md"}` {
		t.Errorf("Progress JSON %s, want only the set field", b)
	}
	var p pipeline.Progress
	if err := json.Unmarshal([]byte(`{"uploaded":"/reports/q3.md","shareId":"7","link":"https://cloud.example.org/f/1"}`), &p); err != nil || p.Link == "" || p.FileLink != "" {
		t.Errorf("old Progress decoded as %+v, %v", p, err)
	}
	b, _ = json.Marshal(pipeline.Progress{Uploaded: "/r.md", FileID: 42, FileLink: "https://cloud.example.org/f/42"})
	if !strings.Contains(string(b), `"fileId":42`) || !strings.Contains(string(b), `"fileLink":"https://cloud.example.org/f/42"`) {
		t.Errorf("Progress JSON %s, want fileId and fileLink", b)
	}
}

func str(v any) string { s, _ := v.(string); return s }
