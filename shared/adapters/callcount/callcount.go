// Package callcount counts requests per endpoint for the third-party
// clients (Rocket.Chat, Nextcloud, Telegram), so that benchmarks and closing
// notes can report calls per operation. The zero value is ready to use and
// safe for concurrent use.
package callcount

import (
	"maps"
	"sync"
)

// Counter counts calls by name.
type Counter struct {
	mu sync.Mutex
	m  map[string]int
}

// Add counts one call of name.
func (c *Counter) Add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]int{}
	}
	c.m[name]++
}

// Snapshot returns a copy of the counts (an empty map before any call).
func (c *Counter) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		return map[string]int{}
	}
	return maps.Clone(c.m)
}
