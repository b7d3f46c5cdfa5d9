package progress

import (
	"sync/atomic"
	"testing"
	"time"
)

// Reports come while the work runs and none after stop, which may be called
// twice.
func TestStartStop(t *testing.T) {
	var n atomic.Int64
	stop := Start(time.Millisecond, func(time.Time) { n.Add(1) })
	for i := 0; i < 1000 && n.Load() < 3; i++ {
		time.Sleep(time.Millisecond)
	}
	stop()
	stop()
	got := n.Load()
	if got < 3 {
		t.Fatalf("%d reports before stop, want at least 3", got)
	}
	time.Sleep(10 * time.Millisecond)
	if after := n.Load(); after != got {
		t.Fatalf("%d reports after stop", after-got)
	}
}
