package commtool

// SetAnalysedCap lowers how many messages list_pairs and stats read, so a
// test reaches the cut with a few messages; it returns the undo.
func SetAnalysedCap(n int) func() {
	old := analysedCap
	analysedCap = n
	return func() { analysedCap = old }
}
