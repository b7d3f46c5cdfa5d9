package snapshots

// IndexOpened waits for the background check of the search index, when it
// was started, and reports whether the index was opened; without waiting
// when it was not started.
func IndexOpened(s *Snapshot, wait bool) bool {
	if wait {
		<-s.indexChecked
	}
	return s.index != nil
}
