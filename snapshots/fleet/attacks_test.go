package fleet_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/productdata/pds/snapshots"
	"github.com/productdata/pds/snapshots/fleet"
	"github.com/productdata/pds/snapshots/trust"
)

// The attacks of The Update Framework's threat model, each made by a
// hostile origin against a replica that follows it through a trust root:
// the replica refuses, says why, and keeps serving the build it had.

// attackEnv is a fleet whose replica took the first nights.
type attackEnv struct {
	f          *trustFleet
	b1, b2, b3 string // build folders, sequence 1, 2 and 3
	snaps      string
	follow     *fleet.Follower
	night1     string // a copy of the origin's folder after the first night
}

// newAttackEnv publishes builds b1 .. b<nights> through the root; the
// replica takes each.
func newAttackEnv(t *testing.T, nights int) *attackEnv {
	t.Helper()
	e := &attackEnv{f: newTrustFleet(t, "eu"), b1: unsignedCopy(t, 1), b2: unsignedCopy(t, 2), b3: unsignedCopy(t, 3)}
	e.snaps = filepath.Join(t.TempDir(), "snapshots")
	e.follow = e.f.follower(e.snaps)
	for i, b := range []string{e.b1, e.b2, e.b3}[:nights] {
		e.f.publish(b)
		if i == 0 {
			e.night1 = filepath.Join(t.TempDir(), "night1")
			if err := os.CopyFS(e.night1, os.DirFS(e.f.dir)); err != nil {
				t.Fatal(err)
			}
		}
		if id, err := e.follow.Poll(context.Background()); err != nil || id != buildID(t, b) {
			t.Fatalf("night %d: took %q, %v", i+1, id, err)
		}
	}
	return e
}

// refuses polls once and checks the refusal and that current is still
// build keep, whole and served.
func (e *attackEnv) refuses(t *testing.T, want, keep string) error {
	t.Helper()
	id, err := e.follow.Poll(context.Background())
	if err == nil || id != "" {
		t.Fatalf("poll took %q (%v); want a refusal saying %q", id, err, want)
	}
	if !errors.Is(err, fleet.ErrRefused) {
		t.Errorf("not a refusal (retried as a failure): %v", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("the refusal does not say %q: %v", want, err)
	}
	servesTrusted(t, e.snaps, buildID(t, keep), e.follow.Pull.Verifier)
	noStaging(t, e.snaps)
	return err
}

func (e *attackEnv) replaceTrustFile(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.f.dir, fleet.TrustDir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *attackEnv) night1File(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.night1, fleet.TrustDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReplicaRefusesHostileStatements: for each attack an origin can make
// with statements, the replica refuses the build, names the reason and
// keeps serving its current build.
func TestReplicaRefusesHostileStatements(t *testing.T) {
	cases := []struct {
		name   string
		nights int // good nights the replica took first
		attack func(t *testing.T, e *attackEnv)
		want   string
	}{
		{name: "arbitrary installation: every statement signed by a key the root does not name", nights: 1,
			attack: func(t *testing.T, e *attackEnv) {
				x := newTKey(t, "thief")
				e.f.plant(e.f.nightOf(e.b2, e.f.originVersion()+1), x.raw, x.raw, e.b2)
			}, want: "timestamp.json: unsigned metadata error: Verifying timestamp failed, not enough signatures"},
		{name: "arbitrary installation: build statements signed by a foreign key under the stolen timestamp key", nights: 1,
			attack: func(t *testing.T, e *attackEnv) {
				x := newTKey(t, "thief")
				e.f.plant(e.f.nightOf(e.b2, e.f.originVersion()+1), x.raw, e.f.ts.raw, e.b2)
			}, want: "snapshot version 2: unsigned metadata error: Verifying snapshot failed, not enough signatures"},
		{name: "arbitrary installation: another manifest under the night's valid statements", nights: 1,
			attack: func(t *testing.T, e *attackEnv) {
				e.f.publish(e.b2)
				p := filepath.Join(e.f.dir, buildID(t, e.b2), snapshots.ManifestName)
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(p, []byte(strings.Replace(string(b), `"sequence": 2`, `"sequence": 7`, 1)), 0o644)
			}, want: "does not match the signed statement's SHA-256"},
		{name: "wrong software: a build of another deployment signed by the same keys", nights: 1,
			attack: func(t *testing.T, e *attackEnv) {
				n := e.f.nightOf(e.b2, e.f.originVersion()+1)
				n.deployment = "us"
				e.f.plant(n, e.f.build.raw, e.f.ts.raw, e.b2)
			}, want: `is for deployment "us", and this replica serves "eu"`},
		{name: "wrong software: a root of another deployment signed by the same root keys", nights: 1,
			attack: func(t *testing.T, e *attackEnv) {
				spec := e.f.spec(e.f.build, e.f.ts)
				spec.Deployment = "us"
				us1, err := trust.NewRoot(spec, nil)
				if err != nil {
					t.Fatal(err)
				}
				us2, err := trust.NewRoot(spec, us1)
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range e.f.rootKeys[:2] {
					if us2, err = trust.SignRoot(us2, k.s); err != nil {
						t.Fatal(err)
					}
				}
				e.replaceTrustFile(t, "2.root.json", us2)
			}, want: `root version 2 is deployment "us"'s, not "eu"'s`},
		{name: "compromise of fewer root keys than the threshold", nights: 1,
			attack: func(t *testing.T, e *attackEnv) {
				x := newTKey(t, "thief")
				spec := e.f.spec(x, x)
				spec.RootKeys, spec.RootThreshold = []*metadata.Key{e.f.rootKeys[0].pub}, 1
				e.replaceTrustFile(t, "2.root.json", e.f.makeRoot(spec, e.f.rootKeys[0]))
				e.f.plant(e.f.nightOf(e.b2, e.f.originVersion()+1), x.raw, x.raw, e.b2)
			}, want: "root version 2: unsigned metadata error: Verifying root failed, not enough signatures, got 1, want 2"},
		{name: "rollback: the origin serves an older night's timestamp", nights: 2,
			attack: func(t *testing.T, e *attackEnv) {
				e.replaceTrustFile(t, trust.TimestampName, e.night1File(t, trust.TimestampName))
			}, want: "timestamp.json: bad version number error"},
		{name: "rollback: an older build in newer valid statements", nights: 2,
			attack: func(t *testing.T, e *attackEnv) {
				opts := e.f.publishOpts()
				opts.AllowDowngrade = true
				if _, err := fleet.Publish(context.Background(), e.b1, e.f.o, opts); err != nil {
					t.Fatal(err)
				}
			}, want: "is not newer than the served build"},
		{name: "mix and match: this night's timestamp over another night's snapshot", nights: 1,
			attack: func(t *testing.T, e *attackEnv) {
				e.f.publish(e.b2)
				e.replaceTrustFile(t, "2.snapshot.json", e.night1File(t, "1.snapshot.json"))
			}, want: "snapshot version 2: length/hash verification error"},
		{name: "mix and match: this night's snapshot over another night's targets", nights: 1,
			attack: func(t *testing.T, e *attackEnv) {
				e.f.publish(e.b2)
				e.replaceTrustFile(t, "2.targets.json", e.night1File(t, "1.targets.json"))
			}, want: "targets version 2: length/hash verification error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newAttackEnv(t, c.nights)
			keep := []string{e.b1, e.b2, e.b3}[c.nights-1]
			c.attack(t, e)
			err := e.refuses(t, c.want, keep)
			t.Logf("refused: %v", err)
			if c.nights == 1 && isKept(e.snaps, buildID(t, e.b2)) {
				t.Error("the refused build was kept")
			}
		})
	}
}

// TestMaliciousMirrorServesThePreviousNight: a mirror that serves the
// previous night's complete, validly signed statements to a replica that
// saw newer ones is refused as a rollback.
func TestMaliciousMirrorServesThePreviousNight(t *testing.T) {
	e := newAttackEnv(t, 2)
	mirror, err := fleet.OpenOrigin(fileURL(e.night1), fleet.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	e.follow.Origin = mirror
	err = e.refuses(t, "timestamp.json: bad version number error", e.b2)
	t.Logf("refused: %v", err)
}

// TestFrozenOriginIsRefusedUntilItsTimestampIsRenewed: a timestamp that
// expired is refused as expired, the current build kept; once the
// timestamp is renewed the build is taken.
func TestFrozenOriginIsRefusedUntilItsTimestampIsRenewed(t *testing.T) {
	e := newAttackEnv(t, 1)
	e.f.publish(e.b2)
	st := fleet.TrustStore(e.f.o)
	if _, _, err := trust.RenewTimestamp(context.Background(), st, e.f.ts.s, time.Hour, time.Now().Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	err := e.refuses(t, "expired", e.b1)
	if !errors.Is(err, trust.ErrExpired) {
		t.Errorf("not ErrExpired: %v", err)
	}
	if _, _, err := trust.RenewTimestamp(context.Background(), st, e.f.ts.s, time.Hour, time.Now()); err != nil {
		t.Fatal(err)
	}
	if id, err := e.follow.Poll(context.Background()); err != nil || id != buildID(t, e.b2) {
		t.Fatalf("after the renewal: took %q, %v", id, err)
	}
	servesTrusted(t, e.snaps, buildID(t, e.b2), e.follow.Pull.Verifier)
}

// TestFastForwardRecoveredByRotatingTheBuildKey: a thief with the build
// host's keys makes the replica keep statements of a huge version, so
// that it refuses the rightful next night as a rollback; once the root
// names new keys the replica drops what the old keys signed and takes the
// rightful build.
func TestFastForwardRecoveredByRotatingTheBuildKey(t *testing.T) {
	e := newAttackEnv(t, 1)
	clean := filepath.Join(t.TempDir(), "clean")
	if err := os.CopyFS(clean, os.DirFS(filepath.Join(e.f.dir, fleet.TrustDir))); err != nil {
		t.Fatal(err)
	}
	n := e.f.nightOf(e.b1, 1<<40)
	n.tsVersion = 1 << 41
	e.f.plant(n, e.f.build.raw, e.f.ts.raw, "")
	if id, err := e.follow.Poll(context.Background()); err != nil || id != "" {
		t.Fatalf("the fast-forwarded statements name the current build: took %q, %v", id, err)
	}
	// The operator finds the thief's statements and removes them, and
	// the rightful night is published with the same keys: the replica's
	// kept versions refuse it.
	os.RemoveAll(filepath.Join(e.f.dir, fleet.TrustDir))
	if err := os.CopyFS(filepath.Join(e.f.dir, fleet.TrustDir), os.DirFS(clean)); err != nil {
		t.Fatal(err)
	}
	e.f.publish(e.b2)
	err := e.refuses(t, "timestamp.json: bad version number error", e.b1)
	t.Logf("fast-forwarded replica: %v", err)
	// Root version 2 names new build and timestamp keys.
	build2, ts2 := e.f.use(newTKey(t, "build-2")), e.f.use(newTKey(t, "timestamp-2"))
	e.f.publishRoot(e.f.spec(build2, ts2), e.f.rootKeys[1], e.f.rootKeys[2])
	e.f.publish(e.b3)
	if id, err := e.follow.Poll(context.Background()); err != nil || id != buildID(t, e.b3) {
		t.Fatalf("after the rotation: took %q, %v", id, err)
	}
	servesTrusted(t, e.snaps, buildID(t, e.b3), e.follow.Pull.Verifier)
}

// TestEndlessDataIsCutOff: an origin that streams without end, in place
// of a statement, a manifest or a file, is cut off at the length the
// statements (or the trust package's limits) allow: the pull stops with
// a refusal, and the replica keeps its build.
func TestEndlessDataIsCutOff(t *testing.T) {
	cases := []struct {
		name string
		path func(e *attackEnv) string
		want string
	}{
		{"timestamp", func(e *attackEnv) string { return "trust/timestamp.json" }, "trust/timestamp.json is larger than 65536 bytes"},
		{"root", func(e *attackEnv) string { return "trust/2.root.json" }, "trust/2.root.json is larger than 524288 bytes"},
		{"snapshot", func(e *attackEnv) string { return "trust/2.snapshot.json" }, "trust/2.snapshot.json is larger than 65536 bytes"},
		{"targets", func(e *attackEnv) string { return "trust/2.targets.json" }, "trust/2.targets.json is larger than 4194304 bytes"},
		{"manifest", func(e *attackEnv) string { return buildID(t, e.b2) + "/" + snapshots.ManifestName }, "manifest.json is larger than"},
		{"store file", func(e *attackEnv) string { return buildID(t, e.b2) + "/store/" + firstSST(t, e.b2) }, "is longer than the signed manifest says"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newAttackEnv(t, 1)
			e.f.publish(e.b2)
			e.follow.Origin = hostile(t, e.f.dir, c.path(e))
			err := e.refuses(t, c.want, e.b1)
			t.Logf("refused: %v", err)
		})
	}
}

// TestEndlessDeltaFallsBackToTheWholeBuild: a delta that goes on past the
// length the statements name is refused, and the build comes whole.
func TestEndlessDeltaFallsBackToTheWholeBuild(t *testing.T) {
	k := newKeys(t, t.TempDir())
	f := newTrustFleet(t, "eu")
	b1 := unsignedCopy(t, 1)
	c1 := changedBuild(t, 5, "first", b1, k)
	c2 := changedBuild(t, 6, "second", b1, k)
	f.publish(c1)
	snaps := filepath.Join(t.TempDir(), "snapshots")
	r := f.replica(snaps)
	if _, err := fleet.Pull(context.Background(), f.o, snaps, fleet.PullOptions{Verifier: r}); err != nil {
		t.Fatal(err)
	}
	if pub := f.publish(c2, c1); len(pub.Deltas) != 1 {
		t.Fatalf("published deltas %+v", pub.Deltas)
	}
	o := hostile(t, f.dir, buildID(t, c2)+"/deltas/"+buildID(t, c1))
	p, err := fleet.Pull(context.Background(), o, snaps, fleet.PullOptions{Verifier: r})
	if err != nil {
		t.Fatal(err)
	}
	if p.Via != fleet.ViaFull || p.DeltaErr == nil || !strings.Contains(p.DeltaErr.Error(), "is not the delta the signed statements name") {
		t.Fatalf("pulled via %q; the delta's error: %v", p.Via, p.DeltaErr)
	}
	t.Logf("delta refused: %v", p.DeltaErr)
	servesTrusted(t, snaps, buildID(t, c2), r)
	sameBuild(t, filepath.Join(snaps, p.ID), c2)
}

// TestDeltaOfAnotherNightIsRefused: the origin serves, under this night's
// delta name, the delta another night made from the same base: the delta
// is refused and the build named by the statements comes whole.
func TestDeltaOfAnotherNightIsRefused(t *testing.T) {
	k := newKeys(t, t.TempDir())
	f := newTrustFleet(t, "eu")
	b1 := unsignedCopy(t, 1)
	c1 := changedBuild(t, 5, "first", b1, k)
	c2 := changedBuild(t, 6, "second", b1, k)
	c3 := changedBuild(t, 7, "third", b1, k)
	f.publish(c1)
	snaps := filepath.Join(t.TempDir(), "snapshots")
	r := f.replica(snaps)
	if _, err := fleet.Pull(context.Background(), f.o, snaps, fleet.PullOptions{Verifier: r}); err != nil {
		t.Fatal(err)
	}
	f.publish(c2, c1)
	f.publish(c3, c1)
	id1, id2, id3 := buildID(t, c1), buildID(t, c2), buildID(t, c3)
	other, err := os.ReadFile(filepath.Join(f.dir, id2, "deltas", id1))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, id3, "deltas", id1), other, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := fleet.Pull(context.Background(), f.o, snaps, fleet.PullOptions{Verifier: r})
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != id3 || p.Via != fleet.ViaFull || p.DeltaErr == nil || !errors.Is(p.DeltaErr, fleet.ErrRefused) {
		t.Fatalf("pulled %s via %q; the delta's error: %v", p.ID, p.Via, p.DeltaErr)
	}
	t.Logf("delta refused: %v", p.DeltaErr)
	servesTrusted(t, snaps, id3, r)
	sameBuild(t, filepath.Join(snaps, id3), c3)
}

// TestFileTheManifestDoesNotListIsNotTaken: a snapshot has no
// dependencies; a file the origin adds beside a build's listed ones is
// never fetched (and snapshots.Verify refuses a build folder holding one:
// TestVerify's "not listed" cases).
func TestFileTheManifestDoesNotListIsNotTaken(t *testing.T) {
	e := newAttackEnv(t, 1)
	e.f.publish(e.b2)
	extra := filepath.Join(buildID(t, e.b2), "store", "999999.sst")
	if err := os.WriteFile(filepath.Join(e.f.dir, extra), []byte("extra"), 0o644); err != nil {
		t.Fatal(err)
	}
	if id, err := e.follow.Poll(context.Background()); err != nil || id != buildID(t, e.b2) {
		t.Fatalf("took %q, %v", id, err)
	}
	if _, err := os.Stat(filepath.Join(e.snaps, extra)); err == nil {
		t.Errorf("%s was fetched", extra)
	}
	servesTrusted(t, e.snaps, buildID(t, e.b2), e.follow.Pull.Verifier)
}

// TestFrozenMirrorIsRefusedOnceItsTimestampExpires: a mirror that goes on
// serving the timestamp the replica already keeps, after it expired, is
// refused as frozen; the replica keeps its build.
func TestFrozenMirrorIsRefusedOnceItsTimestampExpires(t *testing.T) {
	e := newAttackEnv(t, 1)
	st := fleet.TrustStore(e.f.o)
	if _, _, err := trust.RenewTimestamp(context.Background(), st, e.f.ts.s, time.Hour, time.Now().Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	// The replica took this timestamp while it held (as if an hour ago).
	b, err := os.ReadFile(filepath.Join(e.f.dir, fleet.TrustDir, trust.TimestampName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.snaps, trust.StateDir, trust.TimestampName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	err = e.refuses(t, "expired", e.b1)
	if !errors.Is(err, trust.ErrExpired) || !strings.Contains(err.Error(), "offers no newer one") {
		t.Errorf("not the frozen origin's refusal: %v", err)
	}
	t.Logf("refused: %v", err)
}
