package trust

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"
)

// Store is where statements are published and read: the origin's trust/
// folder, or a bundle. Get answers ErrMissing (wrapped) for a name it
// lacks, and never more than limit bytes.
type Store interface {
	Get(ctx context.Context, name string, limit int64) ([]byte, error)
	Put(ctx context.Context, name string, b []byte) error
}

// Names of the statements in a Store.
const TimestampName = "timestamp.json"

func rootName(v int64) string     { return strconv.FormatInt(v, 10) + ".root.json" }
func snapshotName(v int64) string { return strconv.FormatInt(v, 10) + ".snapshot.json" }
func targetsName(v int64) string  { return strconv.FormatInt(v, 10) + ".targets.json" }

// StatementValidity is how long a targets and snapshot statement hold: a
// deployment builds at least this often, or its replicas report the
// statements expired. Freshness is the timestamp's job, renewed far more
// often.
const StatementValidity = 365 * 24 * time.Hour

// Build is what a build's statements name.
type Build struct {
	ID       string
	Sequence int64
	// Manifest is the manifest's bytes.
	Manifest []byte
	// Deltas are the deltas to the build, by the build they start from.
	Deltas map[string]File

	// manifestFile names the manifest when its bytes are not at hand
	// (Resign).
	manifestFile File
}

// PublishRoot stores root b at the store after checking that it follows
// the store's newest root (or is a first root, for an empty store).
func PublishRoot(ctx context.Context, st Store, b []byte) (int64, error) {
	r, err := decodeRoot(b)
	if err != nil {
		return 0, err
	}
	roots, err := readRoots(ctx, st)
	if err != nil {
		return 0, err
	}
	v := r.Signed.Version
	switch {
	case len(roots) == 0:
		err = CheckRoot(nil, b)
	case v <= int64(len(roots)):
		if string(roots[v-1]) == string(b) {
			return v, nil // published already
		}
		return 0, fmt.Errorf("the origin already has root version %d, another one; make version %d", v, len(roots)+1)
	case v != int64(len(roots))+1:
		return 0, fmt.Errorf("root version %d cannot follow the origin's newest root, version %d; make version %d", v, len(roots), len(roots)+1)
	default:
		err = CheckRoot(roots[len(roots)-1], b)
	}
	if err != nil {
		return 0, err
	}
	return v, st.Put(ctx, rootName(v), b)
}

// newestRoot reads the store's roots (readRoots) and answers the newest.
func newestRoot(ctx context.Context, st Store) (*metadata.Metadata[metadata.RootType], error) {
	roots, err := readRoots(ctx, st)
	if err != nil {
		return nil, err
	}
	if len(roots) == 0 {
		return nil, fmt.Errorf("the origin has no root of trust (trust/1.root.json); publish one first with 'pds trust publish-root'")
	}
	return decodeRoot(roots[len(roots)-1])
}

// readRoots reads the store's roots, 1.root.json on, each checked against
// the one before.
func readRoots(ctx context.Context, st Store) ([][]byte, error) {
	var roots [][]byte
	for v := int64(1); ; v++ {
		b, err := st.Get(ctx, rootName(v), maxRootBytes)
		if errors.Is(err, ErrMissing) {
			return roots, nil
		}
		if err != nil {
			return nil, err
		}
		var prev []byte
		if len(roots) > 0 {
			prev = roots[len(roots)-1]
		}
		if err := CheckRoot(prev, b); err != nil {
			return nil, fmt.Errorf("the origin's %s: %w", rootName(v), err)
		}
		roots = append(roots, b)
	}
}

// Publish writes the statements that make b the store's current build:
// the targets statement naming its manifest and deltas and the snapshot
// statement binding it (both signed with build), then the timestamp
// (signed with ts, valid for validity from now), last, as the commit
// point. The targets and snapshot versions go up by one, or to the
// build's sequence when that is higher; the timestamp's by one, or to the
// time in Unix milliseconds: so a site fed by bundles (whose versions are
// those) and by the origin sees them rise.
func Publish(ctx context.Context, st Store, b Build, build, ts *Signer, validity time.Duration, now time.Time) (time.Time, error) {
	root, err := newestRoot(ctx, st)
	if err != nil {
		return time.Time{}, err
	}
	var prevTargets, prevTS int64
	if cur, err := st.Get(ctx, TimestampName, maxTimestampBytes); err == nil {
		t, err := metadata.Timestamp().FromBytes(cur)
		if err != nil {
			return time.Time{}, fmt.Errorf("the origin's %s: %w", TimestampName, err)
		}
		prevTS = t.Signed.Version
		if m := t.Signed.Meta["snapshot.json"]; m != nil {
			prevTargets = m.Version
		}
	} else if !errors.Is(err, ErrMissing) {
		return time.Time{}, err
	}
	s, err := makeStatements(root, b, build, ts, max(prevTargets+1, b.Sequence), max(prevTS+1, now.UnixMilli()), validity, now)
	if err != nil {
		return time.Time{}, err
	}
	if err := s.put(ctx, st); err != nil {
		return time.Time{}, err
	}
	return s.expires, nil
}

// put writes the statements to st, the timestamp last: until it is
// written, readers see the statements before.
func (s Statements) put(ctx context.Context, st Store) error {
	for _, w := range []struct {
		name string
		b    []byte
	}{{targetsName(s.version), s.Targets}, {snapshotName(s.version), s.Snapshot}, {TimestampName, s.Timestamp}} {
		if err := st.Put(ctx, w.name, w.b); err != nil {
			return err
		}
	}
	return nil
}

// Statements are a build's targets, snapshot and timestamp statements.
type Statements struct {
	Targets, Snapshot, Timestamp []byte
	version                      int64
	expires                      time.Time
}

// Bundle writes to st the whole chain a site needs to take build b with
// no origin: every root of roots (the chain from version 1), and the
// build's statements, versioned by its sequence. The timestamp holds for
// validity: the bundle's own window.
func Bundle(ctx context.Context, st Store, roots [][]byte, b Build, build, ts *Signer, validity time.Duration, now time.Time) (time.Time, error) {
	if len(roots) == 0 {
		return time.Time{}, errors.New("a bundle needs the root of trust")
	}
	var prev []byte
	for i, r := range roots {
		if err := CheckRoot(prev, r); err != nil {
			return time.Time{}, fmt.Errorf("root %d: %w", i+1, err)
		}
		prev = r
	}
	root, err := decodeRoot(prev)
	if err != nil {
		return time.Time{}, err
	}
	s, err := makeStatements(root, b, build, ts, max(b.Sequence, 1), max(now.UnixMilli(), 1), validity, now)
	if err != nil {
		return time.Time{}, err
	}
	for i, r := range roots {
		if err := st.Put(ctx, rootName(int64(i+1)), r); err != nil {
			return time.Time{}, err
		}
	}
	if err := s.put(ctx, st); err != nil {
		return time.Time{}, err
	}
	return s.expires, nil
}

func makeStatements(root *metadata.Metadata[metadata.RootType], b Build, build, ts *Signer, version, tsVersion int64, validity time.Duration, now time.Time) (Statements, error) {
	var s Statements
	if validity <= 0 {
		return s, fmt.Errorf("a timestamp's validity must be positive, not %s", validity)
	}
	now = now.UTC().Truncate(time.Second)
	dep := deployment(root)
	t := metadata.Targets(now.Add(StatementValidity))
	t.Signed.Version = version
	mf := b.manifestFile
	if mf.SHA256 == nil {
		mh := sha256.Sum256(b.Manifest)
		mf = File{Length: int64(len(b.Manifest)), SHA256: mh[:]}
	}
	custom, err := json.Marshal(buildCustom{BuildID: b.ID, Sequence: b.Sequence, Deployment: dep})
	if err != nil {
		return s, err
	}
	t.Signed.Targets[ManifestPath(b.ID)] = &metadata.TargetFiles{Length: mf.Length, Hashes: metadata.Hashes{"sha256": mf.SHA256}, Custom: (*json.RawMessage)(&custom), Path: ManifestPath(b.ID)}
	bases := make([]string, 0, len(b.Deltas))
	for base := range b.Deltas {
		bases = append(bases, base)
	}
	sort.Strings(bases)
	for _, base := range bases {
		f := b.Deltas[base]
		c, err := json.Marshal(deltaCustom{From: base, To: b.ID})
		if err != nil {
			return s, err
		}
		p := DeltaPath(b.ID, base)
		t.Signed.Targets[p] = &metadata.TargetFiles{Length: f.Length, Hashes: metadata.Hashes{"sha256": f.SHA256}, Custom: (*json.RawMessage)(&c), Path: p}
	}
	if s.Targets, err = signAs(t, root, metadata.TARGETS, build); err != nil {
		return s, err
	}
	sn := metadata.Snapshot(now.Add(StatementValidity))
	sn.Signed.Version = version
	th := sha256.Sum256(s.Targets)
	sn.Signed.Meta["targets.json"] = &metadata.MetaFiles{Version: version, Length: int64(len(s.Targets)), Hashes: metadata.Hashes{"sha256": th[:]}}
	if s.Snapshot, err = signAs(sn, root, metadata.SNAPSHOT, build); err != nil {
		return s, err
	}
	s.expires = now.Add(validity)
	tm := metadata.Timestamp(s.expires)
	tm.Signed.Version = tsVersion
	sh := sha256.Sum256(s.Snapshot)
	tm.Signed.Meta["snapshot.json"] = &metadata.MetaFiles{Version: version, Length: int64(len(s.Snapshot)), Hashes: metadata.Hashes{"sha256": sh[:]}}
	if s.Timestamp, err = signAs(tm, root, metadata.TIMESTAMP, ts); err != nil {
		return s, err
	}
	s.version = version
	return s, nil
}

// RenewTimestamp writes a new timestamp statement naming the same snapshot
// as the store's current one, valid for validity from now: what a cron
// job runs between builds so replicas do not report the origin frozen.
func RenewTimestamp(ctx context.Context, st Store, ts *Signer, validity time.Duration, now time.Time) (version int64, expires time.Time, err error) {
	if validity <= 0 {
		return 0, time.Time{}, fmt.Errorf("a timestamp's validity must be positive, not %s", validity)
	}
	root, err := newestRoot(ctx, st)
	if err != nil {
		return 0, time.Time{}, err
	}
	cur, err := st.Get(ctx, TimestampName, maxTimestampBytes)
	if err != nil {
		if errors.Is(err, ErrMissing) {
			return 0, time.Time{}, fmt.Errorf("the origin has no %s: publish a build first", TimestampName)
		}
		return 0, time.Time{}, err
	}
	old, err := metadata.Timestamp().FromBytes(cur)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("the origin's %s: %w", TimestampName, err)
	}
	now = now.UTC().Truncate(time.Second)
	t := metadata.Timestamp(now.Add(validity))
	t.Signed.Version = max(old.Signed.Version+1, now.UnixMilli())
	if old.Signed.Meta["snapshot.json"] == nil {
		return 0, time.Time{}, fmt.Errorf("the origin's %s names no snapshot; publish a build", TimestampName)
	}
	t.Signed.Meta = old.Signed.Meta
	b, err := signAs(t, root, metadata.TIMESTAMP, ts)
	if err != nil {
		return 0, time.Time{}, err
	}
	return t.Signed.Version, t.Signed.Expires, st.Put(ctx, TimestampName, b)
}

// signAs signs m with s and checks that root trusts s for role, so a
// retired key is refused where it signs rather than on every replica.
func signAs[T metadata.Roles](m *metadata.Metadata[T], root *metadata.Metadata[metadata.RootType], role string, s *Signer) ([]byte, error) {
	if _, err := m.Sign(s.signer); err != nil {
		return nil, err
	}
	if err := root.VerifyDelegate(role, m); err != nil {
		return nil, fmt.Errorf("%w: key %s is not a %s key of root version %d (%w); sign with a key the current root names, or publish a root that names this one", ErrUntrusted, s.id, role, root.Signed.Version, err)
	}
	return m.ToBytes(true)
}

// Files is a Store in memory: the statements a bundle carries.
type Files map[string][]byte

// Get answers the named statement.
func (f Files) Get(_ context.Context, name string, limit int64) ([]byte, error) {
	b, ok := f[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, ErrMissing)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrUntrusted, name, limit)
	}
	return b, nil
}

// Put stores a statement.
func (f Files) Put(_ context.Context, name string, b []byte) error {
	f[name] = bytes.Clone(b)
	return nil
}

// Fetch reads from f as an origin.
func (f Files) Fetch(ctx context.Context, name string, limit int64) ([]byte, error) {
	return f.Get(ctx, name, limit)
}

// CheckSigners checks, before anything is uploaded, that the store's
// newest root names build for the targets and snapshot roles and ts for
// the timestamp role: a retired key is refused before it costs an upload.
func CheckSigners(ctx context.Context, st Store, build, ts *Signer) error {
	root, err := newestRoot(ctx, st)
	if err != nil {
		return err
	}
	return checkSigners(root, build, ts)
}

// checkSigners checks that root names build for the targets and snapshot
// roles and ts for the timestamp role.
func checkSigners(root *metadata.Metadata[metadata.RootType], build, ts *Signer) error {
	for _, c := range []struct {
		role string
		s    *Signer
	}{{metadata.TARGETS, build}, {metadata.SNAPSHOT, build}, {metadata.TIMESTAMP, ts}} {
		r := root.Signed.Roles[c.role]
		if r == nil || !slices.Contains(r.KeyIDs, c.s.id) {
			return fmt.Errorf("%w: key %s is not a %s key of root version %d; sign with a key the current root names, or publish a root that names this one", ErrUntrusted, c.s.id, c.role, root.Signed.Version)
		}
	}
	return nil
}

// Resign signs the store's current build again under its newest root:
// the same build, manifest and deltas, in new targets, snapshot and
// timestamp statements signed by build and ts. A rotation runs it right
// after the new root is published, so that replicas that walk to the new
// root find the build they serve vouched for under it (they keep the new
// statement beside the build), and a server that restarts serves it.
func Resign(ctx context.Context, st Store, build, ts *Signer, validity time.Duration, now time.Time) (Build, error) {
	var b Build
	root, err := newestRoot(ctx, st)
	if err != nil {
		return b, err
	}
	if err := checkSigners(root, build, ts); err != nil {
		return b, err
	}
	tsb, err := st.Get(ctx, TimestampName, maxTimestampBytes)
	if err != nil {
		return b, fmt.Errorf("the origin's %s: %w (publish a build first)", TimestampName, err)
	}
	old, err := metadata.Timestamp().FromBytes(tsb)
	if err != nil {
		return b, fmt.Errorf("the origin's %s: %w", TimestampName, err)
	}
	if old.Signed.Meta["snapshot.json"] == nil {
		return b, fmt.Errorf("the origin's %s names no snapshot", TimestampName)
	}
	v := old.Signed.Meta["snapshot.json"].Version
	tb, err := st.Get(ctx, targetsName(v), maxTargetsBytes)
	if err != nil {
		return b, fmt.Errorf("the origin's %s: %w", targetsName(v), err)
	}
	t, err := metadata.Targets().FromBytes(tb)
	if err != nil {
		return b, fmt.Errorf("the origin's %s: %w", targetsName(v), err)
	}
	rel, err := release(t, deployment(root))
	if err != nil {
		return b, err
	}
	b = Build{ID: rel.BuildID, Sequence: rel.Sequence, Deltas: rel.Deltas, manifestFile: rel.Manifest}
	s, err := makeStatements(root, b, build, ts, v+1, max(old.Signed.Version+1, now.UnixMilli()), validity, now)
	if err != nil {
		return b, err
	}
	if err := s.put(ctx, st); err != nil {
		return b, err
	}
	return b, nil
}
