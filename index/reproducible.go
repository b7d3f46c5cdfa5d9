package index

import (
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
// builder (scorch.Builder) with its default segment format left three things
// to chance:
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
//     option sets it; fixRootBolt writes a fixed time in its place and
//     copies the file afresh (bbolt leaves the replaced value's old page in
//     the file otherwise).
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

// fixRootBolt rewrites the root.bolt of the Bleve index at dir with rootTime
// for every timeStamp it holds.
func fixRootBolt(dir string) error {
	// Scorch keeps root.bolt in a folder of its own inside the index's.
	found, err := filepath.Glob(filepath.Join(dir, "*", "root.bolt"))
	if err != nil || len(found) != 1 {
		return fmt.Errorf("index: %s: want one root.bolt in a folder of the index, found %d (%v)", dir, len(found), err)
	}
	path := found[0]
	tmp := path + ".tmp"
	if err := compactStamped(path, tmp); err != nil {
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

// compactStamped stamps the bolt file at path with rootTime and writes a
// compacted copy of it to tmp; it closes both before it returns.
func compactStamped(path, tmp string) error {
	src, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := src.Update(stampAll); err != nil {
		return err
	}
	os.Remove(tmp)
	dst, err := bolt.Open(tmp, 0o600, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", tmp, err)
	}
	err = bolt.Compact(dst, src, 0)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if cerr := src.Close(); err == nil {
		err = cerr
	}
	return err
}

// stamp sets the timeStamp key of bucket b, and of every bucket under it,
// to rootTime. A bucket is changed only once it is no longer iterated.
func stamp(b *bolt.Bucket) error {
	if b.Get(util.BoltMetaDataTimeStamp) != nil {
		if err := b.Put(util.BoltMetaDataTimeStamp, rootTime); err != nil {
			return err
		}
	}
	var children [][]byte
	b.ForEach(func(k, v []byte) error {
		if v == nil {
			children = append(children, slices.Clone(k))
		}
		return nil
	})
	for _, k := range children {
		if err := stamp(b.Bucket(k)); err != nil {
			return err
		}
	}
	return nil
}

// stampAll stamps every bucket of tx.
func stampAll(tx *bolt.Tx) error {
	var roots [][]byte
	tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
		roots = append(roots, slices.Clone(name))
		return nil
	})
	for _, name := range roots {
		if err := stamp(tx.Bucket(name)); err != nil {
			return err
		}
	}
	return nil
}
