package nctool

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	sb "github.com/switchboard-dev/switchboard/shared/switchboard"
)

// CleanupScanLimit bounds one Cleanup's listing (one SEARCH). A folder with
// more old reports is finished by the following daily runs.
const CleanupScanLimit = 5000

// CleanupReport is what one Cleanup found and did.
type CleanupReport struct {
	AgentID    string         `json:"agent"`
	Folder     string         `json:"folder"` // absolute path of <rootPath>/reports
	Cutoff     time.Time      `json:"cutoff"` // files modified before this are old
	MaxAgeDays int            `json:"maxAgeDays"`
	DryRun     bool           `json:"dryRun"`
	Scanned    int            `json:"scanned"` // files looked at
	Old        []CleanupFile  `json:"old"`     // files older than the cutoff, oldest first
	Deleted    int            `json:"deleted"`
	FreedBytes int64          `json:"freedBytes"` // sizes of the deleted files (they go to the trash bin first)
	Errors     []CleanupError `json:"errors,omitempty"`
	Truncated  bool           `json:"truncated"` // the listing hit CleanupScanLimit; the next run continues
	Stopped    string         `json:"stopped,omitempty"`
}

// CleanupFile is one old report.
type CleanupFile struct {
	Path     string    `json:"path"` // absolute in the account
	Size     int64     `json:"size"` // -1 when the server did not say
	Modified time.Time `json:"modified"`
	Deleted  bool      `json:"deleted"`
}

// CleanupError is one file that could not be deleted.
type CleanupError struct {
	Path  string `json:"path"`
	Error string `json:"error"` // caller-safe message
}

// Cleanup deletes the files below <rootPath>/reports (at any depth) whose
// modification time is more than ReportsMaxAgeDays before now; with dryRun
// it only lists them. Folders are kept. A missing reports folder is an
// empty report. It returns an error only when the agent is unknown or the
// listing fails; a file that cannot be deleted is recorded in Errors and
// the run goes on, except after an error that will hit every file
// (unreachable, credentials, rate limit), where it stops and says so.
func (t *Tool) Cleanup(ctx context.Context, agentID string, dryRun bool) (CleanupReport, error) {
	const op = "nctool.cleanup"
	agent, ok := t.agents(agentID)
	if !ok || agent.Client == nil {
		return CleanupReport{}, sb.E(op, sb.ENOTFOUND, fmt.Sprintf("agent %s has no Nextcloud tool in its configuration", quote(agentID)))
	}
	sc, err := newScope(agent.RootPath)
	if err != nil {
		return CleanupReport{}, err
	}
	folder := path.Join(sc.root, ReportsFolder)
	rep := CleanupReport{AgentID: agentID, Folder: folder, MaxAgeDays: agent.reportsMaxAge(), DryRun: dryRun, Old: []CleanupFile{}}
	rep.Cutoff = t.now().UTC().AddDate(0, 0, -rep.MaxAgeDays)

	// One SEARCH lists the whole tree (PROPFIND Depth: infinity is usually
	// disabled). The client's query has no "older than", so the age test
	// runs here on the mtimes it returns.
	entries, err := agent.Client.Search(ctx, sb.FileSearch{Folder: folder, Limit: CleanupScanLimit})
	if err != nil {
		if sb.ErrorCode(err) == sb.ENOTFOUND {
			return rep, nil // no reports folder: nothing to clean
		}
		return rep, fmt.Errorf("nextcloud cleanup %s: listing %s: %w", agentID, folder, err)
	}
	rep.Truncated = len(entries) >= CleanupScanLimit
	for _, e := range entries {
		if e.IsDir || !sc.contains(e.Path) || !strings.HasPrefix(e.Path, folder+"/") {
			continue
		}
		rep.Scanned++
		if !e.Modified.IsZero() && e.Modified.Before(rep.Cutoff) {
			rep.Old = append(rep.Old, CleanupFile{Path: e.Path, Size: e.Size, Modified: e.Modified.UTC()})
		}
	}
	sort.Slice(rep.Old, func(i, j int) bool { return rep.Old[i].Modified.Before(rep.Old[j].Modified) })
	if dryRun {
		return rep, nil
	}
	for i := range rep.Old {
		f := &rep.Old[i]
		err := agent.Client.Delete(ctx, f.Path)
		switch {
		case err == nil:
			f.Deleted = true
			rep.Deleted++
			rep.FreedBytes += max(f.Size, 0) // -1: the server did not say
			continue
		case sb.ErrorCode(err) == sb.ENOTFOUND:
			continue // gone meanwhile: nothing to do
		}
		rep.Errors = append(rep.Errors, CleanupError{Path: f.Path, Error: sb.ErrorMessage(err)})
		if c := sb.ErrorCode(err); c == sb.EUNAVAILABLE || c == sb.EUNAUTHORIZED || c == sb.ERATELIMITED || ctx.Err() != nil {
			rep.Stopped = fmt.Sprintf("stopped after %d deletion(s): %s", rep.Deleted, sb.ErrorMessage(err))
			break
		}
	}
	return rep, nil
}
