package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/memstore"
	"github.com/switchboard-dev/switchboard/shared/platform/taskerr"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/pipeline"
	"github.com/switchboard-dev/switchboard/shared/usecases/router"
)

// scriptedTools is the Nextcloud and RocketChat tools' typed services:
// each "Tool.action" answers its next scripted result or error (the last
// one again when the script runs out), and the calls are kept with the
// arguments as the services send them.
type scriptedTools struct {
	mu      sync.Mutex
	answers map[string][]any
	calls   []sb.ToolCall
}

var (
	_ sb.NextcloudTool = (*scriptedTools)(nil)
	_ sb.ChatTool      = (*scriptedTools)(nil)
)

func (s *scriptedTools) next(by sb.ToolCall, tool, action string, args any) any {
	raw, _ := json.Marshal(args)
	by.Tool, by.Action, by.Args = tool, action, raw
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, by)
	k := tool + "." + action
	q := s.answers[k]
	if len(q) == 0 {
		return sb.E("scripted", sb.EINTERNAL, "no answer scripted for "+k)
	}
	if len(q) > 1 {
		s.answers[k] = q[1:]
	}
	return q[0]
}

// answer is a scripted answer as a service's result.
func answer[T any](a any) (T, error) {
	var zero T
	if err, ok := a.(error); ok {
		return zero, err
	}
	v, _ := a.(T)
	return v, nil
}

func (s *scriptedTools) Convert(_ context.Context, by sb.ToolCall, a sb.ConvertArgs) (sb.FileConverted, error) {
	return answer[sb.FileConverted](s.next(by, "Nextcloud", "convert", a))
}

func (s *scriptedTools) Upload(_ context.Context, by sb.ToolCall, a sb.UploadArgs) (sb.FileUploaded, error) {
	return answer[sb.FileUploaded](s.next(by, "Nextcloud", "upload", a))
}

func (s *scriptedTools) Share(_ context.Context, by sb.ToolCall, a sb.ShareArgs) (sb.FileShared, error) {
	return answer[sb.FileShared](s.next(by, "Nextcloud", "share", a))
}

func (s *scriptedTools) Shares(_ context.Context, by sb.ToolCall, path string) ([]sb.FileShared, error) {
	return answer[[]sb.FileShared](s.next(by, "Nextcloud", "shares", map[string]string{"path": path}))
}

func (s *scriptedTools) SendMessage(_ context.Context, by sb.ToolCall, a sb.ChatPostArgs) (sb.ChatPosted, error) {
	return answer[sb.ChatPosted](s.next(by, "RocketChat", "send_message", a))
}

func (s *scriptedTools) Reply(_ context.Context, by sb.ToolCall, a sb.ChatPostArgs) (sb.ChatPosted, error) {
	return answer[sb.ChatPosted](s.next(by, "RocketChat", "reply", a))
}

func (s *scriptedTools) AttachText(context.Context, sb.ToolCall, sb.ChatTextFile) (sb.ChatPosted, error) {
	return sb.ChatPosted{}, sb.E("test", sb.EINTERNAL, "the pipeline attaches no texts")
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
func newSteps(answers map[string][]any) (*pipeline.Steps, *scriptedTools, *toldChannel) {
	tools := &scriptedTools{answers: answers}
	told := &toldChannel{}
	store := memstore.New()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return &pipeline.Steps{Files: tools, Chat: tools, KV: store.KV(), Notify: router.New([]router.Channel{told}, store, log),
		Waker: &jobRecorder{}, Audit: store, Log: log}, tools, told
}

// answered is what a server answered, as its adapter keeps it in the
// chain of the tool's error.
type answered int

func (a answered) Error() string          { return fmt.Sprintf("HTTP %d", int(a)) }
func (a answered) RemoteStatus() int      { return int(a) }
func (a answered) RemoteEndpoint() string { return "POST /ocs/v2.php/apps/files_sharing/api/v1/shares" }
func (a answered) RemoteCode() int        { return 0 }

// toolErr is a tool's error: its code and message, the server's status
// (0: none answered) and the wait it asked for.
func toolErr(code string, status int, wait time.Duration, msg string) error {
	e := &sb.Error{Op: "nctool.share", Code: code, Message: msg, RetryAfter: wait}
	if status != 0 {
		e.Err = answered(status)
	}
	return e
}

// Nextcloud 34's share limit: a bare 429, no Retry-After.
var (
	bare429   = toolErr(sb.ERATELIMITED, 429, 0, "cannot share /reports/q3.csv: rate limited")
	codeOnly  = toolErr(sb.ERATELIMITED, 0, 0, "cannot share /reports/q3.csv: rate limited")
	asked30   = toolErr(sb.ERATELIMITED, 429, 30*time.Second, "cannot share /reports/q3.csv: rate limited")
	sharedOK  = sb.FileShared{ID: "7", Type: sb.ShareUser, ShareWith: "richard", InternalURL: "https://cloud.example.org/f/42"}
	shareStep = pipeline.StepInput{Op: pipeline.OpShare, Execution: "doc-hermes-1", State: pipeline.State{
		Delivery: pipeline.Delivery{AgentID: agentID, Run: run, Share: &pipeline.Share{With: "richard"}, HasShare: true},
		Done:     pipeline.Progress{Uploaded: "/reports/q3.csv"},
	}}
)

// A share the limit refuses without Retry-After waits 60, 120, 240, 240 s
// (the default schedule), then fails for good; the human hears of the
// wait once.
func TestShareLimitScheduleThenPermanentFailure(t *testing.T) {
	steps, tools, told := newSteps(map[string][]any{"Nextcloud.share": {bare429, codeOnly, bare429}})
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
	steps, _, told := newSteps(map[string][]any{"Nextcloud.share": {asked30, bare429, sharedOK}})
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
		err  error
		want string
	}{
		{"503", toolErr(sb.EUNAVAILABLE, 503, 0, "unavailable"), "*taskerr.TransientError"},
		{"403", toolErr(sb.EFORBIDDEN, 403, 0, "forbidden"), "*taskerr.PermanentError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps, _, told := newSteps(map[string][]any{"Nextcloud.share": {tc.err}})
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

// The upload's file id and link go into Progress; the post offers the
// share's link, else the file's internal link with its path, else says
// why there is no link (an agent without baseUrl gets none).
func TestPostLinks(t *testing.T) {
	tests := []struct {
		name    string
		upload  sb.FileUploaded
		share   *pipeline.Progress // the share step's result, nil = no share
		message string
		want    []string
		wantNot []string
		wantID  int64
	}{
		{name: "no share, link from the upload", upload: sb.FileUploaded{Path: "/reports/q3.md", FileID: 42, Link: "https://cloud.example.org/f/42"},
			want: []string{"The document is ready: /reports/q3.md — https://cloud.example.org/f/42"}, wantID: 42},
		{name: "no share, link after the message", upload: sb.FileUploaded{Path: "/reports/q3.md", FileID: 42, Link: "https://cloud.example.org/f/42"},
			message: "Q3 numbers", want: []string{"Q3 numbers\n/reports/q3.md — https://cloud.example.org/f/42"}, wantID: 42},
		{name: "no share, no link without baseUrl", upload: sb.FileUploaded{Path: "/reports/q3.md", FileID: 42},
			want:    []string{"saved to /reports/q3.md in the agent's Nextcloud (no share was asked for, so there is no link)"},
			wantNot: []string{"/f/"}, wantID: 42},
		{name: "public link wins", upload: sb.FileUploaded{Path: "/reports/q3.md", FileID: 42, Link: "https://cloud.example.org/f/42"},
			share: &pipeline.Progress{ShareID: "9", Link: "https://cloud.example.org/s/AbC"}, message: "Q3 for everyone",
			want: []string{"Q3 for everyone\nhttps://cloud.example.org/s/AbC"}, wantNot: []string{"/f/42"}, wantID: 42},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			steps, tools, _ := newSteps(map[string][]any{
				"Nextcloud.upload":        {tc.upload},
				"RocketChat.send_message": {sb.ChatPosted{MessageID: "m1"}},
			})
			in := pipeline.StepInput{Op: pipeline.OpUpload, Execution: "doc-hermes-2", State: pipeline.State{
				Delivery: pipeline.Delivery{AgentID: agentID, Run: run, LocalPath: "personal:q3.md", Message: tc.message}}}
			up, err := steps.Upload(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if up.Done.FileID != tc.wantID || up.Done.FileLink != tc.upload.Link || up.Done.Uploaded != tc.upload.Path || up.Done.Renamed {
				t.Errorf("upload done %+v, want %s with file id %d and link %q", up.Done, tc.upload.Path, tc.wantID, tc.upload.Link)
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
