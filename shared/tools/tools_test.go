package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools"
	"github.com/switchboard-dev/switchboard/shared/tools/staging"
)

func TestInvoke(t *testing.T) {
	tests := []struct {
		name         string
		call         sb.ToolCall
		wantStatus   string
		wantOutcome  string
		wantDecision sb.Decision
		wantErr      []string // substrings of the envelope's error
		wantRuns     int32    // how often the tool itself ran
		wantData     map[string]any
	}{
		{
			name: "auto call runs", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(`{"text":"hi"}`)},
			wantStatus: "ok", wantOutcome: sb.OutcomeOK, wantDecision: sb.DecisionAuto, wantRuns: 1,
			wantData: map[string]any{"echo": "hi"},
		},
		{
			name: "empty args are an empty object", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "ping"},
			wantStatus: "ok", wantOutcome: sb.OutcomeOK, wantDecision: sb.DecisionAuto, wantRuns: 1,
		},
		{
			name: "blank args are an empty object", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "ping", Args: json.RawMessage(" \n")},
			wantStatus: "ok", wantOutcome: sb.OutcomeOK, wantDecision: sb.DecisionAuto, wantRuns: 1,
		},
		{
			name: "unknown tool lists the tools", call: sb.ToolCall{AgentID: "alice", Tool: "Shell", Action: "run"},
			wantStatus: "error", wantOutcome: sb.OutcomeRejected,
			wantErr: []string{`unknown tool "Shell"`, "available tools: Abacus, Echo"},
		},
		{
			name: "unknown action lists the actions", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "shout"},
			wantStatus: "error", wantOutcome: sb.OutcomeRejected,
			wantErr: []string{`Echo has no action "shout"`, "boom, erase, fail, forbidden, ping, say"},
		},
		{
			name: "agent without the tool is refused", call: sb.ToolCall{AgentID: "bob", Tool: "Echo", Action: "say", Args: json.RawMessage(`{"text":"hi"}`)},
			wantStatus: "error", wantOutcome: sb.OutcomeRejected,
			wantErr: []string{`agent "bob" is not configured for Echo`, "add a Echo block"},
		},
		{
			name: "permission is per tool", call: sb.ToolCall{AgentID: "bob", Tool: "Abacus", Action: "add", Args: json.RawMessage(`{}`)},
			wantStatus: "ok", wantOutcome: sb.OutcomeOK, wantDecision: sb.DecisionAuto,
		},
		{
			name: "args that are not JSON", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(`{text: hi}`)},
			wantStatus: "error", wantOutcome: sb.OutcomeRejected,
			wantErr: []string{"args of Echo.say are not valid JSON", "send a JSON object"},
		},
		{
			name: "missing required property", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(`{}`)},
			wantStatus: "error", wantOutcome: sb.OutcomeRejected,
			wantErr: []string{"args of Echo.say are wrong", "at /:", "text", "see GET /tools"},
		},
		{
			name: "wrong type names the location", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(`{"text":42}`)},
			wantStatus: "error", wantOutcome: sb.OutcomeRejected,
			wantErr: []string{"at /text:", "string"},
		},
		{
			name: "schema constraints apply", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(`{"text":""}`)},
			wantStatus: "error", wantOutcome: sb.OutcomeRejected,
			wantErr: []string{"at /text:"},
		},
		{
			name: "unexpected property", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(`{"text":"hi","runId":"forged"}`)},
			wantStatus: "error", wantOutcome: sb.OutcomeRejected,
			wantErr: []string{"runId"},
		},
		{
			name: "null is not an object", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "ping", Args: json.RawMessage(`null`)},
			wantStatus: "error", wantOutcome: sb.OutcomeRejected,
			wantErr: []string{"args of Echo.ping are wrong"},
		},
		{
			name: "an array is not an object", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "ping", Args: json.RawMessage(`[]`)},
			wantStatus: "error", wantOutcome: sb.OutcomeRejected,
			wantErr: []string{"args of Echo.ping are wrong"},
		},
		{
			name: "deny by rule", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "forbidden"},
			wantStatus: "error", wantOutcome: sb.OutcomeDenied, wantDecision: sb.DecisionDeny,
			wantErr: []string{"Echo.forbidden is not allowed here by the staging policy", "do not retry"},
		},
		{
			name: "deny by condition", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(`{"text":"hi","room":"other"}`)},
			wantStatus: "error", wantOutcome: sb.OutcomeDenied, wantDecision: sb.DecisionDeny,
			wantErr: []string{"Echo.say is not allowed here"},
		},
		{
			name: "router notices never bypass a deny", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "forbidden", Origin: sb.OriginRouter},
			wantStatus: "error", wantOutcome: sb.OutcomeDenied, wantDecision: sb.DecisionDeny,
		},
		{
			name: "unlisted action fails closed to approval", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "erase", Origin: sb.OriginAgent},
			wantStatus: sb.OutcomePending, wantOutcome: sb.OutcomePending, wantDecision: sb.DecisionApprove,
		},
		{
			name: "approved call runs", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "erase", Approved: true},
			wantStatus: "ok", wantOutcome: sb.OutcomeOK, wantDecision: sb.DecisionApproved, wantRuns: 1,
		},
		{
			name: "router notice bypasses approval", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "erase", Origin: sb.OriginRouter},
			wantStatus: "ok", wantOutcome: sb.OutcomeOK, wantDecision: sb.DecisionAuto, wantRuns: 1,
		},
		{
			name: "tool error envelope passes through", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "fail"},
			wantStatus: "error", wantOutcome: sb.OutcomeError, wantDecision: sb.DecisionAuto, wantRuns: 1,
			wantErr: []string{"upstream refused token", "try later"},
		},
		{
			name: "panicking tool becomes an error envelope", call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "boom"},
			wantStatus: "error", wantOutcome: sb.OutcomeError, wantDecision: sb.DecisionAuto, wantRuns: 1,
			wantErr: []string{"Echo.boom failed unexpectedly", "the operator can find details in the logs"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			root := "root-" + strings.ReplaceAll(tt.name, " ", "-")
			call := tt.call
			call.Run = runCtx(root)
			env := f.x.Invoke(context.Background(), call)

			if env.Status != tt.wantStatus {
				t.Errorf("status = %q, want %q (envelope %+v)", env.Status, tt.wantStatus, env)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(env.Error, s) {
					t.Errorf("error = %q, want it to contain %q", env.Error, s)
				}
			}
			if tt.wantStatus == "error" && env.Error == "" {
				t.Errorf("error envelope without a reason: %+v", env)
			}
			for k, v := range tt.wantData {
				if env.Data[k] != v {
					t.Errorf("data[%q] = %v, want %v", k, env.Data[k], v)
				}
			}
			if got := f.echo.runs.Load(); got != tt.wantRuns {
				t.Errorf("Echo ran %d times, want %d", got, tt.wantRuns)
			}

			e := f.only(t, root)
			if e.Outcome != tt.wantOutcome {
				t.Errorf("audit outcome = %q, want %q", e.Outcome, tt.wantOutcome)
			}
			if e.Decision != tt.wantDecision {
				t.Errorf("audit decision = %q, want %q", e.Decision, tt.wantDecision)
			}
			if e.Run != call.Run {
				t.Errorf("audit run = %+v, want %+v", e.Run, call.Run)
			}
			if e.AgentID != call.AgentID || e.Tool != call.Tool || e.Action != call.Action {
				t.Errorf("audit who/what = %s %s.%s, want %s %s.%s", e.AgentID, e.Tool, e.Action, call.AgentID, call.Tool, call.Action)
			}
			if !e.At.Equal(t0) || e.At.Location() != time.UTC {
				t.Errorf("audit at = %v, want %v in UTC", e.At, t0)
			}
			if e.Duration != f.clock.Step() {
				t.Errorf("audit duration = %v, want %v (one clock step)", e.Duration, f.clock.Step())
			}
			if len(e.ID) != 26 {
				t.Errorf("audit id = %q, want a 26-character id", e.ID)
			}
			wantAuditErr := ""
			if tt.wantStatus == "error" {
				wantAuditErr = env.Error
			}
			if tt.name == "tool error envelope passes through" {
				wantAuditErr = strings.ReplaceAll(env.Error, secret, "***")
			}
			if e.Error != wantAuditErr {
				t.Errorf("audit error = %q, want %q", e.Error, wantAuditErr)
			}
		})
	}
}

func TestInvokeEnvelopesAreStructured(t *testing.T) {
	tests := []struct {
		name string
		call sb.ToolCall
		want map[string]any // exact keys of the marshalled envelope, except long texts
	}{
		{
			name: "pending approval",
			call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "erase"},
			want: map[string]any{"status": "pending_approval", "message": "Echo.erase needs a human's approval; it has not run. Tell the human what you want to do and why; you will be woken with the result once someone decides."},
		},
		{
			name: "deny",
			call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "forbidden"},
			want: map[string]any{"status": "error", "error": "Echo.forbidden is not allowed here by the staging policy; do not retry, tell the human what you wanted to do instead"},
		},
		{
			name: "panic",
			call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "boom"},
			want: map[string]any{"status": "error", "error": "Echo.boom failed unexpectedly; the operator can find details in the logs"},
		},
		{
			name: "tool error keeps third-party status and endpoint",
			call: sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "fail"},
			want: map[string]any{"status": "error", "error": "upstream refused token " + secret + "; try later", "http_status": float64(503), "endpoint": "https://upstream.example/api"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			tt.call.Run = runCtx("r")
			raw, err := json.Marshal(f.x.Invoke(context.Background(), tt.call))
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Errorf("envelope %s: got keys %v, want %v", raw, keys(got), keys(tt.want))
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("envelope[%q] = %v, want %v", k, got[k], v)
				}
			}
			for _, leak := range []string{"goroutine", "panic", "nil map"} {
				if strings.Contains(string(raw), leak) {
					t.Errorf("envelope %s leaks %q", raw, leak)
				}
			}
		})
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestAuditArgs(t *testing.T) {
	long := strings.Repeat("a", 10_000)
	// The secret straddles the cap: scrubbing must come first, or its head
	// would survive the cut unrecognised.
	straddle := strings.Repeat("b", sb.MaxAuditArgs-52) + secret + strings.Repeat("c", 100)
	if raw := `{"text":"` + straddle + `"}`; true {
		cut := strings.Index(scrub.Cap(raw, sb.MaxAuditArgs), "…[truncated")
		start := strings.Index(raw, secret)
		if cut <= start || cut >= start+len(secret) {
			t.Fatalf("fixture: the cap cuts at %d, the secret spans %d..%d; move it so that the cut splits it", cut, start, start+len(secret))
		}
	}
	tests := []struct {
		name        string
		args        json.RawMessage
		action      string
		want        string   // exact, when set
		wantContain []string // substrings, when want is unset
		wantLacking []string
	}{
		{name: "small args kept as sent", action: "say", args: json.RawMessage(`{"text": "hi"}`), want: `{"text": "hi"}`},
		{name: "no args", action: "ping", want: "{}"},
		{name: "configured secret masked", action: "say", args: json.RawMessage(`{"text":"key ` + secret + ` here"}`),
			want: `{"text":"key *** here"}`},
		{name: "secret-named key masked whole", action: "say", args: json.RawMessage(`{"text":"x","password":"pa55word!"}`),
			want: `{"text":"x","password":"***"}`},
		{name: "well-known pattern masked", action: "say", args: json.RawMessage(`{"text":"use AKIAIOSFODNN7EXAMPLE and Bearer abcdefghijklmnopqrstuvwxyz0123"}`),
			wantLacking: []string{"AKIAIOSFODNN7EXAMPLE", "abcdefghijklmnopqrstuvwxyz0123"}, wantContain: []string{"***"}},
		{name: "invalid JSON still scrubbed", action: "say", args: json.RawMessage(`{text: ` + secret + `}`),
			want: `{text: ***}`},
		{name: "invalid args audited even when rejected", action: "shout", args: json.RawMessage(`{"text":"` + secret + `"}`),
			want: `{"text":"***"}`},
		{name: "long args capped at 4000 bytes", action: "say", args: json.RawMessage(`{"text":"` + long + `"}`),
			wantContain: []string{`{"text":"aaaa`, "…[truncated "}},
		{name: "secret across the cap is masked before cutting", action: "say", args: json.RawMessage(`{"text":"` + straddle + `"}`),
			wantContain: []string{"…[truncated "}, wantLacking: []string{secret[:7], secret[len(secret)-7:]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.x.Invoke(context.Background(), sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: tt.action, Args: tt.args, Run: runCtx("r")})
			got := f.only(t, "r").Args
			if len(got) > sb.MaxAuditArgs {
				t.Errorf("len(args) = %d, want <= %d", len(got), sb.MaxAuditArgs)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("args = %q, want %q", got, tt.want)
			}
			for _, s := range tt.wantContain {
				if !strings.Contains(got, s) {
					t.Errorf("args = %.80q…, want it to contain %q", got, s)
				}
			}
			for _, s := range append(tt.wantLacking, secret) {
				if strings.Contains(got, s) {
					t.Errorf("args keep %q: %.120q", s, got)
				}
			}
		})
	}
}

func TestAuditCapIsExactlyTheLimit(t *testing.T) {
	tests := []struct {
		name    string
		textLen int
		wantCut bool
	}{
		{"just fits", sb.MaxAuditArgs - len(`{"text":""}`), false},
		{"one byte over", sb.MaxAuditArgs - len(`{"text":""}`) + 1, true},
		{"multi-byte runes are not split", 3000, true}, // 3000 × "é" = 6000 bytes
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			text := strings.Repeat("x", tt.textLen)
			if strings.HasPrefix(tt.name, "multi-byte") {
				text = strings.Repeat("é", tt.textLen)
			}
			args := `{"text":"` + text + `"}`
			f.x.Invoke(context.Background(), sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say", Args: json.RawMessage(args), Run: runCtx("r")})
			got := f.only(t, "r").Args
			if len(got) > sb.MaxAuditArgs {
				t.Errorf("len(args) = %d, want <= %d", len(got), sb.MaxAuditArgs)
			}
			if cut := strings.Contains(got, "[truncated"); cut != tt.wantCut {
				t.Errorf("truncated = %v, want %v (len %d)", cut, tt.wantCut, len(got))
			}
			if !tt.wantCut && got != args {
				t.Errorf("args changed although they fit")
			}
			if !utf8Valid(got) {
				t.Errorf("capped args are not valid UTF-8")
			}
		})
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestAuditWriteFailureIsLoggedNotLost(t *testing.T) {
	audit := &failingAudit{}
	f := newFixture(t, func(o *tools.Options) { o.Audit = audit })
	call := sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "say",
		Args: json.RawMessage(`{"text":"deploy with ` + secret + `"}`), Run: runCtx("root-af")}

	env := f.x.Invoke(context.Background(), call)

	if env.Status != "ok" {
		t.Errorf("status = %q, want ok: a failed audit write does not undo the action", env.Status)
	}
	if got := audit.calls.Load(); got != 1 {
		t.Errorf("audit Append called %d times, want 1", got)
	}
	var line map[string]any
	if err := json.Unmarshal(f.logs.Bytes(), &line); err != nil {
		t.Fatalf("want exactly one JSON log line, got %q: %v", f.logs, err)
	}
	want := map[string]any{
		"level": "ERROR", "msg": "audit write failed; entry follows",
		"tool": "Echo", "action": "say", "agent": "alice", "runId": "root-af-run", "outcome": "ok",
		"args": `{"text":"deploy with ***"}`,
	}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("log[%q] = %v, want %v", k, line[k], v)
		}
	}
	if errText, _ := line["err"].(string); !strings.Contains(errText, "throttled") {
		t.Errorf("log err = %q, want the store's error", errText)
	}
	if strings.Contains(f.logs.String(), secret) {
		t.Errorf("log line leaks the secret: %s", f.logs)
	}
}

func TestAuditWrittenAfterCancellation(t *testing.T) {
	f := newFixture(t)
	x, err := tools.New(tools.Options{
		Tools: []sb.Tool{f.echo}, Policy: mustPolicy(t), Audit: cancelSensitiveAudit{f.store},
		Scrub: nilScrubber{}, Permits: func(string, string) bool { return true }, Log: discard(), Now: f.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x.Invoke(ctx, sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "ping", Run: runCtx("root-cancel")})
	if e := f.only(t, "root-cancel"); e.Outcome != sb.OutcomeOK {
		t.Errorf("outcome = %q, want ok", e.Outcome)
	}
}

func TestEveryCallIsAuditedSeparately(t *testing.T) {
	f := newFixture(t)
	calls := []sb.ToolCall{
		{AgentID: "alice", Tool: "Echo", Action: "ping"},
		{AgentID: "alice", Tool: "Echo", Action: "ping"},
		{AgentID: "alice", Tool: "Echo", Action: "erase"},
		{AgentID: "alice", Tool: "Nope", Action: "x"},
	}
	for _, c := range calls {
		c.Run = runCtx("root-many")
		f.x.Invoke(context.Background(), c)
	}
	entries, err := f.store.ByRoot(context.Background(), "root-many")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	ids := map[string]bool{}
	for _, e := range entries {
		got = append(got, e.Tool+"."+e.Action+"="+e.Outcome)
		ids[e.ID] = true
	}
	want := []string{"Echo.ping=ok", "Echo.ping=ok", "Echo.erase=pending_approval", "Nope.x=rejected"}
	if !slices.Equal(got, want) {
		t.Errorf("audit trail = %v, want %v", got, want)
	}
	if len(ids) != len(calls) {
		t.Errorf("distinct ids = %d, want %d", len(ids), len(calls))
	}
}

func TestSpecs(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name  string
		agent string
		want  []string
	}{
		{"all tools, sorted", "", []string{"Abacus", "Echo"}},
		{"agent with every tool", "alice", []string{"Abacus", "Echo"}},
		{"agent with one tool", "bob", []string{"Abacus"}},
		{"agent with none", "mallory", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range f.x.Specs(tt.agent) {
				got = append(got, s.Name)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Specs(%q) = %v, want %v", tt.agent, got, tt.want)
			}
		})
	}
}

// badTool has a configurable spec for New's checks.
type badTool struct{ spec sb.ToolSpec }

func (b badTool) Spec() sb.ToolSpec                               { return b.spec }
func (b badTool) Invoke(context.Context, sb.ToolCall) sb.Envelope { return sb.OK(nil) }

func TestNew(t *testing.T) {
	bad := func(params map[string]any) []sb.Tool {
		return []sb.Tool{badTool{sb.ToolSpec{Name: "Bad", Actions: []sb.ActionSpec{{Name: "go", Parameters: params}}}}}
	}
	tests := []struct {
		name        string
		tools       []sb.Tool
		wantErr     string // from New
		wantCompile string // from CompileAll
	}{
		{"fakes compile", []sb.Tool{&echoTool{}, otherTool{}}, "", ""},
		{"no tools", nil, "", ""},
		{"registered twice", []sb.Tool{&echoTool{}, &echoTool{}}, "tools: Echo registered twice", ""},
		{"schema that does not compile", bad(map[string]any{"type": 5}), "", "tools: schema of Bad.go"},
		{"schema that cannot be marshalled", bad(map[string]any{"default": func() {}}), "", "tools: schema of Bad.go"},
		{"keyword the argument check does not implement", bad(map[string]any{"type": "object", "properties": map[string]any{"p": map[string]any{"type": "string", "format": "email"}}}),
			"", `keyword "format" is not supported`},
		{"bad regexp in schema", bad(map[string]any{"type": "object", "properties": map[string]any{"p": map[string]any{"type": "string", "pattern": "("}}}),
			"", "tools: schema of Bad.go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := tools.New(tools.Options{Tools: tt.tools, Policy: mustPolicy(t), Audit: newFixture(t).store,
				Scrub: nilScrubber{}, Permits: func(string, string) bool { return true }, Log: discard()})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("New: %v, want no error", err)
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("New error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			err = x.CompileAll()
			switch {
			case tt.wantCompile == "" && err != nil:
				t.Errorf("CompileAll: %v, want no error", err)
			case tt.wantCompile != "" && (err == nil || !strings.Contains(err.Error(), tt.wantCompile)):
				t.Errorf("CompileAll error = %v, want one containing %q", err, tt.wantCompile)
			}
		})
	}
}

// TestSchemaThatDoesNotCompileRejectsTheCall: schemas compile on first use;
// one that cannot compile refuses its calls (never runs the tool unchecked)
// and says where the details are, without the compiler's text.
func TestSchemaThatDoesNotCompileRejectsTheCall(t *testing.T) {
	f := newFixture(t)
	logs := &bytes.Buffer{}
	x, err := tools.New(tools.Options{Tools: []sb.Tool{badTool{sb.ToolSpec{Name: "Bad", Actions: []sb.ActionSpec{
		{Name: "go", Parameters: map[string]any{"type": 5}}}}}}, Policy: mustPolicy(t), Audit: f.store,
		Scrub: nilScrubber{}, Permits: func(string, string) bool { return true }, Log: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	env := x.Invoke(context.Background(), sb.ToolCall{AgentID: "alice", Tool: "Bad", Action: "go", Args: json.RawMessage(`{}`)})
	if env.Status != "error" || !strings.Contains(env.Error, "args of Bad.go could not be checked") || strings.Contains(env.Error, "type") {
		t.Errorf("envelope = %+v, want a rejection that hides the compiler's text", env)
	}
	if !strings.Contains(logs.String(), "tool schema does not compile") {
		t.Errorf("logs = %s, want the compile error logged", logs)
	}
}

func TestNewDefaultsToTheWallClock(t *testing.T) {
	f := newFixture(t)
	x, err := tools.New(tools.Options{Tools: []sb.Tool{&echoTool{}}, Policy: mustPolicy(t), Audit: f.store,
		Scrub: nilScrubber{}, Permits: func(string, string) bool { return true }, Log: discard()})
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	x.Invoke(context.Background(), sb.ToolCall{AgentID: "alice", Tool: "Echo", Action: "ping", Run: runCtx("root-wall")})
	e := f.only(t, "root-wall")
	if e.At.Before(before.Add(-time.Second)) || e.At.After(time.Now().Add(time.Second)) {
		t.Errorf("at = %v, want about %v", e.At, before)
	}
}

func mustPolicy(t testing.TB) *staging.Policy {
	t.Helper()
	p, err := staging.New(map[string]string{"Echo.ping": "auto"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// nilScrubber masks nothing; for tests that are not about scrubbing.
type nilScrubber struct{}

func (nilScrubber) JSON(raw []byte) []byte { return raw }
func (nilScrubber) String(s string) string { return s }

var _ tools.Scrubber = nilScrubber{}

func TestCallWithoutAgentStillLeavesATrace(t *testing.T) {
	// memstore (like DynamoDB) refuses an entry without an agent id: the
	// entry must then reach the log instead.
	f := newFixture(t)
	env := f.x.Invoke(context.Background(), sb.ToolCall{Tool: "Echo", Action: "ping", Run: runCtx("root-anon")})
	if env.Status != "error" || !strings.Contains(env.Error, `agent "" is not configured for Echo`) {
		t.Errorf("envelope = %+v, want a refusal naming the missing agent", env)
	}
	if entries, _ := f.store.ByRoot(context.Background(), "root-anon"); len(entries) != 0 {
		t.Fatalf("store accepted an entry without agent: %+v", entries)
	}
	for _, s := range []string{"audit write failed", `"outcome":"rejected"`, `"runId":"root-anon-run"`, `"tool":"Echo"`} {
		if !strings.Contains(f.logs.String(), s) {
			t.Errorf("log = %s, want it to contain %s", f.logs, s)
		}
	}
}
