package index

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/util"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	"github.com/productdata/pds/internal/osfile"
	bolt "go.etcd.io/bbolt"
)

// An updated index keeps a base index's Bleve segments as they are (linked, not rebuilt) and adds
// one segment of the docs that are new or whose indexed fields changed; the base docs that were
// dropped or changed are marked deleted in the segments that hold them (Bleve's own deletion
// bitmaps, kept in root.bolt). So a night that changes 1% of the docs indexes 1% of them, and the
// files a replica fetches are that segment and the bitmaps, not a rewritten index.
//
// Search pages must come in the order of a whole build: by subject, and within a name by block.
// Both are kept without renumbering:
//
//   - A doc's Bleve ID is its position (posID), not its ordinal. Positions rise with subjects; a
//     doc keeps its position, and a new one is given one between its neighbours'. When a gap is
//     used up, the index is built whole instead.
//   - A doc keeps its block; a new doc of a name takes the block of the name's doc before it, or
//     starts the next block when it comes after every doc of the name in the base and that block
//     is full. Blocks stay in subject order within a name, which is all a page needs; a block
//     that grows past maxBlockFill blocks' worth of docs makes the index be built whole instead,
//     so reading a block stays cheap.
//
// The doc store, names.txt and meta.json are written whole, as a whole build writes them: they
// are read in memory or by ordinal, and cost a second or two at a million docs.
//
// The night's segments are kept few: the newest is merged with the one before it while that one
// holds no more live docs, so after n nights there are at most about log2(n) of them beside the
// whole build's, and each doc is merged about log2(n) times. When more than half of the whole
// build's segment is deleted, the index is built whole again.
const (
	// maxBlockFill is the most docs a block may hold in an updated index, in blocks.
	maxBlockFill = 4
	// insertStep is the most a new doc's position is above the doc before it, when it falls
	// between two docs: small, so that a run of docs inserted at one place fits in one gap.
	insertStep = 1 << 12
)

// giveUp makes the update build the index whole at Close, for the reason why.
func (u *updater) giveUp(why string) {
	if !u.rebuild {
		u.rebuild, u.why = true, why
	}
}

// updater is the state of an update: the base's doc store, read in order beside the new docs.
type updater struct {
	baseDir   string
	base      *docStore
	baseData  *bufio.Reader // docs.dat, read in order
	next      int           // ordinal of the next base doc not yet matched
	nextRaw   []byte        // its stored record, when next < base.n
	nextRec   record        // the record decoded, when decoded is set
	decoded   bool
	ncOf      []*nameCount   // base name id → the new index's count of the name, once met
	lastOf    map[string]int // name → ordinal of its last base doc
	baseNames []string       // base name id → name
	drops     []string       // Bleve IDs of base docs dropped or changed
	rebuild   bool           // the update gave up (errRebuild): built whole at Close
	why       string         // why, for the report
	nightDir  string
}

// Update starts a new index in dir (which must not exist yet) that keeps what it can of the index
// in baseDir: the docs added that equal the base's are not indexed again. The result answers every
// search as an index built whole from the same docs does. A base of an older format is not kept:
// the index is then built whole.
func Update(dir, baseDir string) (*Builder, error) {
	return updateFrom(dir, baseDir, defaultBlockSize, batchSize)
}

func updateFrom(dir, baseDir string, blockSize, segmentDocs int) (*Builder, error) {
	js, err := os.ReadFile(filepath.Join(baseDir, metaFile))
	if err != nil {
		return nil, fmt.Errorf("index: update: %w", err)
	}
	var bm meta
	if err := json.Unmarshal(js, &bm); err != nil {
		return nil, fmt.Errorf("index: update: %s: %w", metaFile, err)
	}
	if bm.Format != formatNumber || bm.BlockSize != blockSize {
		b, err := create(dir, blockSize, segmentDocs)
		if b != nil {
			b.report = "built whole: the base's index is of an older format"
		}
		return b, err
	}
	entries, err := readNames(filepath.Join(baseDir, namesFile), bm.Format, bm.BlockSize)
	if err != nil {
		return nil, err
	}
	store, err := openStore(baseDir, bm.Docs, bm.Format)
	if err != nil {
		return nil, fmt.Errorf("index: update: base doc store: %w", err)
	}
	u := &updater{baseDir: baseDir, base: store, baseData: bufio.NewReaderSize(io.NewSectionReader(store.data, 0, int64(store.size)), 1<<16),
		lastOf: make(map[string]int, len(entries)), nightDir: filepath.Join(dir, "night.bleve")}
	for ord := range store.n {
		if id := store.nameAt(ord); id != noName {
			if int(id) >= len(entries) {
				store.close()
				return nil, fmt.Errorf("index: update: base doc %d names name %d of %d", ord, id, len(entries))
			}
			u.lastOf[entries[id].name] = ord
		}
	}
	for _, e := range entries {
		u.baseNames = append(u.baseNames, e.name)
	}
	if err := u.read(); err != nil {
		store.close()
		return nil, err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		store.close()
		return nil, fmt.Errorf("index: create: %w", err)
	}
	b, err := start(dir, nil, blockSize)
	if err != nil {
		store.close()
		return nil, err
	}
	b.up = u
	return b, nil
}

// read reads the stored record of base doc u.next, if there is one; peek decodes it.
func (u *updater) read() error {
	u.decoded = false
	if u.next >= u.base.n {
		return nil
	}
	end := u.base.size
	if u.next+1 < u.base.n {
		end = u.base.offAt(u.next + 1)
	}
	start := u.base.offAt(u.next)
	if start > end || end > u.base.size {
		return fmt.Errorf("index: update: base doc %d: %w", u.next, errCorrupt)
	}
	u.nextRaw = slices.Grow(u.nextRaw[:0], int(end-start))[:end-start]
	if _, err := io.ReadFull(u.baseData, u.nextRaw); err != nil {
		return fmt.Errorf("index: update: base doc %d: %w", u.next, err)
	}
	return nil
}

// peek returns the record of base doc u.next, decoded.
func (u *updater) peek() (record, error) {
	if !u.decoded {
		r, err := decodeRecord(u.nextRaw, u.base.format)
		if err != nil {
			return record{}, fmt.Errorf("index: update: base doc %d: %w", u.next, err)
		}
		u.nextRec, u.decoded = r, true
	}
	return u.nextRec, nil
}

// match returns the base doc with the subject and visibility of d, if there is one; the base
// docs before it are dropped.
func (u *updater) match(d *Doc) (ord int, r record, ok bool, err error) {
	for u.next < u.base.n {
		next, err := u.peek()
		if err != nil {
			return 0, record{}, false, err
		}
		c := strings.Compare(next.subject, d.Subject)
		if c == 0 {
			c = strings.Compare(next.visibility, d.Visibility)
		}
		if c > 0 {
			return 0, record{}, false, nil
		}
		ord, r = u.next, next
		if c < 0 {
			u.drops = append(u.drops, u.base.id(uint32(ord)))
		}
		u.next++
		if err := u.read(); err != nil {
			return 0, record{}, false, err
		}
		if c == 0 {
			return ord, r, true, nil
		}
	}
	return 0, record{}, false, nil
}

// add writes doc d of an update: as the base has it (position, block, and not indexed again
// when its indexed fields are the same), or as a new doc placed between its neighbours.
func (u *updater) add(b *Builder, d Doc) error {
	if b.meta.Docs >= maxDocs {
		return errTooManyDocs
	}
	ord, base, ok, err := u.match(&d)
	if err != nil {
		return err
	}
	name := b.normalize(d.Manufacturer)
	nc := b.nameCount(name)
	var pos uint64
	var block int
	index := true
	if ok {
		pos = u.base.posAt(ord)
		baseName := ""
		if id := u.base.nameAt(ord); id != noName {
			baseName = u.baseNames[id]
		}
		if baseName == name {
			block = base.block
			index = base.trust != d.TrustLevel || base.passport != d.HasPassport || u.base.keyAt(ord) != timeKey(d.UpdatedAt) ||
				base.shadowed != strings.Join(d.ShadowedFor, reservedByte)
		} else {
			block = u.newBlock(b, nc)
		}
		if index {
			u.drops = append(u.drops, posID(pos))
		}
	} else {
		hi := uint64(math.MaxUint64)
		if u.next < u.base.positions() {
			hi = u.base.posAt(u.next)
		}
		step := uint64(1) << posShift
		if hi != math.MaxUint64 {
			step = min((hi-b.lastPos)/2, insertStep)
		}
		if step == 0 || b.lastPos > math.MaxUint64-step {
			u.giveUp("new products ran out of room between two of the base's")
		}
		pos = b.lastPos + step
		block = u.newBlock(b, nc)
	}
	u.checkBlock(b, nc, block)
	if u.rebuild {
		// The docs still go to the doc store, from which Close builds the index whole.
		return b.write(d, name, nc, block, b.lastPos+1, false)
	}
	if index && b.products == nil {
		if b.products, err = newBleveBuilder(b.dir, filepath.Base(u.nightDir), batchSize); err != nil {
			return err
		}
	}
	return b.write(d, name, nc, block, pos, index)
}

// checkBlock gives up keeping the base when a doc of name nc in block would break the order of
// the name's blocks or fill one past maxBlockFill blocks' worth.
func (u *updater) checkBlock(b *Builder, nc *nameCount, block int) {
	if nc != nil && (block < nc.last || block == nc.last && nc.inLast >= maxBlockFill*b.blockSize) {
		u.giveUp(fmt.Sprintf("a page of one manufacturer's products would hold more than %d", maxBlockFill*b.blockSize))
	}
}

// keep writes the base docs whose subject sorts before limit (every one left: all) to the new
// index as the base has them: the same record, position and block, not indexed again. It reads
// only their stored records, so a night pays for the docs it keeps a copy, not a comparison.
func (u *updater) keep(b *Builder, limit string, all bool) error {
	var last []byte
	for u.next < u.base.n {
		subject, block, err := rawSubjectBlock(u.nextRaw)
		if err != nil {
			return fmt.Errorf("index: update: base doc %d: %w", u.next, err)
		}
		if !all && string(subject) >= limit {
			break
		}
		if b.meta.Docs >= maxDocs {
			return errTooManyDocs
		}
		var nc *nameCount
		if id := u.base.nameAt(u.next); id != noName {
			if nc, err = u.nameOf(b, id); err != nil {
				return err
			}
		}
		u.checkBlock(b, nc, block)
		pos := u.base.posAt(u.next)
		if u.rebuild {
			pos = b.lastPos + 1
		}
		if err := b.writeStored(u.nextRaw, u.base.keyAt(u.next), nc, block, pos); err != nil {
			return err
		}
		last = append(last[:0], subject...)
		u.next++
		if err := u.read(); err != nil {
			return err
		}
	}
	if last != nil {
		b.lastSubj = string(last)
	}
	return nil
}

// dropThrough drops the base docs whose subject sorts before or at subject: those of a product
// the night computed that no doc added matched, and those of a product it deleted.
func (u *updater) dropThrough(subject string) error {
	for u.next < u.base.n {
		s, _, err := rawSubjectBlock(u.nextRaw)
		if err != nil {
			return fmt.Errorf("index: update: base doc %d: %w", u.next, err)
		}
		if string(s) > subject {
			return nil
		}
		u.drops = append(u.drops, u.base.id(uint32(u.next)))
		u.next++
		if err := u.read(); err != nil {
			return err
		}
	}
	return nil
}

// nameOf is the new index's count of the base's name id, added (as a doc's name is, on first
// appearance) when new.
func (u *updater) nameOf(b *Builder, id uint32) (*nameCount, error) {
	if int(id) >= len(u.baseNames) {
		return nil, fmt.Errorf("index: update: base doc %d names name %d of %d", u.next, id, len(u.baseNames))
	}
	if u.ncOf == nil {
		u.ncOf = make([]*nameCount, len(u.baseNames))
	}
	if u.ncOf[id] == nil {
		u.ncOf[id] = b.nameCount(u.baseNames[id])
	}
	return u.ncOf[id], nil
}

// rawSubjectBlock reads a stored record's subject and block without decoding the rest.
func rawSubjectBlock(rec []byte) (subject []byte, block int, err error) {
	b := rec
	for i := range 4 {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, 0, errCorrupt
		}
		if i == 0 {
			subject = b[k : k+int(n)]
		}
		b = b[k+int(n):]
	}
	if len(b) < 1 {
		return nil, 0, errCorrupt
	}
	v, k := binary.Uvarint(b[1:])
	if k <= 0 {
		return nil, 0, errCorrupt
	}
	return subject, int(v), nil
}

// newBlock is the block of a doc new to name nc: the block of the name's doc before it, or the
// next one when that is full and no base doc of the name comes after.
func (u *updater) newBlock(b *Builder, nc *nameCount) int {
	if nc == nil || nc.last < 0 {
		return 0
	}
	if last, ok := u.lastOf[nc.name]; (!ok || last < u.next) && nc.inLast >= b.blockSize {
		return nc.last + 1
	}
	return nc.last
}

// close finishes an update: the base docs not matched are dropped, the night's segment is
// written, and root.bolt lists the base's segments with their deletions and the night's.
func (u *updater) close(b *Builder) error {
	defer u.base.close()
	for ; u.next < u.base.n; u.next++ {
		u.drops = append(u.drops, u.base.id(uint32(u.next)))
	}
	var errs []error
	if b.products != nil {
		errs = append(errs, b.products.Close())
	}
	errs = append(errs, b.store.close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("index: close: %w", err)
	}
	if b.err != nil {
		return b.err
	}
	if u.rebuild {
		b.report = "built whole: " + u.why
		return u.buildWhole(b)
	}
	night := ""
	if b.products != nil {
		// Bleve's offline builder writes one segment, in a folder of the index's.
		found, err := filepath.Glob(filepath.Join(u.nightDir, "*", "*.zap"))
		if err != nil || len(found) != 1 {
			return fmt.Errorf("index: update: want one segment of the night's docs, found %d (%v)", len(found), err)
		}
		night = found[0]
	}
	segments, err := composeBleve(filepath.Join(u.baseDir, productsDir), filepath.Join(b.dir, productsDir), night, u.drops)
	if errors.Is(err, errRebuild) {
		b.report = "built whole: " + strings.TrimPrefix(err.Error(), errRebuild.Error()+": ")
		return u.buildWhole(b)
	}
	if err != nil {
		return fmt.Errorf("index: update: %w", err)
	}
	if err := os.RemoveAll(u.nightDir); err != nil {
		return fmt.Errorf("index: update: %w", err)
	}
	b.report = fmt.Sprintf("updated: the base's whole build kept, %d segments", segments)
	b.keptBase = true
	return b.finish()
}

// buildWhole builds the index whole from the doc store the update wrote, in its place.
func (u *updater) buildWhole(b *Builder) error {
	tmp := b.dir + ".whole"
	if err := wholeFrom(b, tmp); err != nil {
		return err
	}
	// wholeFrom closed the doc store it read: Windows cannot remove an open file.
	if err := os.RemoveAll(b.dir); err != nil {
		return fmt.Errorf("index: update: %w", err)
	}
	if err := os.Rename(tmp, b.dir); err != nil {
		return fmt.Errorf("index: update: %w", err)
	}
	return nil
}

// wholeFrom builds an index at tmp, whole, from the doc store at b.dir, and
// closes both.
func wholeFrom(b *Builder, tmp string) error {
	written, err := openStore(b.dir, b.meta.Docs, formatNumber)
	if err != nil {
		return fmt.Errorf("index: update: %w", err)
	}
	defer written.close()
	os.RemoveAll(tmp)
	whole, err := create(tmp, b.blockSize, batchSize)
	if err != nil {
		return err
	}
	for ord := range written.n {
		r, err := written.record(uint32(ord))
		if err == nil {
			var d Doc
			if d, err = r.doc(); err == nil {
				err = whole.Add(d)
			}
		}
		if err != nil {
			whole.Close()
			os.RemoveAll(tmp)
			return fmt.Errorf("index: update: rebuilding whole: %w", err)
		}
	}
	if err := whole.Close(); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	return nil
}

// doc is the Doc a format 2 record was written from.
func (r *record) doc() (Doc, error) {
	t, err := time.Parse(time.RFC3339Nano, r.updated)
	if err != nil {
		return Doc{}, fmt.Errorf("%s: stored updated_at: %w", r.subject, err)
	}
	d := Doc{Subject: r.subject, Manufacturer: r.manufacturer, Brand: r.brand, TrustLevel: r.trust,
		HasPassport: r.passport, UpdatedAt: t, Visibility: r.visibility}
	if r.shadowed != "" {
		d.ShadowedFor = strings.Split(r.shadowed, reservedByte)
	}
	return d, nil
}

// zapName is the file name of Bleve segment id (as scorch names them).
func zapName(id uint64) string { return fmt.Sprintf("%012x.zap", id) }

// boltSegment is one segment listed in root.bolt.
type boltSegment struct {
	id      uint64
	path    string // file name, in the index's store folder
	deleted *roaring.Bitmap
	seg     segment.Segment
	from    string // the file to copy (a base's) or move (a new one) into place
	move    bool
}

func (s *boltSegment) live() uint64 { return s.seg.Count() - s.deleted.GetCardinality() }

// composeBleve writes the Bleve index out: the segments of the index base, the base's docs named
// in drops marked deleted in them, and the segment file night (if not "") added; the newest
// segments are merged as the package comment says.
func composeBleve(base, out, night string, drops []string) (int, error) {
	found, err := filepath.Glob(filepath.Join(base, "*", "root.bolt"))
	if err != nil || len(found) != 1 {
		return 0, fmt.Errorf("%s: want one root.bolt in a folder of the index, found %d (%v)", base, len(found), err)
	}
	storeName := filepath.Base(filepath.Dir(found[0]))
	baseStore, outStore := filepath.Join(base, storeName), filepath.Join(out, storeName)
	segs, err := readRoot(found[0])
	if err != nil {
		return 0, err
	}
	var plugin orderedZap
	defer func() {
		for _, s := range segs {
			if s.seg != nil {
				s.seg.Close()
			}
		}
	}()
	nextID := uint64(3)
	for _, s := range segs {
		if s.seg, err = plugin.Open(filepath.Join(baseStore, s.path)); err != nil {
			return 0, err
		}
		gone, err := s.seg.DocNumbers(drops)
		if err != nil {
			return 0, err
		}
		// The bitmap DocNumbers makes may share memory with the segment's mapped file, which
		// is unmapped when the segment closes: keep a copy of its own.
		s.deleted.Or(gone)
		s.deleted = s.deleted.Clone()
		s.from = filepath.Join(baseStore, s.path)
		nextID = max(nextID, s.id+1)
	}
	if err := os.MkdirAll(outStore, 0o755); err != nil {
		return 0, err
	}
	if err := osfile.Copy(filepath.Join(base, "index_meta.json"), filepath.Join(out, "index_meta.json")); err != nil {
		return 0, err
	}
	if night != "" {
		s := &boltSegment{id: nextID, path: zapName(nextID), deleted: roaring.New(), from: night, move: true}
		nextID++
		if s.seg, err = plugin.Open(night); err != nil {
			return 0, err
		}
		segs = append(segs, s)
	}
	if first := segs[0]; first.live()*2 < first.seg.Count() {
		return 0, fmt.Errorf("%w: more than half of the products of its last whole build have changed since", errRebuild)
	}
	if nextID > 0xff00 {
		return 0, fmt.Errorf("%w: its segments are numbered to the end", errRebuild)
	}
	// Merge the newest segments (never the first, a whole build's) while the one before holds
	// no more live docs than the newest.
	for n := len(segs); n >= 3 && segs[n-2].live() <= segs[n-1].live(); n = len(segs) {
		a, c := segs[n-2], segs[n-1]
		m := &boltSegment{id: nextID, path: zapName(nextID), deleted: roaring.New()}
		nextID++
		path := filepath.Join(outStore, m.path)
		if _, _, err := plugin.Merge([]segment.Segment{a.seg, c.seg}, []*roaring.Bitmap{a.deleted, c.deleted}, path, nil, nil); err != nil {
			return 0, fmt.Errorf("merging segments: %w", err)
		}
		if m.seg, err = plugin.Open(path); err != nil {
			return 0, err
		}
		a.seg.Close()
		c.seg.Close()
		segs = append(segs[:n-2], m)
	}
	for _, s := range segs {
		s.seg.Close() // before its file is moved: Windows does not move open files
		s.seg = nil
	}
	for _, s := range segs {
		switch {
		case s.from == "":
		case s.move:
			err = os.Rename(s.from, filepath.Join(outStore, s.path))
		default:
			// Hard-linked, as the store's tables are: a segment is never
			// written once finished, and a server of the base reads it
			// from a private copy only, so it takes the link's move of
			// the file's change time for no write. Copied where it cannot
			// be linked (another file system).
			err = osfile.LinkOrCopy(s.from, filepath.Join(outStore, s.path))
		}
		if err != nil {
			return 0, err
		}
	}
	root := filepath.Join(outStore, "root.bolt")
	if err := osfile.Copy(found[0], root); err != nil {
		return 0, err
	}
	if err := writeRoot(root, segs); err != nil {
		return 0, err
	}
	return len(segs), fixRootBolt(out)
}

// readRoot lists the segments of the one snapshot in root.bolt at path.
func readRoot(path string) ([]*boltSegment, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer db.Close()
	var segs []*boltSegment
	err = db.View(func(tx *bolt.Tx) error {
		snap, err := onlySnapshot(tx)
		if err != nil {
			return err
		}
		return snap.ForEachBucket(func(k []byte) error {
			if isSegmentKey(k) {
				id, ok := decodeSegmentKey(k)
				sb := snap.Bucket(k)
				p := sb.Get(util.BoltPathKey)
				if !ok || p == nil {
					return fmt.Errorf("segment %x: malformed", k)
				}
				s := &boltSegment{id: id, path: string(p), deleted: roaring.New()}
				if del := sb.Get(util.BoltDeletedKey); del != nil {
					// bbolt's values are its mapped file, gone when the file closes: read a copy.
					if _, err := s.deleted.ReadFrom(bytes.NewReader(bytes.Clone(del))); err != nil {
						return fmt.Errorf("segment %d: deletions: %w", id, err)
					}
				}
				segs = append(segs, s)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return segs, nil
}

// writeRoot replaces the segments listed in root.bolt at path with segs.
func writeRoot(path string, segs []*boltSegment) error {
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		snap, err := onlySnapshot(tx)
		if err != nil {
			return err
		}
		var old [][]byte
		snap.ForEachBucket(func(k []byte) error {
			if isSegmentKey(k) {
				old = append(old, bytes.Clone(k))
			}
			return nil
		})
		for _, k := range old {
			if err := snap.DeleteBucket(k); err != nil {
				return err
			}
		}
		for _, s := range segs {
			sb, err := snap.CreateBucket(segmentKey(s.id))
			if err != nil {
				return err
			}
			if err := sb.Put(util.BoltPathKey, []byte(s.path)); err != nil {
				return err
			}
			if !s.deleted.IsEmpty() {
				var buf bytes.Buffer
				if _, err := s.deleted.WriteTo(&buf); err != nil {
					return err
				}
				if err := sb.Put(util.BoltDeletedKey, buf.Bytes()); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return errors.Join(err, db.Close())
}

// onlySnapshot is the bucket of the one index snapshot root.bolt holds.
func onlySnapshot(tx *bolt.Tx) (*bolt.Bucket, error) {
	snaps := tx.Bucket(util.BoltSnapshotsBucket)
	if snaps == nil {
		return nil, errNoSnapshotsBucket
	}
	var keys [][]byte
	snaps.ForEachBucket(func(k []byte) error {
		keys = append(keys, bytes.Clone(k))
		return nil
	})
	if len(keys) != 1 {
		return nil, fmt.Errorf("%d index snapshots, want 1", len(keys))
	}
	return snaps.Bucket(keys[0]), nil
}

// isSegmentKey reports whether k, a key of a snapshot bucket, names a segment (the others are
// scorch's meta-data and internal buckets).
func isSegmentKey(k []byte) bool {
	return len(k) > 0 && k[0] != util.BoltInternalKey[0] && k[0] != util.BoltMetaDataKey[0]
}

// Segment keys are scorch's order-preserving varints (index/scorch/int.go): one byte 136+v for
// v ≤ 109, else a byte 245+n followed by the n big-endian bytes of v. Only the forms for ids up
// to 2^16-1 are needed here; larger ids are refused.
func segmentKey(id uint64) []byte {
	switch {
	case id <= 109:
		return []byte{136 + byte(id)}
	case id <= 0xff:
		return []byte{246, byte(id)}
	default:
		return []byte{247, byte(id >> 8), byte(id)}
	}
}

func decodeSegmentKey(k []byte) (uint64, bool) {
	switch {
	case len(k) == 1 && k[0] >= 136 && k[0] <= 245:
		return uint64(k[0] - 136), true
	case len(k) == 2 && k[0] == 246:
		return uint64(k[1]), true
	case len(k) == 3 && k[0] == 247:
		return uint64(k[1])<<8 | uint64(k[2]), true
	}
	return 0, false
}
