package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// jobItem is the last run of one job in the state table.
type jobItem struct {
	PK         string `dynamodbav:"pk"`
	SK         string `dynamodbav:"sk"`
	Job        string `dynamodbav:"job"`
	StartedAt  string `dynamodbav:"startedAt"`
	DurationNs int64  `dynamodbav:"durationNs"`
	Outcome    string `dynamodbav:"outcome,omitempty"`
	Detail     string `dynamodbav:"detail,omitempty"`
	Trigger    string `dynamodbav:"trigger,omitempty"`
}

func toJobItem(r switchboard.JobRun) jobItem {
	pk, sk := jobKey(r.Job)
	return jobItem{
		PK: pk, SK: sk,
		Job:        r.Job,
		StartedAt:  timeKey(r.StartedAt),
		DurationNs: int64(r.Duration),
		Outcome:    r.Outcome,
		Detail:     r.Detail,
		Trigger:    r.Trigger,
	}
}

func fromJobItem(it jobItem) (switchboard.JobRun, error) {
	started, err := time.Parse(timeLayout, it.StartedAt)
	if err != nil {
		return switchboard.JobRun{}, fmt.Errorf("job item %s: startedAt: %w", it.SK, err)
	}
	return switchboard.JobRun{
		Job:       it.Job,
		StartedAt: started,
		Duration:  time.Duration(it.DurationNs),
		Outcome:   it.Outcome,
		Detail:    it.Detail,
		Trigger:   it.Trigger,
	}, nil
}

// markerItem is one claimed once-only key. ExpiresAt is the TTL attribute;
// 0 (omitted) means the marker never expires.
type markerItem struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	ClaimedAt string `dynamodbav:"claimedAt"`
	ExpiresAt int64  `dynamodbav:"expiresAt,omitempty"`
}

func toMarkerItem(key string, claimedAt, expires time.Time) markerItem {
	pk, sk := markerKey(key)
	it := markerItem{PK: pk, SK: sk, ClaimedAt: timeKey(claimedAt)}
	it.ExpiresAt = ttl(expires)
	return it
}

// RecordRun overwrites the job's row (an unconditional PutItem).
// EINVALID when r.Job is empty.
func (s *Store) RecordRun(ctx context.Context, r switchboard.JobRun) error {
	const op = "jobs.recordRun"
	if r.Job == "" {
		return switchboard.E(op, switchboard.EINVALID, "a job run needs a job name")
	}
	item, err := ddb.MarshalMap(toJobItem(r))
	if err != nil {
		return switchboard.Wrap(op, switchboard.EINTERNAL, "job run could not be encoded", err)
	}
	return s.put(ctx, op, s.state, item, condition{})
}

// LastRuns queries the "job" partition; the sort key is the job name, so the
// rows come sorted by name.
func (s *Store) LastRuns(ctx context.Context) ([]switchboard.JobRun, error) {
	const op = "jobs.lastRuns"
	pk, _ := jobKey("")
	in := &ddb.QueryInput{
		TableName:              &s.state,
		KeyConditionExpression: strPtr("pk = :p"),
		ExpressionAttributeValues: map[string]ddb.AttributeValue{
			":p": &ddb.AttributeValueMemberS{Value: pk},
		},
	}
	runs := []switchboard.JobRun{}
	err := queryItems(ctx, s, op, in, fromJobItem,
		func(r switchboard.JobRun) { runs = append(runs, r) })
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// Claim is one conditional PutItem: it succeeds when the marker does not
// exist or has expired (expiresAt < now, whole seconds). The expired-marker
// branch matters because TTL deletion is lazy in AWS (up to days) and never
// happens in dynalite. A zero expires keeps the marker forever. EINVALID for
// an empty key or one longer than 1,024 bytes.
func (s *Store) Claim(ctx context.Context, key string, expires time.Time) (bool, error) {
	const op = "markers.claim"
	if err := switchboard.CheckStateKey(op, "marker", key); err != nil {
		return false, err
	}
	now := s.now()
	item, err := ddb.MarshalMap(toMarkerItem(key, now, expires))
	if err != nil {
		return false, switchboard.Wrap(op, switchboard.EINTERNAL, "marker could not be encoded", err)
	}
	err = s.put(ctx, op, s.state, item, condition{
		expr:   "attribute_not_exists(pk) OR expiresAt < :now",
		values: map[string]ddb.AttributeValue{":now": numAV(now.Unix())},
	})
	if conditionFailed(err) {
		return false, nil // claimed before and not expired
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// Unclaim gives a claimed marker back (the work it guarded could not be
// queued), so that a retry of the same delivery is not taken for a
// duplicate. Unclaiming a missing key is fine.
func (s *Store) Unclaim(ctx context.Context, key string) error {
	const op = "markers.unclaim"
	if err := switchboard.CheckStateKey(op, "marker", key); err != nil {
		return err
	}
	return s.del(ctx, op, s.state, itemKey(markerKey(key)), condition{})
}
