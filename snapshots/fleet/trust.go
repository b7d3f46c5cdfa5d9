package fleet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/productdata/pds/internal/osfile"
	"github.com/productdata/pds/snapshots"
	"github.com/productdata/pds/snapshots/trust"
)

// statementTmpPre starts the name of a statement being written beside a
// build (refreshStatement); one a crash left is removed with stale staging
// folders.
const statementTmpPre = ".statement-"

// TrustDir is the origin's folder of trust statements (package
// snapshots/trust): every root, and the targets, snapshot and timestamp
// statements of the latest build.
const TrustDir = "trust"

// statement is what a build keeps beside its manifest to vouch for it: a
// minisign signature, or the targets statement that named it.
type statement struct {
	name string
	b    []byte
}

// TrustStore is the origin's trust/ folder as a trust.Store.
func TrustStore(o Origin) trust.Store { return originStore{o} }

type originStore struct{ o Origin }

func (s originStore) Get(ctx context.Context, name string, limit int64) ([]byte, error) {
	b, err := readSmall(ctx, s.o, TrustDir+"/"+name, limit)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w: %w", trust.ErrMissing, err)
	}
	return b, err
}

func (s originStore) Put(ctx context.Context, name string, b []byte) error {
	return s.o.Put(ctx, TrustDir+"/"+name, bytes.NewReader(b), int64(len(b)))
}

// now is the clock statements are checked against; tests set it.
var now = time.Now

// latestBuild says which build the origin offers: with a trust root, the
// one its newest valid statements name (rel); with a minisign key, the one
// its latest pointer names. A statement that does not hold is ErrRefused.
func latestBuild(ctx context.Context, o Origin, opts *PullOptions) (string, *trust.Release, error) {
	r, ok := opts.Verifier.(*trust.Replica)
	if !ok {
		id, err := Latest(ctx, o)
		return id, nil, err
	}
	rel, err := r.Update(ctx, originStore{o}.Get, now())
	if errors.Is(err, trust.ErrUntrusted) {
		return "", nil, fmt.Errorf("%w: %s: %w", ErrRefused, o, err)
	}
	if err != nil {
		return "", nil, err
	}
	if !validBuildID(rel.BuildID) {
		return "", nil, fmt.Errorf("%w: the statements name %q, which is not a build id", ErrRefused, rel.BuildID)
	}
	return rel.BuildID, &rel, nil
}

// refreshStatement gives the kept build in dir the statement the origin's
// newest statements (rel) name it with, when that differs from the one it
// keeps and vouches for the same manifest: after the build key rotates, a
// build the retired key vouched for is vouched for by the new one, and a
// server, which checks a build's statement against the newest root,
// serves it again. A folder that is not that build is left alone.
func refreshStatement(dir string, rel *trust.Release) error {
	if rel == nil {
		return nil
	}
	mb, err := os.ReadFile(filepath.Join(dir, snapshots.ManifestName))
	if err != nil || rel.Manifest.Check(snapshots.ManifestName, mb) != nil {
		return nil
	}
	path := filepath.Join(dir, trust.StatementName)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, rel.Statement) {
		return nil
	}
	// Written beside the build, not in it: a build holds no file its
	// manifest does not vouch for, even after a crash.
	f, err := os.CreateTemp(filepath.Dir(dir), statementTmpPre+"*")
	if err != nil {
		return err
	}
	f.Close()
	defer os.Remove(f.Name())
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	if err := writeSynced(f.Name(), rel.Statement); err != nil {
		return err
	}
	return osfile.RenameOver(f.Name(), path)
}

// adoptedTrust makes opts.Verifier the root the snapshots folder snaps
// adopted, when it is the minisign key that signed that root
// (trust.Adopted): once a folder moved to a root, the old key alone signs
// nothing it takes, whoever pulls into it and with whatever key.
func adoptedTrust(snaps string, opts *PullOptions) error {
	key, ok := opts.Verifier.(*snapshots.PublicKey)
	if !ok {
		return nil
	}
	r, err := trust.Adopted(snaps, key)
	if errors.Is(err, trust.ErrUntrusted) {
		return fmt.Errorf("%w: %w", ErrRefused, err)
	}
	if err != nil {
		return err
	}
	if r != nil {
		opts.Verifier = r
	}
	return nil
}

// adoptOnRefusal is what a replica that trusts a minisign key does when
// the origin's latest build is not signed by it (err): if the origin
// offers a first root that the key signed, the replica adopts it
// (trust.Adopt) and opts.Verifier becomes the root; adopted says so, and
// the caller takes the latest build again, through the root. A pull that
// the key's signature passes never reads more than before.
func adoptOnRefusal(ctx context.Context, o Origin, snaps string, opts *PullOptions, err error) (adopted bool, _ error) {
	key, ok := opts.Verifier.(*snapshots.PublicKey)
	if !ok || !errors.Is(err, snapshots.ErrSignature) {
		return false, nil
	}
	r, aerr := adoptOffered(ctx, o, snaps, key)
	if aerr != nil || r == nil {
		return false, aerr
	}
	opts.Verifier = r
	return true, nil
}

// adoptOffered adopts the origin's first root when key signed it, or
// answers the root adopted before (nil when there is none).
func adoptOffered(ctx context.Context, o Origin, snaps string, key *snapshots.PublicKey) (*trust.Replica, error) {
	if r, err := trust.Adopted(snaps, key); err != nil || r != nil {
		return r, err
	}
	sig, err := readSmall(ctx, o, TrustDir+"/"+trust.AdoptedSigName, 4096)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	root, err := readSmall(ctx, o, TrustDir+"/"+trust.AdoptedName, 512<<10)
	if err != nil {
		return nil, err
	}
	r, err := trust.Adopt(snaps, root, sig, key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return r, nil
}

// namedDelta reads a delta no further than the length the statements name
// (an origin that serves endless bytes is cut off there) and hashes it;
// check says, once the delta was applied, whether its bytes were the ones
// named. Every file the delta makes is checked against the manifest as
// well; this check refuses a delta the statements do not name.
type namedDelta struct {
	r    io.Reader
	h    hash.Hash
	n    int64
	want trust.File
}

func newNamedDelta(r io.Reader, want trust.File) *namedDelta {
	d := &namedDelta{h: sha256.New(), want: want}
	d.r = io.TeeReader(io.LimitReader(r, want.Length+1), d.h)
	return d
}

func (d *namedDelta) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.n += int64(n)
	return n, err
}

func (d *namedDelta) check(where string) error {
	if _, err := io.Copy(io.Discard, d); err != nil {
		return err
	}
	if d.n != d.want.Length || !bytes.Equal(d.h.Sum(nil), d.want.SHA256) {
		return fmt.Errorf("%w: %s is not the delta the signed statements name (%d bytes against %d, or other bytes)", ErrRefused, where, d.n, d.want.Length)
	}
	return nil
}
