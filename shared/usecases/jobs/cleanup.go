package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboard-dev/switchboard/shared/platform/scrub"
	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
)

// ReportsCleaner deletes an agent's old reports, or with dryRun only lists
// them (nctool.Tool.Cleanup): an error when the agent is unknown or the
// listing fails, the files it could not delete in the report.
type ReportsCleaner interface {
	Cleanup(ctx context.Context, agentID string, dryRun bool) (nctool.CleanupReport, error)
}

// NextcloudCleanup is the nextcloud-cleanup job: old reports in every
// agent's reports folder are deleted; with DryRun(ctx) only listed. Every
// agent's run is audited like a tool call.
type NextcloudCleanup struct {
	Agents  []string // the agents with Nextcloud, in the config's order
	Cleaner ReportsCleaner
	Audit   sb.AuditStore
	Scrub   interface{ String(string) string } // nil: the well-known patterns only
	Log     *slog.Logger
	Now     func() time.Time // nil: time.Now
}

// Run is the job's Func. An agent whose cleanup fails does not stop the
// others; the errors come back together.
func (c *NextcloudCleanup) Run(ctx context.Context) (string, error) {
	dry := IsDryRun(ctx)
	var deleted, old int
	var errs []error
	for _, agentID := range c.Agents {
		rep, err := c.Cleaner.Cleanup(ctx, agentID, dry)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", agentID, err))
		}
		old += len(rep.Old)
		deleted += rep.Deleted
		c.audit(ctx, agentID, rep, err)
	}
	mode := "deleted"
	if dry {
		mode = "dry run, would delete"
	}
	return fmt.Sprintf("%d old reports found, %s %d", old, mode, deleted), errors.Join(errs...)
}

// audit writes one audit entry per cleanup run and agent: what was old,
// what was deleted, what failed. A failed write is logged: the cleanup
// happened all the same.
func (c *NextcloudCleanup) audit(ctx context.Context, agentID string, rep nctool.CleanupReport, err error) {
	args, _ := json.Marshal(map[string]any{"folder": rep.Folder, "dryRun": rep.DryRun, "cutoff": rep.Cutoff,
		"old": len(rep.Old), "deleted": rep.Deleted, "freedBytes": rep.FreedBytes, "errors": len(rep.Errors)})
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	e := sb.AuditEntry{ID: sb.NewID(now), At: now.UTC(), Run: sb.NewRun(agentID, nil, now), AgentID: agentID,
		Tool: "Nextcloud", Action: "cleanup", Args: c.scrub(string(args)), Decision: sb.DecisionAuto, Outcome: sb.OutcomeOK}
	if err != nil {
		e.Outcome, e.Error = sb.OutcomeError, sb.ErrorMessage(err)
	}
	if aerr := c.Audit.Append(context.WithoutCancel(ctx), e); aerr != nil {
		log := c.Log
		if log == nil {
			log = slog.Default()
		}
		log.ErrorContext(ctx, "audit of nextcloud-cleanup failed", "agent", agentID, "err", aerr)
	}
}

func (c *NextcloudCleanup) scrub(s string) string {
	if c.Scrub != nil {
		return c.Scrub.String(s)
	}
	return (*scrub.Scrubber)(nil).String(s)
}
