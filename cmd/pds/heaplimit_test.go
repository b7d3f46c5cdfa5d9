package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestHeapLimitLeavesHalfTheLiveHeapAsRoom(t *testing.T) {
	for _, c := range []struct{ floor, live, want int64 }{
		{384 << 20, 0, 384 << 20},
		{384 << 20, 200 << 20, 384 << 20},
		{384 << 20, 256 << 20, 384 << 20},
		{384 << 20, 300 << 20, 450 << 20},
		{384 << 20, 1 << 30, 3 << 29},
	} {
		if got := heapLimit(c.floor, c.live); got != c.want {
			t.Errorf("heapLimit(%d, %d) = %d, want %d", c.floor, c.live, got, c.want)
		}
	}
}

// With a live heap larger than the floor, the limit rises to half again the
// live heap; stop puts back the limit there was before.
func TestKeepHeapRoomFollowsTheLiveHeap(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	const floor = 8 << 20
	live := make([][]byte, 64)
	for i := range live {
		live[i] = make([]byte, 1<<20) // 64 MiB live, eight times the floor
	}
	stop := keepHeapRoom(floor, 10*time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) < 96<<20 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got < 96<<20 {
		t.Errorf("with 64 MiB live and a floor of 8 MiB the limit is %d, want at least 96 MiB", got)
	}
	runtime.KeepAlive(live)
	stop()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("after stop the limit is %d, want %d as before", got, before)
	}
}
