package dynamo

import (
	"context"
	"time"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

var _ switchboard.KV = (*KV)(nil)

// KV is the domain's KV on the state table. It is a view of its Store
// (same client, clock and Stats); get it from Store.KV. It is a type of its
// own because KV.Put and ReceiptStore.Put cannot share one method set.
type KV struct{ s *Store }

// KV returns the store's KV view.
func (s *Store) KV() *KV { return &KV{s: s} }

// kvItem is one value in the state table. ExpiresAt is the TTL attribute
// (epoch seconds); 0 (omitted) means never.
type kvItem struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	Value     string `dynamodbav:"value"`
	ExpiresAt int64  `dynamodbav:"expiresAt,omitempty"`
}

// Get is one strongly consistent GetItem (1 RCU up to 4 KB, found or not).
// An expired value (expiresAt < now, whole seconds) is not found: TTL
// deletion is lazy in AWS and never happens in dynalite. EINVALID for an
// empty key or one longer than 1,024 bytes.
func (kv *KV) Get(ctx context.Context, key string) (string, bool, error) {
	const op = "kv.get"
	if err := switchboard.CheckStateKey(op, "KV", key); err != nil {
		return "", false, err
	}
	now := kv.s.now().Unix()
	av, err := kv.s.get(ctx, op, kv.s.state, itemKey(kvKey(key)))
	if err != nil || av == nil {
		return "", false, err
	}
	var it kvItem
	if err := ddb.UnmarshalMap(av, &it); err != nil {
		return "", false, switchboard.Wrap(op, switchboard.EINTERNAL,
			"a stored value could not be read; the operator can find details in the logs", err)
	}
	if it.ExpiresAt != 0 && it.ExpiresAt < now {
		return "", false, nil
	}
	return it.Value, true, nil
}

// Put is one unconditional PutItem. EINVALID for a bad key (see Get) or a
// value that is empty ("" means absent to PutIf) or longer than maxValue.
func (kv *KV) Put(ctx context.Context, key, value string, expires time.Time) error {
	const op = "kv.put"
	item, err := kvPutItem(op, key, value, expires)
	if err != nil {
		return err
	}
	return kv.s.put(ctx, op, kv.s.state, item, condition{})
}

// PutIf is one conditional PutItem. With old "" the condition is
//
//	attribute_not_exists(pk) OR expiresAt < :now
//
// and otherwise
//
//	#v = :old AND (attribute_not_exists(expiresAt) OR expiresAt >= :now)
//
// (value is a reserved word). ECONFLICT when it fails; AWS bills the
// refused write too. EINVALID as for Put.
func (kv *KV) PutIf(ctx context.Context, key, old, value string, expires time.Time) error {
	const op = "kv.putIf"
	item, err := kvPutItem(op, key, value, expires)
	if err != nil {
		return err
	}
	c := condition{
		expr:   "attribute_not_exists(pk) OR expiresAt < :now",
		values: map[string]ddb.AttributeValue{":now": numAV(kv.s.now().Unix())},
	}
	if old != "" {
		c.expr = "#v = :old AND (attribute_not_exists(expiresAt) OR expiresAt >= :now)"
		c.names = map[string]string{"#v": "value"}
		c.values[":old"] = strAV(old)
	}
	err = kv.s.put(ctx, op, kv.s.state, item, c)
	if conditionFailed(err) {
		return switchboard.Wrap(op, switchboard.ECONFLICT,
			"the value changed since it was read; read it again and retry", err)
	}
	return err
}

// kvPutItem checks and encodes a value for Put and PutIf.
func kvPutItem(op, key, value string, expires time.Time) (map[string]ddb.AttributeValue, error) {
	if err := switchboard.CheckKVValue(op, key, value); err != nil {
		return nil, err
	}
	pk, sk := kvKey(key)
	item, err := ddb.MarshalMap(kvItem{PK: pk, SK: sk, Value: value, ExpiresAt: ttl(expires)})
	if err != nil {
		return nil, switchboard.Wrap(op, switchboard.EINTERNAL, "value could not be encoded", err)
	}
	return item, nil
}
