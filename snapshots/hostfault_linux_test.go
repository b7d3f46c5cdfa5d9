package snapshots_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/productdata/pds/snapshots"
)

// withFileLimit runs fn with this process allowed extra file descriptors
// beyond those it has open (its soft RLIMIT_NOFILE lowered, as `ulimit -n`
// does), and puts the limit back.
func withFileLimit(t testing.TB, extra int, fn func()) {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	low := syscall.Rlimit{Cur: uint64(len(fds) + extra), Max: was.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
			t.Fatal(err)
		}
	}()
	fn()
}

// TestOpenShortOfFilesNamesTheCause: a process short of file descriptors
// fails to open or self-test a snapshot wherever it runs out (the store,
// its metadata, the point index, the search index), and every such
// failure names the cause, too many open files, rather than a fault of
// the snapshot's; given enough, the same snapshot passes.
func TestOpenShortOfFilesNamesTheCause(t *testing.T) {
	dir := signedCopy(t, 1, keyPair{})
	failed := 0
	for extra := 1; extra <= 64; extra++ {
		var err error
		withFileLimit(t, extra, func() {
			err = snapshots.SelfTest(context.Background(), dir, snapshots.OpenOptions{CacheBytes: 8 << 20})
		})
		if err == nil {
			if failed == 0 {
				t.Fatalf("the self-test passed with %d file descriptors to spare: the test needs a limit it runs out at", extra)
			}
			return
		}
		failed++
		if !strings.Contains(err.Error(), "too many open files") || !errors.Is(err, syscall.EMFILE) {
			t.Errorf("with %d file descriptors to spare: %v; want the cause named (too many open files)", extra, err)
		}
	}
	t.Fatal("the self-test failed with 64 file descriptors to spare")
}
