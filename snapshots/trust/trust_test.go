package trust

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"
)

// keyring makes named key pairs in a test folder.
type keyring struct {
	t   *testing.T
	dir string
}

func (k keyring) make(name string) (*Signer, *metadata.Key) {
	k.t.Helper()
	kp, pp := filepath.Join(k.dir, name+".key"), filepath.Join(k.dir, name+".pub")
	if _, err := GenerateKey(kp, pp); err != nil {
		k.t.Fatal(err)
	}
	s, err := ReadSigner(kp)
	if err != nil {
		k.t.Fatal(err)
	}
	pub, err := ReadKey(pp)
	if err != nil {
		k.t.Fatal(err)
	}
	return s, pub
}

// fleet is one deployment's keys, origin and a replica.
type fleet struct {
	t               *testing.T
	rootKeys        []*Signer
	rootPubs        []*metadata.Key
	build, ts       *Signer
	buildPub, tsPub *metadata.Key
	origin          Files
	roots           [][]byte
	now             time.Time
}

func newFleet(t *testing.T, deployment string) *fleet {
	kr := keyring{t, t.TempDir()}
	f := &fleet{t: t, origin: Files{}, now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	for _, n := range []string{"root-a", "root-b", "root-c"} {
		s, p := kr.make(n)
		f.rootKeys, f.rootPubs = append(f.rootKeys, s), append(f.rootPubs, p)
	}
	f.build, f.buildPub = kr.make("build")
	f.ts, f.tsPub = kr.make("timestamp")
	f.publishRoot(RootSpec{Deployment: deployment, RootKeys: f.rootPubs, RootThreshold: 2, BuildKeys: []*metadata.Key{f.buildPub}, TimestampKeys: []*metadata.Key{f.tsPub}, Expires: f.now.AddDate(1, 0, 0)}, f.rootKeys[0], f.rootKeys[1])
	return f
}

func (f *fleet) publishRoot(spec RootSpec, signers ...*Signer) {
	f.t.Helper()
	var prev []byte
	if len(f.roots) > 0 {
		prev = f.roots[len(f.roots)-1]
	}
	b, err := NewRoot(spec, prev)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, s := range signers {
		if b, err = SignRoot(b, s); err != nil {
			f.t.Fatal(err)
		}
	}
	if _, err := PublishRoot(context.Background(), f.origin, b); err != nil {
		f.t.Fatal(err)
	}
	f.roots = append(f.roots, b)
}

func (f *fleet) publish(id string, seq int64) Build {
	f.t.Helper()
	b := Build{ID: id, Sequence: seq, Manifest: []byte(`{"build_id":"` + id + `"}`)}
	if _, err := Publish(context.Background(), f.origin, b, f.build, f.ts, 48*time.Hour, f.now); err != nil {
		f.t.Fatal(err)
	}
	return b
}

func (f *fleet) replica() *Replica {
	f.t.Helper()
	r, err := NewReplica(f.roots[0], f.t.TempDir())
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func TestReplicaTakesWhatTheRootsKeysSigned(t *testing.T) {
	f := newFleet(t, "eu")
	b := f.publish("B1", 1)
	r := f.replica()
	rel, err := r.Update(context.Background(), f.origin.Fetch, f.now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rel.BuildID != "B1" || rel.Sequence != 1 || rel.Deployment != "eu" {
		t.Fatalf("release %+v", rel)
	}
	if err := rel.Manifest.Check("manifest", b.Manifest); err != nil {
		t.Fatal(err)
	}
	if err := r.Check(b.Manifest, rel.Statement); err != nil {
		t.Fatalf("a server refuses the build the statement names: %v", err)
	}
	if err := r.Check([]byte(`{"build_id":"B2"}`), rel.Statement); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("another manifest under the statement: %v", err)
	}
	fr, err := r.Freshness()
	if err != nil || !fr.Expires.Equal(f.now.Add(48*time.Hour)) {
		t.Fatalf("freshness %+v, %v", fr, err)
	}
}

func TestRootNeedsItsThreshold(t *testing.T) {
	f := newFleet(t, "eu")
	spec := RootSpec{Deployment: "eu", RootKeys: f.rootPubs, RootThreshold: 2, BuildKeys: []*metadata.Key{f.tsPub}, TimestampKeys: []*metadata.Key{f.tsPub}, Expires: f.now.AddDate(1, 0, 0)}
	b, err := NewRoot(spec, f.roots[0])
	if err != nil {
		t.Fatal(err)
	}
	if b, err = SignRoot(b, f.rootKeys[2]); err != nil {
		t.Fatal(err)
	}
	if _, err := PublishRoot(context.Background(), f.origin, b); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("a root signed by one of three keys was published: %v", err)
	}
	// An origin that serves it anyway: the replica refuses it.
	f.origin["2.root.json"] = b
	f.publishBypassing(t)
	if _, err := f.replica().Update(context.Background(), f.origin.Fetch, f.now); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("a replica walked to a root one key signed: %v", err)
	}
	info, err := DescribeRoot(b)
	if err != nil || len(info.Signed) != 1 || info.Version != 2 {
		t.Fatalf("describe: %+v, %v", info, err)
	}
}

// publishBypassing writes a build's statements under the first root,
// whatever the origin's roots say.
func (f *fleet) publishBypassing(t *testing.T) {
	root, _ := decodeRoot(f.roots[0])
	s, err := makeStatements(root, Build{ID: "B1", Sequence: 1, Manifest: []byte("{}")}, f.build, f.ts, 1, 1, time.Hour, f.now)
	if err != nil {
		t.Fatal(err)
	}
	f.origin[targetsName(1)], f.origin[snapshotName(1)], f.origin[TimestampName] = s.Targets, s.Snapshot, s.Timestamp
}

func TestRotatedBuildKeyIsRefused(t *testing.T) {
	f := newFleet(t, "eu")
	f.publish("B1", 1)
	r := f.replica()
	ctx := context.Background()
	if _, err := r.Update(ctx, f.origin.Fetch, f.now); err != nil {
		t.Fatal(err)
	}
	old := f.build
	kr := keyring{t, t.TempDir()}
	f.build, f.buildPub = kr.make("build-2")
	f.publishRoot(RootSpec{Deployment: "eu", RootKeys: f.rootPubs, RootThreshold: 2, BuildKeys: []*metadata.Key{f.buildPub}, TimestampKeys: []*metadata.Key{f.tsPub}, Expires: f.now.AddDate(1, 0, 0)}, f.rootKeys[1], f.rootKeys[2])
	b2 := f.publish("B2", 2)
	rel, err := r.Update(ctx, f.origin.Fetch, f.now)
	if err != nil || rel.BuildID != "B2" || rel.RootVersion != 2 {
		t.Fatalf("after the rotation: %+v, %v", rel, err)
	}
	// The retired key cannot publish, and what it signs is refused.
	if _, err := Publish(ctx, f.origin, Build{ID: "B3", Sequence: 3, Manifest: []byte("{}")}, old, f.ts, time.Hour, f.now); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("the retired key published: %v", err)
	}
	oldRoot, _ := decodeRoot(f.roots[0])
	s, err := makeStatements(oldRoot, Build{ID: "B3", Sequence: 3, Manifest: []byte("{}")}, old, f.ts, 3, f.now.UnixMilli()+10, time.Hour, f.now)
	if err != nil {
		t.Fatal(err)
	}
	f.origin[targetsName(3)], f.origin[snapshotName(3)], f.origin[TimestampName] = s.Targets, s.Snapshot, s.Timestamp
	if _, err := r.Update(ctx, f.origin.Fetch, f.now); !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "snapshot") {
		t.Fatalf("a build the retired key signed: %v", err)
	}
	if err := r.Check(b2.Manifest, rel.Statement); err != nil {
		t.Fatalf("the build taken before: %v", err)
	}
	if err := r.Check([]byte("{}"), s.Targets); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("a server took a statement of the retired key: %v", err)
	}
}

func TestExpiredTimestampIsReportedAndRenewed(t *testing.T) {
	f := newFleet(t, "eu")
	f.publish("B1", 1)
	r := f.replica()
	ctx := context.Background()
	later := f.now.Add(49 * time.Hour)
	if _, err := r.Update(ctx, f.origin.Fetch, later); !errors.Is(err, ErrExpired) {
		t.Fatalf("an expired timestamp: %v", err)
	}
	if _, _, err := RenewTimestamp(ctx, f.origin, f.ts, 48*time.Hour, later); err != nil {
		t.Fatal(err)
	}
	if rel, err := r.Update(ctx, f.origin.Fetch, later); err != nil || rel.BuildID != "B1" {
		t.Fatalf("after renewal: %+v, %v", rel, err)
	}
	if _, _, err := RenewTimestamp(ctx, f.origin, f.build, time.Hour, later); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("the build key renewed the timestamp: %v", err)
	}
}

func TestOlderStatementsAreRefused(t *testing.T) {
	f := newFleet(t, "eu")
	f.publish("B1", 1)
	stale := Files{}
	for k, v := range f.origin {
		stale[k] = v
	}
	f.now = f.now.Add(time.Minute)
	f.publish("B2", 2)
	r := f.replica()
	ctx := context.Background()
	if rel, err := r.Update(ctx, f.origin.Fetch, f.now); err != nil || rel.BuildID != "B2" {
		t.Fatalf("%+v, %v", rel, err)
	}
	if _, err := r.Update(ctx, stale.Fetch, f.now); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("an origin serving last night's statements: %v", err)
	}
}

func TestBuildForAnotherDeploymentIsRefused(t *testing.T) {
	f := newFleet(t, "eu")
	// The same keys, another deployment's root: its build is not this one's.
	us := &fleet{t: t, origin: Files{}, now: f.now, rootKeys: f.rootKeys, rootPubs: f.rootPubs, build: f.build, buildPub: f.buildPub, ts: f.ts, tsPub: f.tsPub}
	us.publishRoot(RootSpec{Deployment: "us", RootKeys: f.rootPubs, RootThreshold: 2, BuildKeys: []*metadata.Key{f.buildPub}, TimestampKeys: []*metadata.Key{f.tsPub}, Expires: f.now.AddDate(1, 0, 0)}, f.rootKeys[0], f.rootKeys[1])
	us.publish("US1", 5)
	if _, err := f.replica().Update(context.Background(), us.origin.Fetch, f.now); !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "deployment") {
		t.Fatalf("a build of deployment us on an eu replica: %v", err)
	}
}

func TestExpiredRootIsReportedNotFollowed(t *testing.T) {
	f := newFleet(t, "eu")
	f.publish("B1", 1)
	r := f.replica()
	_, err := r.Update(context.Background(), f.origin.Fetch, f.now.AddDate(2, 0, 0))
	if !errors.Is(err, ErrExpired) || !strings.Contains(err.Error(), "root version 1 expired") {
		t.Fatalf("a replica whose newest root expired: %v", err)
	}
}

// TestStatementWithoutItsEntryIsRefused: a timestamp or snapshot signed by
// the right key but naming no statement (a stolen key's, say) is refused,
// and never crashes the replica.
func TestStatementWithoutItsEntryIsRefused(t *testing.T) {
	for _, which := range []string{TimestampName, snapshotName(1)} {
		t.Run(which, func(t *testing.T) {
			f := newFleet(t, "eu")
			f.publish("B1", 1)
			r := f.replica()
			ctx := context.Background()
			if _, err := r.Update(ctx, f.origin.Fetch, f.now); err != nil {
				t.Fatal(err)
			}
			var b []byte
			var err error
			if which == TimestampName {
				m := metadata.Timestamp(f.now.Add(time.Hour))
				m.Signed.Version = f.now.UnixMilli() + 100
				m.Signed.Meta = map[string]*metadata.MetaFiles{}
				_, err = m.Sign(f.ts.signer)
				b, _ = m.ToBytes(false)
			} else {
				m := metadata.Snapshot(f.now.Add(time.Hour))
				m.Signed.Meta = map[string]*metadata.MetaFiles{}
				_, err = m.Sign(f.build.signer)
				b, _ = m.ToBytes(false)
			}
			if err != nil {
				t.Fatal(err)
			}
			f.origin[which] = b
			if _, err := r.Update(ctx, f.origin.Fetch, f.now); !errors.Is(err, ErrUntrusted) {
				t.Fatalf("a %s naming nothing: %v", which, err)
			}
		})
	}
}
