package switchboard

import (
	"context"
	"time"
)

// JobRun records one run of a scheduled job.
type JobRun struct {
	Job       string        `json:"job"`
	StartedAt time.Time     `json:"startedAt"`
	Duration  time.Duration `json:"durationNs"`
	Outcome   string        `json:"outcome"` // "ok" or "error"
	Detail    string        `json:"detail,omitempty"`
	Trigger   string        `json:"trigger"` // "schedule", "dev-route", "cli"
}

// JobStore remembers the last run of every job.
type JobStore interface {
	// RecordRun overwrites the job's last-run row.
	RecordRun(ctx context.Context, r JobRun) error
	// LastRuns returns the last run of every job that ran, sorted by name,
	// with one query (never a scan).
	LastRuns(ctx context.Context) ([]JobRun, error)
}

// Marker is a once-only key: dedupe of webhook deliveries, idempotency of
// approvals, "notice already sent" flags.
type Markers interface {
	// Claim records key and reports true the first time; later claims of the
	// same key (until expiry) report false. It is a conditional write, safe
	// under concurrent callers.
	Claim(ctx context.Context, key string, expires time.Time) (bool, error)
}
