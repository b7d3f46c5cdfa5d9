package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/productdata/pds/snapshots"
	"github.com/productdata/pds/snapshots/fleet"
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

// TestFollowerShortOfFilesTakesTheBuildLater: a follower that runs short of
// file descriptors while it fetches, verifies or self-tests a good build
// neither refuses nor removes it: each such poll fails saying why and that
// it will retry, and the first poll with enough takes the build, without a
// restart.
func TestFollowerShortOfFilesTakesTheBuildLater(t *testing.T) {
	k := newKeys(t, t.TempDir())
	b1, b2 := signedCopy(t, 1, k), signedCopy(t, 2, k)
	o, _ := fileOrigin(t)
	snaps := filepath.Join(t.TempDir(), "snapshots")
	publish(t, o, b1)
	f := follower(t, o, snaps, k)
	if _, err := f.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	publish(t, o, b2)
	checked := 0
	for extra := 1; extra <= 64; extra++ {
		var id string
		var err error
		withFileLimit(t, extra, func() { id, err = f.Poll(context.Background()) })
		if err == nil {
			if id != buildID(t, b2) {
				t.Fatalf("with %d file descriptors to spare, the poll made %q current, want %s", extra, id, buildID(t, b2))
			}
			break
		}
		if errors.Is(err, fleet.ErrRefused) {
			t.Fatalf("with %d file descriptors to spare, the good build was refused: %v", extra, err)
		}
		if strings.Contains(err.Error(), "this host failed to check it") {
			checked++
			if !errors.Is(err, syscall.EMFILE) {
				t.Errorf("with %d file descriptors to spare: %v; want the cause named", extra, err)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no poll ran short of file descriptors while it checked the build: the test needs a limit it runs out at there")
	}
	if _, err := f.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	serves(t, snaps, buildID(t, b2), k)
	if n := f.Stats.Refused.Load(); n != 0 {
		t.Errorf("%d builds counted as refused", n)
	}
	checkRefused(t, snaps)
}

// tmpfs mounts a file system of size bytes on a new folder, unmounted when
// the test ends: a disk the test can fill. Mounting needs root
// (CAP_SYS_ADMIN), as CI runs the tests; without it the test fails, saying
// so.
func tmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Fatalf("mounting a %d-byte tmpfs on %s, to fill its disk: %v (this test needs root, as CI runs it)", size, dir, err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	return dir
}

// fill writes dir/filler until dir's file system is full, then shrinks it to
// leave about room bytes free, as another program on the disk would. It
// returns the filler's path.
func fill(t *testing.T, dir string, room int64) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(max(st.Size()-room, 0)); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDiskFullDuringPull: a pull whose disk fills while the build lands
// (the free-space check passed, and another program took the room
// meanwhile) removes what it staged, says so with the free-space error,
// and leaves current alone; with room again, the next pull takes the
// build. The same for a pull by delta and for an apply.
func TestDiskFullDuringPull(t *testing.T) {
	k := newKeys(t, t.TempDir())
	b1 := signedCopy(t, 1, k)
	c := changedBuild(t, 5, "changed", b1, k)
	bundle := filepath.Join(t.TempDir(), "b1-to-c.pdsbundle")
	if _, err := fleet.WriteBundle(context.Background(), b1, c, bundle, nil); err != nil {
		t.Fatal(err)
	}
	size := totalSize(t, b1)
	for _, via := range []string{"whole", "delta", "apply"} {
		t.Run(via, func(t *testing.T) {
			disk := tmpfs(t, 3*size+32<<20)
			snaps := filepath.Join(disk, "snapshots")
			o, _ := fileOrigin(t)
			publish(t, o, b1)
			pullOK(t, o, snaps, k)
			if via == "whole" {
				publish(t, o, c)
			} else {
				publishWithDeltas(t, o, c, b1)
			}
			filler := fill(t, disk, 64<<10)
			opts := pullOpts(k)
			opts.FreeBytes = func(string) (uint64, error) { return 1 << 40, nil } // room when asked
			var err error
			if via == "apply" {
				_, err = fleet.ApplyBundle(context.Background(), bundle, snaps, opts)
			} else {
				_, err = fleet.Pull(context.Background(), o, snaps, opts)
			}
			if !errors.Is(err, fleet.ErrNoSpace) || !strings.Contains(err.Error(), "not enough free disk space: build "+buildID(t, c)) ||
				!strings.Contains(err.Error(), "what was staged was removed") {
				t.Fatalf("%s onto a full disk: %v; want the free-space error", via, err)
			}
			noStaging(t, snaps)
			serves(t, snaps, buildID(t, b1), k)
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			if via == "apply" {
				_, err = fleet.ApplyBundle(context.Background(), bundle, snaps, pullOpts(k))
			} else {
				_, err = fleet.Pull(context.Background(), o, snaps, pullOpts(k))
			}
			if err != nil {
				t.Fatalf("%s with room again: %v", via, err)
			}
			serves(t, snaps, buildID(t, c), k)
		})
	}
}

// TestRollbackShortOfFilesStepsBackNoFurther: a rollback that runs short of
// file descriptors while it self-tests the build it would step back to
// neither passes over that build to an older one nor calls it bad: it
// stops, current stays, and given enough it steps back to that build.
func TestRollbackShortOfFilesStepsBackNoFurther(t *testing.T) {
	k := newKeys(t, t.TempDir())
	o, _ := fileOrigin(t)
	snaps := filepath.Join(t.TempDir(), "snapshots")
	var ids []string
	for n := 1; n <= 3; n++ {
		b := signedCopy(t, n, k)
		publish(t, o, b)
		pullOK(t, o, snaps, k)
		ids = append(ids, buildID(t, b))
	}
	checked := 0
	for extra := 1; extra <= 64; extra++ {
		var r fleet.Rolled
		var err error
		withFileLimit(t, extra, func() {
			r, err = fleet.Rollback(context.Background(), snaps, "", fleet.RollbackOptions{Verifier: k.pub})
		})
		if len(r.Skipped) > 0 {
			t.Fatalf("with %d file descriptors to spare, the rollback passed over %v", extra, r.Skipped)
		}
		if err == nil {
			if r.To.ID != ids[1] {
				t.Fatalf("rolled back to %s, want %s", r.To.ID, ids[1])
			}
			if checked == 0 {
				t.Fatal("no rollback ran short of file descriptors while it checked the build: the test needs a limit it runs out at there")
			}
			serves(t, snaps, ids[1], k)
			return
		}
		if errors.Is(err, fleet.ErrRefused) {
			t.Fatalf("with %d file descriptors to spare: %v; want no refusal", extra, err)
		}
		if strings.Contains(err.Error(), "this host failed to check it") {
			checked++
		}
		serves(t, snaps, ids[2], k)
	}
	t.Fatal("the rollback failed with 64 file descriptors to spare")
}
