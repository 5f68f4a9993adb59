package callcount

import (
	"sync"
	"testing"
)

func TestCounter(t *testing.T) {
	var c Counter
	if got := c.Snapshot(); len(got) != 0 {
		t.Fatalf("zero Counter = %v, want empty", got)
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() { defer wg.Done(); c.Add("a") }()
	}
	wg.Wait()
	c.Add("b")
	snap := c.Snapshot()
	if snap["a"] != 50 || snap["b"] != 1 || len(snap) != 2 {
		t.Errorf("Snapshot = %v, want a:50 b:1", snap)
	}
	snap["a"] = 0
	if c.Snapshot()["a"] != 50 {
		t.Error("Snapshot is not a copy")
	}
}
