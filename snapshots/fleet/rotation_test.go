package fleet_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/productdata/pds/snapshots"
	"github.com/productdata/pds/snapshots/fleet"
	"github.com/productdata/pds/snapshots/trust"
)

// TestRotatedBuildKeyIsRefusedByEveryReplica: three replicas follow one
// origin. Root version 2 names a new build key; every replica walks to it
// and takes the build the new key signed. Publish refuses the retired key,
// and statements the retired key signs anyway are refused by every
// replica, which keeps serving the build the new key signed.
func TestRotatedBuildKeyIsRefusedByEveryReplica(t *testing.T) {
	f := newTrustFleet(t, "eu")
	b1, b2, b3 := unsignedCopy(t, 1), unsignedCopy(t, 2), unsignedCopy(t, 3)
	var followers []*fleet.Follower
	for range 3 {
		followers = append(followers, f.follower(filepath.Join(t.TempDir(), "snapshots")))
	}
	pollAll := func(want string) {
		t.Helper()
		for i, fl := range followers {
			if id, err := fl.Poll(context.Background()); err != nil || id != want {
				t.Fatalf("replica %d took %q (%v), want %s", i, id, err, want)
			}
			servesTrusted(t, fl.Snapshots, want, fl.Pull.Verifier)
		}
	}
	f.publish(b1)
	pollAll(buildID(t, b1))

	k1 := f.build
	k2 := f.use(newTKey(t, "build-2"))
	f.publishRoot(f.spec(k2, f.ts), f.rootKeys[0], f.rootKeys[2])
	f.publish(b2)
	pollAll(buildID(t, b2))
	for i, fl := range followers {
		if _, err := os.Stat(filepath.Join(fl.Snapshots, trust.StateDir, "2.root.json")); err != nil {
			t.Errorf("replica %d did not keep root version 2: %v", i, err)
		}
	}

	retired := f.publishOpts()
	retired.Trust.Build = k1.s
	_, err := fleet.Publish(context.Background(), b3, f.o, retired)
	if !errors.Is(err, trust.ErrUntrusted) || !strings.Contains(err.Error(), "is not a targets key of root version 2") {
		t.Fatalf("publishing with the retired key: %v", err)
	}
	f.plant(f.nightOf(b3, f.originVersion()+1), k1.raw, f.ts.raw, b3)
	for i, fl := range followers {
		id, err := fl.Poll(context.Background())
		if id != "" || !errors.Is(err, fleet.ErrRefused) || !strings.Contains(err.Error(), "Verifying snapshot failed, not enough signatures") {
			t.Fatalf("replica %d: took %q, %v; want the retired key's statements refused", i, id, err)
		}
		servesTrusted(t, fl.Snapshots, buildID(t, b2), fl.Pull.Verifier)
		if isKept(fl.Snapshots, buildID(t, b3)) {
			t.Errorf("replica %d kept the refused build", i)
		}
		// A kept build only the retired key vouched for is no longer
		// served: a rollback to it is refused too.
		err = snapshots.VerifyStatement(filepath.Join(fl.Snapshots, buildID(t, b1)), fl.Pull.Verifier)
		if !errors.Is(err, snapshots.ErrSignature) || !strings.Contains(err.Error(), "not signed by the build keys of root version 2") {
			t.Errorf("replica %d: the server check of the build the retired key signed: %v", i, err)
		}
	}
}

// TestRotationDropsStatementsTheOldKeysSignedAfterACrash: a replica that
// stopped after it kept a new root, before it dropped the statements the
// root's retired keys signed (a thief's fast-forwarded ones), drops them
// at its next pull and takes the rightful build: what decides is whether
// the kept statements hold under the trusted root, not whether this pull
// saw the keys change.
func TestRotationDropsStatementsTheOldKeysSignedAfterACrash(t *testing.T) {
	for _, rotateTimestamp := range []bool{true, false} {
		t.Run(map[bool]string{true: "build and timestamp keys rotated", false: "build key rotated"}[rotateTimestamp], func(t *testing.T) {
			e := newAttackEnv(t, 1)
			clean := filepath.Join(t.TempDir(), "clean")
			if err := os.CopyFS(clean, os.DirFS(filepath.Join(e.f.dir, fleet.TrustDir))); err != nil {
				t.Fatal(err)
			}
			n := e.f.nightOf(e.b1, 1<<40)
			n.tsVersion = 1 << 41
			e.f.plant(n, e.f.build.raw, e.f.ts.raw, "")
			if _, err := e.follow.Poll(context.Background()); err != nil {
				t.Fatal(err)
			}
			os.RemoveAll(filepath.Join(e.f.dir, fleet.TrustDir))
			if err := os.CopyFS(filepath.Join(e.f.dir, fleet.TrustDir), os.DirFS(clean)); err != nil {
				t.Fatal(err)
			}
			ts := e.f.ts
			if rotateTimestamp {
				ts = e.f.use(newTKey(t, "timestamp-2"))
			}
			root2 := e.f.publishRoot(e.f.spec(e.f.use(newTKey(t, "build-2")), ts), e.f.rootKeys[1], e.f.rootKeys[2])
			e.f.publish(e.b2)
			// The replica kept root version 2 and stopped there.
			if err := os.WriteFile(filepath.Join(e.snaps, trust.StateDir, "2.root.json"), root2, 0o644); err != nil {
				t.Fatal(err)
			}
			if id, err := e.follow.Poll(context.Background()); err != nil || id != buildID(t, e.b2) {
				t.Fatalf("after the rotation: took %q, %v", id, err)
			}
			servesTrusted(t, e.snaps, buildID(t, e.b2), e.follow.Pull.Verifier)
		})
	}
}

// TestCurrentBuildStillServesAfterTheBuildKeyRotates: the operator
// rotates the build key and publishes the current build's statements
// again under the new key; every replica keeps serving its current build,
// whose kept statement a server then checks against the new root.
func TestCurrentBuildStillServesAfterTheBuildKeyRotates(t *testing.T) {
	f := newTrustFleet(t, "eu")
	b1 := unsignedCopy(t, 1)
	f.publish(b1)
	fl := f.follower(filepath.Join(t.TempDir(), "snapshots"))
	if id, err := fl.Poll(context.Background()); err != nil || id != buildID(t, b1) {
		t.Fatalf("took %q, %v", id, err)
	}
	f.publishRoot(f.spec(f.use(newTKey(t, "build-2")), f.ts), f.rootKeys[0], f.rootKeys[2])
	f.publish(b1)
	if id, err := fl.Poll(context.Background()); err != nil || id != "" {
		t.Fatalf("after the rotation: took %q, %v", id, err)
	}
	if _, err := os.Stat(filepath.Join(fl.Snapshots, trust.StateDir, "2.root.json")); err != nil {
		t.Fatal(err)
	}
	servesTrusted(t, fl.Snapshots, buildID(t, b1), fl.Pull.Verifier)
}
