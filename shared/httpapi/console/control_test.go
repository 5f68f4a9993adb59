package console_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/httpapi/console"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/usecases/control"
)

// auditLog keeps what the control service audits, and writes it on.
type auditLog struct {
	sb.AuditStore
	mu      sync.Mutex
	entries []sb.AuditEntry
}

func (a *auditLog) Append(ctx context.Context, e sb.AuditEntry) error {
	a.mu.Lock()
	a.entries = append(a.entries, e)
	a.mu.Unlock()
	return a.AuditStore.Append(ctx, e)
}

func (a *auditLog) actions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, e := range a.entries {
		out = append(out, e.Tool+" "+e.Action+" "+e.AgentID+" "+e.Run.RootRunID+" by "+e.DecidedBy[:min(8, len(e.DecidedBy))])
	}
	return out
}

// runningExecutions fakes Step Functions: every execution runs until it
// is stopped.
type runningExecutions struct{ stopped []string }

func (x *runningExecutions) Stop(_ context.Context, arn, _ string) (bool, error) {
	x.stopped = append(x.stopped, arn)
	return true, nil
}

// controlEnv is the console with the real control service on its store
// (filled in once the store exists; the console only holds the pointer).
func controlEnv(t *testing.T) (*env, *control.Control, *auditLog, *runningExecutions) {
	t.Helper()
	ctl := &control.Control{}
	e := newEnv(t, func(o *console.Options) { o.Control = ctl })
	audit, x := &auditLog{AuditStore: e.store}, &runningExecutions{}
	*ctl = control.Control{KV: e.store.KV(), Markers: e.store, Receipts: e.store, Audit: audit, Executions: x, Now: e.clock.Now,
		Log: slog.New(slog.DiscardHandler)}
	return e, ctl, audit, x
}

// Every action asks first: GET /console/control shows what it will do and
// a form with the session's CSRF token, and changes nothing; the POST
// without the token (or with another) is refused and changes nothing; the
// POST with it acts, says what was done and is audited as the console's.
func TestControlAsksThenActsOnlyWithTheCSRFToken(t *testing.T) {
	tests := []struct {
		name     string
		form     url.Values
		question string
		done     []string
		audit    string
		changed  func(context.Context, *control.Control) bool
	}{
		{
			name: "stop", form: url.Values{"action": {"stop"}, "root": {"root-1"}},
			question: "Stop chain root-1? Its runs end before their next model step",
			done:     []string{"Chain root-1 is stopped", "1 pipeline executions were stopped"},
			audit:    "control stop operator root-1 by console:",
			changed: func(ctx context.Context, c *control.Control) bool {
				stopped, _ := c.Stopped(ctx, "root-1")
				return stopped
			},
		},
		{
			name: "pause", form: url.Values{"action": {"pause"}, "agent": {"alice"}},
			question: "Pause agent alice? It starts no new runs",
			done:     []string{"Alice is paused"},
			audit:    "control pause alice  by console:",
			changed: func(ctx context.Context, c *control.Control) bool {
				paused, _ := c.Paused(ctx, "alice")
				return paused
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			e, ctl, audit, x := controlEnv(t)
			if err := ctl.RecordExecution(ctx, "root-1", "arn:aws:states:eu-central-1:1:execution:sb-document-pipeline:doc-1"); err != nil {
				t.Fatal(err)
			}
			c := e.client()
			e.login(c)

			res, page := e.get(c, "/console/control?"+tt.form.Encode())
			if res.StatusCode != http.StatusOK || !strings.Contains(page, tt.question) || !strings.Contains(page, `action="/console/control"`) {
				t.Fatalf("confirmation page = %d, want the question and the form:\n%s", res.StatusCode, page)
			}
			token := csrfOf(t, page)
			if tt.changed(ctx, ctl) || len(audit.actions()) != 0 {
				t.Fatalf("the confirmation page acted: audit %v", audit.actions())
			}

			for _, forged := range []string{"", "forged"} {
				form := url.Values{"csrf": {forged}}
				for k, v := range tt.form {
					form[k] = v
				}
				if res, _ := e.post(c, "/console/control", form); res.StatusCode != http.StatusForbidden {
					t.Errorf("POST with CSRF token %q = %d, want 403", forged, res.StatusCode)
				}
			}
			if tt.changed(ctx, ctl) || len(audit.actions()) != 0 || len(x.stopped) != 0 {
				t.Fatalf("a POST without the CSRF token acted: audit %v, stopped %v", audit.actions(), x.stopped)
			}

			form := url.Values{"csrf": {token}}
			for k, v := range tt.form {
				form[k] = v
			}
			res, page = e.post(c, "/console/control", form)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("POST with the CSRF token = %d:\n%s", res.StatusCode, page)
			}
			for _, want := range tt.done {
				if !strings.Contains(page, want) {
					t.Errorf("the answer does not say %q:\n%s", want, page)
				}
			}
			if !tt.changed(ctx, ctl) {
				t.Error("the confirmed POST changed nothing")
			}
			if got := audit.actions(); len(got) != 1 || got[0] != tt.audit {
				t.Errorf("audit %q, want [%q]", got, tt.audit)
			}
		})
	}
}

// A request that names no agent the config has, no chain or no known
// action is refused with what to send instead; nothing is asked or done.
func TestControlRefusesWhatItCannotDo(t *testing.T) {
	e, _, audit, _ := controlEnv(t)
	c := e.client()
	e.login(c)
	tests := []struct{ query, want string }{
		{"action=pause&agent=nobody", "Name a configured agent"},
		{"action=stop", "Name the chain"},
		{"action=explode&agent=alice", "The action is pause, resume or stop."},
	}
	for _, tt := range tests {
		res, page := e.get(c, "/console/control?"+tt.query)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(page, tt.want) || strings.Contains(page, `action="/console/control"`) {
			t.Errorf("GET ?%s = %d, want 400 saying %q and no form:\n%s", tt.query, res.StatusCode, tt.want, page)
		}
	}
	if got := audit.actions(); len(got) != 0 {
		t.Errorf("refused requests were audited: %v", got)
	}
}
