// Package recordtest is the list a fake keeps of what it was handed (calls,
// requests, jobs), safe for the goroutines of the code under test while
// the test reads it. Tests only.
package recordtest

import "sync"

// List records values in order. The zero value is ready.
type List[T any] struct {
	mu sync.Mutex
	xs []T
}

// Add records x.
func (l *List[T]) Add(x T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.xs = append(l.xs, x)
}

// All returns a copy of everything recorded, oldest first.
func (l *List[T]) All() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]T(nil), l.xs...)
}
