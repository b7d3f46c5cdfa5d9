package fleet_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/productdata/pds/snapshots/fleet"
)

// stallingOrigin is a file origin whose reads of one file stall until
// released, so that a pull holds its directory's lock for as long as a test
// needs. started is closed when the first read of that file begins.
type stallingOrigin struct {
	fleet.Origin
	name      string
	startOnce sync.Once
	started   chan struct{}
	release   chan struct{}
}

func (o *stallingOrigin) Open(ctx context.Context, name string, offset int64) (io.ReadCloser, error) {
	if name == o.name {
		o.startOnce.Do(func() { close(o.started) })
		select {
		case <-o.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return o.Origin.Open(ctx, name, offset)
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestLockedDirectoryFailsCleanly: while one pull works in a snapshots
// directory, a pull, a rollback and a follower's poll that will not wait
// fail with ErrLocked, naming the lock file and its holder; a pull that
// waits says so once, then finds the build current. The first pull
// completes.
func TestLockedDirectoryFailsCleanly(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t, t.TempDir())
	b1 := signedCopy(t, 1, k)
	fo, _ := fileOrigin(t)
	publish(t, fo, b1)
	o := &stallingOrigin{Origin: fo, name: buildID(t, b1) + "/" + largestFile(t, b1).Path,
		started: make(chan struct{}), release: make(chan struct{})}
	snaps := filepath.Join(t.TempDir(), "snapshots")

	first := make(chan error, 1)
	go func() {
		_, err := fleet.Pull(ctx, o, snaps, pullOpts(k))
		first <- err
	}()
	<-o.started
	lockFile := filepath.Join(snaps, fleet.LockName)
	holder := fmt.Sprintf("held by pid %d (", os.Getpid())
	checkLocked := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, fleet.ErrLocked) || !strings.Contains(err.Error(), lockFile) || !strings.Contains(err.Error(), holder) {
			t.Errorf("%s while another pull holds the lock: %v; want ErrLocked naming %s and %q", what, err, lockFile, holder)
		}
	}
	_, err := fleet.Pull(ctx, o, snaps, pullOpts(k))
	checkLocked("pull", err)
	_, err = fleet.Rollback(ctx, snaps, "", fleet.RollbackOptions{Verifier: k.pub})
	checkLocked("rollback", err)
	f := follower(t, o, snaps, k)
	_, err = f.Poll(ctx)
	checkLocked("follower poll", err)
	if f.Stats.Failed.Load() != 1 || f.Stats.Refused.Load() != 0 {
		t.Errorf("a locked directory should count as a failed poll, to retry: %v", f.Stats.LogValue())
	}

	waited := make(chan error, 1)
	progress := &syncBuffer{}
	var second fleet.Pulled
	go func() {
		opts := pullOpts(k)
		opts.LockWait, opts.Progress = time.Hour, progress
		var err error
		second, err = fleet.Pull(ctx, o, snaps, opts)
		waited <- err
	}()
	for !strings.Contains(progress.String(), "waiting up to 1h0m0s for "+lockFile+", "+holder) {
		select {
		case err := <-waited:
			t.Fatalf("a waiting pull ended before the lock was free: %v; it said %q", err, progress.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	close(o.release)
	if err := <-first; err != nil {
		t.Fatalf("the pull holding the lock: %v", err)
	}
	if err := <-waited; err != nil || !second.UpToDate {
		t.Fatalf("the waiting pull: %+v %v; want it to find the build current", second, err)
	}
	serves(t, snaps, buildID(t, b1), k)
}

// TestConcurrentPullsIntoOneDirectory: three pulls at once into one
// directory, waiting for its lock, all succeed; one fetches the build and
// the others find it current.
func TestConcurrentPullsIntoOneDirectory(t *testing.T) {
	k := newKeys(t, t.TempDir())
	o, _ := fileOrigin(t)
	publish(t, o, signedCopy(t, 1, k))
	snaps := filepath.Join(t.TempDir(), "snapshots")
	results := make([]fleet.Pulled, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			opts := pullOpts(k)
			opts.LockWait = time.Hour
			results[i], errs[i] = fleet.Pull(context.Background(), o, snaps, opts)
		})
	}
	wg.Wait()
	fetched := 0
	for i, err := range errs {
		if err != nil {
			t.Fatalf("pull %d: %v", i, err)
		}
		if !results[i].UpToDate {
			fetched++
		}
	}
	if fetched != 1 {
		t.Errorf("%d pulls fetched the build, want 1", fetched)
	}
	serves(t, snaps, results[0].ID, k)
}
