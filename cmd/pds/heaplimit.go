package main

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// heapLimit is the soft memory limit of the Go heap for a live heap of
// live bytes: floor, or half again the live heap when that is more. A
// fixed limit close to what is live makes the collector run again as soon
// as it has finished (the heap has no room to grow between collections),
// which at 10,000,000 products took about two fifths of the views stage's
// CPU; half the live heap as room keeps a collection for every half a live
// heap allocated, as GOGC=50 would.
func heapLimit(floor, live int64) int64 { return max(floor, live+live/2) }

// keepHeapRoom sets the soft memory limit to heapLimit(floor, live heap)
// now and every interval until stop is called, which puts back the limit
// there was before.
func keepHeapRoom(floor int64, interval time.Duration) (stop func()) {
	before := debug.SetMemoryLimit(floor)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	set := func() {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			debug.SetMemoryLimit(heapLimit(floor, int64(sample[0].Value.Uint64())))
		}
	}
	set()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				set()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		debug.SetMemoryLimit(before)
	}
}
