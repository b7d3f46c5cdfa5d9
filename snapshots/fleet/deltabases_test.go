package fleet_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/productdata/pds/snapshots"
	"github.com/productdata/pds/snapshots/fleet"
)

// TestDeltaBasesFollowLinks: a folder whose builds are symbolic links to
// them gives those builds as bases, each once however many links name it;
// a link to nowhere and a build whose manifest does not read are named
// with their reasons; a build's records and other folders are passed over
// quietly.
func TestDeltaBasesFollowLinks(t *testing.T) {
	k := newKeys(t, t.TempDir())
	b1, b2 := signedCopy(t, 1, k), signedCopy(t, 2, k)
	target, err := snapshots.ReadManifest(signedCopy(t, 3, k))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, to := range map[string]string{"b1": b1, "b2": b2, "again": b2, "gone": filepath.Join(dir, "nowhere")} {
		if err := os.Symlink(to, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"bad", "b2.records", "logs"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "bad", snapshots.ManifestName), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	bases, skipped, err := fleet.DeltaBases(dir, target, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(bases) != 2 || !strings.HasSuffix(bases[1], "b1") || !slices.Contains([]string{"b2", "again"}, filepath.Base(bases[0])) {
		t.Errorf("bases %v, want one of the links to b2, then b1", bases)
	}
	said := strings.Join(skipped, "\n")
	if len(skipped) != 2 || !strings.Contains(said, filepath.Join(dir, "gone")) || !strings.Contains(said, filepath.Join(dir, "bad")) {
		t.Errorf("skipped %q, want the link to nowhere and the unreadable manifest named", skipped)
	}
	if bases, _, _ := fleet.DeltaBases(dir, target, 1); len(bases) != 1 || strings.HasSuffix(bases[0], "b1") {
		t.Errorf("one base: %v, want the newest", bases)
	}
}
