package memstore

import (
	"context"
	"time"

	"github.com/switchboard-dev/switchboard/shared/switchboard"
)

// Incr counts one call against key unless the live counter has reached
// limit (limit <= 0: no limit). An expired counter (expiry before now, in
// whole seconds) starts again at 1. Every counted call sets the expiry to
// expires; a refused call leaves it alone. EINVALID for an empty key or one
// longer than 1,024 bytes.
func (s *Store) Incr(_ context.Context, key string, limit int, expires time.Time) (int, bool, error) {
	if err := switchboard.CheckStateKey("counters.incr", "counter", key); err != nil {
		return 0, false, err
	}
	now := s.now().Unix()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	c, ok := s.counters[key]
	if !ok || expired(c.exp, now) {
		c = counter{}
	}
	if limit > 0 && c.n >= int64(limit) {
		return int(c.n), false, nil
	}
	c.n++
	c.exp = ttl(expires)
	s.counters[key] = c
	return int(c.n), true, nil
}

// Peek reads key's count: 0 when missing or expired. EINVALID as for Incr.
func (s *Store) Peek(_ context.Context, key string) (int, error) {
	if err := switchboard.CheckStateKey("counters.peek", "counter", key); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.counters[key]
	if !ok || expired(c.exp, s.now().Unix()) {
		return 0, nil
	}
	return int(c.n), nil
}

// Reset deletes key's counter. EINVALID as for Incr.
func (s *Store) Reset(_ context.Context, key string) error {
	if err := switchboard.CheckStateKey("counters.reset", "counter", key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.counters, key)
	return nil
}

// KV is the Store's KV (a view sharing its data and clock); get it from
// Store.KV. It is a type of its own because KV.Put and ReceiptStore.Put
// cannot share one method set.
type KV struct{ s *Store }

// KV returns the store's KV view.
func (s *Store) KV() *KV { return &KV{s: s} }

// Get returns key's value; not found when absent or expired (expiry before
// now, whole seconds). EINVALID for an empty key or one longer than 1,024
// bytes.
func (kv *KV) Get(_ context.Context, key string) (string, bool, error) {
	if err := switchboard.CheckStateKey("kv.get", "KV", key); err != nil {
		return "", false, err
	}
	s := kv.s
	now := s.now().Unix()
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.values[key]
	if !ok || expired(v.exp, now) {
		return "", false, nil
	}
	return v.v, true, nil
}

// Put writes key. EINVALID for a bad key or a value that is empty ("" means
// absent to PutIf) or longer than 64 KiB.
func (kv *KV) Put(_ context.Context, key, val string, expires time.Time) error {
	if err := switchboard.CheckKVValue("kv.put", key, val); err != nil {
		return err
	}
	s := kv.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	s.values[key] = value{v: val, exp: ttl(expires)}
	return nil
}

// PutIf writes key when its live value equals old ("" = absent or
// expired); ECONFLICT otherwise. EINVALID as for Put.
func (kv *KV) PutIf(_ context.Context, key, old, val string, expires time.Time) error {
	const op = "kv.putIf"
	if err := switchboard.CheckKVValue(op, key, val); err != nil {
		return err
	}
	s := kv.s
	now := s.now().Unix()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	var current string
	if v, ok := s.values[key]; ok && !expired(v.exp, now) {
		current = v.v
	}
	if current != old {
		return switchboard.E(op, switchboard.ECONFLICT, "the value changed since it was read; read it again and retry")
	}
	s.values[key] = value{v: val, exp: ttl(expires)}
	return nil
}

// Acquire takes key for holder until the given time when it is free, held
// by holder already, or held by a lease that ended before now (milliseconds;
// a lease is still held during its last millisecond). EINVALID for an
// empty or over-long key or holder (1 to 1,024 bytes) or a zero until.
func (s *Store) Acquire(_ context.Context, key, holder string, until time.Time) (bool, error) {
	const op = "leases.acquire"
	if err := switchboard.CheckLease(op, key, holder); err != nil {
		return false, err
	}
	if until.IsZero() {
		return false, switchboard.E(op, switchboard.EINVALID, "a lease needs an end time")
	}
	now := s.now().UnixMilli()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	if l, ok := s.leases[key]; ok && l.holder != holder && l.until >= now {
		return false, nil
	}
	s.leases[key] = lease{holder: holder, until: until.UnixMilli()}
	return true, nil
}

// Release deletes key's lease if holder has it (expired or not); otherwise
// it does nothing. EINVALID as for Acquire.
func (s *Store) Release(_ context.Context, key, holder string) error {
	if err := switchboard.CheckLease("leases.release", key, holder); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.leases[key]; ok && l.holder == holder {
		delete(s.leases, key)
	}
	return nil
}

// dropLease deletes key's lease whoever holds it.
func (s *Store) dropLease(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.leases, key)
}

// Unclaim gives a claimed marker back; unclaiming a missing key is fine.
func (s *Store) Unclaim(_ context.Context, key string) error {
	if err := switchboard.CheckStateKey("markers.unclaim", "marker", key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	delete(s.markers, key)
	return nil
}

// Decr takes one increment back, never below zero.
func (s *Store) Decr(_ context.Context, key string) error {
	if err := switchboard.CheckStateKey("counters.decr", "counter", key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.initLocked()
	if c, ok := s.counters[key]; ok && c.n > 0 {
		c.n--
		s.counters[key] = c
	}
	return nil
}
