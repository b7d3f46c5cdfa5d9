package httpfront

// LaneServed is how many requests l's lane answered itself.
func LaneServed(l *Listener) int64 {
	if l.lane == nil {
		return 0
	}
	return l.lane.served.Load()
}

// IdleOrder is the client addresses of l's idle connections, least
// recently used first.
func IdleOrder(l *Listener) []string {
	t := l.ln.(*countedListener).t
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for c := t.head; c != nil; c = c.next {
		out = append(out, c.RemoteAddr().String())
	}
	return out
}
