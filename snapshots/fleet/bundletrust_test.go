package fleet_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/productdata/pds/snapshots"
	"github.com/productdata/pds/snapshots/fleet"
	"github.com/productdata/pds/snapshots/trust"
)

// TestBundleThroughARoot: a site that trusts a root applies a bundle that
// carries the build's statements; a bundle without statements, one whose
// statements the retired build key signed, and one for another
// deployment signed by the same keys are refused, and nothing at the site
// changes.
func TestBundleThroughARoot(t *testing.T) {
	k := newKeys(t, t.TempDir())
	f := newTrustFleet(t, "eu")
	k1 := f.build
	k2 := f.use(newTKey(t, "build-2"))
	f.publishRoot(f.spec(k2, f.ts), f.rootKeys[0], f.rootKeys[1])
	b1 := unsignedCopy(t, 1)
	c2 := changedBuild(t, 6, "second", b1, k)
	// The origin's statements for b1 are an hour old: timestamp versions
	// are the millisecond they were made in, and a bundle made in the
	// millisecond the site's kept timestamp was would be taken for that
	// timestamp (a version collision this test is not about).
	copyBuildTo(t, b1, filepath.Join(f.dir, buildID(t, b1)))
	mb, err := os.ReadFile(filepath.Join(b1, snapshots.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := trust.Publish(context.Background(), fleet.TrustStore(f.o), trust.Build{ID: buildID(t, b1), Sequence: 1, Manifest: mb}, f.build.s, f.ts.s, 48*time.Hour, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	site := func(t *testing.T) (string, *trust.Replica) {
		snaps := filepath.Join(t.TempDir(), "snapshots")
		r := f.replica(snaps)
		if _, err := fleet.Pull(context.Background(), f.o, snaps, fleet.PullOptions{Verifier: r, Keep: 3}); err != nil {
			t.Fatal(err)
		}
		return snaps, r
	}
	bundle := func(t *testing.T, bt *fleet.BundleTrust) string {
		t.Helper()
		out := filepath.Join(t.TempDir(), "b1-to-c2.pdsbundle")
		if _, err := fleet.WriteBundle(context.Background(), b1, c2, out, bt); err != nil {
			t.Fatal(err)
		}
		return out
	}
	good := &fleet.BundleTrust{Roots: f.roots, Build: k2.s, Timestamp: f.ts.s, Validity: 48 * time.Hour}

	t.Run("taken", func(t *testing.T) {
		snaps, r := site(t)
		p, err := fleet.ApplyBundle(context.Background(), bundle(t, good), snaps, fleet.PullOptions{Verifier: r})
		if err != nil {
			t.Fatal(err)
		}
		if p.ID != buildID(t, c2) || p.Via != fleet.ViaDelta {
			t.Errorf("applied %s via %q", p.ID, p.Via)
		}
		servesTrusted(t, snaps, buildID(t, c2), r)
		sameBuild(t, filepath.Join(snaps, p.ID), c2)
	})

	t.Run("the retired key is refused where it signs", func(t *testing.T) {
		bt := *good
		bt.Build = k1.s
		_, err := fleet.WriteBundle(context.Background(), b1, c2, filepath.Join(t.TempDir(), "x"), &bt)
		if !errors.Is(err, trust.ErrUntrusted) || !strings.Contains(err.Error(), "is not a targets key of root version 2") {
			t.Fatalf("a bundle signed with the retired key: %v", err)
		}
	})

	spec := f.spec(k2, f.ts)
	spec.Deployment = "us"
	us, err := trust.NewRoot(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, rk := range f.rootKeys[:2] {
		if us, err = trust.SignRoot(us, rk.s); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		bt   *fleet.BundleTrust
		want string
	}{
		{"without statements", nil, "carries no trust statements"},
		// The chain up to root version 1 names the retired key, and the
		// site walked to version 2.
		{"signed with the retired key", &fleet.BundleTrust{Roots: f.roots[:1], Build: k1.s, Timestamp: f.ts.s, Validity: 48 * time.Hour},
			"Verifying snapshot failed, not enough signatures"},
		{"for another deployment, same keys", &fleet.BundleTrust{Roots: [][]byte{us}, Build: k2.s, Timestamp: f.ts.s, Validity: 48 * time.Hour},
			`is for deployment "us", and this replica serves "eu"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := bundle(t, c.bt)
			snaps, r := site(t)
			before := tree(t, filepath.Join(snaps, trust.StateDir))
			kept, err := os.ReadFile(filepath.Join(snaps, trust.StateDir, "targets.json"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = fleet.ApplyBundle(context.Background(), file, snaps, fleet.PullOptions{Verifier: r})
			if !errors.Is(err, fleet.ErrRefused) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a refusal saying %q", err, c.want)
			}
			t.Logf("refused: %v", err)
			servesTrusted(t, snaps, buildID(t, b1), r)
			noStaging(t, snaps)
			if isKept(snaps, buildID(t, c2)) {
				t.Error("the refused build was kept")
			}
			after, _ := os.ReadFile(filepath.Join(snaps, trust.StateDir, "targets.json"))
			if string(after) != string(kept) || strings.Join(tree(t, filepath.Join(snaps, trust.StateDir)), ",") != strings.Join(before, ",") {
				t.Error("the refused bundle changed the kept statements")
			}
		})
	}
}
