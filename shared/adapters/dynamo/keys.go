package dynamo

import "time"

// Key attribute names and key values shared by all tables (see deploy.Tables).
const (
	attrPK        = "pk"
	attrSK        = "sk"
	attrExpiresAt = "expiresAt" // the tables' TTL attribute, epoch seconds

	jobPK  = "job"
	itemSK = "-" // the sort key of one-item partitions: markers, counters, KV, leases
	keySep = "#"
)

// timeLayout is RFC 3339 in UTC with all nine fractional digits, so that
// keys are fixed width and sort as strings in time order (RFC3339Nano trims
// trailing zeros and would not).
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// timeKey formats t as a fixed-width, sortable key part.
func timeKey(t time.Time) string { return t.UTC().Format(timeLayout) }

// auditKey: partition per agent, sorted by time; the id makes it unique.
func auditKey(agentID string, at time.Time, id string) (pk, sk string) {
	return agentID, timeKey(at) + keySep + id
}

// receiptKey: partition per agent, sorted by start time; the run id makes it unique.
func receiptKey(agentID string, startedAt time.Time, runID string) (pk, sk string) {
	return agentID, timeKey(startedAt) + keySep + runID
}

// jobKey: all job rows share one small partition so LastRuns is one query.
func jobKey(job string) (pk, sk string) { return jobPK, job }

// markerKey: one partition per marker, so claims spread across partitions.
func markerKey(key string) (pk, sk string) { return "marker" + keySep + key, itemSK }

// counterKey, kvKey and leaseKey: one partition per key, like markers; the
// prefix keeps the kinds apart in the shared state table.
func counterKey(key string) (pk, sk string) { return "counter" + keySep + key, itemSK }

func kvKey(key string) (pk, sk string) { return "kv" + keySep + key, itemSK }

func leaseKey(key string) (pk, sk string) { return "lease" + keySep + key, itemSK }

// expiresAt converts a retention to the TTL attribute value; 0 = keep forever.
func expiresAt(from time.Time, retention time.Duration) int64 {
	if retention <= 0 {
		return 0
	}
	return from.Add(retention).Unix()
}

// ttl is the TTL attribute value of an expiry time; zero = never (omitted).
func ttl(expires time.Time) int64 {
	if expires.IsZero() {
		return 0
	}
	return expires.Unix()
}
