package trust

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/productdata/pds/internal/osfile"
	"github.com/productdata/pds/snapshots"
)

// StateDir is the folder, inside a replica's snapshots folder, where it
// keeps the statements it trusts: every root it walked past its anchor
// (N.root.json) and the newest timestamp, snapshot and targets statements.
const StateDir = ".trust"

// StatementName is the file beside a build's manifest holding the targets
// statement that named it: a server checks it against the trusted roots
// before it serves the build.
const StatementName = snapshots.StatementName

// Fetch reads a statement from the origin: ErrMissing (wrapped) when it
// is not there, and no more than limit bytes.
type Fetch func(ctx context.Context, name string, limit int64) ([]byte, error)

// Replica is the trust of one snapshots folder: the anchor root it was
// provisioned with, and the statements it keeps in StateDir. A file in
// StateDir counts only once it is checked again from the anchor, so one
// who can write the folder gains nothing by writing there.
type Replica struct {
	anchor []byte
	dir    string
	legacy *snapshots.PublicKey // see Fallback
}

// NewReplica is the trust of the snapshots folder snaps, anchored at the
// root statement anchor (the file an operator provisions the replica
// with; version 1 or a later one).
func NewReplica(anchor []byte, snaps string) (*Replica, error) {
	if _, err := decodeRoot(anchor); err != nil {
		return nil, err
	}
	return &Replica{anchor: anchor, dir: filepath.Join(snaps, StateDir)}, nil
}

// ReadReplica is NewReplica with the anchor read from a file.
func ReadReplica(anchorPath, snaps string) (*Replica, error) {
	b, err := osfile.ReadFile(anchorPath)
	if err != nil {
		return nil, fmt.Errorf("trust root: %w", err)
	}
	r, err := NewReplica(b, snaps)
	if err != nil {
		return nil, fmt.Errorf("trust root %s: %w", anchorPath, err)
	}
	return r, nil
}

// Statement is the name of the file a build keeps its statement in
// (snapshots.Verifier).
func (r *Replica) Statement() string { return StatementName }

// localRoots walks from the anchor through the roots kept in StateDir.
func (r *Replica) localRoots(now time.Time) (*checker, error) {
	c, err := newChecker(r.anchor, now)
	if err != nil {
		return nil, err
	}
	for i := 0; ; i++ {
		v := c.root().Signed.Version + 1
		b, err := osfile.ReadFile(filepath.Join(r.dir, rootName(v)))
		if errors.Is(err, fs.ErrNotExist) {
			return c, nil
		}
		if err != nil {
			return nil, err
		}
		if err := c.stepRoot(b); err != nil {
			return nil, fmt.Errorf("kept %s: %w", filepath.Join(r.dir, rootName(v)), err)
		}
	}
}

// Check checks that st, a targets statement a build keeps, is signed by
// the newest trusted root's build keys and names the manifest mb: what a
// server checks at each start and swap (snapshots.Verifier). It checks no
// expiry: a server keeps serving what it checked (see Freshness).
func (r *Replica) Check(mb, st []byte) error {
	if len(st) == 0 {
		return fmt.Errorf("%w: the build has no %s: it was not taken through a trust root (pull it again)", ErrUntrusted, StatementName)
	}
	c, err := r.localRoots(time.Now())
	if err != nil {
		return err
	}
	t, err := metadata.Targets().FromBytes(st)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrUntrusted, StatementName, err)
	}
	if err := c.root().VerifyDelegate(metadata.TARGETS, t); err != nil {
		return fmt.Errorf("%w: %s is not signed by the build keys of root version %d (a retired or foreign key?): %w", ErrUntrusted, StatementName, c.root().Signed.Version, err)
	}
	rel, err := release(t, deployment(c.root()))
	if err != nil {
		return err
	}
	return rel.Manifest.Check(snapshots.ManifestName, mb)
}

// Check checks b against f's length and SHA-256.
func (f File) Check(what string, b []byte) error {
	if int64(len(b)) != f.Length {
		return fmt.Errorf("%w: %s is %d bytes, and the signed statement names %d", ErrUntrusted, what, len(b), f.Length)
	}
	h := sha256.Sum256(b)
	if !bytes.Equal(h[:], f.SHA256) {
		return fmt.Errorf("%w: %s does not match the signed statement's SHA-256", ErrUntrusted, what)
	}
	return nil
}

// Update walks the origin's statements from the trusted ones, in the
// specification's order: new roots, one version at a time; the timestamp;
// the snapshot it names; the targets the snapshot names. It keeps what
// holds in StateDir and answers the build the targets name. Any step that
// fails leaves the kept statements as they were (new roots aside, which
// hold on their own), and the caller keeps serving its current build.
// An expired timestamp is ErrExpired.
func (r *Replica) Update(ctx context.Context, fetch Fetch, now time.Time) (Release, error) {
	var rel Release
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return rel, err
	}
	c, err := r.localRoots(now)
	if err != nil {
		return rel, err
	}
	kept := c.root()
	for i := 0; ; i++ {
		v := c.root().Signed.Version + 1
		b, err := fetch(ctx, rootName(v), maxRootBytes)
		if errors.Is(err, ErrMissing) {
			break
		}
		if err != nil {
			return rel, err
		}
		if i == maxRootSteps {
			return rel, fmt.Errorf("%w: the origin offers more than %d new roots at once", ErrUntrusted, maxRootSteps)
		}
		if err := c.stepRoot(b); err != nil {
			return rel, err
		}
		if err := osfile.Replace(filepath.Join(r.dir, rootName(v)), b); err != nil {
			return rel, err
		}
	}
	root := c.root()
	// Statements kept under other keys are not used for the rollback
	// checks: a thief's fast-forwarded versions would block the rightful
	// ones forever. Keys that changed in this walk say so, and so does a
	// kept statement the trusted root's keys did not sign (the walk that
	// kept the root stopped before it dropped them).
	if keysChanged(kept, root, metadata.TIMESTAMP) || keysChanged(kept, root, metadata.SNAPSHOT) || keysChanged(kept, root, metadata.TARGETS) || !r.keptSignedBy(root) {
		for _, n := range []string{TimestampName, "snapshot.json", "targets.json"} {
			if err := os.Remove(filepath.Join(r.dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return rel, err
			}
		}
	}
	if root.Signed.IsExpired(c.tm.RefTime) {
		return rel, fmt.Errorf("%w: root version %d expired at %s, and the origin offers no newer root: the root key holders must sign and publish the next one", ErrExpired, root.Signed.Version, root.Signed.Expires.Format(time.RFC3339))
	}
	if b, err := osfile.ReadFile(filepath.Join(r.dir, TimestampName)); err == nil && hasMeta(b, "snapshot.json") == nil {
		// Loaded for its version only; an expired one is fine here.
		if _, err := c.tm.UpdateTimestamp(b); err != nil && !isExpired(err) {
			return rel, fmt.Errorf("kept %s: %w", TimestampName, err)
		}
	}
	tsb, err := fetch(ctx, TimestampName, maxTimestampBytes)
	if err != nil {
		if errors.Is(err, ErrMissing) {
			return rel, fmt.Errorf("%w: the origin has no %s: nothing was published under this root", ErrUntrusted, TimestampName)
		}
		return rel, err
	}
	if err := hasMeta(tsb, "snapshot.json"); err != nil {
		return rel, fmt.Errorf("%w: %s: %w", ErrUntrusted, TimestampName, err)
	}
	ts, err := c.tm.UpdateTimestamp(tsb)
	var equal *metadata.ErrEqualVersionNumber
	switch {
	case errors.As(err, &equal):
		ts = c.tm.Timestamp
		if ts.Signed.IsExpired(c.tm.RefTime) {
			return rel, fmt.Errorf("%w: timestamp version %d expired at %s, and the origin offers no newer one (a frozen origin, or its timestamp was not renewed)", ErrExpired, ts.Signed.Version, ts.Signed.Expires.Format(time.RFC3339))
		}
	case isExpired(err) && c.tm.Timestamp != nil:
		return rel, fmt.Errorf("%w: the origin's newest timestamp (version %d) expired at %s (a frozen origin, or its timestamp was not renewed)", ErrExpired, c.tm.Timestamp.Signed.Version, c.tm.Timestamp.Signed.Expires.Format(time.RFC3339))
	case isExpired(err):
		return rel, fmt.Errorf("%w: %s: %w", ErrExpired, TimestampName, err)
	case err != nil:
		return rel, fmt.Errorf("%w: %s: %w", ErrUntrusted, TimestampName, err)
	}
	if b, err := osfile.ReadFile(filepath.Join(r.dir, "snapshot.json")); err == nil && hasMeta(b, "targets.json") == nil {
		// For rollback checks only, as the timestamp above.
		c.tm.UpdateSnapshot(b, true)
	}
	sv := ts.Signed.Meta["snapshot.json"].Version
	snb, err := fetch(ctx, snapshotName(sv), maxSnapshotBytes)
	if err != nil {
		return rel, fmt.Errorf("the origin's %s: %w", snapshotName(sv), err)
	}
	if err := hasMeta(snb, "targets.json"); err != nil {
		return rel, fmt.Errorf("%w: snapshot version %d: %w", ErrUntrusted, sv, err)
	}
	if _, err := c.tm.UpdateSnapshot(snb, false); err != nil {
		if isExpired(err) {
			return rel, fmt.Errorf("%w: snapshot version %d: %w", ErrExpired, sv, err)
		}
		return rel, fmt.Errorf("%w: snapshot version %d: %w", ErrUntrusted, sv, err)
	}
	tv := c.tm.Snapshot.Signed.Meta["targets.json"].Version
	tb, err := fetch(ctx, targetsName(tv), maxTargetsBytes)
	if err != nil {
		return rel, fmt.Errorf("the origin's %s: %w", targetsName(tv), err)
	}
	t, err := c.tm.UpdateTargets(tb)
	if err != nil {
		if isExpired(err) {
			return rel, fmt.Errorf("%w: targets version %d: %w", ErrExpired, tv, err)
		}
		return rel, fmt.Errorf("%w: targets version %d: %w", ErrUntrusted, tv, err)
	}
	if rel, err = release(t, deployment(root)); err != nil {
		return rel, err
	}
	rel.Statement, rel.Expires, rel.RootVersion = tb, ts.Signed.Expires, root.Signed.Version
	for _, w := range []struct {
		name string
		b    []byte
	}{{TimestampName, tsb}, {"snapshot.json", snb}, {"targets.json", tb}} {
		if err := osfile.Replace(filepath.Join(r.dir, w.name), w.b); err != nil {
			return rel, err
		}
	}
	return rel, nil
}

// keptSignedBy says whether every statement kept in StateDir is signed by
// the keys root names for its role (expired or not).
func (r *Replica) keptSignedBy(root *metadata.Metadata[metadata.RootType]) bool {
	return signedBy(root, metadata.TIMESTAMP, r.kept(TimestampName), metadata.Timestamp()) &&
		signedBy(root, metadata.SNAPSHOT, r.kept("snapshot.json"), metadata.Snapshot()) &&
		signedBy(root, metadata.TARGETS, r.kept("targets.json"), metadata.Targets())
}

// kept reads a statement kept in StateDir: nil when there is none (or it
// does not read: the checks that use it say so).
func (r *Replica) kept(name string) []byte {
	b, _ := osfile.ReadFile(filepath.Join(r.dir, name))
	return b
}

// signedBy says whether b (nil: nothing) is a statement of m's type
// signed by the keys root names for role.
func signedBy[T metadata.Roles](root *metadata.Metadata[metadata.RootType], role string, b []byte, m *metadata.Metadata[T]) bool {
	if b == nil {
		return true
	}
	m, err := m.FromBytes(b)
	return err == nil && root.VerifyDelegate(role, m) == nil
}

// Freshness is what a replica's newest valid timestamp says.
type Freshness struct {
	// Expires is when the kept timestamp statement stops holding; zero
	// when there is none.
	Expires     time.Time
	Version     int64
	RootVersion int64
}

// Freshness reads the kept timestamp statement and checks it against the
// trusted roots (not its expiry: that is what the caller reports).
func (r *Replica) Freshness() (Freshness, error) {
	c, err := r.localRoots(time.Now())
	if err != nil {
		return Freshness{}, err
	}
	f := Freshness{RootVersion: c.root().Signed.Version}
	b, err := osfile.ReadFile(filepath.Join(r.dir, TimestampName))
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	t, err := metadata.Timestamp().FromBytes(b)
	if err != nil {
		return f, fmt.Errorf("%w: kept %s: %w", ErrUntrusted, TimestampName, err)
	}
	if err := c.root().VerifyDelegate(metadata.TIMESTAMP, t); err != nil {
		return f, fmt.Errorf("%w: kept %s: %w", ErrUntrusted, TimestampName, err)
	}
	f.Expires, f.Version = t.Signed.Expires, t.Signed.Version
	return f, nil
}

func isExpired(err error) bool {
	var e *metadata.ErrExpiredMetadata
	return errors.As(err, &e)
}

// hasMeta checks that the timestamp or snapshot statement b names the
// statement name, before go-tuf reads it: go-tuf takes that entry for
// granted, and a statement without it (signed by a stolen key, say) must
// be refused, not crash the replica.
func hasMeta(b []byte, name string) error {
	var m struct {
		Signed struct {
			Meta map[string]*struct {
				Version int64 `json:"version"`
			} `json:"meta"`
		} `json:"signed"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if e := m.Signed.Meta[name]; e == nil || e.Version < 1 {
		return fmt.Errorf("it names no %s", name)
	}
	return nil
}
