package progress

import "time"

// Start calls report with the tick's time every period (a second when period
// is not positive) until the returned stop is called. stop waits for a report
// under way to finish and may be called more than once.
func Start(period time.Duration, report func(now time.Time)) (stop func()) {
	if period <= 0 {
		period = time.Second
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				report(now)
			}
		}
	}()
	stopped := false
	return func() {
		if !stopped {
			stopped = true
			close(done)
			<-finished
		}
	}
}
