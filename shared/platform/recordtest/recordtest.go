// Package recordtest is what fakes keep: the list of what they were handed
// (calls, requests, jobs) and values a test changes while the code under
// test reads them, safe for the goroutines of both. Tests only.
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

// Value is a value a test changes while the code under test reads it
// (an agent's configuration, say). The zero value is ready.
type Value[T any] struct {
	mu sync.Mutex
	v  T
}

// Get returns the value.
func (x *Value[T]) Get() T {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.v
}

// Set replaces the value.
func (x *Value[T]) Set(v T) { x.Update(func(p *T) { *p = v }) }

// Update changes the value in place.
func (x *Value[T]) Update(f func(*T)) {
	x.mu.Lock()
	defer x.mu.Unlock()
	f(&x.v)
}
