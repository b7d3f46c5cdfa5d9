package fleet_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/snapshots"
	"github.com/productdata/pds/snapshots/fleet"
)

// changedBuild builds the bundled sample with the value of its first claim
// changed (as a night's change looks), at sequence seq, signed with k, with
// the compression dictionaries of dictFrom as a nightly build keeps them.
func changedBuild(t testing.TB, seq int64, change string, dictFrom string, k keyPair) string {
	t.Helper()
	in := t.TempDir()
	src := filepath.Join(ingesttest.Root(), "sample-input")
	if err := os.CopyFS(in, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	claims := filepath.Join(in, "claims.ndjson")
	b, err := os.ReadFile(claims)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"value":"`), []byte(`"value":"`+change+` `), 1)
	if err := os.WriteFile(claims, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "c")
	if _, err := ingest.Run(context.Background(), ingest.Options{In: in, Out: out, Rejects: io.Discard, Sequence: seq, DictionariesFrom: dictFrom}); err != nil {
		t.Fatal(err)
	}
	if err := snapshots.Sign(out, k.sec); err != nil {
		t.Fatal(err)
	}
	return out
}

func publishWithDeltas(t testing.TB, o fleet.Origin, dir string, from ...string) fleet.Published {
	t.Helper()
	pub, err := fleet.Publish(context.Background(), dir, o, fleet.PublishOptions{DeltasFrom: from})
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

func totalSize(t testing.TB, dir string) int64 {
	t.Helper()
	m, err := snapshots.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// TestPullByDelta: a replica that keeps the build a delta starts from
// fetches the delta (five objects: latest, manifest, signature, the list of
// deltas and the delta), makes the new build byte for byte, and serves it;
// a follower counts the swap as one by delta.
func TestPullByDelta(t *testing.T) {
	k := newKeys(t, t.TempDir())
	o, _ := fileOrigin(t)
	b1 := signedCopy(t, 1, k)
	publish(t, o, b1)
	snaps := t.TempDir()
	pullOK(t, o, snaps, k)

	c := changedBuild(t, 5, "changed", b1, k)
	// A build of other data: its delta would be most of the build, and is
	// not stored.
	other := filepath.Join(t.TempDir(), "other")
	if _, err := ingest.Run(context.Background(), ingest.Options{In: ingesttest.WriteCase(t, ingesttest.CaseFile("passport")), Out: other,
		Rejects: io.Discard, Sequence: 3}); err != nil {
		t.Fatal(err)
	}
	pub := publishWithDeltas(t, o, c, b1, other)
	if len(pub.Deltas) != 1 || pub.Deltas[0].Base != buildID(t, b1) || pub.Deltas[0].Patched == 0 {
		t.Fatalf("published deltas %+v, want only the one from %s, which patches files", pub.Deltas, buildID(t, b1))
	}
	f := follower(t, o, snaps, k)
	id, err := f.Poll(context.Background())
	if err != nil || id != buildID(t, c) {
		t.Fatalf("poll: %q, %v", id, err)
	}
	serves(t, snaps, id, k)
	if f.Stats.SwapsByDelta.Load() != 1 || f.Stats.BytesByDelta.Load() != pub.Deltas[0].Bytes {
		t.Errorf("follower counted %d swaps and %d bytes by delta, want 1 and %d", f.Stats.SwapsByDelta.Load(), f.Stats.BytesByDelta.Load(), pub.Deltas[0].Bytes)
	}
	if err := sameFiles(filepath.Join(snaps, id), c); err != nil {
		t.Error(err)
	}

	// A pull into a second replica kept at b1, for the object count.
	snaps2 := t.TempDir()
	o1, _ := fileOrigin(t)
	publish(t, o1, b1)
	pullOK(t, o1, snaps2, k)
	publishWithDeltas(t, o1, c, b1)
	p := pullOK(t, o1, snaps2, k)
	if p.Via != fleet.ViaDelta || p.DeltaBase != buildID(t, b1) || p.DeltaErr != nil {
		t.Fatalf("pulled via %q from %q (%v), want a delta from %s", p.Via, p.DeltaBase, p.DeltaErr, buildID(t, b1))
	}
	if p.Objects != 5 {
		t.Errorf("read %d objects, want 5", p.Objects)
	}
	// The pull recorded how the build came, for pds serve's metrics.
	a, ok := fleet.ArrivalOf(filepath.Join(snaps2, fleet.CurrentName))
	if !ok || a.Via != fleet.ViaDelta || a.DeltaFrom != buildID(t, b1) || a.Bytes != p.Downloaded || a.Objects != 5 {
		t.Errorf("arrival %+v (recorded %v), want a delta from %s of %d bytes in 5 objects", a, ok, buildID(t, b1), p.Downloaded)
	}
	if a, ok := fleet.ArrivalOf(filepath.Join(snaps2, buildID(t, b1))); !ok || a.Via != fleet.ViaFull {
		t.Errorf("arrival of the first build %+v (recorded %v), want a whole pull", a, ok)
	}
	if full := totalSize(t, c); p.Downloaded >= full {
		t.Errorf("fetched %d bytes by delta; the whole build is %d", p.Downloaded, full)
	}
}

// A replica that pulls a night's incremental build by delta links the
// store tables it shares with the kept build instead of copying them, and
// the kept build, still being served, answers on.
func TestPullByDeltaLinksSharedStoreTables(t *testing.T) {
	k := newKeys(t, t.TempDir())
	o, _ := fileOrigin(t)
	b1 := filepath.Join(t.TempDir(), "b1")
	if _, err := ingest.Run(context.Background(), ingest.Options{In: filepath.Join(ingesttest.Root(), "sample-input"), Out: b1,
		Rejects: io.Discard, Sequence: 1, KeepRecords: true}); err != nil {
		t.Fatal(err)
	}
	if err := snapshots.Sign(b1, k.sec); err != nil {
		t.Fatal(err)
	}
	publish(t, o, b1)
	snaps := t.TempDir()
	kept := pullOK(t, o, snaps, k)
	served, err := snapshots.Open(filepath.Join(snaps, kept.ID), snapshots.OpenOptions{Verifier: k.pub, CacheBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer served.Close()
	if err := ingesttest.ReadAll(served); err != nil {
		t.Fatal(err)
	}

	changes := t.TempDir()
	for name, text := range map[string]string{ingest.FileProducts: "", ingest.FileDeletions: `{"identifier":"gtin:09520123450106"}` + "\n"} {
		if err := os.WriteFile(filepath.Join(changes, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b2 := filepath.Join(t.TempDir(), "b2")
	if _, err := ingest.Run(context.Background(), ingest.Options{In: changes, Out: b2, Base: b1, Rejects: io.Discard, Sequence: 2}); err != nil {
		t.Fatal(err)
	}
	if err := snapshots.Sign(b2, k.sec); err != nil {
		t.Fatal(err)
	}
	publishWithDeltas(t, o, b2, b1)
	p := pullOK(t, o, snaps, k)
	if p.Via != fleet.ViaDelta {
		t.Fatalf("pulled via %q (%v), want a delta", p.Via, p.DeltaErr)
	}
	tables, err := filepath.Glob(filepath.Join(snaps, kept.ID, snapshots.StoreDir, "*.sst"))
	if err != nil || len(tables) == 0 {
		t.Fatalf("no tables in the kept build: %v", err)
	}
	// The night's point index is the kept build's under a layer, and its
	// search index the kept build's segment beside one of the night's.
	tables = append(tables, filepath.Join(snaps, kept.ID, filepath.FromSlash(snapshots.PointsPath)))
	segments, err := filepath.Glob(filepath.Join(snaps, kept.ID, snapshots.IndexDir, "*", "*", "*.zap"))
	if err != nil || len(segments) != 1 {
		t.Fatalf("the kept build's search segments: %v (%v)", segments, err)
	}
	tables = append(tables, segments...)
	for _, a := range tables {
		rel, _ := filepath.Rel(filepath.Join(snaps, kept.ID), a)
		x, errX := os.Stat(a)
		y, errY := os.Stat(filepath.Join(snaps, p.ID, rel))
		if errX != nil || errY != nil || !os.SameFile(x, y) {
			t.Errorf("%s: the new build's is not the kept build's file (%v, %v)", filepath.Base(a), errX, errY)
		}
	}
	if err := served.Check(); err != nil {
		t.Fatalf("the kept build, served: %v", err)
	}
	if err := ingesttest.ReadAll(served); err != nil {
		t.Fatalf("the kept build, served: %v", err)
	}
}

// sameFiles reports a difference between the files the manifests of a and
// b list, byte for byte.
func sameFiles(a, b string) error {
	m, err := snapshots.ReadManifest(b)
	if err != nil {
		return err
	}
	for _, f := range append(m.Files, snapshots.File{Path: snapshots.ManifestName}, snapshots.File{Path: snapshots.SignatureName}) {
		x, err1 := os.ReadFile(filepath.Join(a, f.Path))
		y, err2 := os.ReadFile(filepath.Join(b, f.Path))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			return errors.New(f.Path + " differs")
		}
	}
	return nil
}

// TestBadDeltaFallsBackToWholePull: a tampered delta, a delta from another
// base stored under this base's name (as it is, and with its header saying
// this base), and a delta cut short are each refused (the current build serving all along), and the pull then fetches
// the build whole.
func TestBadDeltaFallsBackToWholePull(t *testing.T) {
	k := newKeys(t, t.TempDir())
	b1 := signedCopy(t, 1, k)
	b2 := changedBuild(t, 4, "other", b1, k)
	c := changedBuild(t, 5, "changed", b1, k)
	var fromB2 bytes.Buffer
	if _, err := fleet.WriteDelta(context.Background(), &fromB2, b2, c); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(d []byte) []byte
		says string
	}{
		{"tampered", func(d []byte) []byte { return flipInEntry(t, d, "files/") }, "refused"},
		{"from another base", func([]byte) []byte { return fromB2.Bytes() }, "is a delta from build " + buildID(t, b2)},
		{"from another base, relabelled", func([]byte) []byte { return relabel(t, fromB2.Bytes(), buildID(t, b2), buildID(t, b1)) }, "does not match the signed manifest's checksum"},
		{"cut short", func(d []byte) []byte { return d[:len(d)*2/3] }, "cut short"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, root := fileOrigin(t)
			publish(t, o, b1)
			snaps := t.TempDir()
			pullOK(t, o, snaps, k)
			publishWithDeltas(t, o, c, b1)
			obj := filepath.Join(root, buildID(t, c), "deltas", buildID(t, b1))
			d, err := os.ReadFile(obj)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(obj, tc.edit(d), 0o644); err != nil {
				t.Fatal(err)
			}
			p := pullOK(t, o, snaps, k)
			if p.Via != fleet.ViaFull || !errors.Is(p.DeltaErr, fleet.ErrRefused) || !strings.Contains(p.DeltaErr.Error(), tc.says) {
				t.Fatalf("pulled via %q, delta error %v; want a whole pull after a refusal saying %q", p.Via, p.DeltaErr, tc.says)
			}
			if err := sameFiles(filepath.Join(snaps, p.ID), c); err != nil {
				t.Error(err)
			}
			noStaging(t, snaps)
		})
	}
}

// TestDamagedKeptBuildFallsBackToWholePull: a file the delta links from
// the kept build, damaged on disk since it was pulled, fails the checksum;
// the build then comes whole.
func TestDamagedKeptBuildFallsBackToWholePull(t *testing.T) {
	k := newKeys(t, t.TempDir())
	b1 := signedCopy(t, 1, k)
	c := changedBuild(t, 5, "changed", b1, k)
	o, _ := fileOrigin(t)
	publish(t, o, b1)
	snaps := t.TempDir()
	pullOK(t, o, snaps, k)
	publishWithDeltas(t, o, c, b1)
	ingesttest.FlipByte(t, filepath.Join(snaps, buildID(t, b1), "points", "identity"))
	snaps2 := t.TempDir()
	o2, _ := fileOrigin(t)
	publish(t, o2, b1)
	pullOK(t, o2, snaps2, k)
	publishWithDeltas(t, o2, c, b1)
	ingesttest.FlipByte(t, filepath.Join(snaps2, buildID(t, b1), "points", "identity"))

	p := pullOK(t, o, snaps, k)
	if p.Via != fleet.ViaFull || !errors.Is(p.DeltaErr, fleet.ErrRefused) || !strings.Contains(p.DeltaErr.Error(), "points/identity does not match the signed manifest") {
		t.Fatalf("pulled via %q, delta error %v; want a whole pull after points/identity failed its checksum", p.Via, p.DeltaErr)
	}
	if err := sameFiles(filepath.Join(snaps, p.ID), c); err != nil {
		t.Error(err)
	}
	noStaging(t, snaps)

	// A follower does the same, and counts the failed delta.
	f := follower(t, o2, snaps2, k)
	if id, err := f.Poll(context.Background()); err != nil || id != buildID(t, c) {
		t.Fatalf("poll: %q, %v", id, err)
	}
	if f.Stats.DeltasFailed.Load() != 1 || f.Stats.SwapsByDelta.Load() != 0 || f.Stats.Swaps.Load() != 1 {
		t.Errorf("follower counted %d failed deltas, %d swaps by delta, %d swaps; want 1, 0, 1",
			f.Stats.DeltasFailed.Load(), f.Stats.SwapsByDelta.Load(), f.Stats.Swaps.Load())
	}
	serves(t, snaps2, buildID(t, c), k)
}

// relabel rewrites the base build id in a delta's header from one id to
// another, leaving its patches as they are.
func relabel(t testing.TB, d []byte, from, to string) []byte {
	t.Helper()
	var out bytes.Buffer
	tr, tw := tar.NewReader(bytes.NewReader(d)), tar.NewWriter(&out)
	for {
		hd, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if hd.Name == "delta.json" {
			b = bytes.Replace(b, []byte(from), []byte(to), 1)
		}
		hd.Size = int64(len(b))
		if err := tw.WriteHeader(hd); err != nil {
			t.Fatal(err)
		}
		tw.Write(b)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// flipInEntry flips a byte in the middle of the data of the first tar
// entry of d whose name starts with prefix (walking the 512-byte headers).
func flipInEntry(t testing.TB, d []byte, prefix string) []byte {
	t.Helper()
	for pos := 0; pos+512 <= len(d); {
		hdr := d[pos : pos+512]
		if bytes.Count(hdr, []byte{0}) == 512 {
			break
		}
		name := string(bytes.TrimRight(hdr[:100], "\x00"))
		size, err := strconv.ParseInt(strings.Trim(string(hdr[124:136]), "\x00 "), 8, 64)
		if err != nil {
			t.Fatalf("tar header at %d: size %q", pos, hdr[124:136])
		}
		if hdr[156] != 'x' && strings.HasPrefix(name, prefix) && size > 0 {
			out := bytes.Clone(d)
			out[pos+512+int(size)/2] ^= 0x40
			return out
		}
		pos += 512 + int((size+511)/512*512)
	}
	t.Fatalf("no entry %s in the delta", prefix)
	return nil
}

func noStaging(t testing.TB, snaps string) {
	t.Helper()
	entries, _ := os.ReadDir(snaps)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".staging-") {
			t.Errorf("%s left behind", e.Name())
		}
	}
}

// TestBundle: a site two builds behind catches up with one bundle; a
// truncated bundle, a tampered one, one signed by another key and one from
// a build the site does not keep are each refused, and the site goes on
// serving its build with nothing left behind.
func TestBundle(t *testing.T) {
	k := newKeys(t, t.TempDir())
	b1 := signedCopy(t, 1, k)
	c1 := changedBuild(t, 5, "first", b1, k)
	c2 := changedBuild(t, 6, "second", b1, k)
	site := func(t *testing.T) string {
		o, _ := fileOrigin(t)
		publish(t, o, b1)
		snaps := t.TempDir()
		pullOK(t, o, snaps, k)
		return snaps
	}
	bundle := filepath.Join(t.TempDir(), "b1-to-c2.pdsbundle")
	st, err := fleet.WriteBundle(context.Background(), b1, c2, bundle, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Patched == 0 || st.Same == 0 {
		t.Errorf("bundle stats %+v: want files both copied and patched", st)
	}
	good, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("applied", func(t *testing.T) {
		snaps := site(t)
		p, err := fleet.ApplyBundle(context.Background(), bundle, snaps, pullOpts(k))
		if err != nil {
			t.Fatal(err)
		}
		serves(t, snaps, buildID(t, c2), k)
		if p.Via != fleet.ViaDelta || p.DeltaBase != buildID(t, b1) {
			t.Errorf("applied via %q from %q", p.Via, p.DeltaBase)
		}
		if err := sameFiles(filepath.Join(snaps, p.ID), c2); err != nil {
			t.Error(err)
		}
		p, err = fleet.ApplyBundle(context.Background(), bundle, snaps, pullOpts(k))
		if err != nil || !p.UpToDate {
			t.Errorf("applying again: up to date %v, %v", p.UpToDate, err)
		}
	})

	other := newKeys(t, t.TempDir())
	c2other := filepath.Join(t.TempDir(), "c2")
	if err := os.CopyFS(c2other, os.DirFS(c2)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(c2other, snapshots.SignatureName))
	if err := snapshots.Sign(c2other, other.sec); err != nil {
		t.Fatal(err)
	}
	otherKey := filepath.Join(t.TempDir(), "other.pdsbundle")
	if _, err := fleet.WriteBundle(context.Background(), b1, c2other, otherKey, nil); err != nil {
		t.Fatal(err)
	}
	fromC1 := filepath.Join(t.TempDir(), "c1-to-c2.pdsbundle")
	if _, err := fleet.WriteBundle(context.Background(), c1, c2, fromC1, nil); err != nil {
		t.Fatal(err)
	}
	write := func(b []byte) string {
		p := filepath.Join(t.TempDir(), "bad.pdsbundle")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name, file, says string
	}{
		{"truncated in its header", write(good[:700]), "cut short"},
		{"truncated in its files", write(good[:len(good)*3/4]), "cut short"},
		{"tampered", write(flipInEntry(t, good, "files/")), "refused"},
		{"signed by another key", otherKey, "signature"},
		{"from a build the site does not keep", fromC1, "does not keep"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snaps := site(t)
			_, err := fleet.ApplyBundle(context.Background(), tc.file, snaps, pullOpts(k))
			if !errors.Is(err, fleet.ErrRefused) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v, want a refusal saying %q", err, tc.says)
			}
			serves(t, snaps, buildID(t, b1), k)
			noStaging(t, snaps)
			if isKept(snaps, buildID(t, c2)) {
				t.Error("the refused build was kept")
			}
		})
	}
}
