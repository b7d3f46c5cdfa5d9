package fleet_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/snapshots"
	"github.com/productdata/pds/snapshots/fleet"
)

// linkedBytes is the size of the store tables of build to that build from
// holds with the same bytes: what a delta from it links rather than writes.
func linkedBytes(t testing.TB, from, to string) int64 {
	t.Helper()
	a, err := snapshots.ReadManifest(from)
	if err != nil {
		t.Fatal(err)
	}
	b, err := snapshots.ReadManifest(to)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range a.Files {
		have[f.BLAKE3] = true
	}
	var n int64
	for _, f := range b.Files {
		if strings.HasPrefix(f.Path, snapshots.StoreDir+"/") && strings.HasSuffix(f.Path, ".sst") && have[f.BLAKE3] {
			n += f.Size
		}
	}
	return n
}

// TestApplyNeedsRoomOnlyForWhatItWrites: apply asks for room for the files
// it writes (with the margin), not for the store tables it links from the
// kept build; a site without that room is refused before anything changes,
// and told so in words that fit a local file.
func TestApplyNeedsRoomOnlyForWhatItWrites(t *testing.T) {
	k := newKeys(t, t.TempDir())
	b1 := signedCopy(t, 1, k)
	c := changedBuild(t, 5, "changed", b1, k)
	bundle := filepath.Join(t.TempDir(), "b1-to-c.pdsbundle")
	if _, err := fleet.WriteBundle(context.Background(), b1, c, bundle, nil); err != nil {
		t.Fatal(err)
	}
	total, linked := totalSize(t, c), linkedBytes(t, b1, c)
	if linked == 0 {
		t.Fatal("the build shares no store table with the kept one: the test needs one that does")
	}
	const margin = 16 << 20 // the least margin, above 1% of these builds
	site := func(t *testing.T) string {
		o, _ := fileOrigin(t)
		publish(t, o, b1)
		snaps := t.TempDir()
		pullOK(t, o, snaps, k)
		return snaps
	}

	t.Run("room for what it writes", func(t *testing.T) {
		snaps := site(t)
		opts := pullOpts(k)
		free := uint64(total - linked/2 + margin) // less than the whole build, more than it writes
		opts.FreeBytes = func(string) (uint64, error) { return free, nil }
		if _, err := fleet.ApplyBundle(context.Background(), bundle, snaps, opts); err != nil {
			t.Fatalf("%d bytes free for a build of %d whose store shares %d with the kept one: %v", free, total, linked, err)
		}
		serves(t, snaps, buildID(t, c), k)
	})
	t.Run("no room", func(t *testing.T) {
		snaps := site(t)
		opts := pullOpts(k)
		opts.FreeBytes = func(string) (uint64, error) { return margin, nil }
		_, err := fleet.ApplyBundle(context.Background(), bundle, snaps, opts)
		if !errors.Is(err, fleet.ErrNoSpace) || !strings.Contains(err.Error(), "nothing was changed") || strings.Contains(err.Error(), "fetched") {
			t.Fatalf("apply without room: %v; want the free-space error saying nothing was changed", err)
		}
		serves(t, snaps, buildID(t, b1), k)
		noStaging(t, snaps)
	})
}
