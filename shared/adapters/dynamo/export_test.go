package dynamo

import (
	"strings"
	"testing"
	"unicode"
)

// BenchCorpus is the store benchmark's corpus (see benchCorpus).
var BenchCorpus = benchCorpus

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

// formerStopWords is the stop-word list before the longer one of
// switchboard.SearchTerms.
var formerStopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by for from has have i if in into is it its
		of on or so that the their then there these this to was we were will with you your not no
		der die das den dem des ein eine einen einem einer und oder ist sind war mit von zu im in
		auf für nicht es ich du er sie wir ihr am an als auch bei bis noch nur so wie wird`) {
		formerStopWords[w] = true
	}
}

// FormerIndexTerms are the words a message was indexed by before
// switchboard.IndexTerms (the shorter stop-word list; the first 500
// distinct words), so that measurements compare both on one corpus.
func FormerIndexTerms(text string) []string {
	var terms []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		w = strings.ToLower(w)
		if len(w) < 2 || len(w) > 64 || formerStopWords[w] || seen[w] {
			continue
		}
		seen[w] = true
		if terms = append(terms, w); len(terms) == 500 {
			break
		}
	}
	return terms
}
