package fleet_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/productdata/pds/ingest"
	"github.com/productdata/pds/ingest/ingesttest"
	"github.com/productdata/pds/snapshots"
	"github.com/productdata/pds/snapshots/fleet"
	"github.com/productdata/pds/snapshots/internal/snapshottest"
)

// Builds of the bundled sample, made once for the package: sequence 1, 2
// and 3, signed with the test key.
var (
	buildsOnce sync.Once
	buildsDir  string
	buildsErr  error
)

type keyPair struct {
	pubPath string
	pub     *snapshots.PublicKey
	sec     *snapshots.PrivateKey
}

func newKeys(t testing.TB, dir string) keyPair {
	t.Helper()
	pubPath, secPath := filepath.Join(dir, "pds.pub"), filepath.Join(dir, "pds.key")
	pub, err := snapshots.GenerateKey(pubPath, secPath)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := snapshots.ReadPrivateKey(secPath, "")
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{pubPath: pubPath, pub: pub, sec: sec}
}

// testBuilds returns the shared builds (dir/b1, b2, b3, unsigned until a
// test signs its own copy) and the key files.
func testBuilds(t testing.TB) string {
	t.Helper()
	buildsOnce.Do(func() {
		buildsDir, buildsErr = os.MkdirTemp("", "pds-fleet-builds-")
		if buildsErr != nil {
			return
		}
		for seq := int64(1); seq <= 3; seq++ {
			_, buildsErr = ingest.Run(context.Background(), ingest.Options{In: filepath.Join(ingesttest.Root(), "sample-input"),
				Out: filepath.Join(buildsDir, fmt.Sprintf("b%d", seq)), Rejects: io.Discard, Sequence: seq})
			if buildsErr != nil {
				return
			}
		}
	})
	if buildsErr != nil {
		t.Fatal(buildsErr)
	}
	return buildsDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildsDir != "" {
		os.RemoveAll(buildsDir)
	}
	os.Exit(code)
}

// signedCopy copies shared build n into a temp dir and signs it with k.
func signedCopy(t testing.TB, n int, k keyPair) string {
	t.Helper()
	src := filepath.Join(testBuilds(t), fmt.Sprintf("b%d", n))
	dst := filepath.Join(t.TempDir(), fmt.Sprintf("b%d", n))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if k.sec != nil {
		if err := snapshots.Sign(dst, k.sec); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func buildID(t testing.TB, dir string) string {
	t.Helper()
	m, err := snapshots.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m.BuildID
}

func s3Origin(t testing.TB) (fleet.Origin, ingesttest.S3) {
	t.Helper()
	s := ingesttest.S3Server(t)
	o, err := fleet.OpenOrigin("s3://"+s.Bucket+"/nightly", fleet.S3Config{Endpoint: s.Endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return o, s
}

func publish(t testing.TB, o fleet.Origin, dir string) {
	t.Helper()
	if _, err := fleet.Publish(context.Background(), dir, o, fleet.PublishOptions{}); err != nil {
		t.Fatal(err)
	}
}

func follower(t testing.TB, o fleet.Origin, snaps string, k keyPair) *fleet.Follower {
	return &fleet.Follower{Origin: o, Snapshots: snaps, Log: ingesttest.Logger(t),
		Pull: fleet.PullOptions{Verifier: k.pub, Keep: 2}}
}

// serves checks that SNAPSHOTS/current opens as pds serve opens it and
// answers through the service, and that it is build id.
func serves(t testing.TB, snaps, id string, k keyPair) {
	t.Helper()
	cur, ok, err := fleet.Current(snaps)
	if err != nil || !ok {
		t.Fatalf("no current build in %s: %v", snaps, err)
	}
	if cur.ID != id {
		t.Fatalf("current is %s, want %s", cur.ID, id)
	}
	if err := snapshots.SelfTest(context.Background(), filepath.Join(snaps, fleet.CurrentName), snapshots.OpenOptions{Verifier: k.pub}); err != nil {
		t.Fatalf("current build does not serve: %v", err)
	}
}

// TestPublishPullFollowS3: publish to a real S3 server (versitygw), pull
// into a snapshots directory, check the signature with the minisign tool
// itself, follow a second build, keep two, roll back, follow a third.
func TestPublishPullFollowS3(t *testing.T) {
	k := newKeys(t, t.TempDir())
	o, s3 := s3Origin(t)
	b1, b2, b3 := signedCopy(t, 1, k), signedCopy(t, 2, k), signedCopy(t, 3, k)
	ctx := context.Background()

	if _, err := fleet.Latest(ctx, o); !errors.Is(err, fleet.ErrNotFound) {
		t.Fatalf("empty origin: %v, want not found", err)
	}
	pub, err := fleet.Publish(ctx, b1, o, fleet.PublishOptions{Verifier: k.pub})
	if err != nil {
		t.Fatal(err)
	}
	if pub.Files == 0 || pub.Bytes == 0 || pub.Sequence != 1 {
		t.Fatalf("published %+v", pub)
	}
	latest, _ := os.ReadFile(filepath.Join(s3.Root, s3.Bucket, "nightly", "latest"))
	if strings.TrimSpace(string(latest)) != buildID(t, b1) {
		t.Fatalf("latest object holds %q", latest)
	}

	snaps := filepath.Join(t.TempDir(), "snapshots")
	p, err := fleet.Fetch(ctx, o, snaps, fleet.PullOptions{Verifier: k.pub})
	if err != nil {
		t.Fatal(err)
	}
	if p.Downloaded != pub.Bytes || p.Reused != 0 {
		t.Errorf("downloaded %d reused %d, published %d", p.Downloaded, p.Reused, pub.Bytes)
	}
	if err := fleet.Activate(snaps, p.ID); err != nil {
		t.Fatal(err)
	}
	serves(t, snaps, buildID(t, b1), k)

	// An operator checks the pulled build with minisign alone.
	minisign := ingesttest.Tool(t, "minisign", "PDS_MINISIGN")
	cmd := exec.Command(minisign, "-Vm", snapshots.ManifestName, "-p", k.pubPath)
	cmd.Dir = filepath.Join(snaps, fleet.CurrentName)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Signature and comment signature verified") {
		t.Fatalf("minisign -Vm: %v\n%s", err, out)
	}

	f := follower(t, o, snaps, k)
	if id, err := f.Poll(ctx); err != nil || id != "" {
		t.Fatalf("poll with nothing new: %q %v", id, err)
	}
	publish(t, o, b2)
	if id, err := f.Poll(ctx); err != nil || id != buildID(t, b2) {
		t.Fatalf("poll after publishing b2: %q %v", id, err)
	}
	serves(t, snaps, buildID(t, b2), k)

	r, err := fleet.Rollback(ctx, snaps, "", fleet.RollbackOptions{Verifier: k.pub})
	if err != nil || r.From.ID != buildID(t, b2) || r.To.ID != buildID(t, b1) || !r.Listed {
		t.Fatalf("rollback %s -> %s (listed %v): %v", r.From.ID, r.To.ID, r.Listed, err)
	}
	serves(t, snaps, buildID(t, b1), k)
	if id, err := f.Poll(ctx); !errors.Is(err, fleet.ErrRefused) || id != "" || !strings.Contains(err.Error(), "rolled back") {
		t.Fatalf("poll after rollback: %q %v; want the rolled-back build refused", id, err)
	}
	serves(t, snaps, buildID(t, b1), k)

	publish(t, o, b3)
	if id, err := f.Poll(ctx); err != nil || id != buildID(t, b3) {
		t.Fatalf("poll after publishing b3: %q %v", id, err)
	}
	serves(t, snaps, buildID(t, b3), k)
	builds, err := fleet.Builds(snaps)
	if err != nil || len(builds) != 2 || builds[0].ID != buildID(t, b3) {
		t.Fatalf("kept %v (%v); want b3 and one more", builds, err)
	}
	if f.Stats.Swaps.Load() != 2 || f.Stats.Refused.Load() != 1 || f.Stats.BytesPulled.Load() == 0 {
		t.Errorf("stats %v", f.Stats.LogValue())
	}
}

// TestRefusals offers a bad second build to a replica serving a good first
// one, over each kind of origin: each is refused with a clear reason and
// the first build is still served.
func TestRefusals(t *testing.T) {
	k := newKeys(t, t.TempDir())
	other := newKeys(t, t.TempDir())
	b1, b2 := signedCopy(t, 1, k), signedCopy(t, 2, k)
	id2 := buildID(t, b2)
	cases := []struct {
		name    string
		publish func(t *testing.T, o fleet.Origin, root string) // root: the origin's directory
		opts    func(*fleet.PullOptions)
		want    string
		refused bool // a refusal (not retried) rather than a failure
	}{
		{name: "tampered file", publish: func(t *testing.T, o fleet.Origin, root string) {
			publish(t, o, b2)
			ingesttest.FlipByte(t, filepath.Join(root, id2, "store", firstSST(t, b2)))
		}, want: "does not match the signed manifest's checksum", refused: true},
		{name: "tampered manifest", publish: func(t *testing.T, o fleet.Origin, root string) {
			publish(t, o, b2)
			p := filepath.Join(root, id2, snapshots.ManifestName)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"sequence": 2`), []byte(`"sequence": 9`), 1), 0o644)
		}, want: "the signature does not match manifest.json", refused: true},
		{name: "wrong key", publish: func(t *testing.T, o fleet.Origin, root string) {
			publish(t, o, signedCopy(t, 2, other))
		}, want: "not by the trusted key", refused: true},
		{name: "unsigned", publish: func(t *testing.T, o fleet.Origin, root string) {
			publish(t, o, b2)
			os.Remove(filepath.Join(root, id2, snapshots.SignatureName))
		}, want: "the snapshot is not signed", refused: true},
		{name: "truncated file at the origin", publish: func(t *testing.T, o fleet.Origin, root string) {
			publish(t, o, b2)
			p := filepath.Join(root, id2, "store", firstSST(t, b2))
			st, _ := os.Stat(p)
			os.Truncate(p, st.Size()/2)
		}, want: "pull again to resume"},
		{name: "full disk", publish: func(t *testing.T, o fleet.Origin, root string) {
			publish(t, o, b2)
		}, opts: func(p *fleet.PullOptions) {
			p.FreeBytes = func(string) (uint64, error) { return 1 << 20, nil }
		}, want: "not enough free disk space"},
		{name: "older build after newer", publish: func(t *testing.T, o fleet.Origin, root string) {
			if _, err := fleet.Publish(context.Background(), b1, o, fleet.PublishOptions{}); err == nil || !strings.Contains(err.Error(), "is not newer than the origin's latest") {
				t.Fatalf("publishing an older build: %v", err)
			}
			if _, err := fleet.Publish(context.Background(), b1, o, fleet.PublishOptions{AllowDowngrade: true}); err != nil {
				t.Fatal(err)
			}
		}, want: "is not newer than the served build", refused: true},
	}
	origins := []struct {
		name string
		open func(t *testing.T) (fleet.Origin, string)
	}{
		{"s3", func(t *testing.T) (fleet.Origin, string) {
			o, s := s3Origin(t)
			return o, filepath.Join(s.Root, s.Bucket, "nightly")
		}},
		{"file", func(t *testing.T) (fleet.Origin, string) {
			root := t.TempDir()
			o, err := fleet.OpenOrigin(fileURL(root), fleet.S3Config{})
			if err != nil {
				t.Fatal(err)
			}
			return o, root
		}},
	}
	for _, org := range origins {
		for _, c := range cases {
			t.Run(org.name+"/"+c.name, func(t *testing.T) {
				o, root := org.open(t)
				snaps := filepath.Join(t.TempDir(), "snapshots")
				f := follower(t, o, snaps, k)
				first := b1
				if c.name == "older build after newer" {
					first = b2
				}
				publish(t, o, first)
				if _, err := f.Poll(context.Background()); err != nil {
					t.Fatal(err)
				}
				if c.opts != nil {
					c.opts(&f.Pull)
				}
				c.publish(t, o, root)
				id, err := f.Poll(context.Background())
				if err == nil || id != "" || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("poll: %q %v; want an error saying %q", id, err, c.want)
				}
				if errors.Is(err, fleet.ErrRefused) != c.refused {
					t.Errorf("refused %v, want %v: %v", errors.Is(err, fleet.ErrRefused), c.refused, err)
				}
				serves(t, snaps, buildID(t, first), k)
				if c.refused {
					// A refused build is remembered, not fetched again.
					if _, err := f.Poll(context.Background()); err != nil {
						t.Errorf("second poll: %v", err)
					}
				}
			})
		}
	}
}

// TestInterruptedHTTPPull: an https:// origin (here plain HTTP on loopback,
// net/http's FileServer over a published file:// directory) whose server
// cuts the connection in the middle of a file: the pull fails, the current
// build stays, and the next pull resumes the file from where it stopped
// (an HTTP Range request) and completes. The partly staged file is hashed
// with its manifest's algorithm: BLAKE3 for a format 2 build, SHA-256 for
// a format 1 one.
func TestInterruptedHTTPPull(t *testing.T) {
	for _, format1 := range []bool{false, true} {
		t.Run(fmt.Sprintf("format1=%v", format1), func(t *testing.T) { interruptedHTTPPull(t, format1) })
	}
}

func interruptedHTTPPull(t *testing.T, format1 bool) {
	k := newKeys(t, t.TempDir())
	b1, b2 := signedCopy(t, 1, k), signedCopy(t, 2, k)
	if format1 {
		asFormat1(t, b2, k)
	}
	root := t.TempDir()
	fo, err := fleet.OpenOrigin(fileURL(root), fleet.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	publish(t, fo, b1)

	big := largestFile(t, b2)
	bigPath := "/" + buildID(t, b2) + "/" + big.Path
	var mu sync.Mutex
	cut, ranged := true, false
	files := http.FileServer(http.Dir(root))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cutNow := cut && r.URL.Path == bigPath
		if cutNow {
			cut = false
		}
		if r.Header.Get("Range") != "" && r.URL.Path == bigPath {
			ranged = true
		}
		mu.Unlock()
		if !cutNow {
			files.ServeHTTP(w, r)
			return
		}
		// Send the headers and half the body, then drop the connection.
		b, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(r.URL.Path, "/"))))
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.WriteHeader(http.StatusOK)
		w.Write(b[:len(b)/2])
		w.(http.Flusher).Flush()
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer srv.Close()
	o, err := fleet.OpenOrigin(srv.URL+"/", fleet.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Put(context.Background(), "x", strings.NewReader("x"), 1); err == nil || !strings.Contains(err.Error(), "pull-only") {
		t.Errorf("put to an https origin: %v", err)
	}
	snaps := filepath.Join(t.TempDir(), "snapshots")
	f := follower(t, o, snaps, k)
	if _, err := f.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	publish(t, fo, b2)
	if _, err := f.Poll(context.Background()); err == nil || !strings.Contains(err.Error(), "pull again to resume") {
		t.Fatalf("interrupted pull: %v", err)
	}
	serves(t, snaps, buildID(t, b1), k)
	p, err := fleet.Fetch(context.Background(), o, snaps, fleet.PullOptions{Verifier: k.pub})
	if err != nil {
		t.Fatal(err)
	}
	if !ranged || p.Reused < big.Size/2 {
		t.Errorf("second pull: ranged %v, reused %d bytes of %d; want the file resumed", ranged, p.Reused, big.Size)
	}
	if err := fleet.Activate(snaps, p.ID); err != nil {
		t.Fatal(err)
	}
	serves(t, snaps, buildID(t, b2), k)
}

func TestOpenOriginErrors(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"ftp://x/y", "use s3://BUCKET/PREFIX"},
		{"s3:///prefix", "name the bucket"},
		{"file://relative/path", "file:///ABSOLUTE/PATH"},
	} {
		if _, err := fleet.OpenOrigin(c.url, fleet.S3Config{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.url, err, c.want)
		}
	}
}

// fileURL is the file:// URL of the absolute path dir, as an operator
// writes it: file:///srv/builds, and on Windows file:///C:/builds.
func fileURL(dir string) string {
	return (&url.URL{Scheme: "file", Path: "/" + strings.TrimPrefix(filepath.ToSlash(dir), "/")}).String()
}

// A file origin named by the URL of a folder, on this platform, writes
// into that folder.
func TestFileOriginWritesWhereItsURLSays(t *testing.T) {
	root := t.TempDir()
	o, err := fleet.OpenOrigin(fileURL(root), fleet.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Put(context.Background(), "latest", strings.NewReader("b1\n"), 3); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "latest")); err != nil || string(b) != "b1\n" {
		t.Fatalf("%s/latest: %q %v", root, b, err)
	}
}

func firstSST(t testing.TB, dir string) string {
	t.Helper()
	m, err := snapshots.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range m.Files {
		if strings.HasPrefix(f.Path, "store/") && strings.HasSuffix(f.Path, ".sst") && f.Size > 0 {
			return strings.TrimPrefix(f.Path, "store/")
		}
	}
	t.Fatal("no sstable")
	return ""
}

func largestFile(t testing.TB, dir string) snapshots.File {
	t.Helper()
	m, err := snapshots.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	var big snapshots.File
	for _, f := range m.Files {
		if f.Size > big.Size {
			big = f
		}
	}
	return big
}

// TestUntrustedNames: a latest pointer that is not a build id, and a signed
// manifest naming a path outside the build, are refused before anything is
// written outside the snapshots directory.
func TestUntrustedNames(t *testing.T) {
	k := newKeys(t, t.TempDir())
	root := t.TempDir()
	o, err := fleet.OpenOrigin(fileURL(root), fleet.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	snaps := filepath.Join(t.TempDir(), "snapshots")
	os.WriteFile(filepath.Join(root, "latest"), []byte("../../etc\n"), 0o644)
	if _, err := fleet.Fetch(context.Background(), o, snaps, fleet.PullOptions{Verifier: k.pub}); err == nil || !strings.Contains(err.Error(), "not a build id") {
		t.Fatalf("latest naming a path: %v", err)
	}

	b := signedCopy(t, 1, keyPair{})
	id := buildID(t, b)
	mp := filepath.Join(b, snapshots.ManifestName)
	raw, _ := os.ReadFile(mp)
	os.WriteFile(mp, bytes.Replace(raw, []byte(`"path": "index/docs.dat"`), []byte(`"path": "../../escaped"`), 1), 0o644)
	if err := snapshots.Sign(b, k.sec); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(root, id), os.DirFS(b)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "latest"), []byte(id+"\n"), 0o644)
	_, err = fleet.Fetch(context.Background(), o, snaps, fleet.PullOptions{Verifier: k.pub})
	if !errors.Is(err, fleet.ErrRefused) || !strings.Contains(err.Error(), "leaves the snapshot") {
		t.Fatalf("manifest naming ../../escaped: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(snaps), "..", "escaped")); err == nil {
		t.Fatal("a file was written outside the snapshots directory")
	}
}

// TestDamagedPartialRestarts: a staged partial file whose bytes are wrong
// (a disk fault, say) fails the resumed pull without refusing the build; the
// next pull fetches that file whole and succeeds.
func TestDamagedPartialRestarts(t *testing.T) {
	k := newKeys(t, t.TempDir())
	b1 := signedCopy(t, 1, k)
	root := t.TempDir()
	o, err := fleet.OpenOrigin(fileURL(root), fleet.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	publish(t, o, b1)
	big := largestFile(t, b1)
	snaps := filepath.Join(t.TempDir(), "snapshots")
	partial := filepath.Join(snaps, ".staging-"+buildID(t, b1), filepath.FromSlash(big.Path))
	os.MkdirAll(filepath.Dir(partial), 0o755)
	os.WriteFile(partial, bytes.Repeat([]byte{0x5a}, int(big.Size/2)), 0o644)
	f := follower(t, o, snaps, k)
	_, err = f.Poll(context.Background())
	if err == nil || errors.Is(err, fleet.ErrRefused) || !strings.Contains(err.Error(), "fetched whole on the next pull") {
		t.Fatalf("resume over a damaged partial file: %v", err)
	}
	if id, err := f.Poll(context.Background()); err != nil || id != buildID(t, b1) {
		t.Fatalf("next poll: %q %v", id, err)
	}
	serves(t, snaps, buildID(t, b1), k)
}

// asFormat1 rewrites the manifest of the build at dir as a pds before
// format 2 wrote it (every file's SHA-256), and signs it with k.
func asFormat1(t *testing.T, dir string, k keyPair) snapshots.Manifest {
	t.Helper()
	if err := snapshottest.AsFormat1(filepath.Join(dir, snapshots.ManifestName)); err != nil {
		t.Fatal(err)
	}
	if err := snapshots.Sign(dir, k.sec); err != nil {
		t.Fatal(err)
	}
	m, err := snapshots.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPullFormat1Build: a build made by a pds before manifest format 2 (its
// files listed with SHA-256) is still pulled, checked against its signed
// manifest and served; a byte changed on the origin is still caught.
func TestPullFormat1Build(t *testing.T) {
	k := newKeys(t, t.TempDir())
	b1 := signedCopy(t, 1, keyPair{})
	m := asFormat1(t, b1, k)
	root := t.TempDir()
	o, err := fleet.OpenOrigin(fileURL(root), fleet.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	publish(t, o, b1)

	snaps := filepath.Join(t.TempDir(), "snapshots")
	if _, err := follower(t, o, snaps, k).Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	serves(t, snaps, m.BuildID, k)

	big := largestFile(t, b1)
	p := filepath.Join(root, m.BuildID, filepath.FromSlash(big.Path))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	os.WriteFile(p, b, 0o644)
	_, err = fleet.Fetch(context.Background(), o, filepath.Join(t.TempDir(), "snapshots"), fleet.PullOptions{Verifier: k.pub})
	if !errors.Is(err, fleet.ErrRefused) || !strings.Contains(err.Error(), "does not match the signed manifest's checksum") {
		t.Fatalf("pull of a changed format 1 file: %v", err)
	}
}

// TestUpgradeFromFormat1: the upgrade as a fleet lives it. A replica serving
// a format 1 build follows a format 2 build published over it, lists both,
// rolls back to the format 1 build and serves it, and a format 1 build can
// be published again over a format 2 latest.
func TestUpgradeFromFormat1(t *testing.T) {
	ctx := context.Background()
	k := newKeys(t, t.TempDir())
	b1 := signedCopy(t, 1, keyPair{})
	m1 := asFormat1(t, b1, k)
	b2 := signedCopy(t, 2, k)
	root := t.TempDir()
	o, err := fleet.OpenOrigin(fileURL(root), fleet.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	snaps := filepath.Join(t.TempDir(), "snapshots")
	f := follower(t, o, snaps, k)

	publish(t, o, b1)
	if id, err := f.Poll(ctx); err != nil || id != m1.BuildID {
		t.Fatalf("follow the format 1 build: %q %v", id, err)
	}
	serves(t, snaps, m1.BuildID, k)

	publish(t, o, b2) // format 2 over a format 1 latest
	if id, err := f.Poll(ctx); err != nil || id != buildID(t, b2) {
		t.Fatalf("follow the format 2 build: %q %v", id, err)
	}
	serves(t, snaps, buildID(t, b2), k)
	builds, err := fleet.Builds(snaps)
	if err != nil || len(builds) != 2 {
		t.Fatalf("kept builds %v, %v; want both formats listed", builds, err)
	}

	if r, err := fleet.Rollback(ctx, snaps, m1.BuildID, fleet.RollbackOptions{Verifier: k.pub}); err != nil || r.To.ID != m1.BuildID {
		t.Fatalf("rollback to the format 1 build: %v %v", r.To, err)
	}
	serves(t, snaps, m1.BuildID, k)

	b3 := signedCopy(t, 3, keyPair{})
	m3 := asFormat1(t, b3, k) // a format 1 build made after the format 2 one
	publish(t, o, b3)
	if id, err := f.Poll(ctx); err != nil || id != m3.BuildID {
		t.Fatalf("follow a format 1 build published over a format 2 latest: %q %v", id, err)
	}
	serves(t, snaps, m3.BuildID, k)
}

// TestPulledBuildIsReadableByEveryUser pulls under umask 0077: every folder
// of the pulled build is still 0755 and every file 0644, as ingest writes
// them, so a server running as another user can open it.
func TestPulledBuildIsReadableByEveryUser(t *testing.T) {
	k := newKeys(t, t.TempDir())
	b1 := signedCopy(t, 1, k)
	o, err := fleet.OpenOrigin(fileURL(t.TempDir()), fleet.S3Config{})
	if err != nil {
		t.Fatal(err)
	}
	publish(t, o, b1)
	ingesttest.Umask(t, 0o077)
	snaps := filepath.Join(t.TempDir(), "snapshots")
	if _, err := follower(t, o, snaps, k).Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	var files int
	err = filepath.WalkDir(filepath.Join(snaps, buildID(t, b1)), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o644)
		if d.IsDir() {
			want = 0o755
		} else {
			files++
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s: mode %#o, want %#o", p, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 5 {
		t.Fatalf("walked %d files: not a whole build", files)
	}
}
