package snapshots

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/productdata/pds/index"
	"github.com/productdata/pds/internal/osfile"
	"github.com/productdata/pds/kv"
)

// Writer builds one snapshot. It writes into a temporary folder beside the
// snapshot's final place (see tempdir.go), in this order: the store's
// tables and the point index (Store), the search index (Index), the
// manifest (WriteManifest), then Publish, which syncs everything and
// renames the folder into place. Until Publish, nothing is at the final
// place; a Writer closed before it leaves nothing behind.
type Writer struct {
	out, tmp, id string
	temp         *tempDir
	// basePoints are the files of the base's point index StoreOn took
	// into the new snapshot (linked, or copied), by manifest path.
	basePoints map[string]bool
	// RemovedStale lists the temporary folders of earlier, killed builds
	// that Create removed from beside out.
	RemovedStale []string
}

// Create starts the snapshot out, built as buildID. out must not exist:
// snapshots are immutable.
func Create(out, buildID string) (*Writer, error) {
	if _, err := os.Stat(out); err == nil {
		return nil, fmt.Errorf("output %s already exists; snapshots are immutable, so build into a new directory", out)
	}
	// The folders above out are made as needed (builds/2026-11-28).
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, err
	}
	w := &Writer{out: out}
	var err error
	if w.RemovedStale, err = removeStale(out); err != nil {
		return nil, err
	}
	if w.temp, err = claimTemp(out, buildID); err != nil {
		return nil, err
	}
	w.tmp, w.id = w.temp.path, buildID
	return w, nil
}

// ID is the id the build was created with, which names its temporary
// folder (and those of what the build writes beside it: ClaimTemp).
func (w *Writer) ID() string { return w.id }

// Work returns a new working folder for the build's own scratch files. It
// is inside the temporary folder (on the same file system as the
// snapshot) and is removed before the manifest is written.
func (w *Writer) Work(name string) string {
	return filepath.Join(w.tmp, ".work", name)
}

// Store creates the snapshot's store and its point index.
func (w *Writer) Store() (*kv.Builder, error) {
	b, err := kv.NewBuilder(join(w.tmp, StoreDir), w.Work("tables"))
	if err != nil {
		return nil, err
	}
	if err := b.WritePoints(join(w.tmp, PointsPath)); err != nil {
		b.Abort()
		return nil, err
	}
	return b, nil
}

// StoreOn creates the snapshot's store as base's with a layer on top (see
// kv.NewLayer): base's tables are linked, not copied, and only what the
// build gives the store is written. So is the point index: base's (of
// version 3) and its layers are linked, and the night's layer is written on
// top (kv.Builder.WritePointsLayer); an index of an older version is
// written whole.
//
// The new manifest lists the linked tables with base's checksums and chunk
// hashes (SumStoreOn): a linked table's bytes are vouched for by the
// checksum they were written with, never by one computed again, so damage
// in them is found where the new snapshot is read, pulled whole or
// verified. What the build reads of a table is checked as it is read (by
// the snapshot's guard, or by Pebble's block checksums where the layer
// reads the linked tables itself). The store's other files (its MANIFEST,
// OPTIONS and markers: a few KB) are copied, not linked, and so are hashed
// against base's manifest first; with hashAll, every table and point index
// file is too, so that damage anywhere is found now. A store that fails is refused with an
// error that wraps ErrInvalid and names the file.
func (w *Writer) StoreOn(base *Snapshot, hashAll bool) (*kv.Builder, error) {
	copied := func(path string) bool { return hashAll || !strings.HasSuffix(path, ".sst") }
	if err := base.checkFilesIn(StoreDir, copied); err != nil {
		return nil, err
	}
	if err := base.checkFilesIn(path.Dir(PointsPath), func(string) bool { return hashAll }); err != nil {
		return nil, err
	}
	b, err := kv.NewLayer(join(w.tmp, StoreDir), w.Work("tables"), join(base.Dir, StoreDir))
	if err != nil {
		return nil, err
	}
	if err := w.pointsOn(base, b); err != nil {
		b.Abort()
		return nil, err
	}
	return b, nil
}

// pointsOn starts the point index of a store layered on base's: a layer on
// base's index when it is of version 3 (its files linked, or copied where
// they cannot be, and checked then by SumStoreOn), else the index whole.
func (w *Writer) pointsOn(base *Snapshot, b *kv.Builder) error {
	if base.store.PointsVersion() != 3 {
		return b.WritePoints(join(w.tmp, PointsPath))
	}
	layers, err := base.pointLayers()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(join(w.tmp, PointsPath)), 0o755); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	w.basePoints = map[string]bool{}
	for _, p := range append([]string{PointsPath}, layers...) {
		if err := osfile.LinkOrCopy(join(base.Dir, p), join(w.tmp, p)); err != nil {
			return fmt.Errorf("snapshot: the base's point index: %w", err)
		}
		w.basePoints[p] = true
	}
	return b.WritePointsLayer(join(w.tmp, pointLayerPath(len(layers)+1)))
}

// Index creates the snapshot's search index.
func (w *Writer) Index() (*index.Builder, error) {
	return index.Create(join(w.tmp, IndexDir))
}

// IndexFrom creates the snapshot's search index as an update of base's: the docs that base's
// index holds as they are added are kept, not indexed again (see index.Update).
// base's index files, which the update reads and copies, are first hashed
// whole against base's manifest, as StoreOn's store.
func (w *Writer) IndexFrom(base *Snapshot) (*index.Builder, error) {
	if err := base.checkFilesIn(IndexDir, func(string) bool { return true }); err != nil {
		return nil, err
	}
	return index.Update(join(w.tmp, IndexDir), join(base.Dir, IndexDir))
}

// SumStore checksums the finished store and point index, for
// WriteManifest: it
// may run while the search index is still being written.
func (w *Writer) SumStore() (map[string]File, error) {
	sums, err := Sums(w.tmp, StoreDir)
	if err != nil {
		return nil, err
	}
	more, err := Sums(w.tmp, filepath.Dir(filepath.FromSlash(PointsPath)))
	if err != nil {
		return nil, err
	}
	for p, f := range more {
		sums[p] = f
	}
	return sums, nil
}

// SumStoreOn is SumStore for a store layered on base's (StoreOn): a table
// or point index file that is base's own file (linked) keeps the checksums
// base's manifest and chunks file give it, so only the files the build
// wrote are read. One of base's that was copied instead (base on another
// file system) must hash as base's manifest lists it: its bytes are base's,
// and a copy of damaged ones is refused, not vouched for.
func (w *Writer) SumStoreOn(base *Snapshot) (map[string]File, error) {
	return w.sumOn(base, []string{StoreDir, path.Dir(PointsPath)}, func(p string) bool {
		return strings.HasSuffix(p, ".sst") || w.basePoints[p]
	})
}

// SumIndexOn is SumStoreOn for the search index of an update (IndexFrom),
// once it is finished: when it kept base's index (keptBase), base's
// segments are linked (or copied, and must then hash as base lists them);
// the rest is the build's own, as all of an index built whole is.
func (w *Writer) SumIndexOn(base *Snapshot, keptBase bool) (map[string]File, error) {
	return w.sumOn(base, []string{IndexDir}, func(p string) bool { return keptBase && searchSegment(p) })
}

// sumOn checksums the files under dirs of the build, for WriteManifest:
// those that are base's own files keep base's checksums; those of base's
// that keep (a path base lists and keeps says) but were copied must hash
// as base lists them.
func (w *Writer) sumOn(base *Snapshot, dirs []string, keeps func(path string) bool) (map[string]File, error) {
	known := map[string]File{}
	listed := map[string]File{}
	for _, f := range base.Manifest.Files {
		listed[f.Path] = f
	}
	var todo []string
	for _, sub := range dirs {
		paths, err := listFiles(w.tmp, sub)
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			f, ok := listed[p.rel]
			sf := base.files[p.rel]
			if ok && sf != nil && sf.listed != nil && sameFile(join(w.tmp, p.rel), join(base.Dir, p.rel)) {
				f.chunks = sf.listed
				known[p.rel] = f
				continue
			}
			todo = append(todo, p.rel)
		}
	}
	files := make([]File, len(todo))
	err := sumEach(len(todo), func(i int) error {
		var err error
		files[i], err = sumFile(w.tmp, todo[i])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	for _, f := range files {
		if was, ok := listed[f.Path]; ok && keeps(f.Path) && f.Checksum() != was.Checksum() {
			return nil, fmt.Errorf("%w: %s: file %s does not match its checksum (changed or damaged)", ErrInvalid, base.Dir, f.Path)
		}
		known[f.Path] = f
	}
	return known, nil
}

// checkFilesIn hashes whole each file of the snapshot under its folder dir
// (StoreDir, IndexDir), up to GOMAXPROCS at once, and checks it against
// the manifest: for a build that links or copies them into its own.
func (s *Snapshot) checkFilesIn(dir string, which func(path string) bool) error {
	var files []File
	for _, f := range s.Manifest.Files {
		if strings.HasPrefix(f.Path, dir+"/") && which(f.Path) {
			files = append(files, f)
		}
	}
	root, err := os.OpenRoot(s.Dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrInvalid, s.Dir, err)
	}
	defer root.Close()
	return hashAll(context.Background(), s.Dir, root, files)
}

// sameFile reports whether paths a and b are the same file (hard links).
func sameFile(a, b string) bool {
	x, errX := os.Stat(a)
	y, errY := os.Stat(b)
	return errX == nil && errY == nil && os.SameFile(x, y)
}

// WriteManifest removes the working folders and writes the manifest m,
// every file listed and checksummed here but those of known whose sizes
// still match.
func (w *Writer) WriteManifest(m Manifest, known map[string]File) error {
	if err := os.RemoveAll(filepath.Join(w.tmp, ".work")); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return WriteWith(w.tmp, m, known)
}

// Publish makes the finished build the snapshot: every folder and file
// given the snapshot modes (SetModes) and synced, one rename, then the
// parent folder synced so that the rename itself survives a power loss.
func (w *Writer) Publish() error {
	if err := SetModes(w.tmp); err != nil {
		return fmt.Errorf("publish snapshot: %w", err)
	}
	if err := syncTree(w.tmp); err != nil {
		return fmt.Errorf("publish snapshot: %w", err)
	}
	if err := os.Rename(w.tmp, w.out); err != nil {
		return fmt.Errorf("publish snapshot: %w", err)
	}
	if err := syncPath(filepath.Dir(filepath.Clean(w.out))); err != nil {
		return fmt.Errorf("publish snapshot: %w", err)
	}
	return nil
}

// Close releases the temporary folder: it removes what is left of an
// unfinished build, and the lock.
func (w *Writer) Close() { w.temp.release() }
