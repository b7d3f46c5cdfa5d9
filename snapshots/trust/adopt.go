package trust

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/productdata/pds/internal/osfile"
	"github.com/productdata/pds/snapshots"
)

// A fleet whose replicas trust one minisign key moves to a trust root
// without touching them: the operator publishes the first root with the
// old key's minisign signature beside it (AdoptedSigName), and a replica
// that trusts that key takes the root as its anchor (Adopt). From then on
// it takes builds only through the root, and the old key alone signs
// nothing it accepts.

// AdoptedName is the adopted anchor in StateDir, and AdoptedSigName its
// minisign signature by the key the replica trusted before; the same
// names hold the root and its signature at the origin's trust/ folder.
const (
	AdoptedName    = "1.root.json"
	AdoptedSigName = "1.root.json.minisig"
	anchorName     = "anchor.json"
)

// Adopted answers the trust of the snapshots folder snaps when it adopted
// a root signed by key (nil, nil when it has not). The anchor is checked
// against key again each time, so writing the folder gains nothing.
func Adopted(snaps string, key *snapshots.PublicKey) (*Replica, error) {
	dir := filepath.Join(snaps, StateDir)
	b, err := osfile.ReadFile(filepath.Join(dir, anchorName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sig, err := osfile.ReadFile(filepath.Join(dir, anchorName+".minisig"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := key.CheckSignature(b, sig); err != nil {
		return nil, fmt.Errorf("%w: the adopted root %s: %w", ErrUntrusted, filepath.Join(dir, anchorName), err)
	}
	r, err := NewReplica(b, snaps)
	if err != nil {
		return nil, err
	}
	r.legacy = key
	return r, nil
}

// Fallback is the minisign key a replica trusted before it adopted its
// root: a kept build that key signed, taken before the move, is still
// served (snapshots.VerifyStatement asks it). Pulls take builds through
// the root only.
func (r *Replica) Fallback() snapshots.Verifier {
	if r.legacy == nil {
		return nil
	}
	return r.legacy
}

// Adopt checks that root is a first root (version 1, signed by a threshold
// of its own keys) that key signed (sig), and keeps it in snaps as the
// folder's anchor.
func Adopt(snaps string, root, sig []byte, key *snapshots.PublicKey) (*Replica, error) {
	if err := key.CheckSignature(root, sig); err != nil {
		return nil, fmt.Errorf("%w: the origin's %s: %w", ErrUntrusted, AdoptedName, err)
	}
	if err := CheckRoot(nil, root); err != nil {
		return nil, err
	}
	dir := filepath.Join(snaps, StateDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := osfile.Replace(filepath.Join(dir, anchorName+".minisig"), sig); err != nil {
		return nil, err
	}
	if err := osfile.Replace(filepath.Join(dir, anchorName), root); err != nil {
		return nil, err
	}
	r, err := NewReplica(root, snaps)
	if err != nil {
		return nil, err
	}
	r.legacy = key
	return r, nil
}

// WithFallback has r also serve kept builds that key signed before the
// fleet moved to a root (see Fallback).
func (r *Replica) WithFallback(key *snapshots.PublicKey) *Replica {
	c := *r
	c.legacy = key
	return &c
}
