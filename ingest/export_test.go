package ingest

// SetJoinParts makes the document join cut its work into n parts instead of
// one a core, until the returned restore is called.
func SetJoinParts(n int) (restore func()) {
	old := joinParts
	joinParts = func() int { return n }
	return func() { joinParts = old }
}

// SetIDFilterBytes sizes the id filter of the builds that start before the
// returned restore is called.
func SetIDFilterBytes(n int) (restore func()) {
	old := seenBytes
	seenBytes = n
	return func() { seenBytes = old }
}

// SetMaxStoreLayers makes incremental builds write the store whole once it
// would hold more than n layers, until the returned restore is called.
func SetMaxStoreLayers(n int) (restore func()) {
	old := maxStoreLayers
	maxStoreLayers = n
	return func() { maxStoreLayers = old }
}

// SetOpenedBase calls fn with the base's records folder once an
// incremental build has opened and checked its base.
func SetOpenedBase(fn func(records string)) (restore func()) {
	old := openedBase
	openedBase = fn
	return func() { openedBase = old }
}
