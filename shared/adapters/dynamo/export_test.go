package dynamo

import "testing"

// SetSearchFirstPage makes Search read n search rows per word before it
// decides which words are rare, until t ends.
func SetSearchFirstPage(t testing.TB, n int32) {
	old := firstPage
	firstPage = n
	t.Cleanup(func() { firstPage = old })
}

// SetSearchBudget sets the RCU one Search call may spend on search rows
// and lookups, until t ends.
func SetSearchBudget(t testing.TB, rcu float64) {
	old := searchBudget
	searchBudget = rcu
	t.Cleanup(func() { searchBudget = old })
}
