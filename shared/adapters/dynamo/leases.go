package dynamo

import (
	"context"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

var _ switchboard.Leases = (*Store)(nil)

// leaseGrace is how long after its end a lease item stays for TTL. Only
// garbage collection depends on it: Acquire compares until, never expiresAt.
const leaseGrace = time.Hour

// leaseItem is one lease in the state table: Until is its end in epoch
// milliseconds (runs are short, seconds matter), ExpiresAt the TTL attribute.
type leaseItem struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	Holder    string `dynamodbav:"holder"`
	Until     int64  `dynamodbav:"until"`
	ExpiresAt int64  `dynamodbav:"expiresAt"`
}

// Acquire is one conditional PutItem:
//
//	attribute_not_exists(pk) OR holder = :h OR #u < :now
//
// (until is a reserved word; :now in epoch milliseconds). So a free key, the
// holder's own lease (extended, or shortened, to until) and a lease that
// ended before now can be taken; a lease is still held during its last
// millisecond. false, nil when another holder has it. EINVALID for an empty
// or over-long key or holder (1 to 1,024 bytes) or a zero until.
func (s *Store) Acquire(ctx context.Context, key, holder string, until time.Time) (bool, error) {
	const op = "leases.acquire"
	if err := switchboard.CheckLease(op, key, holder); err != nil {
		return false, err
	}
	if until.IsZero() {
		return false, switchboard.E(op, switchboard.EINVALID, "a lease needs an end time")
	}
	pk, sk := leaseKey(key)
	item, err := ddb.MarshalMap(leaseItem{PK: pk, SK: sk, Holder: holder,
		Until: until.UnixMilli(), ExpiresAt: until.Add(leaseGrace).Unix()})
	if err != nil {
		return false, switchboard.Wrap(op, switchboard.EINTERNAL, "lease could not be encoded", err)
	}
	err = s.put(ctx, op, s.state, item, condition{
		expr:  "attribute_not_exists(pk) OR holder = :h OR #u < :now",
		names: map[string]string{"#u": "until"},
		values: map[string]ddb.AttributeValue{
			":h":   strAV(holder),
			":now": numAV(s.now().UnixMilli()),
		},
	})
	if conditionFailed(err) {
		return false, nil // another holder's unexpired lease
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// Release is one DeleteItem conditioned on holder = :h; when someone else
// holds key (or nobody does) the refusal is swallowed and Release does
// nothing (AWS still bills the refused delete 1 WCU). EINVALID as for
// Acquire.
func (s *Store) Release(ctx context.Context, key, holder string) error {
	const op = "leases.release"
	if err := switchboard.CheckLease(op, key, holder); err != nil {
		return err
	}
	err := s.del(ctx, op, s.state, itemKey(leaseKey(key)), condition{
		expr:   "holder = :h",
		values: map[string]ddb.AttributeValue{":h": strAV(holder)},
	})
	if conditionFailed(err) {
		return nil
	}
	return err
}
