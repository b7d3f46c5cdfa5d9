package index

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/util"
	index "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	zapv15 "github.com/blevesearch/zapx/v15"
	bolt "go.etcd.io/bbolt"
)

// Two builds of the same docs write the same Bleve files. Bleve's offline
// builder (scorch.Builder) with its default segment format, and bbolt under
// it, left four things to chance:
//
//   - A batch holds its documents in a map (index.Batch.IndexOps), and the
//     builder hands them to the segment format in the map's order, which Go
//     randomises: the documents' numbers inside a segment, and so nearly
//     every byte after the first document, differed from build to build.
//     Bleve picks the segment format from a registry it exports
//     (scorch.RegisterSegmentPlugin); orderedZap, registered in place of
//     zap v15, is zap v15 with the documents of a new segment sorted by ID
//     first (our IDs are positions in fixed-width hex, so they come out in
//     the order they were added). Opening and merging are zap's own, so the
//     files are zap v15 files that any Bleve reads.
//   - zap v16, the default format, keeps its per-field sections in a map and
//     writes each field's list of them in the map's order (zapx v16,
//     write.go: persistFieldsSection), a few bytes that differed at the end
//     of every segment. v15, the format before sections, has no such map;
//     the builder asks for it with Bleve's own options (forceSegmentType,
//     forceSegmentVersion; see segmentOptions).
//   - root.bolt, the index's list of segments, records the wall-clock time
//     the builder wrote it (prepareBoltSnapshot: "timeStamp", which scorch
//     uses only to choose which snapshots of a writable index to keep). No
//     option sets it; fixRootBolt copies the file afresh with a fixed time in
//     its place.
//   - bbolt writes root.bolt's pages in an order that a Go map decides: at
//     commit, a bucket writes the buckets under it that the transaction
//     opened by ranging over a map (bbolt's Bucket.spill), and each one too
//     big to be kept inline in its parent (over a quarter of a page) takes
//     the next free pages. The index mapping Bleve keeps is one such bucket;
//     the deletions of a segment an update keeps are another once they pass
//     about 500 docs. bbolt.Compact copies a file in one transaction,
//     so it writes the two in either order; copyBolt copies one bucket per
//     transaction, which opens only the buckets on that bucket's path, one
//     under each.
type orderedZap struct{ *zapv15.ZapPlugin }

func (p orderedZap) New(results []index.Document) (segment.Segment, uint64, error) {
	slices.SortFunc(results, func(a, b index.Document) int { return cmp.Compare(a.ID(), b.ID()) })
	return p.ZapPlugin.New(results)
}

func init() { scorch.RegisterSegmentPlugin(orderedZap{&zapv15.ZapPlugin{}}, false) }

// segmentOptions are the builder's options that choose orderedZap.
var segmentOptions = map[string]interface{}{"forceSegmentType": "zap", "forceSegmentVersion": 15}

// rootTime is the time root.bolt records: the Unix epoch.
var rootTime, _ = time.Unix(0, 0).UTC().MarshalText()

// rootPageSize is the page size of the root.bolt files written: bbolt's
// default is the machine's, which would make other bytes on another machine.
const rootPageSize = 4096

// fixRootBolt rewrites the root.bolt of the Bleve index at dir: copied afresh
// by copyBolt, with rootTime for every timeStamp it holds.
func fixRootBolt(dir string) error {
	// Scorch keeps root.bolt in a folder of its own inside the index's.
	found, err := filepath.Glob(filepath.Join(dir, "*", "root.bolt"))
	if err != nil || len(found) != 1 {
		return fmt.Errorf("index: %s: want one root.bolt in a folder of the index, found %d (%v)", dir, len(found), err)
	}
	path := found[0]
	tmp := path + ".tmp"
	if err := copyStamped(path, tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("index: rewrite %s: %w", path, err)
	}
	// Both files are closed: Windows cannot rename over a file that is open.
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("index: rewrite %s: %w", path, err)
	}
	return nil
}

// copyStamped writes a copy of the bolt file at path to tmp with copyBolt
// (rootTime for every timeStamp); it closes both before it returns.
func copyStamped(path, tmp string) error {
	src, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer src.Close()
	os.Remove(tmp)
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{PageSize: rootPageSize, NoSync: true, FreelistType: bolt.FreelistArrayType})
	if err != nil {
		return fmt.Errorf("%s: %w", tmp, err)
	}
	err = copyBolt(dst, src)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if cerr := src.Close(); err == nil {
		err = cerr
	}
	return err
}

// copyBolt copies every bucket and key of src into dst, which is empty, in
// key order: one transaction per bucket, which creates the bucket and puts its
// keys. A transaction opens only the buckets on the path to the one it
// creates, so each bucket's map of the buckets under it holds one, and the
// pages written, freed and taken again are the same on every run.
func copyBolt(dst, src *bolt.DB) error {
	return src.View(func(tx *bolt.Tx) error {
		var names [][]byte
		tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			names = append(names, name)
			return nil
		})
		for _, name := range names {
			if err := copyBucket(dst, [][]byte{name}, tx.Bucket(name)); err != nil {
				return err
			}
		}
		return nil
	})
}

// copyBucket copies bucket b of a source file, and the buckets under it, to
// path in dst. A timeStamp key gets rootTime.
func copyBucket(dst *bolt.DB, path [][]byte, b *bolt.Bucket) error {
	var children [][]byte
	err := dst.Update(func(tx *bolt.Tx) error {
		parent := tx.Cursor().Bucket() // the root bucket, whose buckets tx.Bucket opens
		for _, k := range path[:len(path)-1] {
			parent = parent.Bucket(k)
			parent.FillPercent = 1
		}
		nb, err := parent.CreateBucket(path[len(path)-1])
		if err != nil {
			return err
		}
		nb.FillPercent = 1
		if err := nb.SetSequence(b.Sequence()); err != nil {
			return err
		}
		return b.ForEach(func(k, v []byte) error {
			switch {
			case v == nil:
				children = append(children, k)
				return nil
			case bytes.Equal(k, util.BoltMetaDataTimeStamp):
				v = rootTime
			}
			return nb.Put(k, v)
		})
	})
	if err != nil {
		return fmt.Errorf("bucket %q: %w", path, err)
	}
	for _, k := range children {
		if err := copyBucket(dst, append(slices.Clip(path), k), b.Bucket(k)); err != nil {
			return err
		}
	}
	return nil
}
