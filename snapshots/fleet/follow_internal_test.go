package fleet

import (
	"testing"
	"time"
)

// TestRetryDelayBacksOffToThePollInterval: after a poll that failed for a
// reason a retry may change, the follower tries again after 2 s, doubling
// with each failure in a row, never later than its poll interval; with no
// failure it waits the interval.
func TestRetryDelayBacksOffToThePollInterval(t *testing.T) {
	for _, c := range []struct {
		failures int
		every    time.Duration
		want     time.Duration
	}{
		{0, 30 * time.Second, 30 * time.Second},
		{1, 30 * time.Second, 2 * time.Second},
		{2, 30 * time.Second, 4 * time.Second},
		{4, 30 * time.Second, 16 * time.Second},
		{5, 30 * time.Second, 30 * time.Second},
		{100, 30 * time.Second, 30 * time.Second},
		{1, time.Second, time.Second},
		{11, time.Hour, 2048 * time.Second},
		{12, time.Hour, time.Hour},
	} {
		if got := retryDelay(c.failures, c.every); got != c.want {
			t.Errorf("retryDelay(%d, %s) = %s, want %s", c.failures, c.every, got, c.want)
		}
	}
}
