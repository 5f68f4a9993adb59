package dynamo

import (
	"context"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

var _ switchboard.Counters = (*Store)(nil)

// counterItem is one bounded counter in the state table. ExpiresAt is the
// TTL attribute (epoch seconds); 0 (omitted) means the counter never expires.
type counterItem struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	N         int64  `dynamodbav:"n"`
	ExpiresAt int64  `dynamodbav:"expiresAt,omitempty"`
}

// live reports whether the counter has not expired at now (epoch seconds):
// expiresAt < now is expired, the same test as the condition expressions.
func (it counterItem) live(now int64) bool { return it.ExpiresAt == 0 || it.ExpiresAt >= now }

// incrRounds bounds Incr's attempts when concurrent resets or restarts keep
// changing the counter between its requests. A round is at most three
// requests, and another round needs a Reset or a restart to land between
// two of them.
const incrRounds = 4

// Incr counts one call against key. The common case (a live counter below
// its limit, or a new one) is one conditional UpdateItem:
//
//	ADD n :one SET expiresAt = :exp   (REMOVE expiresAt when expires is zero)
//	if (attribute_not_exists(expiresAt) OR expiresAt >= :now)
//	   AND (attribute_not_exists(n) OR n < :limit)
//
// The condition leaves out expired counters on purpose: an ADD would carry
// on from the stale count. When it fails the counter is at its limit or has
// expired. AWS returns the old item with the failure
// (ReturnValuesOnConditionCheckFailure ALL_OLD); dynalite 4.0.0 drops that
// parameter, so there Incr reads the item (consistent GetItem). An expired
// counter is then restarted at 1 by a PutItem conditioned on
// expiresAt < :now, so that of two concurrent restarts one wins.
//
// Requests per call, AWS (dynalite): counted 1 (1); refused at the limit
// 1 (2); first call after expiry 2 (3). A concurrent Reset or restart
// between these requests makes Incr start over; the worst case is
// incrRounds rounds (8 requests in AWS, 12 on dynalite) and then
// EUNAVAILABLE.
//
// Every counted call sets the expiry to expires, so callers pass the end of
// a fixed window (the end of the hour), not now+window; a refused call
// leaves it alone. Expiry is in whole seconds: the counter still counts
// during the second it expires. EINVALID for an empty key or one longer
// than 1,024 bytes.
func (s *Store) Incr(ctx context.Context, key string, limit int, expires time.Time) (int, bool, error) {
	const op = "counters.incr"
	if err := switchboard.CheckStateKey(op, "counter", key); err != nil {
		return 0, false, err
	}
	now, exp := s.now().Unix(), ttl(expires)
	for range incrRounds {
		n, counted, old, err := s.incrLive(ctx, op, key, limit, exp, now)
		if err != nil || counted {
			return n, counted, err
		}
		if old == nil { // refused without the old item: read it
			if old, err = s.readCounter(ctx, op, key); err != nil {
				return 0, false, err
			}
		}
		switch {
		case old == nil:
			// Reset between the two requests: start over.
		case !old.live(now):
			restarted, err := s.restartCounter(ctx, op, key, exp, now)
			if err != nil {
				return 0, false, err
			}
			if restarted {
				return 1, true, nil
			}
			// Another caller restarted or reset it first: start over.
		case limit > 0 && old.N >= int64(limit):
			return int(old.N), false, nil
		}
		// Below the limit again (reset or restarted meanwhile): start over.
	}
	return 0, false, switchboard.E(op, switchboard.EUNAVAILABLE,
		"the counter changed under every attempt; try again in a moment")
}

// incrLive is the conditional increment of a live counter below limit. It
// reports the new count, or counted false with the old item when AWS sent
// it along with the refusal (nil from dynalite).
func (s *Store) incrLive(ctx context.Context, op, key string, limit int, exp, now int64) (n int, counted bool, old *counterItem, err error) {
	update := "ADD n :one SET expiresAt = :exp"
	values := map[string]ddb.AttributeValue{":one": numAV(1), ":now": numAV(now)}
	if exp == 0 {
		update = "ADD n :one REMOVE expiresAt"
	} else {
		values[":exp"] = numAV(exp)
	}
	cond := "(attribute_not_exists(expiresAt) OR expiresAt >= :now)"
	if limit > 0 {
		cond += " AND (attribute_not_exists(n) OR n < :limit)"
		values[":limit"] = numAV(int64(limit))
	}
	out, err := s.update(ctx, op, &ddb.UpdateItemInput{
		TableName:                           &s.state,
		Key:                                 itemKey(counterKey(key)),
		UpdateExpression:                    &update,
		ConditionExpression:                 &cond,
		ExpressionAttributeValues:           values,
		ReturnValues:                        ddb.ReturnValueUpdatedNew,
		ReturnValuesOnConditionCheckFailure: ddb.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if cf := conditionFailure(err); cf != nil {
		if len(cf.Item) == 0 {
			return 0, false, nil, nil
		}
		old, err := decodeCounter(op, cf.Item)
		return 0, false, old, err
	}
	if err != nil {
		return 0, false, nil, err
	}
	it, err := decodeCounter(op, out.Attributes)
	if err != nil {
		return 0, false, nil, err
	}
	return int(it.N), true, nil, nil
}

// readCounter reads key's counter; nil when there is none.
func (s *Store) readCounter(ctx context.Context, op, key string) (*counterItem, error) {
	av, err := s.get(ctx, op, s.state, itemKey(counterKey(key)))
	if err != nil || av == nil {
		return nil, err
	}
	return decodeCounter(op, av)
}

// restartCounter replaces an expired counter by a fresh one at 1; false
// when the counter is no longer expired (or gone) by the time it lands.
func (s *Store) restartCounter(ctx context.Context, op, key string, exp, now int64) (bool, error) {
	pk, sk := counterKey(key)
	item, err := ddb.MarshalMap(counterItem{PK: pk, SK: sk, N: 1, ExpiresAt: exp})
	if err != nil {
		return false, switchboard.Wrap(op, switchboard.EINTERNAL, "counter could not be encoded", err)
	}
	err = s.put(ctx, op, s.state, item, condition{
		expr:   "expiresAt < :now",
		values: map[string]ddb.AttributeValue{":now": numAV(now)},
	})
	if conditionFailed(err) {
		return false, nil
	}
	return err == nil, err
}

func decodeCounter(op string, av map[string]ddb.AttributeValue) (*counterItem, error) {
	var it counterItem
	if err := ddb.UnmarshalMap(av, &it); err != nil {
		return nil, switchboard.Wrap(op, switchboard.EINTERNAL,
			"a stored counter could not be read; the operator can find details in the logs", err)
	}
	return &it, nil
}

// Peek reads key's count: one consistent GetItem (1 RCU in AWS); 0 when
// the counter is missing or expired. EINVALID for an empty or over-long key.
func (s *Store) Peek(ctx context.Context, key string) (int, error) {
	const op = "counters.peek"
	if err := switchboard.CheckStateKey(op, "counter", key); err != nil {
		return 0, err
	}
	it, err := s.readCounter(ctx, op, key)
	if err != nil || it == nil || !it.live(s.now().Unix()) {
		return 0, err
	}
	return int(it.N), nil
}

// Reset deletes key's counter (an unconditional DeleteItem; 1 WCU in AWS
// whether or not it existed). EINVALID for an empty or over-long key.
func (s *Store) Reset(ctx context.Context, key string) error {
	const op = "counters.reset"
	if err := switchboard.CheckStateKey(op, "counter", key); err != nil {
		return err
	}
	return s.del(ctx, op, s.state, itemKey(counterKey(key)), condition{})
}

// Decr takes one increment back: one conditional UpdateItem that never goes
// below zero; a missing counter is left alone.
func (s *Store) Decr(ctx context.Context, key string) error {
	const op = "counters.decr"
	if err := switchboard.CheckStateKey(op, "counter", key); err != nil {
		return err
	}
	update, cond := "ADD n :minus", "n > :zero"
	_, err := s.update(ctx, op, &ddb.UpdateItemInput{
		TableName:                 &s.state,
		Key:                       itemKey(counterKey(key)),
		UpdateExpression:          &update,
		ConditionExpression:       &cond,
		ExpressionAttributeValues: map[string]ddb.AttributeValue{":minus": numAV(-1), ":zero": numAV(0)},
	})
	if conditionFailure(err) != nil {
		return nil // missing or already zero
	}
	return err
}
