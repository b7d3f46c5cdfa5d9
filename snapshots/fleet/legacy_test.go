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

// legacyFleet is an origin whose replica took a minisign-signed build b1,
// following with the minisign key k.
type legacyFleet struct {
	k          keyPair
	o          fleet.Origin
	dir, snaps string
	b1         string
	follow     *fleet.Follower
}

func newLegacyFleet(t *testing.T) *legacyFleet {
	l := &legacyFleet{k: newKeys(t, t.TempDir())}
	l.o, l.dir = fileOrigin(t)
	l.b1 = signedCopy(t, 1, l.k)
	publish(t, l.o, l.b1)
	l.snaps = filepath.Join(t.TempDir(), "snapshots")
	l.follow = follower(t, l.o, l.snaps, l.k)
	if id, err := l.follow.Poll(context.Background()); err != nil || id != buildID(t, l.b1) {
		t.Fatalf("took %q, %v", id, err)
	}
	return l
}

// moveToRoot publishes root version 1 at the origin with its minisign
// signature by signer, as 'pds trust publish-root --adopt-key' does.
func (l *legacyFleet) moveToRoot(t *testing.T, signer keyPair) *trustFleet {
	f := newTrustFleetAt(t, "eu", l.o, l.dir)
	sig, err := snapshots.SignBytes(f.roots[0], signer.sec, "file:"+trust.AdoptedName)
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.TrustStore(l.o).Put(context.Background(), trust.AdoptedSigName, sig); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMinisignReplicaAdoptsTheRootItsKeySigned: a replica that trusts a
// minisign key meets a build published only through a root: it adopts the
// root its key signed, takes the build through it, and still serves the
// build its key signed before. A pull or follower that is given the old
// key again (a replica restarted with --pubkey) takes builds through the
// adopted root only: a newer build the old key alone signed is not taken.
func TestMinisignReplicaAdoptsTheRootItsKeySigned(t *testing.T) {
	l := newLegacyFleet(t)
	f := l.moveToRoot(t, l.k)
	b2 := unsignedCopy(t, 2)
	f.publish(b2)
	if id, err := l.follow.Poll(context.Background()); err != nil || id != buildID(t, b2) {
		t.Fatalf("took %q, %v", id, err)
	}
	if _, err := os.Stat(filepath.Join(l.snaps, trust.StateDir, "anchor.json")); err != nil {
		t.Fatalf("no adopted anchor: %v", err)
	}
	a, err := trust.Adopted(l.snaps, l.k.pub)
	if err != nil || a == nil {
		t.Fatalf("adopted: %v %v", a, err)
	}
	servesTrusted(t, l.snaps, buildID(t, b2), a)
	if err := snapshots.VerifyStatement(filepath.Join(l.snaps, buildID(t, l.b1)), a); err != nil {
		t.Errorf("the build the old key signed before the move: %v", err)
	}

	// The old key alone signs a newer build (a thief with the old key): a
	// pull given the old key, as a replica restarted with --pubkey is,
	// refuses it.
	b3 := signedCopy(t, 3, l.k)
	if _, err := fleet.Publish(context.Background(), b3, l.o, fleet.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := fleet.Pull(context.Background(), l.o, l.snaps, pullOpts(l.k))
	if err != nil || p.ID != buildID(t, b2) || !p.UpToDate {
		t.Fatalf("a pull with the old key, after the folder adopted a root: %s (up to date %v), %v; want the build the root names, %s", p.ID, p.UpToDate, err, buildID(t, b2))
	}
	fl := follower(t, l.o, l.snaps, l.k)
	if id, err := fl.Poll(context.Background()); err != nil || id != "" {
		t.Fatalf("a follower with the old key, after the folder adopted a root, took %q (%v)", id, err)
	}
	servesTrusted(t, l.snaps, buildID(t, b2), a)
}

// TestRootSignedByAnotherMinisignKeyIsNotAdopted: a first root whose
// minisign signature is another key's is refused; the replica keeps its
// build and adopts nothing.
func TestRootSignedByAnotherMinisignKeyIsNotAdopted(t *testing.T) {
	l := newLegacyFleet(t)
	f := l.moveToRoot(t, newKeys(t, t.TempDir()))
	f.publish(unsignedCopy(t, 2))
	id, err := l.follow.Poll(context.Background())
	if id != "" || !errors.Is(err, fleet.ErrRefused) || !strings.Contains(err.Error(), "could not be adopted") || !strings.Contains(err.Error(), "not by the trusted key") {
		t.Fatalf("took %q, %v; want the root refused", id, err)
	}
	t.Logf("refused: %v", err)
	if _, err := os.Stat(filepath.Join(l.snaps, trust.StateDir, "anchor.json")); err == nil {
		t.Error("the root was adopted")
	}
	serves(t, l.snaps, buildID(t, l.b1), l.k)
	if _, ok := l.follow.Pull.Verifier.(*snapshots.PublicKey); !ok {
		t.Errorf("the follower trusts %T", l.follow.Pull.Verifier)
	}
}

// TestMinisignSiteAdoptsTheRootABundleCarries: a site fed only by bundles,
// trusting a minisign key, applies a bundle whose build only a root
// vouches for: the bundle carries the first root with the old key's
// signature, and the site adopts the root and takes the build. Without
// that signature the bundle is refused and the site keeps its build.
func TestMinisignSiteAdoptsTheRootABundleCarries(t *testing.T) {
	l := newLegacyFleet(t)
	f := newTrustFleetAt(t, "eu", l.o, l.dir)
	b2 := unsignedCopy(t, 2)
	bundle := func(legacy []byte) string {
		out := filepath.Join(t.TempDir(), "b1-b2.pdsbundle")
		bt := &fleet.BundleTrust{Roots: f.roots, Build: f.build.s, Timestamp: f.ts.s, Validity: time.Hour, LegacySig: legacy}
		if _, err := fleet.WriteBundle(context.Background(), l.b1, b2, out, bt); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if _, err := fleet.ApplyBundle(context.Background(), bundle(nil), l.snaps, pullOpts(l.k)); !errors.Is(err, fleet.ErrRefused) {
		t.Fatalf("a bundle only a root vouches for, at a site that trusts a minisign key, without the key's signature of the root: %v", err)
	}
	serves(t, l.snaps, buildID(t, l.b1), l.k)
	sig, err := snapshots.SignBytes(f.roots[0], l.k.sec, "file:"+trust.AdoptedName)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fleet.ApplyBundle(context.Background(), bundle(sig), l.snaps, pullOpts(l.k)); err != nil {
		t.Fatal(err)
	}
	a, err := trust.Adopted(l.snaps, l.k.pub)
	if err != nil || a == nil {
		t.Fatalf("adopted: %v %v", a, err)
	}
	servesTrusted(t, l.snaps, buildID(t, b2), a)
}
