package manifest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	if err := Write(dir, Manifest{BuildID: "01TEST", CreatedAt: "2026-11-23T00:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// relist rewrites the manifest's file list through edit.
func relist(t *testing.T, dir string, edit func([]File) []File) {
	t.Helper()
	m, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Files = edit(m.Files)
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, Name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestVerify(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside")
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "hostname"), []byte("host\n"), 0o644)
	hostname := File{Path: "../../../etc/hostname", Size: 5, SHA256: "sha256:x"}
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
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
			relist(t, dir, func(fs []File) []File { return append(fs, File{Path: Name}) })
		}, "the manifest itself"},
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
		t.Run(c.name, func(t *testing.T) {
			dir := snapshot(t)
			c.damage(t, dir)
			m, err := Verify(dir)
			switch {
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.want == "" && len(m.Files) != 41:
				t.Fatalf("%d files listed", len(m.Files))
			case c.want != "" && (err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an ErrInvalid saying %q", err, c.want)
			}
		})
	}
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
	want, err := os.ReadFile(filepath.Join(dir, Name))
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
	if got, _ := os.ReadFile(filepath.Join(dir, Name)); string(got) != string(want) {
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
