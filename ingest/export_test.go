package ingest

// SetJoinParts makes the document join cut its work into n parts instead of
// one a core, until the returned restore is called.
func SetJoinParts(n int) (restore func()) {
	old := joinParts
	joinParts = func() int { return n }
	return func() { joinParts = old }
}
