package dynamo

import "testing"

// SetSearchFirstPage makes Search read n search rows per word before it
// decides which words are rare, until t ends.
func SetSearchFirstPage(t testing.TB, n int32) {
	old := firstPage
	firstPage = n
	t.Cleanup(func() { firstPage = old })
}

// SetSearchBudget sets the search rows and lookups one Search call may
// spend, until t ends.
func SetSearchBudget(t testing.TB, rows, lookups int) {
	oldRows, oldLookups := searchRowBudget, searchLookupBudget
	searchRowBudget, searchLookupBudget = rows, lookups
	t.Cleanup(func() { searchRowBudget, searchLookupBudget = oldRows, oldLookups })
}
