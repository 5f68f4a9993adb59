// Package memstore holds in-memory fakes of the domain's stores for fast
// use-case tests. They keep the DynamoDB adapter's semantics exactly: the
// same uniqueness keys (agent, time, id), the same conditional outcomes
// (ECONFLICT on a repeated write, Claim once until expiry in whole seconds,
// counters that stop at their limit and restart after expiry, PutIf
// compare-and-swap, exclusive leases that end to the millisecond), the same
// EINVALID checks and the same orderings. shared/adapters/storetest runs one
// contract suite against both, so the two cannot drift apart.
package memstore

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

var (
	_ switchboard.AuditStore   = (*Store)(nil)
	_ switchboard.ReceiptStore = (*Store)(nil)
	_ switchboard.JobStore     = (*Store)(nil)
	_ switchboard.Markers      = (*Store)(nil)
	_ switchboard.Counters     = (*Store)(nil)
	_ switchboard.Leases       = (*Store)(nil)
	_ switchboard.KV           = (*KV)(nil)
)

// ttl is an expiry in the adapter's TTL unit (Unix seconds); 0 = never.
func ttl(expires time.Time) int64 {
	if expires.IsZero() {
		return 0
	}
	return expires.Unix()
}

// expired is the adapter's test expiresAt < now, in whole seconds.
func expired(exp, now int64) bool { return exp != 0 && exp < now }

// timeLayout mirrors the DynamoDB adapter's fixed-width sort keys, so both
// order entries identically (time, then id).
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func timeKey(t time.Time) string { return t.UTC().Format(timeLayout) }

// Store is an in-memory AuditStore, ReceiptStore, JobStore, Markers,
// Counters and Leases; Store.KV is its KV. The zero value is ready to use;
// it is safe for concurrent use.
type Store struct {
	// Now is the clock every expiry is compared with; nil = time.Now.
	Now func() time.Time

	mu       sync.Mutex
	audit    map[string]switchboard.AuditEntry // by agent \x00 time#id
	receipts map[string]switchboard.Receipt    // by agent \x00 start#runId
	jobs     map[string]switchboard.JobRun     // by job name
	markers  map[string]int64                  // key → expiry (Unix seconds), 0 = never
	counters map[string]counter
	values   map[string]value
	leases   map[string]lease
}

type counter struct{ n, exp int64 } // exp in Unix seconds, 0 = never

type value struct {
	v   string
	exp int64 // Unix seconds, 0 = never
}

type lease struct {
	holder string
	until  int64 // Unix milliseconds
}

// New returns an empty Store.
func New() *Store { return &Store{} }

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// initLocked creates the maps; the caller holds s.mu.
func (s *Store) initLocked() {
	if s.audit == nil {
		s.audit = map[string]switchboard.AuditEntry{}
		s.receipts = map[string]switchboard.Receipt{}
		s.jobs = map[string]switchboard.JobRun{}
		s.markers = map[string]int64{}
		s.counters = map[string]counter{}
		s.values = map[string]value{}
		s.leases = map[string]lease{}
	}
}

func conflict(op string) error {
	return switchboard.E(op, switchboard.ECONFLICT, "already recorded; a repeated write is not applied twice")
}

// Append stores e unless an entry with the same agent, time and id exists
// (ECONFLICT). EINVALID without ID or AgentID.
func (s *Store) Append(_ context.Context, e switchboard.AuditEntry) error {
	const op = "audit.append"
	if e.ID == "" || e.AgentID == "" {
		return switchboard.E(op, switchboard.EINVALID, "an audit entry needs an id and an agent id")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	k := e.AgentID + "\x00" + timeKey(e.At) + "#" + e.ID
	if _, ok := s.audit[k]; ok {
		return conflict(op)
	}
	e.At = e.At.UTC() // as stored and read back by the real store
	s.audit[k] = e
	return nil
}

// ByRoot returns the chain's entries ordered by time, then id.
func (s *Store) ByRoot(_ context.Context, rootRunID string) ([]switchboard.AuditEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries := []switchboard.AuditEntry{}
	if rootRunID == "" {
		return entries, nil
	}
	for _, e := range s.audit {
		if e.Run.RootRunID == rootRunID {
			entries = append(entries, e)
		}
	}
	slices.SortFunc(entries, func(a, b switchboard.AuditEntry) int {
		return strings.Compare(timeKey(a.At)+"#"+a.ID, timeKey(b.At)+"#"+b.ID)
	})
	return entries, nil
}

// Put stores r unless a receipt with the same agent, start time and run id
// exists (ECONFLICT). EINVALID without AgentID or Run.RunID.
func (s *Store) Put(_ context.Context, r switchboard.Receipt) error {
	return s.putReceipt("receipts.put", r, false)
}

// putReceipt stores r; an existing receipt of the same agent, start time
// and run id is ECONFLICT, or is overwritten when overwrite is set.
func (s *Store) putReceipt(op string, r switchboard.Receipt, overwrite bool) error {
	if err := checkReceipt(op, r); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	k := r.AgentID + "\x00" + timeKey(r.StartedAt) + "#" + r.Run.RunID
	if _, ok := s.receipts[k]; ok && !overwrite {
		return conflict(op)
	}
	r.StartedAt = r.StartedAt.UTC()
	s.receipts[k] = r
	return nil
}

func checkReceipt(op string, r switchboard.Receipt) error {
	if r.AgentID == "" || r.Run.RunID == "" {
		return switchboard.E(op, switchboard.EINVALID, "a receipt needs an agent id and a run id")
	}
	return nil
}

// ChainCost sums the chain's receipts; Receipts come oldest first.
func (s *Store) ChainCost(_ context.Context, rootRunID string) (switchboard.ChainCost, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cost := switchboard.ChainCost{RootRunID: rootRunID}
	if rootRunID == "" {
		return cost, nil
	}
	var rs []switchboard.Receipt
	for _, r := range s.receipts {
		if r.Run.RootRunID == rootRunID {
			rs = append(rs, r)
		}
	}
	slices.SortFunc(rs, func(a, b switchboard.Receipt) int {
		return strings.Compare(timeKey(a.StartedAt)+"#"+a.Run.RunID, timeKey(b.StartedAt)+"#"+b.Run.RunID)
	})
	for _, r := range rs {
		cost.Add(r)
	}
	return cost, nil
}

// AgentCostSince sums the receipts charged to agentID (a run's PaidBy,
// else its agent) started at or after since.
func (s *Store) AgentCostSince(_ context.Context, agentID string, since time.Time) (float64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rs []switchboard.Receipt
	for _, r := range s.receipts {
		payer := r.AgentID
		if r.Run.PaidBy != "" {
			payer = r.Run.PaidBy
		}
		if payer == agentID && !r.StartedAt.Before(since) {
			rs = append(rs, r)
		}
	}
	// Sum in key order, like the real query, so float totals match bit for bit.
	slices.SortFunc(rs, func(a, b switchboard.Receipt) int {
		return strings.Compare(timeKey(a.StartedAt)+"#"+a.Run.RunID, timeKey(b.StartedAt)+"#"+b.Run.RunID)
	})
	var total float64
	for _, r := range rs {
		total += r.CostUSD
	}
	return total, nil
}

// RecordRun overwrites the job's last run. EINVALID without a job name.
func (s *Store) RecordRun(_ context.Context, r switchboard.JobRun) error {
	if r.Job == "" {
		return switchboard.E("jobs.recordRun", switchboard.EINVALID, "a job run needs a job name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	r.StartedAt = r.StartedAt.UTC()
	s.jobs[r.Job] = r
	return nil
}

// LastRuns returns every job's last run sorted by name.
func (s *Store) LastRuns(context.Context) ([]switchboard.JobRun, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	runs := []switchboard.JobRun{}
	for _, r := range s.jobs {
		runs = append(runs, r)
	}
	slices.SortFunc(runs, func(a, b switchboard.JobRun) int { return strings.Compare(a.Job, b.Job) })
	return runs, nil
}

// Claim reports true when key is new or its marker expired before now (in
// whole seconds, like the DynamoDB condition expiresAt < :now). A zero
// expires keeps the marker forever. EINVALID for an empty key or one longer
// than 1,024 bytes.
func (s *Store) Claim(_ context.Context, key string, expires time.Time) (bool, error) {
	if err := switchboard.CheckStateKey("markers.claim", "marker", key); err != nil {
		return false, err
	}
	now := s.now().Unix()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	if exp, ok := s.markers[key]; ok && !expired(exp, now) {
		return false, nil
	}
	s.markers[key] = ttl(expires)
	return true, nil
}
