package fleet_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/snapshots"
	"github.com/productdata/pds/snapshots/fleet"
	"github.com/productdata/pds/snapshots/trust"
)

// tkey is one key of a trust root: its signer for the trust package, its
// public key as a root names it, and the raw signer an attacker who stole
// it forges statements with.
type tkey struct {
	s   *trust.Signer
	pub *metadata.Key
	raw signature.Signer
}

func newTKey(t testing.TB, name string) tkey {
	t.Helper()
	dir := t.TempDir()
	kp, pp := filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
	if _, err := trust.GenerateKey(kp, pp); err != nil {
		t.Fatal(err)
	}
	s, err := trust.ReadSigner(kp)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := trust.ReadKey(pp)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(kp)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	priv, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := signature.LoadED25519Signer(priv.(ed25519.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	return tkey{s: s, pub: pub, raw: raw}
}

// trustFleet is one deployment: three root keys (threshold 2), a build key
// and a timestamp key, a file origin with root version 1 published, and
// the roots published so far.
type trustFleet struct {
	t          testing.TB
	deployment string
	rootKeys   []tkey
	build, ts  tkey
	o          fleet.Origin
	dir        string // the origin's folder
	roots      [][]byte
	extra      []tkey // keys made later, that a root may name
}

func newTrustFleet(t testing.TB, deployment string) *trustFleet {
	t.Helper()
	o, dir := fileOrigin(t)
	return newTrustFleetAt(t, deployment, o, dir)
}

// newTrustFleetAt is newTrustFleet at the file origin o (folder dir),
// which may already hold builds.
func newTrustFleetAt(t testing.TB, deployment string, o fleet.Origin, dir string) *trustFleet {
	t.Helper()
	f := &trustFleet{t: t, deployment: deployment, o: o, dir: dir}
	for i := range 3 {
		f.rootKeys = append(f.rootKeys, newTKey(t, fmt.Sprintf("root-%d", i)))
	}
	f.build, f.ts = newTKey(t, "build"), newTKey(t, "timestamp")
	f.publishRoot(f.spec(f.build, f.ts), f.rootKeys[0], f.rootKeys[1])
	return f
}

// spec is a root naming build and ts, with the fleet's root keys.
func (f *trustFleet) spec(build, ts tkey) trust.RootSpec {
	var pubs []*metadata.Key
	for _, k := range f.rootKeys {
		pubs = append(pubs, k.pub)
	}
	return trust.RootSpec{Deployment: f.deployment, RootKeys: pubs, RootThreshold: 2,
		BuildKeys: []*metadata.Key{build.pub}, TimestampKeys: []*metadata.Key{ts.pub}, Expires: time.Now().AddDate(1, 0, 0)}
}

// makeRoot is the next root of spec, signed by signers.
func (f *trustFleet) makeRoot(spec trust.RootSpec, signers ...tkey) []byte {
	f.t.Helper()
	var prev []byte
	if len(f.roots) > 0 {
		prev = f.roots[len(f.roots)-1]
	}
	b, err := trust.NewRoot(spec, prev)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, s := range signers {
		if b, err = trust.SignRoot(b, s.s); err != nil {
			f.t.Fatal(err)
		}
	}
	return b
}

// publishRoot makes the next root and publishes it at the origin.
func (f *trustFleet) publishRoot(spec trust.RootSpec, signers ...tkey) []byte {
	f.t.Helper()
	b := f.makeRoot(spec, signers...)
	if _, err := trust.PublishRoot(context.Background(), fleet.TrustStore(f.o), b); err != nil {
		f.t.Fatal(err)
	}
	f.roots = append(f.roots, b)
	f.build, f.ts = f.keyFor(spec.BuildKeys[0]), f.keyFor(spec.TimestampKeys[0])
	return b
}

// use registers k as a key a later root may name.
func (f *trustFleet) use(k tkey) tkey {
	f.extra = append(f.extra, k)
	return k
}

// keyFor keeps track of which tkey a root names; the caller registers
// keys it made with use.
func (f *trustFleet) keyFor(k *metadata.Key) tkey {
	for _, c := range append([]tkey{f.build, f.ts}, f.extra...) {
		if c.pub != nil && c.pub.Value.PublicKey == k.Value.PublicKey {
			return c
		}
	}
	f.t.Fatalf("no key %s", k.Value.PublicKey)
	return tkey{}
}

// publishOpts publishes with the fleet's current build and timestamp keys.
func (f *trustFleet) publishOpts(from ...string) fleet.PublishOptions {
	return fleet.PublishOptions{Trust: &fleet.PublishTrust{Build: f.build.s, Timestamp: f.ts.s, Validity: 48 * time.Hour}, DeltasFrom: from}
}

// publish publishes the build in dir through the root, with deltas from
// the builds in from.
func (f *trustFleet) publish(dir string, from ...string) fleet.Published {
	f.t.Helper()
	p, err := fleet.Publish(context.Background(), dir, f.o, f.publishOpts(from...))
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

// replica is the trust of snaps, anchored at root version 1.
func (f *trustFleet) replica(snaps string) *trust.Replica {
	f.t.Helper()
	r, err := trust.NewReplica(f.roots[0], snaps)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *trustFleet) follower(snaps string) *fleet.Follower {
	return &fleet.Follower{Origin: f.o, Snapshots: snaps, Log: ingesttest.Logger(f.t),
		Pull: fleet.PullOptions{Verifier: f.replica(snaps), Keep: 3}}
}

// unsignedCopy is shared build n with no minisign signature: a build
// published through a root needs none.
func unsignedCopy(t testing.TB, n int) string {
	return signedCopy(t, n, keyPair{})
}

// servesTrusted checks that SNAPSHOTS/current is build id, its statement
// holds for v (what a server checks at start), and it opens and answers.
func servesTrusted(t testing.TB, snaps, id string, v snapshots.Verifier) {
	t.Helper()
	cur, ok, err := fleet.Current(snaps)
	if err != nil || !ok {
		t.Fatalf("no current build in %s: %v", snaps, err)
	}
	if cur.ID != id {
		t.Fatalf("current is %s, want %s", cur.ID, id)
	}
	dir := filepath.Join(snaps, fleet.CurrentName)
	if err := snapshots.VerifyStatement(dir, v); err != nil {
		t.Fatalf("the current build's statement does not hold: %v", err)
	}
	if _, err := snapshots.Verify(dir); err != nil {
		t.Fatalf("the current build's files: %v", err)
	}
	if err := snapshots.SelfTest(context.Background(), dir, snapshots.OpenOptions{Verifier: v}); err != nil {
		t.Fatalf("current build does not serve: %v", err)
	}
}

// night is what a forger writes into a build's statements.
type night struct {
	id         string
	seq        int64
	manifest   []byte
	deployment string
	// version is the targets and snapshot version, tsVersion the
	// timestamp's.
	version, tsVersion int64
	expires            time.Time
	deltas             map[string]trust.File
}

// nightOf is the night naming the build in dir, one version past the
// origin's, valid for a day.
func (f *trustFleet) nightOf(dir string, version int64) night {
	f.t.Helper()
	mb, err := os.ReadFile(filepath.Join(dir, snapshots.ManifestName))
	if err != nil {
		f.t.Fatal(err)
	}
	m, err := snapshots.ReadManifest(dir)
	if err != nil {
		f.t.Fatal(err)
	}
	return night{id: m.BuildID, seq: m.Sequence, manifest: mb, deployment: f.deployment,
		version: version, tsVersion: time.Now().UnixMilli() + 1000 + version, expires: time.Now().Add(24 * time.Hour)}
}

// forge writes n's statements as the trust package shapes them, signed
// with whatever keys the caller holds (go-tuf's metadata directly, as an
// attacker would), and answers the targets, snapshot and timestamp bytes.
func forge(t testing.TB, n night, build, ts signature.Signer) (targets, snap, stamp []byte) {
	t.Helper()
	sign := func(m interface {
		Sign(signature.Signer) (*metadata.Signature, error)
		ToBytes(bool) ([]byte, error)
	}, s signature.Signer) []byte {
		if _, err := m.Sign(s); err != nil {
			t.Fatal(err)
		}
		b, err := m.ToBytes(true)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	exp := time.Now().Add(365 * 24 * time.Hour).UTC().Truncate(time.Second)
	tg := metadata.Targets(exp)
	tg.Signed.Version = n.version
	mh := sha256.Sum256(n.manifest)
	custom, _ := json.Marshal(map[string]any{"build_id": n.id, "sequence": n.seq, "deployment": n.deployment})
	tg.Signed.Targets[trust.ManifestPath(n.id)] = &metadata.TargetFiles{Length: int64(len(n.manifest)), Hashes: metadata.Hashes{"sha256": mh[:]}, Custom: (*json.RawMessage)(&custom), Path: trust.ManifestPath(n.id)}
	for base, df := range n.deltas {
		c, _ := json.Marshal(map[string]string{"from": base, "to": n.id})
		p := trust.DeltaPath(n.id, base)
		tg.Signed.Targets[p] = &metadata.TargetFiles{Length: df.Length, Hashes: metadata.Hashes{"sha256": df.SHA256}, Custom: (*json.RawMessage)(&c), Path: p}
	}
	targets = sign(tg, build)
	sn := metadata.Snapshot(exp)
	sn.Signed.Version = n.version
	th := sha256.Sum256(targets)
	sn.Signed.Meta["targets.json"] = &metadata.MetaFiles{Version: n.version, Length: int64(len(targets)), Hashes: metadata.Hashes{"sha256": th[:]}}
	snap = sign(sn, build)
	tm := metadata.Timestamp(n.expires.UTC().Truncate(time.Second))
	tm.Signed.Version = n.tsVersion
	sh := sha256.Sum256(snap)
	tm.Signed.Meta["snapshot.json"] = &metadata.MetaFiles{Version: n.version, Length: int64(len(snap)), Hashes: metadata.Hashes{"sha256": sh[:]}}
	stamp = sign(tm, ts)
	return targets, snap, stamp
}

// plant writes forged statements into the origin's trust/ folder, the
// timestamp last, and the build's files beside them when dir is set.
func (f *trustFleet) plant(n night, build, ts signature.Signer, dir string) {
	f.t.Helper()
	if dir != "" {
		copyBuildTo(f.t, dir, filepath.Join(f.dir, n.id))
	}
	tg, sn, tm := forge(f.t, n, build, ts)
	v := strconv.FormatInt(n.version, 10)
	st := fleet.TrustStore(f.o)
	for _, w := range []struct {
		name string
		b    []byte
	}{{v + ".targets.json", tg}, {v + ".snapshot.json", sn}, {trust.TimestampName, tm}} {
		if err := st.Put(context.Background(), w.name, w.b); err != nil {
			f.t.Fatal(err)
		}
	}
}

// copyBuildTo copies a build's folder (as an attacker uploads one).
func copyBuildTo(t testing.TB, src, dst string) {
	t.Helper()
	if _, err := os.Stat(dst); err == nil {
		return
	}
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// originVersion is the targets version the origin's timestamp names.
func (f *trustFleet) originVersion() int64 {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, fleet.TrustDir, trust.TimestampName))
	if err != nil {
		f.t.Fatal(err)
	}
	ts, err := metadata.Timestamp().FromBytes(b)
	if err != nil {
		f.t.Fatal(err)
	}
	return ts.Signed.Meta["snapshot.json"].Version
}

// hostile serves the folder dir over HTTP, except that each path in
// endless is served as its own bytes (if it has any) followed by more for
// as long as the client reads.
func hostile(t testing.TB, dir string, endless ...string) fleet.Origin {
	t.Helper()
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.Contains(endless, strings.TrimPrefix(r.URL.Path, "/")) {
			files.ServeHTTP(w, r)
			return
		}
		w.WriteHeader(http.StatusOK)
		b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(r.URL.Path, "/"))))
		if _, err := w.Write(b); err != nil {
			return
		}
		chunk := make([]byte, 32<<10)
		for i := range chunk {
			chunk[i] = ' '
		}
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	o, err := fleet.OpenOrigin(srv.URL+"/", fleet.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// sameBuild checks that the build in a holds the files and manifest of
// the build in b (not its minisign signature: a build taken through a
// root keeps its statement instead).
func sameBuild(t testing.TB, a, b string) {
	t.Helper()
	m, err := snapshots.ReadManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(m.Files, snapshots.File{Path: snapshots.ManifestName}) {
		x, err1 := os.ReadFile(filepath.Join(a, f.Path))
		y, err2 := os.ReadFile(filepath.Join(b, f.Path))
		if err1 != nil || err2 != nil || string(x) != string(y) {
			t.Errorf("%s differs", f.Path)
		}
	}
}
