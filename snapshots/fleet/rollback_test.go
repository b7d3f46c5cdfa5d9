package fleet_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/snapshots"
	"github.com/productdata/pds/snapshots/fleet"
)

// failsSelfTest copies shared build n and makes it a build that passes its
// signature and every checksum but fails the self-test: its point index is
// cut short before the manifest is written and signed, as a faulty build
// host would ship it. pds serve refuses to open such a build.
func failsSelfTest(t testing.TB, n int, k keyPair) string {
	t.Helper()
	dir := signedCopy(t, n, keyPair{})
	m, err := snapshots.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, filepath.FromSlash(snapshots.PointsPath)), 10); err != nil {
		t.Fatal(err)
	}
	if err := snapshots.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	if err := snapshots.Sign(dir, k.sec); err != nil {
		t.Fatal(err)
	}
	if _, err := snapshots.VerifySigned(dir, k.pub); err != nil {
		t.Fatalf("the damaged build should pass signature and checksums: %v", err)
	}
	if err := snapshots.SelfTest(context.Background(), dir, snapshots.OpenOptions{Verifier: k.pub}); err == nil {
		t.Fatal("the damaged build passes the self-test")
	}
	return dir
}

func fileOrigin(t testing.TB) (fleet.Origin, string) {
	t.Helper()
	root := t.TempDir()
	o, err := fleet.OpenOrigin(fileURL(root), fleet.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	return o, root
}

func pullOpts(k keyPair) fleet.PullOptions {
	return fleet.PullOptions{Verifier: k.pub, Keep: 3}
}

// pullOK pulls the origin's latest build into snaps and checks it is
// current.
func pullOK(t testing.TB, o fleet.Origin, snaps string, k keyPair) fleet.Pulled {
	t.Helper()
	p, err := fleet.Pull(context.Background(), o, snaps, pullOpts(k))
	if err != nil {
		t.Fatal(err)
	}
	serves(t, snaps, p.ID, k)
	return p
}

func refusedList(t testing.TB, snaps string) []string {
	t.Helper()
	ids, err := fleet.Refused(snaps)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// checkRefused checks that the refused list is want and never names the
// current build.
func checkRefused(t testing.TB, snaps string, want ...string) {
	t.Helper()
	got := refusedList(t, snaps)
	if !slices.Equal(got, want) {
		t.Fatalf("refused lists %v, want %v", got, want)
	}
	cur, _, err := fleet.Current(snaps)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(got, cur.ID) {
		t.Fatalf("the current build %s is listed as refused", cur.ID)
	}
}

func isKept(snaps, id string) bool {
	_, err := os.Stat(filepath.Join(snaps, id))
	return err == nil
}

// TestPullRemovesABuildThatFailsItsSelfTest: pull, like follow, removes a
// build that fails its self-test, so no rollback can pick it later, and
// current stays.
func TestPullRemovesABuildThatFailsItsSelfTest(t *testing.T) {
	k := newKeys(t, t.TempDir())
	b1, bad := signedCopy(t, 1, k), failsSelfTest(t, 2, k)
	for _, via := range []string{"pull", "follow"} {
		t.Run(via, func(t *testing.T) {
			o, _ := fileOrigin(t)
			snaps := filepath.Join(t.TempDir(), "snapshots")
			publish(t, o, b1)
			pullOK(t, o, snaps, k)
			publish(t, o, bad)
			var err error
			if via == "pull" {
				_, err = fleet.Pull(context.Background(), o, snaps, pullOpts(k))
			} else {
				_, err = follower(t, o, snaps, k).Poll(context.Background())
			}
			if !errors.Is(err, fleet.ErrRefused) || !strings.Contains(err.Error(), "point index") || !strings.Contains(err.Error(), "the build was removed") {
				t.Fatalf("%s of a build that fails its self-test: %v", via, err)
			}
			if isKept(snaps, buildID(t, bad)) {
				t.Fatal("the build that failed its self-test is still on disk")
			}
			if left, _ := filepath.Glob(filepath.Join(snaps, ".trash-*")); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
			serves(t, snaps, buildID(t, b1), k)
			checkRefused(t, snaps)
		})
	}
}

// TestRollbackAfterAFailedSelfTestReturnsToAGoodBuild: a rollback never
// makes a broken build current nor lists the good one as refused. Build 1
// is pulled, build 2 fails its self-test, build 3 is pulled; a rollback with
// no id goes to build 1, which serves. When build 2 is on disk all the same
// (a pds that kept builds failing their self-test left it), the rollback
// passes over it, saying why; asked for it by id, it refuses, and nothing
// is listed.
func TestRollbackAfterAFailedSelfTestReturnsToAGoodBuild(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t, t.TempDir())
	b1, bad, b3 := signedCopy(t, 1, k), failsSelfTest(t, 2, k), signedCopy(t, 3, k)
	id1, idBad, id3 := buildID(t, b1), buildID(t, bad), buildID(t, b3)
	for _, leftOnDisk := range []bool{false, true} {
		name := "removed by the pull"
		if leftOnDisk {
			name = "left on disk by an older pds"
		}
		t.Run(name, func(t *testing.T) {
			o, _ := fileOrigin(t)
			snaps := filepath.Join(t.TempDir(), "snapshots")
			publish(t, o, b1)
			pullOK(t, o, snaps, k)
			publish(t, o, bad)
			if _, err := fleet.Pull(ctx, o, snaps, pullOpts(k)); !errors.Is(err, fleet.ErrRefused) {
				t.Fatalf("pull of the bad build: %v", err)
			}
			publish(t, o, b3)
			pullOK(t, o, snaps, k)
			if leftOnDisk {
				if err := os.CopyFS(filepath.Join(snaps, idBad), os.DirFS(bad)); err != nil {
					t.Fatal(err)
				}
				_, err := fleet.Rollback(ctx, snaps, idBad, fleet.RollbackOptions{Verifier: k.pub})
				if !errors.Is(err, fleet.ErrRefused) || !strings.Contains(err.Error(), "fails the self-test") {
					t.Fatalf("rollback to the bad build by id: %v", err)
				}
				serves(t, snaps, id3, k)
				checkRefused(t, snaps)
			}

			r, err := fleet.Rollback(ctx, snaps, "", fleet.RollbackOptions{Verifier: k.pub})
			if err != nil {
				t.Fatal(err)
			}
			if r.From.ID != id3 || r.To.ID != id1 || !r.Listed {
				t.Fatalf("rolled %s -> %s (listed %v), want %s -> %s, listed", r.From.ID, r.To.ID, r.Listed, id3, id1)
			}
			if leftOnDisk != (len(r.Skipped) == 1 && r.Skipped[0].ID == idBad && strings.Contains(r.Skipped[0].Reason, "self-test")) {
				t.Fatalf("skipped %+v", r.Skipped)
			}
			serves(t, snaps, id1, k)
			checkRefused(t, snaps, id3)
		})
	}
}

// TestRollbackThatFindsNoGoodBuildChangesNothing: when the only older
// build fails its self-test, a rollback refuses, current stays and the
// current build is not listed as refused.
func TestRollbackThatFindsNoGoodBuildChangesNothing(t *testing.T) {
	k := newKeys(t, t.TempDir())
	bad, b2 := failsSelfTest(t, 1, k), signedCopy(t, 2, k)
	o, _ := fileOrigin(t)
	snaps := filepath.Join(t.TempDir(), "snapshots")
	publish(t, o, b2)
	pullOK(t, o, snaps, k)
	if err := os.CopyFS(filepath.Join(snaps, buildID(t, bad)), os.DirFS(bad)); err != nil {
		t.Fatal(err)
	}
	_, err := fleet.Rollback(context.Background(), snaps, "", fleet.RollbackOptions{Verifier: k.pub})
	if !errors.Is(err, fleet.ErrRefused) || !strings.Contains(err.Error(), "can serve") || !strings.Contains(err.Error(), buildID(t, bad)) {
		t.Fatalf("rollback with only a bad older build: %v", err)
	}
	serves(t, snaps, buildID(t, b2), k)
	checkRefused(t, snaps)
}

// TestRollbackRefusesARefusedBuild: a build listed in refused is never made
// current by a rollback: by id it is refused with the way to allow it; a
// step back passes over it. Removing its line allows it again.
func TestRollbackRefusesARefusedBuild(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t, t.TempDir())
	o, _ := fileOrigin(t)
	snaps := filepath.Join(t.TempDir(), "snapshots")
	var ids []string
	for n := 1; n <= 3; n++ {
		b := signedCopy(t, n, k)
		publish(t, o, b)
		ids = append(ids, pullOK(t, o, snaps, k).ID)
	}
	opts := fleet.RollbackOptions{Verifier: k.pub}
	for _, want := range []string{ids[1], ids[0]} { // 3 -> 2 -> 1: 3 and 2 listed
		if r, err := fleet.Rollback(ctx, snaps, "", opts); err != nil || r.To.ID != want {
			t.Fatalf("step back to %s: %v %v", want, r.To.ID, err)
		}
	}
	checkRefused(t, snaps, ids[2], ids[1])
	for _, id := range []string{ids[1], ids[2]} {
		_, err := fleet.Rollback(ctx, snaps, id, opts)
		if !errors.Is(err, fleet.ErrRefused) || !strings.Contains(err.Error(), "is listed in") || !strings.Contains(err.Error(), "remove its line") {
			t.Fatalf("rollback to refused build %s: %v", id, err)
		}
		serves(t, snaps, ids[0], k)
	}

	// The operator allows build 3 again and goes forward to it; a step
	// back from it passes over build 2, still refused, to build 1.
	refusedFile := filepath.Join(snaps, fleet.RefusedName)
	if err := os.WriteFile(refusedFile, []byte(ids[1]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := fleet.Rollback(ctx, snaps, ids[2], opts); err != nil || r.To.ID != ids[2] || r.Listed {
		t.Fatalf("forward to the allowed build: %+v %v", r, err)
	}
	checkRefused(t, snaps, ids[1])
	r, err := fleet.Rollback(ctx, snaps, "", opts)
	if err != nil || r.To.ID != ids[0] || len(r.Skipped) != 1 || r.Skipped[0].ID != ids[1] || !strings.Contains(r.Skipped[0].Reason, "listed in") {
		t.Fatalf("step back over a refused build: %+v %v", r, err)
	}
	serves(t, snaps, ids[0], k)
	checkRefused(t, snaps, ids[1], ids[2])
}

// TestRollForwardListsNothing: going back lists the build left; going
// forward (rollback to a newer kept build) lists nothing, and the current
// build is never in the refused list. A follower then takes only builds
// newer than the ones listed.
func TestRollForwardListsNothing(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t, t.TempDir())
	o, _ := fileOrigin(t)
	snaps := filepath.Join(t.TempDir(), "snapshots")
	var ids []string
	for n := 1; n <= 3; n++ {
		publish(t, o, signedCopy(t, n, k))
		ids = append(ids, pullOK(t, o, snaps, k).ID)
	}
	opts := fleet.RollbackOptions{Verifier: k.pub}
	if r, err := fleet.Rollback(ctx, snaps, ids[0], opts); err != nil || !r.Listed {
		t.Fatalf("back from 3 to 1: %+v %v", r, err)
	}
	checkRefused(t, snaps, ids[2])
	r, err := fleet.Rollback(ctx, snaps, ids[1], opts)
	if err != nil || r.From.ID != ids[0] || r.To.ID != ids[1] || r.Listed {
		t.Fatalf("forward from 1 to 2: %+v %v", r, err)
	}
	serves(t, snaps, ids[1], k)
	checkRefused(t, snaps, ids[2])
	// The origin's latest is build 3, rolled back from: not taken again.
	if p, err := fleet.Pull(ctx, o, snaps, pullOpts(k)); !errors.Is(err, fleet.ErrRefused) || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("pull of the build rolled back from: %+v %v", p, err)
	}
	serves(t, snaps, ids[1], k)
}

// TestRollbackRefusesAKeptBuildDamagedOnDisk: a kept build whose file was
// changed on disk after it was pulled is refused by id and passed over by a
// step back, wherever in the file the change is.
func TestRollbackRefusesAKeptBuildDamagedOnDisk(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t, t.TempDir())
	o, _ := fileOrigin(t)
	snaps := filepath.Join(t.TempDir(), "snapshots")
	b1 := signedCopy(t, 1, k)
	publish(t, o, b1)
	id1 := pullOK(t, o, snaps, k).ID
	publish(t, o, signedCopy(t, 2, k))
	id2 := pullOK(t, o, snaps, k).ID
	ingesttest.FlipByte(t, filepath.Join(snaps, id1, filepath.FromSlash(largestFile(t, b1).Path)))
	opts := fleet.RollbackOptions{Verifier: k.pub}
	if _, err := fleet.Rollback(ctx, snaps, id1, opts); !errors.Is(err, fleet.ErrRefused) || !strings.Contains(err.Error(), "fails the self-test") {
		t.Fatalf("rollback by id to a damaged build: %v", err)
	}
	r, err := fleet.Rollback(ctx, snaps, "", opts)
	if !errors.Is(err, fleet.ErrRefused) || len(r.Skipped) != 1 || r.Skipped[0].ID != id1 {
		t.Fatalf("step back onto a damaged build: %+v %v", r, err)
	}
	serves(t, snaps, id2, k)
	checkRefused(t, snaps)
}

// TestRollbackChecksTheSignature: with a public key, a kept build signed by
// another key is refused.
func TestRollbackChecksTheSignature(t *testing.T) {
	k, other := newKeys(t, t.TempDir()), newKeys(t, t.TempDir())
	o, _ := fileOrigin(t)
	snaps := filepath.Join(t.TempDir(), "snapshots")
	publish(t, o, signedCopy(t, 2, k))
	pullOK(t, o, snaps, k)
	foreign := signedCopy(t, 1, other)
	if err := os.CopyFS(filepath.Join(snaps, buildID(t, foreign)), os.DirFS(foreign)); err != nil {
		t.Fatal(err)
	}
	_, err := fleet.Rollback(context.Background(), snaps, buildID(t, foreign), fleet.RollbackOptions{Verifier: k.pub})
	if !errors.Is(err, fleet.ErrRefused) || !strings.Contains(err.Error(), "not by the trusted key") {
		t.Fatalf("rollback to a build signed by another key: %v", err)
	}
	checkRefused(t, snaps)
}

// TestFailedPullLeavesTheDirectoryAsItWas: a pull refused for a wrong key,
// a changed file or a failed self-test leaves no directory behind where
// there was none, and changes nothing in one that holds a build.
func TestFailedPullLeavesTheDirectoryAsItWas(t *testing.T) {
	k, other := newKeys(t, t.TempDir()), newKeys(t, t.TempDir())
	b1 := signedCopy(t, 1, k)
	cases := []struct {
		name    string
		publish func(t *testing.T, o fleet.Origin, root string)
		want    string
	}{
		{"wrong key", func(t *testing.T, o fleet.Origin, _ string) { publish(t, o, signedCopy(t, 2, other)) }, "not by the trusted key"},
		{"changed file", func(t *testing.T, o fleet.Origin, root string) {
			b2 := signedCopy(t, 2, k)
			publish(t, o, b2)
			ingesttest.FlipByte(t, filepath.Join(root, buildID(t, b2), filepath.FromSlash(largestFile(t, b2).Path)))
		}, "does not match the signed manifest's checksum"},
		{"fails its self-test", func(t *testing.T, o fleet.Origin, _ string) { publish(t, o, failsSelfTest(t, 2, k)) }, "point index"},
	}
	for _, c := range cases {
		for _, existing := range []bool{false, true} {
			name := c.name + "/no directory"
			if existing {
				name = c.name + "/serving a build"
			}
			t.Run(name, func(t *testing.T) {
				o, root := fileOrigin(t)
				snaps := filepath.Join(t.TempDir(), "snapshots")
				if existing {
					publish(t, o, b1)
					pullOK(t, o, snaps, k)
				}
				before := tree(t, snaps)
				c.publish(t, o, root)
				_, err := fleet.Pull(context.Background(), o, snaps, pullOpts(k))
				if !errors.Is(err, fleet.ErrRefused) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("pull: %v, want refused saying %q", err, c.want)
				}
				if after := tree(t, snaps); !slices.Equal(before, after) {
					t.Fatalf("the directory changed:\nbefore %v\nafter  %v", before, after)
				}
			})
		}
	}
}

// tree lists every path under dir (with a link's target), or nil when dir
// does not exist.
func tree(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			rel += " -> " + target
		}
		out = append(out, rel)
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHalfRemovedBuildBlocksNoPull: what a removal that failed halfway
// leaves (the build's folder without its manifest, or a folder being
// removed under .trash-) is cleared by the next pull of that build, which
// then takes it.
func TestHalfRemovedBuildBlocksNoPull(t *testing.T) {
	k := newKeys(t, t.TempDir())
	b1, b2 := signedCopy(t, 1, k), signedCopy(t, 2, k)
	for _, via := range []string{"pull", "follow"} {
		t.Run(via, func(t *testing.T) {
			o, _ := fileOrigin(t)
			snaps := filepath.Join(t.TempDir(), "snapshots")
			publish(t, o, b1)
			pullOK(t, o, snaps, k)
			publish(t, o, b2)
			for _, left := range []string{filepath.Join(buildID(t, b2), "store"), ".trash-" + buildID(t, b1) + "/index"} {
				if err := os.MkdirAll(filepath.Join(snaps, left), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(snaps, left, "000005.sst"), []byte("left"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			if via == "pull" {
				_, err = fleet.Pull(context.Background(), o, snaps, pullOpts(k))
			} else {
				_, err = follower(t, o, snaps, k).Poll(context.Background())
			}
			if err != nil {
				t.Fatalf("%s over a half-removed build: %v", via, err)
			}
			serves(t, snaps, buildID(t, b2), k)
			if left, _ := filepath.Glob(filepath.Join(snaps, ".trash-*")); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}
