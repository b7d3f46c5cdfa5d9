package snapshots

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zeebo/blake3"

	"github.com/productdata/pds/snapshots/internal/snapshottest"
)

// snapshot writes a small snapshot-shaped directory with a manifest.
func snapshot(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "snap")
	for i := range 40 {
		p := filepath.Join(dir, "store", fmt.Sprintf("%06d.sst", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(strings.Repeat(fmt.Sprint(i), 1000*(i+1))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(dir, "index"), 0o755)
	os.WriteFile(filepath.Join(dir, "index", "meta.json"), []byte(`{}`), 0o644)
	if err := WriteManifest(dir, Manifest{BuildID: "01TEST", CreatedAt: "2026-11-23T00:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// relist rewrites the manifest's file list through edit.
func relist(t *testing.T, dir string, edit func([]File) []File) {
	t.Helper()
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Files = edit(m.Files)
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestVerify(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside")
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "hostname"), []byte("host\n"), 0o644)
	hostname := File{Path: "../../../etc/hostname", Size: 5, BLAKE3: "blake3:" + strings.Repeat("0", 64)}
	cases := []verifyCase{
		{"intact", func(*testing.T, string) {}, ""},
		{"a path leaving the snapshot", func(t *testing.T, dir string) {
			relist(t, dir, func(fs []File) []File { return append(fs, hostname) })
		}, `lists "../../../etc/hostname", a path that is not clean or leaves the snapshot`},
		{"a path leaving through a subfolder", func(t *testing.T, dir string) {
			relist(t, dir, func(fs []File) []File { return append(fs, File{Path: "store/../../x"}) })
		}, "not clean or leaves the snapshot"},
		{"an absolute path", func(t *testing.T, dir string) {
			relist(t, dir, func(fs []File) []File { return append(fs, File{Path: "/etc/hostname", Size: 5}) })
		}, "an absolute path"},
		{"the manifest listed", func(t *testing.T, dir string) {
			relist(t, dir, func(fs []File) []File { return append(fs, File{Path: ManifestName}) })
		}, "the manifest or its signature"},
		{"a path listed twice", func(t *testing.T, dir string) {
			relist(t, dir, func(fs []File) []File { return append(fs, fs[0]) })
		}, "listed twice"},
		{"a listed file replaced by a symbolic link out", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "index", "meta.json")
			os.Remove(p)
			os.Symlink(filepath.Join(outside, "hostname"), p)
		}, "index/meta.json is a symbolic link"},
		{"a listed folder replaced by a symbolic link out", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(outside, "meta.json"), []byte(`{}`), 0o644)
			os.RemoveAll(filepath.Join(dir, "index"))
			os.Symlink(outside, filepath.Join(dir, "index"))
		}, "index/meta.json: statat index/meta.json: path escapes from parent"},
		{"an unlisted table added", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "store", "999999.sst"), []byte("x"), 0o644)
		}, "file store/999999.sst is not listed in manifest.json"},
		{"an unlisted symbolic link added", func(t *testing.T, dir string) {
			os.Symlink(filepath.Join(outside, "hostname"), filepath.Join(dir, "store", "000099.log"))
		}, "file store/000099.log is not listed"},
		{"a byte changed", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "store", "000039.sst")
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 1
			os.WriteFile(p, b, 0o644)
		}, "store/000039.sst does not match its checksum"},
		{"truncated", func(t *testing.T, dir string) {
			os.Truncate(filepath.Join(dir, "store", "000001.sst"), 10)
		}, "truncated or changed"},
		{"missing", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "store", "000001.sst"))
		}, "store/000001.sst is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { verified(t, c, 42) })
	}
}

// verifyCase changes a fresh snapshot with edit, then Verify must accept it
// (want "") or refuse it with an ErrInvalid saying want.
type verifyCase struct {
	name string
	edit func(t *testing.T, dir string)
	want string
}

// verified edits a fresh snapshot as c says, then checks that Verify
// accepts it (listing files files, when files > 0) or refuses it as c
// wants. It returns the snapshot's folder.
func verified(t *testing.T, c verifyCase, files int) string {
	t.Helper()
	dir := snapshot(t)
	c.edit(t, dir)
	m, err := Verify(dir)
	switch {
	case c.want == "" && err != nil:
		t.Fatal(err)
	case c.want == "" && files > 0 && len(m.Files) != files:
		t.Fatalf("%d files listed", len(m.Files))
	case c.want != "" && (err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want)):
		t.Fatalf("got %v, want an ErrInvalid saying %q", err, c.want)
	}
	return dir
}

func TestVerifyCancelled(t *testing.T) {
	dir := snapshot(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := VerifyContext(ctx, dir); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled verification: %v", err)
	}
	// A symbolic link to the snapshot verifies as the snapshot.
	link := filepath.Join(t.TempDir(), "current")
	os.Symlink(dir, link)
	if _, err := VerifyContext(context.Background(), link); err != nil {
		t.Fatal(err)
	}
}

func TestFingerprint(t *testing.T) {
	dir := snapshot(t)
	fp := func() string {
		t.Helper()
		s, err := Fingerprint(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := fp()
	if !strings.HasPrefix(first, "01TEST/") || fp() != first {
		t.Fatalf("fingerprint %q is not stable", first)
	}
	steps := []struct {
		name   string
		change func()
	}{
		{"a file rewritten with the same bytes", func() {
			p := filepath.Join(dir, "store", "000003.sst")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b, 0o644)
			os.Chtimes(p, time.Now(), time.Now().Add(time.Hour))
		}},
		{"a file replaced", func() {
			p := filepath.Join(dir, "store", "000004.sst")
			b, _ := os.ReadFile(p)
			os.WriteFile(p+".new", b, 0o644)
			os.Rename(p+".new", p)
		}},
		{"the manifest changed", func() {
			relist(t, dir, func(fs []File) []File { return fs[1:] })
		}},
	}
	seen := map[string]string{first: "start"}
	for _, s := range steps {
		s.change()
		got := fp()
		if prev, ok := seen[got]; ok {
			t.Fatalf("%s: fingerprint unchanged since %s", s.name, prev)
		}
		seen[got] = s.name
	}
	relist(t, dir, func(fs []File) []File { return append(fs, File{Path: "../x"}) })
	if _, err := Fingerprint(dir); err == nil {
		t.Fatal("fingerprint of a manifest with an unsafe path")
	}
}

// The store's checksums taken early (Sums) give the manifest Write would
// write; a file that grew since they were taken is checksummed again.
func TestWriteWithSums(t *testing.T) {
	dir := snapshot(t)
	want, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	sums, err := Sums(dir, "store")
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 40 || sums["store/000000.sst"].Size != 1000 {
		t.Fatalf("Sums gave %d files, store/000000.sst %+v", len(sums), sums["store/000000.sst"])
	}
	if _, ok := sums["index/meta.json"]; ok {
		t.Error("Sums of store listed a file outside it")
	}
	if err := WriteWith(dir, Manifest{BuildID: "01TEST", CreatedAt: "2026-11-23T00:00:00Z"}, sums); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, ManifestName)); string(got) != string(want) {
		t.Errorf("WriteWith wrote\n%s\nwant\n%s", got, want)
	}

	// A file written after its checksum was taken is read again.
	if err := os.WriteFile(filepath.Join(dir, "store", "000001.sst"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteWith(dir, Manifest{BuildID: "01TEST", CreatedAt: "2026-11-23T00:00:00Z"}, sums); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(dir); err != nil {
		t.Errorf("a manifest written with a stale checksum: %v", err)
	}
}

// toFormat1 rewrites dir's manifest as a format 1 (SHA-256) manifest of the
// same files, as a pds before format 2 wrote it.
func toFormat1(t *testing.T, dir string) {
	t.Helper()
	if err := snapshottest.AsFormat1(filepath.Join(dir, ManifestName)); err != nil {
		t.Fatal(err)
	}
}

// rewrite edits dir's manifest as JSON, whatever its format.
func rewrite(t *testing.T, dir string, edit func(m map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, _ = json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWriteListsBLAKE3(t *testing.T) {
	dir := snapshot(t)
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.FormatVersion != 7 || FormatVersion != 7 {
		t.Fatalf("format %d written, want 7", m.FormatVersion)
	}
	for _, f := range m.Files {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		want := blake3.Sum256(b)
		if f.BLAKE3 != "blake3:"+hex.EncodeToString(want[:]) || f.SHA256 != "" {
			t.Fatalf("%s listed with blake3 %q and sha256 %q; want only the file's BLAKE3", f.Path, f.BLAKE3, f.SHA256)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, ManifestName))
	if strings.Contains(string(raw), `"sha256"`) {
		t.Fatal("a format 2 manifest carries sha256 members")
	}
}

// TestVerifyFormats: snapshots of format 1 (SHA-256, written by an earlier
// pds) are still verified and served; a manifest whose checksums are not
// those of its format, or of a format this pds does not know, is refused.
func TestVerifyFormats(t *testing.T) {
	cases := []verifyCase{
		{"format 2, intact", func(*testing.T, string) {}, ""},
		{"format 1, intact", toFormat1, ""},
		{"format 1, a byte changed", func(t *testing.T, dir string) {
			toFormat1(t, dir)
			p := filepath.Join(dir, "store", "000007.sst")
			b, _ := os.ReadFile(p)
			b[3] ^= 1
			os.WriteFile(p, b, 0o644)
		}, "store/000007.sst does not match its checksum"},
		{"format 7 listing a SHA-256", func(t *testing.T, dir string) {
			rewrite(t, dir, func(m map[string]any) {
				f := m["files"].([]any)[3].(map[string]any)
				delete(f, "blake3")
				f["sha256"] = "sha256:00"
			})
		}, `without a well-formed blake3 checksum ("blake3:" and 64 lowercase hex digits), the one format 7 uses`},
		{"format 7 listing no checksum", func(t *testing.T, dir string) {
			rewrite(t, dir, func(m map[string]any) { delete(m["files"].([]any)[0].(map[string]any), "blake3") })
		}, "without a well-formed blake3 checksum"},
		{"format 1 listing a BLAKE3", func(t *testing.T, dir string) {
			rewrite(t, dir, func(m map[string]any) { m["format_version"] = 1 })
		}, `without a well-formed sha256 checksum ("sha256:" and 64 lowercase hex digits), the one format 1 uses`},
		{"format 7 with a checksum of another file", func(t *testing.T, dir string) {
			rewrite(t, dir, func(m map[string]any) {
				fs := m["files"].([]any)
				fs[5].(map[string]any)["blake3"] = fs[6].(map[string]any)["blake3"]
			})
		}, "does not match its checksum"},
		{"format 7 with a checksum cut short", func(t *testing.T, dir string) {
			rewrite(t, dir, func(m map[string]any) {
				f := m["files"].([]any)[2].(map[string]any)
				f["blake3"] = f["blake3"].(string)[:20]
			})
		}, "without a well-formed blake3 checksum"},
		{"format 7 with a checksum in upper case", func(t *testing.T, dir string) {
			rewrite(t, dir, func(m map[string]any) {
				f := m["files"].([]any)[2].(map[string]any)
				f["blake3"] = "blake3:" + strings.ToUpper(strings.TrimPrefix(f["blake3"].(string), "blake3:"))
			})
		}, "without a well-formed blake3 checksum"},
		{"format 7 with the prefix alone", func(t *testing.T, dir string) {
			rewrite(t, dir, func(m map[string]any) { m["files"].([]any)[2].(map[string]any)["blake3"] = "blake3:" })
		}, "without a well-formed blake3 checksum"},
		{"a format from a newer pds", func(t *testing.T, dir string) {
			rewrite(t, dir, func(m map[string]any) { m["format_version"] = FormatVersion + 1 })
		}, fmt.Sprintf("snapshot format %d was written by a newer pds than this one, which reads formats 1 to %d; a pds that reads format %d is needed", FormatVersion+1, FormatVersion, FormatVersion+1)},
		{"no format", func(t *testing.T, dir string) {
			rewrite(t, dir, func(m map[string]any) { delete(m, "format_version") })
		}, fmt.Sprintf("snapshot format 0 is not a format this pds reads (1 to %d)", FormatVersion)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := verified(t, c, 0)
			// Decode (a manifest fetched from an origin) judges the format
			// and checksums alike.
			// It reads no file, so a changed file is not its to find.
			b, _ := os.ReadFile(filepath.Join(dir, ManifestName))
			_, derr := DecodeManifest(b, "origin")
			listing := c.want != "" && !strings.Contains(c.want, "does not match")
			if listing && (derr == nil || !strings.Contains(derr.Error(), c.want)) {
				t.Fatalf("Decode: got %v, want %q", derr, c.want)
			}
			if !listing && derr != nil {
				t.Fatalf("Decode: %v", derr)
			}
		})
	}
}

func TestLargestFirst(t *testing.T) {
	files := []File{{Path: "a", Size: 5}, {Path: "b", Size: 900}, {Path: "c", Size: 5}, {Path: "d", Size: 70}}
	var got []string
	for _, f := range largestFirst(files) {
		got = append(got, f.Path)
	}
	if strings.Join(got, ",") != "b,d,a,c" {
		t.Fatalf("order %v, want b,d,a,c (largest first, ties in listing order)", got)
	}
	if files[0].Path != "a" {
		t.Fatal("largestFirst reordered its argument")
	}
}
