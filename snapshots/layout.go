package snapshots

import (
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// The layout of a snapshot folder. These names are the only place pds
// spells a path inside a snapshot; every other package asks this one
// (deps_test.go holds that).
const (
	// StoreDir is the Pebble store: the precomputed views, aliases,
	// sources and metadata, as sorted tables.
	StoreDir = "store"
	// IndexDir is the Bleve manufacturer index and its doc store.
	IndexDir = "index"
	// PointsPath is the point index over the store's identity views.
	// The layers nights write on it are PointsPath.1, .2 and so on
	// (format 7 and later; pointLayerPath).
	PointsPath = "points/identity"
	// ManifestName is the manifest: format, build, counts and every
	// file's size and checksum.
	ManifestName = "manifest.json"
	// ChunksName lists the BLAKE3 of every chunk of every other file
	// (format 3 and later; see chunks.go).
	ChunksName = "chunks"
	// SignatureName is the signature beside the manifest: a minisign
	// signature of the manifest's bytes, under the name minisign itself
	// looks for, so that `minisign -Vm manifest.json -p KEY.pub` checks it.
	SignatureName = ManifestName + ".minisig"
	// StatementName is the trust statement beside the manifest: the
	// targets statement (package snapshots/trust) that named the build
	// when a replica took it through a trust root.
	StatementName = "targets.json"
)

// pointLayerPath is the path of the point index's layer i (from 1).
func pointLayerPath(i int) string { return PointsPath + "." + strconv.Itoa(i) }

// Shared reports whether the file at manifest path p is one that builds
// share by hard links: a store table, a file of the point index or a
// segment of the search index (a night links its base's, a replica those
// of the build it keeps).
func Shared(p string) bool {
	return path.Dir(p) == StoreDir && strings.HasSuffix(p, ".sst") || p == PointsPath || strings.HasPrefix(p, PointsPath+".") ||
		searchSegment(p)
}

// searchSegment reports whether p is a segment of the search index: a file
// the server reads from a private copy it hashes (index.Copied), never from
// the snapshot once copied.
func searchSegment(p string) bool {
	return strings.HasPrefix(p, IndexDir+"/") && strings.HasSuffix(p, ".zap")
}

// inStore reports whether the manifest path p is a file of the store.
func inStore(p string) bool { return path.Dir(p) == StoreDir }

// join returns the path of the snapshot file rel (slash-separated) under dir.
func join(dir, rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
