package jobs

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
)

// cleaner answers a report per agent, and fails those in fail.
type cleaner struct {
	reports map[string]nctool.CleanupReport
	fail    map[string]error
	asked   []string
	dry     []bool
}

func (c *cleaner) Cleanup(_ context.Context, agentID string, dryRun bool) (nctool.CleanupReport, error) {
	c.asked, c.dry = append(c.asked, agentID), append(c.dry, dryRun)
	rep := c.reports[agentID]
	rep.DryRun = dryRun
	return rep, c.fail[agentID]
}

// auditLog records the entries appended to it.
type auditLog struct {
	sb.AuditStore
	entries []sb.AuditEntry
}

func (a *auditLog) Append(_ context.Context, e sb.AuditEntry) error {
	a.entries = append(a.entries, e)
	return nil
}

// Every agent is cleaned up, one failing does not stop the others, and each
// gets one audit entry with what was old, deleted and failed.
func TestNextcloudCleanupAuditsEveryAgent(t *testing.T) {
	at := time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC)
	cl := &cleaner{
		reports: map[string]nctool.CleanupReport{
			"hermes": {Folder: "/hermes/reports", Old: make([]nctool.CleanupFile, 3), Deleted: 2, FreedBytes: 10, Errors: make([]nctool.CleanupError, 1)},
			"athena": {Folder: "/athena/reports"},
		},
		fail: map[string]error{"athena": sb.E("nctool.cleanup", sb.EUNAVAILABLE, "nextcloud is unreachable")},
	}
	audit := &auditLog{}
	job := &NextcloudCleanup{Agents: []string{"hermes", "athena"}, Cleaner: cl, Audit: audit, Now: func() time.Time { return at }}
	detail, err := job.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "athena: ") {
		t.Errorf("err %v, want athena's failure", err)
	}
	if want := "3 old reports found, deleted 2"; detail != want {
		t.Errorf("detail %q, want %q", detail, want)
	}
	if !slices.Equal(cl.asked, []string{"hermes", "athena"}) || slices.Contains(cl.dry, true) {
		t.Errorf("asked %v (dry %v), want hermes then athena, not dry", cl.asked, cl.dry)
	}
	if len(audit.entries) != 2 {
		t.Fatalf("%d audit entries, want one per agent", len(audit.entries))
	}
	h, a := audit.entries[0], audit.entries[1]
	if h.AgentID != "hermes" || h.Tool != "Nextcloud" || h.Action != "cleanup" || h.Outcome != sb.OutcomeOK || !h.At.Equal(at) {
		t.Errorf("hermes's entry %+v, want a Nextcloud cleanup that went well at %v", h, at)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(h.Args), &args); err != nil {
		t.Fatal(err)
	}
	if args["old"] != 3.0 || args["deleted"] != 2.0 || args["errors"] != 1.0 || args["folder"] != "/hermes/reports" {
		t.Errorf("hermes's args %v, want 3 old, 2 deleted, 1 error in /hermes/reports", args)
	}
	if a.AgentID != "athena" || a.Outcome != sb.OutcomeError || a.Error == "" {
		t.Errorf("athena's entry %+v, want an error with its message", a)
	}
}

func TestNextcloudCleanupDryRun(t *testing.T) {
	cl := &cleaner{reports: map[string]nctool.CleanupReport{"hermes": {Old: make([]nctool.CleanupFile, 2)}}}
	job := &NextcloudCleanup{Agents: []string{"hermes"}, Cleaner: cl, Audit: &auditLog{}}
	detail, err := job.Run(DryRun(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	if want := "2 old reports found, dry run, would delete 0"; detail != want || !slices.Equal(cl.dry, []bool{true}) {
		t.Errorf("detail %q (dry %v), want %q and a dry cleanup", detail, cl.dry, want)
	}
}
