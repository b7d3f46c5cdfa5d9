package trust

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestConcurrentUpdatesOfOneFolder: updates of one replica at once (a
// follower and an operator's pull) each keep whole statements and none
// fails for another's write.
func TestConcurrentUpdatesOfOneFolder(t *testing.T) {
	f := newFleet(t, "eu")
	f.publish("B1", 1)
	r := f.replica()
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				if _, err := r.Update(context.Background(), f.origin.Fetch, f.now.Add(time.Hour)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if _, err := r.Update(context.Background(), f.origin.Fetch, f.now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
}
