package snapshots

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/productdata/pds/internal/osfile"
	"golang.org/x/sync/errgroup"
)

// checkPaths refuses a listing whose paths could name a file outside the
// snapshot, the manifest or its signature: every path must be relative,
// clean (no ".", "..", empty or doubled segments), slash-separated and
// listed once. The error says which path and why; callers wrap it.
func checkPaths(files []File) error {
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		p := f.Path
		bad := ""
		switch {
		case p == "":
			bad = "an empty path"
		case strings.HasPrefix(p, "/") || filepath.IsAbs(p) || filepath.VolumeName(p) != "":
			bad = "an absolute path"
		case strings.Contains(p, `\`):
			bad = "a backslash"
		case path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../"):
			bad = "a path that is not clean or leaves the snapshot"
		case p == ManifestName || p == SignatureName || p == StatementName:
			bad = "the manifest or its signature"
		case seen[p]:
			bad = "a path listed twice"
		case f.Size < 0:
			bad = "a negative size"
		}
		if bad != "" {
			return fmt.Errorf("%s lists %q, %s", ManifestName, p, bad)
		}
		seen[p] = true
	}
	return nil
}

// CheckPaths refuses a manifest whose paths could name a file outside the
// snapshot, as ReadManifest does (checkPaths): what a replica checks of a
// manifest it fetched before it writes a file the manifest names.
func (m Manifest) CheckPaths() error { return checkPaths(m.Files) }

// VerifyContext is Verify, cancellable: it reads the manifest, refuses
// unsafe paths, symbolic links and files the manifest does not list, then
// checks every listed file's size and checksum, hashing up to GOMAXPROCS
// files at once. Files are opened through an os.Root at dir, so no path can
// reach outside it. When ctx is done it stops and returns ctx's error.
func VerifyContext(ctx context.Context, dir string) (Manifest, error) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	m, root, err := checkListing(dir)
	if err != nil {
		return m, err
	}
	defer root.Close()
	if err := hashAll(ctx, dir, root, m.Files); err != nil {
		return m, err
	}
	return m, nil
}

// checkListing reads the manifest of the snapshot at dir and checks what
// can be checked without reading the files: safe paths, every listed file
// a regular file of its listed size, no file the manifest does not list.
// It returns the snapshot's folder opened as an os.Root.
func checkListing(dir string) (Manifest, *os.Root, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return m, nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return m, nil, fmt.Errorf("%w: %s: %w", ErrInvalid, dir, err)
	}
	if err := checkListed(dir, root, m.Files); err != nil {
		root.Close()
		return m, nil, err
	}
	if err := checkUnlisted(dir, m.Files); err != nil {
		root.Close()
		return m, nil, err
	}
	return m, root, nil
}

// readChunks checks the chunks file of a format 3 snapshot against its
// listed checksum and returns each other file's chunk hashes.
func readChunks(dir string, root *os.Root, m Manifest) (map[string][]byte, error) {
	i := slices.IndexFunc(m.Files, func(f File) bool { return f.Path == ChunksName })
	if i < 0 {
		return nil, fmt.Errorf("%w: %s: %s does not list %s, which format %d has", ErrInvalid, dir, ManifestName, ChunksName, m.FormatVersion)
	}
	b, err := root.ReadFile(ChunksName)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, dir, err)
	}
	h := m.Files[i].NewHash()
	h.Write(b)
	if int64(len(b)) != m.Files[i].Size || !m.Files[i].Matches(h) {
		return nil, fmt.Errorf("%w: %s: file %s does not match its checksum (changed or damaged)", ErrInvalid, dir, ChunksName)
	}
	hashes, err := decodeChunks(b, m.Files)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalid, dir, err)
	}
	return hashes, nil
}

// checkListed checks that every listed file is a regular file (not a
// symbolic link, directory or device) of the listed size.
func checkListed(dir string, root *os.Root, files []File) error {
	for _, f := range files {
		st, err := root.Lstat(filepath.FromSlash(f.Path))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%w: %s: file %s is missing", ErrInvalid, dir, f.Path)
		case err != nil:
			return fmt.Errorf("%w: %s: file %s: %w", ErrInvalid, dir, f.Path, err)
		case st.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%w: %s: file %s is a symbolic link; a snapshot holds only regular files", ErrInvalid, dir, f.Path)
		case !st.Mode().IsRegular():
			return fmt.Errorf("%w: %s: file %s is not a regular file", ErrInvalid, dir, f.Path)
		case st.Size() != f.Size:
			return fmt.Errorf("%w: %s: file %s has size %d, the manifest says %d (truncated or changed)", ErrInvalid, dir, f.Path, st.Size(), f.Size)
		}
	}
	return nil
}

// checkUnlisted refuses a snapshot that holds a file, or a symbolic link,
// that its manifest does not list: such a file was added after the build,
// and pds never opens what the manifest does not vouch for. The manifest's
// signature (SignatureName) and trust statement (StatementName) are the
// files beside it that it cannot list.
func checkUnlisted(dir string, files []File) error {
	listed := make(map[string]bool, len(files))
	for _, f := range files {
		listed[f.Path] = true
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrInvalid, dir, err)
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel != ManifestName && rel != SignatureName && rel != StatementName && !listed[rel] {
			return fmt.Errorf("%w: %s: file %s is not listed in %s (added after the build?); remove it or rebuild the snapshot", ErrInvalid, dir, rel, ManifestName)
		}
		return nil
	})
}

// hashAll checksums the files, up to GOMAXPROCS at once, and stops at the
// first mismatch or when ctx is done. The largest files go first, so that
// the small ones fill in around them rather than one large file starting
// last on a core of its own.
func hashAll(ctx context.Context, dir string, root *os.Root, files []File) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, f := range largestFirst(files) {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			ok, err := checksumIn(gctx, root, f)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if gctx.Err() != nil {
					return nil // another file failed first
				}
				return fmt.Errorf("%w: %s: file %s: %w", ErrInvalid, dir, f.Path, err)
			}
			if !ok {
				return fmt.Errorf("%w: %s: file %s does not match its checksum (changed or damaged)", ErrInvalid, dir, f.Path)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// largestFirst returns files ordered by size, largest first.
func largestFirst(files []File) []File {
	out := slices.Clone(files)
	slices.SortStableFunc(out, func(a, b File) int { return cmp.Compare(b.Size, a.Size) })
	return out
}

// checksumIn hashes the listed file lf inside root (a regular file, never
// through a symbolic link), checking ctx between blocks, and reports whether
// it matches its checksum.
func checksumIn(ctx context.Context, root *os.Root, lf File) (bool, error) {
	f, err := osfile.OpenRegular(root, filepath.FromSlash(lf.Path))
	if err != nil {
		return false, err
	}
	defer f.Close()
	return checksumOf(ctx, f, lf)
}

// checksumOf hashes what r reads, checking ctx between blocks, and reports
// whether it matches the checksum of the listed file lf.
func checksumOf(ctx context.Context, r io.Reader, lf File) (bool, error) {
	h := lf.NewHash()
	buf := make([]byte, 256<<10)
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		n, err := r.Read(buf)
		h.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, err
		}
	}
	return lf.Matches(h), nil
}

// Fingerprint names the present state of the snapshot at dir without
// reading its data: the build id, the SHA-256 of manifest.json, and the
// stamp of every listed file (its size, mode and modification time, and
// where the platform gives them its device, inode and change time: see
// stampOf). Two calls give the same fingerprint exactly when nothing listed
// was replaced or written in between (short of a change that keeps every
// one of those), so a server can remember a refused snapshot by its
// fingerprint and not verify it again until something changes, and a
// repaired snapshot gets a new one. It returns an error when the manifest
// cannot be read or lists an unsafe path.
func Fingerprint(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return "", fmt.Errorf("%w: %s: no readable %s (%w)", ErrInvalid, dir, ManifestName, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("%w: %s: %s is not valid JSON: %w", ErrInvalid, dir, ManifestName, err)
	}
	if err := checkPaths(m.Files); err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrInvalid, dir, err)
	}
	h := sha256.New()
	h.Write(b)
	for _, f := range m.Files {
		fmt.Fprintf(h, "\x00%s", f.Path)
		st, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			fmt.Fprint(h, "\x00missing")
			continue
		}
		fmt.Fprintf(h, "\x00%+v", stampOf(st))
	}
	return m.BuildID + "/" + hex.EncodeToString(h.Sum(nil)), nil
}

// FilesIn returns the base names of the listed files directly in folder dir
// of the snapshot ("store"), for opening a store through a file system that
// shows nothing else.
func (m Manifest) FilesIn(dir string) []string {
	names := []string{}
	for _, f := range m.Files {
		if path.Dir(f.Path) == dir {
			names = append(names, path.Base(f.Path))
		}
	}
	return names
}
