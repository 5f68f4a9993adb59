package dynamo

import (
	"context"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// ConsoleState is a Store whose state rows (KV values, counters) live in the
// console table instead of the state table: the web console keeps its login
// sessions and login-attempt counters there, so that its role may read the
// other tables without being able to write them. It shares s's client and
// clock; its request counters (Stats) are its own.
func (s *Store) ConsoleState(getenv func(string) string) *Store {
	return &Store{
		Now:   s.Now,
		c:     s.c,
		state: tableName("console", getenv),
	}
}

// Delete removes key's value (one unconditional DeleteItem); deleting a
// missing key is fine. EINVALID for a bad key (see Get).
func (kv *KV) Delete(ctx context.Context, key string) error {
	const op = "kv.delete"
	if err := switchboard.CheckStateKey(op, "KV", key); err != nil {
		return err
	}
	return kv.s.del(ctx, op, kv.s.state, itemKey(kvKey(key)), condition{})
}
