// Package manifest writes and verifies a snapshot's manifest.json: what the
// snapshot is (format version, build id, input digest, counts) and every file
// it is made of, with size and checksum, so that a damaged, truncated or
// foreign snapshot is refused before it is served.
package manifest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"

	"golang.org/x/sync/errgroup"
)

// FormatVersion is the snapshot format this build writes and reads.
const FormatVersion = 1

// Name is the manifest's file name inside a snapshot.
const Name = "manifest.json"

// File is one file of a snapshot.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
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

// Write lists every file under dir (except the manifest), checksums it and
// writes dir/manifest.json. The files are checksummed up to GOMAXPROCS at
// once, as Verify reads them: a snapshot's files are few and large, and
// one core hashes about 1.5 GB/s.
func Write(dir string, m Manifest) error {
	m.FormatVersion = FormatVersion
	m.Files = nil
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if rel != Name {
			paths = append(paths, rel)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	m.Files = make([]File, len(paths))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, rel := range paths {
		g.Go(func() error {
			size, sum, err := checksum(filepath.Join(dir, rel))
			m.Files[i] = File{Path: filepath.ToSlash(rel), Size: size, SHA256: sum}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Path < m.Files[j].Path })
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, Name), append(b, '\n'), 0o644)
}

// ErrInvalid is wrapped by every verification failure.
var ErrInvalid = errors.New("snapshot refused")

// Read reads dir/manifest.json and checks its format version.
func Read(dir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, Name))
	if err != nil {
		return m, fmt.Errorf("%w: %s: no readable %s (%v)", ErrInvalid, dir, Name, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%w: %s: %s is not valid JSON: %v", ErrInvalid, dir, Name, err)
	}
	if m.FormatVersion != FormatVersion {
		return m, fmt.Errorf("%w: %s: snapshot format %d is not the format this pds reads (%d); rebuild it with this version's 'pds ingest'", ErrInvalid, dir, m.FormatVersion, FormatVersion)
	}
	if len(m.Files) == 0 || m.BuildID == "" {
		return m, fmt.Errorf("%w: %s: %s lists no files or no build id", ErrInvalid, dir, Name)
	}
	if err := checkPaths(dir, m.Files); err != nil {
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

func checksum(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", err
	}
	return n, "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
