package ingest_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/ingest/ingesttest"
)

// TestMain lets the test binary act as a 'pds ingest' process that stalls
// mid-build: PDS_INGEST_TEST_STALL=IN|OUT builds IN into OUT with a rejects
// writer that says "stalled" on stdout at the first rejected line and then
// blocks, so the build holds its temporary folder until it is killed.
func TestMain(m *testing.M) {
	if spec := os.Getenv("PDS_INGEST_TEST_STALL"); spec != "" {
		in, out, _ := strings.Cut(spec, "|")
		_, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: out, Rejects: stallWriter{}})
		fmt.Println("finished:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

type stallWriter struct{}

func (stallWriter) Write(p []byte) (int, error) {
	fmt.Println("stalled")
	time.Sleep(time.Hour)
	return len(p), nil
}

// temporaries lists the hidden build folders in dir.
func temporaries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// A killed ingest leaves its temporary folder; the next build beside it
// removes it, but never the folder of a build that is still running.
func TestKilledBuildLeftoversRemoved(t *testing.T) {
	in := ingesttest.WriteCase(t, ingesttest.CaseFile("passport")) // it has rejected lines
	snaps := t.TempDir()

	child := ingesttest.SelfCommand("-test.run=^$")
	child.Env = append(os.Environ(), "PDS_INGEST_TEST_STALL="+in+"|"+filepath.Join(snaps, "killed"))
	stdout, _ := child.StdoutPipe()
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "stalled\n" {
		t.Fatalf("the child build did not stall: %q", line)
	}
	left := temporaries(t, snaps)
	if len(left) != 1 || !strings.HasPrefix(left[0], ".killed.tmp-") {
		t.Fatalf("temporaries while the child builds: %v", left)
	}

	// While the child lives, a build beside it leaves its folder alone.
	sum, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: filepath.Join(snaps, "a")})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.RemovedStale) != 0 || len(temporaries(t, snaps)) != 1 {
		t.Fatalf("a live build's temporary was touched: removed %v, left %v", sum.RemovedStale, temporaries(t, snaps))
	}

	// Killed, it leaves the folder; the next build removes it.
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	if got := temporaries(t, snaps); len(got) != 1 {
		t.Fatalf("after the kill: %v", got)
	}
	sum, err = ingest.Run(context.Background(), ingest.Options{In: in, Out: filepath.Join(snaps, "b")})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.RemovedStale) != 1 || filepath.Base(sum.RemovedStale[0]) != left[0] {
		t.Fatalf("removed %v, want %s", sum.RemovedStale, left[0])
	}
	entries, _ := os.ReadDir(snaps)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "a b" {
		t.Fatalf("beside the snapshots: %v, want only a and b", names)
	}
}

// TestPublishedSnapshotIsReadableByEveryUser builds under umask 0077, as a
// systemd unit's UMask=0077 would: every folder of the published snapshot is
// still 0755 and every file 0644 (Bleve's own folder and files included), so
// a server running as another user (a container's uid 65532) can open it.
func TestPublishedSnapshotIsReadableByEveryUser(t *testing.T) {
	ingesttest.Umask(t, 0o077)
	in := ingesttest.WriteCase(t, ingesttest.CaseFile("passport"))
	out := filepath.Join(t.TempDir(), "snap")
	if _, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: out}); err != nil {
		t.Fatal(err)
	}
	var dirs, files int
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o644)
		if d.IsDir() {
			want, dirs = 0o755, dirs+1
		} else {
			files++
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s: mode %#o, want %#o", p, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if dirs < 4 || files < 5 {
		t.Fatalf("walked %d folders and %d files: not a whole snapshot", dirs, files)
	}
}

// TestOutInFoldersNotYetMade: --out may name a folder whose parents do not
// exist yet; they are made, as for a folder of nightly builds.
func TestOutInFoldersNotYetMade(t *testing.T) {
	out := filepath.Join(t.TempDir(), "builds", "2026", "11-28")
	in := filepath.Join(ingesttest.Root(), "sample-input")
	if _, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: out, Rejects: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "manifest.json")); err != nil {
		t.Fatal(err)
	}
}
