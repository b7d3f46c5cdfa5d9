package snapshots

// A snapshot's manifest.json says what the snapshot is (format version,
// build id, input digest, counts) and lists every file it is made of, with
// size and checksum, so that a damaged, truncated or foreign snapshot is
// refused before its bytes are served.

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/zeebo/blake3"
	"golang.org/x/sync/errgroup"
)

// FormatVersion is the snapshot format this build writes. It reads it and
// every earlier one.
//
// Format 2 lists each file's BLAKE3 checksum ("blake3:" + hex), format 1
// its SHA-256 ("sha256:" + hex); the rest of the snapshot is the same.
// BLAKE3 hashes about 1.7 times as fast as SHA-256 on one core (2.0
// against 1.2 GB/s on the 1M snapshot's largest table), and every start
// of pds serve reads and hashes the whole snapshot.
//
// Format 3 adds the chunks file (chunks.go): the BLAKE3 of every 64 KiB of
// every file, so that pds serve checks each chunk when it first reads it
// rather than hashing the whole snapshot before it serves.
//
// Format 4 is format 3 with a compact store (kv/views.go): each subject's
// passport and evidence views for one visibility compressed together as
// one zstd frame with a trained dictionary, identity views in the point
// index alone (its version 2, compressed), and every file the same bytes
// from the same input and sequence (see Reproducible).
//
// Format 5 is format 4 with a search index of format 2 (index/update.go):
// docs are named by positions that an incremental build keeps, so that it
// adds a segment of the night's docs to the base's instead of indexing
// every doc again. A pds that reads only format 1 indexes cannot search it.
//
// Format 6 is format 5 with a point index of version 3 (kv/points_format.go):
// identity views stored by shape (kv/jsonshape), read about twice as fast
// and in about two thirds of the bytes. An incremental build on a base of
// format 5 keeps that base's point index version.
//
// Format 7 is format 6 whose point index may have layers (PointsPath.1 and
// on, kv/points_layers.go): a night on a base whose index is of version 3
// writes a layer of what it changed on the base's index instead of the
// whole index again. A pds that reads format 6 would not see the layers.
const FormatVersion = 7

// The earlier formats, whose snapshots pds still verifies (every byte, when
// it opens them) and serves.
const (
	FormatSHA256  = 1
	FormatBLAKE3  = 2
	FormatChunks  = 3
	FormatCompact = 4
	FormatUpdates = 5
	FormatShapes  = 6
)

// knownFormat reports whether this pds reads snapshot format v.
func knownFormat(v int) bool { return v >= FormatSHA256 && v <= FormatVersion }

// chunked reports whether format v lists chunk hashes.
func chunked(v int) bool { return v >= 3 }

// File is one file of a snapshot. It has one checksum: BLAKE3 in a format
// 2 manifest, SHA-256 in a format 1 manifest.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	BLAKE3 string `json:"blake3,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// chunks are the file's chunk hashes (chunks.go), carried from Sums
	// to WriteWith; the manifest holds them in the chunks file.
	chunks []byte
}

// The prefixes of the checksums' values.
const (
	prefixBLAKE3 = "blake3:"
	prefixSHA256 = "sha256:"
)

// listedSHA256 reports whether f is listed with SHA-256 (format 1).
func (f File) listedSHA256() bool { return f.BLAKE3 == "" && f.SHA256 != "" }

// NewHash returns a hash of the algorithm of f's checksum, for Matches.
func (f File) NewHash() hash.Hash {
	if f.listedSHA256() {
		return sha256.New()
	}
	return blake3.New()
}

// Matches reports whether h, a NewHash of f fed the file's bytes, gives
// f's checksum.
func (f File) Matches(h hash.Hash) bool {
	if f.listedSHA256() {
		return prefixSHA256+hex.EncodeToString(h.Sum(nil)) == f.SHA256
	}
	return f.BLAKE3 != "" && prefixBLAKE3+hex.EncodeToString(h.Sum(nil)) == f.BLAKE3
}

// Checksum is f's checksum as the manifest lists it, its algorithm's
// prefix included: two files with the same Checksum have the same bytes.
func (f File) Checksum() string {
	if f.BLAKE3 != "" {
		return f.BLAKE3
	}
	return f.SHA256
}

// checkSums refuses a listing whose files do not each carry the one
// checksum their format uses.
func checkSums(dir string, m Manifest) error {
	for _, f := range m.Files {
		var ok bool
		if m.FormatVersion == FormatSHA256 {
			ok = f.BLAKE3 == "" && wellFormed(f.SHA256, prefixSHA256)
		} else {
			ok = f.SHA256 == "" && wellFormed(f.BLAKE3, prefixBLAKE3)
		}
		if !ok {
			want := "blake3"
			if m.FormatVersion == FormatSHA256 {
				want = "sha256"
			}
			return fmt.Errorf("%w: %s: %s lists %q without a well-formed %s checksum (%q and 64 lowercase hex digits), the one format %d uses", ErrInvalid, dir, ManifestName, f.Path, want, want+":", m.FormatVersion)
		}
	}
	return nil
}

// wellFormed reports whether sum is prefix and 64 lowercase hex digits, as
// both formats write a 32-byte digest.
func wellFormed(sum, prefix string) bool {
	h, ok := strings.CutPrefix(sum, prefix)
	if !ok || len(h) != 64 {
		return false
	}
	for i := range len(h) {
		if c := h[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// formatError says why format v is refused: a newer pds wrote it, or it
// is no snapshot format at all.
func formatError(where string, v int) error {
	if v > FormatVersion {
		return fmt.Errorf("%w: %s: snapshot format %d was written by a newer pds than this one, which reads formats %d to %d; a pds that reads format %d is needed: upgrade pds", ErrInvalid, where, v, FormatSHA256, FormatVersion, v)
	}
	return fmt.Errorf("%w: %s: snapshot format %d is not a format this pds reads (%d to %d); rebuild it with this version's 'pds ingest'", ErrInvalid, where, v, FormatSHA256, FormatVersion)
}

// Manifest describes a snapshot.
type Manifest struct {
	FormatVersion int              `json:"format_version"`
	BuildID       string           `json:"build_id"`
	Sequence      int64            `json:"sequence"` // build order: a replica refuses a lower one (see signature.go)
	CreatedAt     string           `json:"created_at"`
	InputDigest   string           `json:"input_digest"`
	Counts        map[string]int64 `json:"counts"`
	Rejected      map[string]int64 `json:"rejected"`
	Files         []File           `json:"files"`
}

// WriteManifest lists every file under dir (except the manifest), checksums it and
// writes dir/manifest.json in format FormatVersion. The files are
// checksummed up to GOMAXPROCS at once, as Verify reads them: a snapshot's
// files are few and large, and one core hashes about 2 GB/s.
func WriteManifest(dir string, m Manifest) error { return WriteWith(dir, m, nil) }

// WriteWith is WriteManifest with the checksums of some files taken already, by
// Sums while the rest of the snapshot was still being written: a file in
// known whose size has not changed since is not read again. Whatever else
// is under dir is checksummed here.
func WriteWith(dir string, m Manifest, known map[string]File) error {
	m.FormatVersion = FormatVersion
	paths, err := listFiles(dir, ".")
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	m.Files = make([]File, len(paths))
	var todo []int
	for i, p := range paths {
		f, ok := known[p.rel]
		if ok && f.Size == p.size && f.BLAKE3 != "" && int64(len(f.chunks)) == chunkCount(f.Size)*chunkHashSize {
			m.Files[i] = f
		} else {
			todo = append(todo, i)
		}
	}
	slices.SortStableFunc(todo, func(a, b int) int { return cmp.Compare(paths[b].size, paths[a].size) }) // largest first, as Verify
	err = sumEach(len(todo), func(j int) error {
		p := paths[todo[j]]
		f, err := sumFile(dir, p.rel)
		m.Files[todo[j]] = f
		return err
	})
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	if err := os.WriteFile(join(dir, ChunksName), encodeChunks(m.Files), 0o644); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	cf, err := sumFile(dir, ChunksName)
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	m.Files = append(m.Files, cf)
	slices.SortFunc(m.Files, func(a, b File) int { return cmp.Compare(a.Path, b.Path) })
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ManifestName), append(b, '\n'), 0o644)
}

// Sums checksums every file under dir/sub, keyed by its path relative to
// dir as the manifest lists it, for WriteWith.
func Sums(dir, sub string) (map[string]File, error) {
	paths, err := listFiles(dir, sub)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	files := make([]File, len(paths))
	err = sumEach(len(paths), func(i int) error {
		var err error
		files[i], err = sumFile(dir, paths[i].rel)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	out := make(map[string]File, len(files))
	for _, f := range files {
		out[f.Path] = f
	}
	return out, nil
}

// listedFile is a file under a snapshot folder: its manifest path and size.
type listedFile struct {
	rel  string
	size int64
}

// listFiles lists the files under dir/sub, but the manifest, in path order.
func listFiles(dir, sub string) ([]listedFile, error) {
	var out []listedFile
	err := filepath.WalkDir(filepath.Join(dir, sub), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == ManifestName || rel == ChunksName {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, listedFile{rel: filepath.ToSlash(rel), size: info.Size()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out, err
}

// sumEach runs fn for 0..n-1, up to GOMAXPROCS at once.
func sumEach(n int, fn func(i int) error) error {
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range n {
		g.Go(func() error { return fn(i) })
	}
	return g.Wait()
}

// ReadManifest reads the manifest of the snapshot at dir and checks it: a
// format this pds reads, files and a build id listed, safe paths and
// well-formed checksums. It reads none of the files. Every failure wraps
// ErrInvalid.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return m, fmt.Errorf("%w: %s: no readable %s (%w)", ErrInvalid, dir, ManifestName, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%w: %s: %s is not valid JSON: %w", ErrInvalid, dir, ManifestName, err)
	}
	if !knownFormat(m.FormatVersion) {
		return m, formatError(dir, m.FormatVersion)
	}
	if len(m.Files) == 0 || m.BuildID == "" {
		return m, fmt.Errorf("%w: %s: %s lists no files or no build id", ErrInvalid, dir, ManifestName)
	}
	if err := checkPaths(m.Files); err != nil {
		return m, fmt.Errorf("%w: %s: %w", ErrInvalid, dir, err)
	}
	if err := checkSums(dir, m); err != nil {
		return m, err
	}
	return m, nil
}

// Verify reads the manifest and checks that every file it lists is present
// with the same size and checksum, and that the snapshot holds nothing else;
// see VerifyContext.
func Verify(dir string) (Manifest, error) {
	return VerifyContext(context.Background(), dir)
}
