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
// build its key signed before.
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
