package jobsfn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
	"github.com/switchboard-dev/switchboard/shared/tools/nctool"
	"github.com/switchboard-dev/switchboard/shared/usecases/jobs"
)

// cleanupNextcloud is the nextcloud-cleanup job: old reports in every
// agent's reports folder are deleted; with jobs.DryRun(ctx) only listed.
// Every deletion is audited like a tool call.
func (j *jobSet) cleanupNextcloud(ctx context.Context) (string, error) {
	dry := jobs.IsDryRun(ctx)
	var deleted, old int
	var errs []error
	for _, ag := range j.c.Config.Agents {
		if _, ok := j.a.Nextcloud[ag.ID]; !ok {
			continue
		}
		rep, err := j.a.NextcloudTool.Cleanup(ctx, ag.ID, dry)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ag.ID, err))
		}
		old += len(rep.Old)
		deleted += rep.Deleted
		j.auditCleanup(ctx, ag.ID, rep, err)
	}
	mode := "deleted"
	if dry {
		mode = "dry run, would delete"
	}
	return fmt.Sprintf("%d old reports found, %s %d", old, mode, deleted), errors.Join(errs...)
}

// auditCleanup writes one audit entry per cleanup run and agent: what was
// old, what was deleted, what failed.
func (j *jobSet) auditCleanup(ctx context.Context, agentID string, rep nctool.CleanupReport, err error) {
	args, _ := json.Marshal(map[string]any{"folder": rep.Folder, "dryRun": rep.DryRun, "cutoff": rep.Cutoff,
		"old": len(rep.Old), "deleted": rep.Deleted, "freedBytes": rep.FreedBytes, "errors": len(rep.Errors)})
	now := time.Now()
	e := sb.AuditEntry{ID: sb.NewID(now), At: now.UTC(), Run: sb.NewRun(agentID, nil, now), AgentID: agentID,
		Tool: "Nextcloud", Action: "cleanup", Args: j.c.Scrubber.String(string(args)), Decision: sb.DecisionAuto, Outcome: sb.OutcomeOK}
	if err != nil {
		e.Outcome, e.Error = sb.OutcomeError, sb.ErrorMessage(err)
	}
	if aerr := j.c.Store.Append(context.WithoutCancel(ctx), e); aerr != nil {
		j.c.Log.ErrorContext(ctx, "audit of nextcloud-cleanup failed", "agent", agentID, "err", aerr)
	}
}
