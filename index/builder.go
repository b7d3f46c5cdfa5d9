package index

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// Doc is one searchable product view. A product has one public doc and, for each tenant that has
// private data about it, one doc for that tenant (Visibility = tenant name) which replaces the
// public doc for that tenant. A tenant-private product has only a doc with its tenant's Visibility.
type Doc struct {
	Subject      string    // "gtin:09520123456788"; unique per (Subject, Visibility)
	Manufacturer string    // as ingested
	Brand        string    //
	TrustLevel   int       // 0..5 (L0..L5)
	HasPassport  bool      //
	UpdatedAt    time.Time //
	Visibility   string    // "" = public, else the tenant name
	ShadowedFor  []string  // on a public doc: tenants that have their own doc for this subject (they must not see this one)
}

// defaultBlockSize is how many docs of one name share a block term. A page of a name's products
// is read from the blocks it needs instead of from all of the name's docs, so its cost does not
// grow with the number of products per manufacturer.
const defaultBlockSize = 256

// batchSize is how many docs the Bleve offline builder turns into one segment file before it
// moves on; memory is bounded by one batch plus the table of distinct names. The batch, analysed,
// is the largest live object of ingest's views stage, and the collector runs the more often the
// nearer the live heap is to ingest's soft heap limit: at 10,000 docs a 1,000,000-product build uses
// about 15% less CPU than at 20,000 (BENCHMARKS.md). The segments cost little
// more to merge, as they are merged in one pass (mergeMax).
const batchSize = 10000

// mergeMax is how many segments Bleve's offline builder merges at a time when it closes. Its
// default, 10, merges a million products' segments in two passes (merges of ten, then one of
// what they made), so every posting is read and written twice, on one core, after the views;
// merged in one pass, it is done once.
const mergeMax = 1 << 20

// meta is meta.json: what Search needs besides the Bleve index, the doc store and names.txt.
type meta struct {
	Format     int    `json:"format"`
	BlockSize  int    `json:"block_size"`
	Docs       int    `json:"docs"`
	Names      int    `json:"names"`
	MinUpdated uint64 `json:"min_updated_key"`
	MaxUpdated uint64 `json:"max_updated_key"`
}

// posShift spaces the positions a full build gives its docs: doc i is at (i+1) << posShift, so
// that an updated index finds room for new docs between any two (see update.go).
const posShift = 24

// Builder writes an index: Create starts a whole one, Update one that keeps a base index's docs.
// Docs must be added in subject order; Close finishes it.
type Builder struct {
	dir       string
	products  bleve.Builder // the docs Bleve indexes: all of them, or (update) the changed ones
	store     *storeWriter
	blockSize int
	names     map[string]*nameCount // normalised name → its id and docs so far
	nameList  []*nameCount          // by id (first appearance)
	normCache map[string]string     // manufacturer as ingested → normalised (bounded)
	lastSubj  string
	pending   []Doc     // the docs of subject lastSubj, not yet written
	lastPos   uint64    // position of the last doc written
	fields    docFields // the last doc's fields, reused
	meta      meta
	up        *updater // nil when building whole
	report    string   // what an update did, once closed (Report)
	keptBase  bool     // an update that kept its base's segments (KeptBase)
	closed    bool
	err       error
}

type nameCount struct {
	name   string
	id     uint32
	count  int
	blocks int // highest block so far + 1
	last   int // block of the last doc so far
	inLast int // docs so far in block last
}

// Create starts a new index in dir, which must not exist yet (its parent must).
func Create(dir string) (*Builder, error) {
	return create(dir, defaultBlockSize, batchSize)
}

// create is Create with the block size and the docs per Bleve segment as arguments.
func create(dir string, blockSize, segmentDocs int) (*Builder, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("index: create: %w", err)
	}
	products, err := newBleveBuilder(dir, productsDir, segmentDocs)
	if err != nil {
		return nil, err
	}
	return start(dir, products, blockSize)
}

// newBleveBuilder starts Bleve's offline builder for the folder name inside dir.
func newBleveBuilder(dir, name string, segmentDocs int) (bleve.Builder, error) {
	config := map[string]interface{}{
		"batchSize":       segmentDocs,
		"mergeMax":        mergeMax,
		"buildPathPrefix": dir, // same file system as the result: the final segment is renamed into place
	}
	maps.Copy(config, segmentOptions)
	products, err := bleve.NewBuilder(filepath.Join(dir, name), productsMapping(), config)
	if err != nil {
		return nil, fmt.Errorf("index: create products index: %w", err)
	}
	return products, nil
}

// start returns a Builder writing its doc store in dir, products (may be nil) its Bleve index.
func start(dir string, products bleve.Builder, blockSize int) (*Builder, error) {
	store, err := newStoreWriter(dir)
	if err != nil {
		if products != nil {
			products.Close()
		}
		return nil, fmt.Errorf("index: create doc store: %w", err)
	}
	return &Builder{
		dir:       dir,
		products:  products,
		store:     store,
		blockSize: blockSize,
		names:     map[string]*nameCount{},
		normCache: map[string]string{},
		meta:      meta{Format: formatNumber, BlockSize: blockSize},
	}, nil
}

func (b *Builder) normalize(manufacturer string) string {
	if n, ok := b.normCache[manufacturer]; ok {
		return n
	}
	if len(b.normCache) >= 1<<16 {
		clear(b.normCache)
	}
	n := Normalize(manufacturer)
	b.normCache[manufacturer] = n
	return n
}

// Add indexes one doc. Docs must arrive in subject order (the public doc and the tenant docs of
// one subject in any order); an out-of-order or repeated (Subject, Visibility) is an error.
func (b *Builder) Add(d Doc) error {
	if b.closed {
		return errAddAfterClose
	}
	if b.err != nil {
		return b.err
	}
	switch {
	case d.Subject == "" || strings.Contains(d.Subject, reservedByte):
		return fmt.Errorf("index: invalid subject %q", d.Subject)
	case strings.Contains(d.Visibility, reservedByte):
		return fmt.Errorf("index: invalid visibility %q", d.Visibility)
	case d.TrustLevel < 0 || d.TrustLevel > 5:
		return fmt.Errorf("index: %s: trust level %d out of range 0..5", d.Subject, d.TrustLevel)
	case d.Subject < b.lastSubj:
		return fmt.Errorf("index: %s added after %s: docs must arrive in subject order", d.Subject, b.lastSubj)
	}
	for _, t := range d.ShadowedFor {
		if t == "" || strings.Contains(t, reservedByte) {
			return fmt.Errorf("index: %s: invalid shadowing tenant %q", d.Subject, t)
		}
	}
	if d.Subject != b.lastSubj {
		if err := b.flush(); err != nil {
			return err
		}
		b.lastSubj = d.Subject
	}
	for _, p := range b.pending {
		if p.Visibility == d.Visibility {
			return fmt.Errorf("index: %s added twice for visibility %q", d.Subject, d.Visibility)
		}
	}
	d.ShadowedFor = slices.Clone(d.ShadowedFor)
	b.pending = append(b.pending, d)
	return nil
}

// KeepsBase reports whether b updates a base index (Update, with a base of this index format),
// and so takes KeepBaseBefore, DropBase and KeepBaseRest.
func (b *Builder) KeepsBase() bool { return b.up != nil }

// KeepBaseBefore keeps the base's docs of the subjects that sort before subject as the base has
// them (the same stored record, position and block; not indexed again), without their being
// added. An update told only what changed calls it before the docs of each subject it adds or
// drops, then DropBase, and KeepBaseRest at the end; its index is the one Add of every doc
// makes. Docs added afterwards must not sort before subject.
func (b *Builder) KeepBaseBefore(subject string) error {
	return b.onBase(func() error { return b.up.keep(b, subject, false) })
}

// KeepBaseRest keeps every base doc not yet kept or dropped (see KeepBaseBefore).
func (b *Builder) KeepBaseRest() error {
	return b.onBase(func() error { return b.up.keep(b, "", true) })
}

// DropBase drops the base's docs of subject (and of any subject before it not yet kept) that
// the docs added for it did not match: call it once the subject's docs, if any, are added.
func (b *Builder) DropBase(subject string) error {
	return b.onBase(func() error { return b.up.dropThrough(subject) })
}

// onBase runs fn, which keeps or drops base docs, once the docs added before are written; its
// error ends the build as Add's does.
func (b *Builder) onBase(fn func() error) error {
	switch {
	case b.closed:
		return errAddAfterClose
	case b.err != nil:
		return b.err
	case b.up == nil:
		return errors.New("index: no base to keep docs of: the index is built whole")
	}
	if err := b.flush(); err != nil {
		return err
	}
	if err := fn(); err != nil {
		b.err = err
		return err
	}
	return nil
}

// flush writes the pending docs of one subject in visibility order, the order of their IDs.
func (b *Builder) flush() error {
	slices.SortFunc(b.pending, func(x, y Doc) int { return strings.Compare(x.Visibility, y.Visibility) })
	for _, d := range b.pending {
		var err error
		if b.up != nil {
			err = b.up.add(b, d)
		} else {
			err = b.addWhole(d)
		}
		if err != nil {
			b.err = err
			return err
		}
	}
	b.pending = b.pending[:0]
	return nil
}

// addWhole writes a doc of a whole build: the next position, blocks filled in order.
func (b *Builder) addWhole(d Doc) error {
	if b.meta.Docs >= maxDocs {
		return errTooManyDocs
	}
	name := b.normalize(d.Manufacturer)
	nc := b.nameCount(name)
	block := 0
	if nc != nil {
		block = nc.count / b.blockSize
	}
	return b.write(d, name, nc, block, uint64(b.meta.Docs+1)<<posShift, true)
}

// nameCount returns the count of a normalised name, added if new; nil for "".
func (b *Builder) nameCount(name string) *nameCount {
	if name == "" {
		return nil
	}
	nc := b.names[name]
	if nc == nil {
		nc = &nameCount{name: name, id: uint32(len(b.nameList)), last: -1}
		b.names[name] = nc
		b.nameList = append(b.nameList, nc)
	}
	return nc
}

// write adds doc d at position pos and, when index is set, gives it to Bleve.
func (b *Builder) write(d Doc, name string, nc *nameCount, block int, pos uint64, index bool) error {
	key := timeKey(d.UpdatedAt)
	rec := record{subject: d.Subject, manufacturer: d.Manufacturer, brand: d.Brand,
		updated: d.UpdatedAt.Format(time.RFC3339Nano), trust: d.TrustLevel, passport: d.HasPassport,
		visibility: d.Visibility, shadowed: strings.Join(d.ShadowedFor, reservedByte)}
	nameID := noName
	if nc != nil {
		rec.block = block
		nameID = nc.count1(block)
	}
	if index {
		fields := append(b.fields[:0],
			docField{name: fTrust, value: trustTerms[d.TrustLevel]},
			docField{name: fPassport, value: boolTerm(d.HasPassport)},
			docField{name: fUpdated, value: exactTerm(key)},
			docField{name: fUpdatedLevels, list: true, values: levelTerms(key)})
		vis := visPublic
		if d.Visibility != "" {
			vis = visTenant + d.Visibility
		} else if len(d.ShadowedFor) > 0 {
			fields = append(fields, docField{name: fShadow, list: true, values: d.ShadowedFor})
		}
		fields = append(fields, docField{name: fVis, value: vis})
		if nc != nil {
			fields = append(fields, docField{name: fName, value: name}, docField{name: fNameBlock, value: blockTerm(name, block)})
		}
		b.fields = fields
		if err := b.products.Index(posID(pos), &b.fields); err != nil {
			return fmt.Errorf("index: %s: %w", d.Subject, err)
		}
	}
	if err := b.store.add(&rec, key, nameID, pos); err != nil {
		return fmt.Errorf("index: %s: %w", d.Subject, err)
	}
	b.written(key, pos)
	return nil
}

// count1 counts one more doc of the name, in block, and returns the name's id.
func (nc *nameCount) count1(block int) uint32 {
	nc.count++
	nc.blocks = max(nc.blocks, block+1)
	if block == nc.last {
		nc.inLast++
	} else {
		nc.last, nc.inLast = block, 1
	}
	return nc.id
}

// writeStored adds a base doc as its stored record rec has it (an update's kept doc) at
// position pos, of name nc (nil: none) in block, with updated-time key key.
func (b *Builder) writeStored(rec []byte, key uint64, nc *nameCount, block int, pos uint64) error {
	nameID := noName
	if nc != nil {
		nameID = nc.count1(block)
	}
	if err := b.store.addStored(rec, key, nameID, pos); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	b.written(key, pos)
	return nil
}

// written counts a doc written at position pos with updated-time key key.
func (b *Builder) written(key, pos uint64) {
	if b.meta.Docs == 0 || key < b.meta.MinUpdated {
		b.meta.MinUpdated = key
	}
	if b.meta.Docs == 0 || key > b.meta.MaxUpdated {
		b.meta.MaxUpdated = key
	}
	b.meta.Docs++
	b.lastPos = pos
}

// trustTerms are the terms of trust levels 0..5.
var trustTerms = [...]string{"0", "1", "2", "3", "4", "5"}

func boolTerm(v bool) string {
	if v {
		return "1"
	}
	return "0"
}

// blockTerm names block n of a normalised name. Block numbers are fixed-width hex so that a term
// range over blocks a..b of one name holds exactly those blocks.
func blockTerm(name string, n int) string {
	return fmt.Sprintf("%s\x1f%06x", name, n)
}

// Report says what an update (Update) did, once it is closed: whether it
// kept the base's index, with how many segments, or built it whole and why.
// It is empty for an index built whole by Create.
func (b *Builder) Report() string { return b.report }

// KeptBase reports, once the index is closed, whether it is an update that
// kept its base's segments (linked into it) rather than an index built
// whole.
func (b *Builder) KeptBase() bool { return b.keptBase }

// Close finishes the Bleve index and the doc store, writes names.txt and meta.json, and closes
// everything. After Close the directory holds the whole index and is never written again.
func (b *Builder) Close() error {
	if b.closed {
		return nil
	}
	if b.err == nil {
		b.err = b.flush()
	}
	b.closed = true
	if b.up != nil {
		return b.up.close(b)
	}
	if b.meta.Docs == 0 {
		// Bleve's offline builder needs at least one document: add one that no query matches.
		if err := b.products.Index("empty", map[string]interface{}{}); err != nil {
			return fmt.Errorf("index: %w", err)
		}
	}
	err := errors.Join(b.products.Close(), b.store.close())
	if err == nil {
		err = fixRootBolt(filepath.Join(b.dir, productsDir))
	}
	if err != nil {
		return fmt.Errorf("index: close: %w", err)
	}
	if b.err != nil {
		return b.err
	}
	return b.finish()
}

// finish writes names.txt and meta.json.
func (b *Builder) finish() error {
	b.meta.Names = len(b.nameList)
	if err := b.writeNames(); err != nil {
		return err
	}
	js, err := json.MarshalIndent(b.meta, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(b.dir, metaFile), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}

// writeNames writes names.txt: one line per distinct normalised name, in id order (first
// appearance), with the number of docs that carry it and the blocks they are in:
// "<count>\t<blocks>\t<name>".
func (b *Builder) writeNames() error {
	f, err := os.Create(filepath.Join(b.dir, namesFile))
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	w := bufio.NewWriter(f)
	for _, n := range b.nameList {
		fmt.Fprintf(w, "%d\t%d\t%s\n", n.count, n.blocks, n.name)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("index: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	return nil
}
