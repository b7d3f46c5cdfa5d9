package http

// LaneServed is how many requests l's fast lane answered itself.
func LaneServed(l *Listener) int64 {
	if l.lane == nil {
		return 0
	}
	return l.lane.served.Load()
}
