package kv

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/s2"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/internal/osfile"
)

// A point index is a side file, written by a Builder beside the store, that
// answers the point reads of one table (PointsTag) with one hash probe
// instead of a Pebble seek. In a store of layout 3 it is the only home of
// that table's entries; in the earlier layout (snapshot format 2, version 1
// of this file) it holds a copy of them, and Pebble answers the same.
//
// Layout of version 2, the one written (integers little-endian):
//
//	header   64 bytes: pointsMagic, count u64, radix bits u64, data length
//	         u64 (a multiple of 8), file size u64, dictionary length u64,
//	         the longest value decoded u64, the longest record u64
//	dict     the values' s2 dictionary (s2.Dict.Bytes; none when its length
//	         is 0), zero-padded to a multiple of 8
//	data     the entries in key order, each uvarint(len(key)),
//	         uvarint(len(value)), key, value: an s2 block of the encoded view
//	         (AppendView) made with the dictionary; zero-padded to a multiple
//	         of 8
//	entries  count × (xxhash64 of the key u64, the record's offset in data
//	         u64), sorted by hash and then offset
//	radix    2^bits + 1 × u32: radix[b] is the first entry whose hash's top
//	         bits are b or more, so bucket b's entries are radix[b] to
//	         radix[b+1]
//
// Version 1 (pointsMagicV1) has the first five header fields, no dictionary,
// and values stored as they are. With about one bucket per entry, a read
// looks at one radix slot, one or two entries and one record: three cache
// lines of a mapped file, and an s2 decode of a few hundred bytes.
const (
	pointsMagic      = "pdspts2\n"
	pointsMagicV1    = "pdspts1\n"
	pointsHeaderSize = 64
	pointEntrySize   = 16
	maxPointsBits    = 24 // 16M buckets, 64 MiB of radix: past that, buckets hold more
)

// PointsTag is the table a point index covers: identity views, which every
// resolve item and identity GET reads.
const PointsTag = TagIdentity

var errPointsCorrupt = errors.New("kv: point index: corrupt")

// pointsBits is the number of radix bits for n entries: the smallest b with
// 2^b >= n, at most maxPointsBits.
func pointsBits(n int) uint64 {
	b := uint64(0)
	for b < maxPointsBits && 1<<b < n {
		b++
	}
	return b
}

// bucket is the radix bucket of hash h for bits radix bits.
func bucket(h, bits uint64) uint64 { return h >> (64 - bits) } // a shift of 64 is 0

// pad8 rounds n up to a multiple of 8.
func pad8(n uint64) uint64 { return (n + 7) &^ 7 }

type pointEntry struct{ hash, off uint64 }

// pointsWriter writes a point index of version 2; keys come in increasing
// order (the Builder checks), so each is added once.
type pointsWriter struct {
	path      string
	f         *os.File
	w         *bufio.Writer
	dictLen   uint64 // bytes of dictionary written after the header
	off       uint64 // data bytes written
	maxValue  uint64 // the longest value, decoded
	maxRecord uint64 // the longest record
	entries   []pointEntry
	head      [2 * binary.MaxVarintLen64]byte
}

func createPoints(path string) (*pointsWriter, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("kv: point index: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("kv: point index: %w", err)
	}
	p := &pointsWriter{path: path, f: f, w: bufio.NewWriterSize(f, 1<<20)}
	if _, err := p.w.Write(make([]byte, pointsHeaderSize)); err != nil { // the header is written last
		p.abort()
		return nil, fmt.Errorf("kv: point index: %w", err)
	}
	return p, nil
}

// setDict writes the values' dictionary; it comes before the first record.
func (p *pointsWriter) setDict(dict []byte) error {
	if p.off > 0 || p.dictLen > 0 {
		return errors.New("kv: point index: the dictionary comes first, once")
	}
	p.w.Write(dict)
	if _, err := p.w.Write(make([]byte, pad8(uint64(len(dict)))-uint64(len(dict)))); err != nil {
		return fmt.Errorf("kv: point index: %w", err)
	}
	p.dictLen = uint64(len(dict))
	return nil
}

// add writes one record: value is stored as given, and is decoded bytes long.
func (p *pointsWriter) add(key, value []byte, decoded int) error {
	p.entries = append(p.entries, pointEntry{xxhash.Sum64(key), p.off})
	n := binary.PutUvarint(p.head[:], uint64(len(key)))
	n += binary.PutUvarint(p.head[n:], uint64(len(value)))
	p.w.Write(p.head[:n])
	p.w.Write(key)
	if _, err := p.w.Write(value); err != nil { // a bufio.Writer keeps its first error
		return fmt.Errorf("kv: point index: %w", err)
	}
	rec := uint64(n + len(key) + len(value))
	p.off += rec
	p.maxRecord = max(p.maxRecord, rec)
	p.maxValue = max(p.maxValue, uint64(decoded))
	return nil
}

// finish writes the entries, the radix and the header, and closes the file.
func (p *pointsWriter) finish() error {
	if err := p.writeTail(); err != nil {
		p.abort()
		return fmt.Errorf("kv: point index: %w", err)
	}
	return nil
}

func (p *pointsWriter) writeTail() error {
	w := p.w
	if pad := pad8(p.off) - p.off; pad > 0 {
		w.Write(make([]byte, pad))
		p.off += pad
	}
	if len(p.entries) > 1<<32-1 {
		return fmt.Errorf("%d entries: at most 2^32-1 fit", len(p.entries))
	}
	slices.SortFunc(p.entries, func(a, b pointEntry) int {
		return cmp.Or(cmp.Compare(a.hash, b.hash), cmp.Compare(a.off, b.off))
	})
	var b [pointEntrySize]byte
	for _, e := range p.entries {
		binary.LittleEndian.PutUint64(b[:8], e.hash)
		binary.LittleEndian.PutUint64(b[8:], e.off)
		w.Write(b[:])
	}
	bits := pointsBits(len(p.entries))
	i := 0
	for bk := uint64(0); bk <= 1<<bits; bk++ {
		for i < len(p.entries) && bucket(p.entries[i].hash, bits) < bk {
			i++
		}
		binary.LittleEndian.PutUint32(b[:4], uint32(i))
		w.Write(b[:4])
	}
	if err := w.Flush(); err != nil {
		return err
	}
	size := pointsHeaderSize + pad8(p.dictLen) + p.off + uint64(len(p.entries))*pointEntrySize + (1<<bits+1)*4
	var h [pointsHeaderSize]byte
	copy(h[:], pointsMagic)
	le := binary.LittleEndian
	le.PutUint64(h[8:], uint64(len(p.entries)))
	le.PutUint64(h[16:], bits)
	le.PutUint64(h[24:], p.off)
	le.PutUint64(h[32:], size)
	le.PutUint64(h[40:], p.dictLen)
	le.PutUint64(h[48:], p.maxValue)
	le.PutUint64(h[56:], p.maxRecord)
	if _, err := p.f.WriteAt(h[:], 0); err != nil {
		return err
	}
	p.entries = nil
	return p.f.Close()
}

// abort closes and removes a point index that will not be finished.
func (p *pointsWriter) abort() {
	p.f.Close()
	os.Remove(p.path)
}

// PointsGuard vouches for what a point index reads from its file (as a
// Guard does for the store's files).
type PointsGuard interface {
	// Check refuses, with an error that wraps domain.ErrDamaged, the bytes
	// [off, off+n) of the mapped file m unless they are the snapshot's.
	Check(m []byte, off, n int64) error
	// ReadAt reads len(p) bytes at off from r, the file, refusing bytes
	// that are not the snapshot's the same way: the reads of an index
	// opened without a mapping.
	ReadAt(r io.ReaderAt, p []byte, off int64) (int, error)
	// Unchanged refuses a file whose stat st is not the one it had when
	// the index was opened.
	Unchanged(st os.FileInfo, err error) error
}

// points is an opened point index: its file mapped read-only, or (mapped
// nil) read with pread, its radix in memory.
type points struct {
	version   int
	file      *os.File    // kept open: read in pread mode, looked at after reads
	guard     PointsGuard // nil: reads are not checked
	mapped    []byte      // the whole file; nil when read with pread
	bufs      sync.Pool
	radix     []byte // in the mapping, or read into memory
	dataAt    uint64 // where data starts in the file
	dataLen   uint64
	entriesAt uint64
	count     uint64
	bits      uint64
	dictLen   uint64   // version 2
	dict      *s2.Dict // version 2: nil when it has none
	maxValue  uint64   // version 2: the longest value decoded
	maxRecord uint64   // the longest record (version 1: the data's length)
}

// corrupt is the error of a read that found the index's bytes not as its
// header says: the file is damaged.
func corrupt() error {
	return domain.Internal(fmt.Errorf("%w: %w", domain.ErrDamaged, errPointsCorrupt))
}

// openPoints maps the point index at path and checks (through guard, when
// it is not nil) that its header and radix agree with its size; a read
// never goes outside the file whatever it holds.
func openPoints(path string, guard PointsGuard) (p *points, err error) {
	f, size, err := openPointsFile(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	m, err := osfile.Map(f, int(size))
	if err != nil {
		return nil, fmt.Errorf("kv: point index: map %s: %w", path, err)
	}
	p, err = readPoints(m, guard)
	if err != nil {
		osfile.Unmap(m)
		if errors.Is(err, domain.ErrDamaged) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s: %v", errPointsCorrupt, path, err)
	}
	p.file = f
	return p, nil
}

// readPointsFile opens the point index at path to be read with pread: no
// mapping, its radix read into memory (4 bytes a bucket), the same checks.
func readPointsFile(path string, guard PointsGuard) (p *points, err error) {
	f, size, err := openPointsFile(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	p = &points{file: f, guard: guard}
	h, err := p.read(0, pointsHeaderSize, new([]byte))
	if err != nil {
		return nil, err
	}
	q, err := parsePointsHeader(h, uint64(size))
	if err == nil && q.version == 1 {
		err = errors.New("a version 1 index is only read mapped")
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errPointsCorrupt, path, err)
	}
	q.file, q.guard = f, guard
	p = q
	if p.radix, err = p.read(p.radixAt(), uint64(size)-p.radixAt(), new([]byte)); err != nil {
		return nil, err
	}
	err = p.checkRadix()
	if err == nil && p.version == 2 {
		var dict []byte
		if dict, err = p.read(pointsHeaderSize, p.dataAt-pointsHeaderSize, new([]byte)); err != nil {
			return nil, err
		}
		err = p.setDict(dict)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errPointsCorrupt, path, err)
	}
	return p, nil
}

func openPointsFile(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("kv: point index: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("kv: point index: %w", err)
	}
	size := st.Size()
	if size < pointsHeaderSize || uint64(size) > uint64(^uint(0)>>1) {
		f.Close()
		return nil, 0, fmt.Errorf("%w: %s: size %d", errPointsCorrupt, path, size)
	}
	return f, size, nil
}

// readPoints checks a mapped point index's header, dictionary and radix
// (through guard, when it is not nil) and slices its parts.
func readPoints(m []byte, guard PointsGuard) (*points, error) {
	if guard != nil {
		if err := guard.Check(m, 0, min(pointsHeaderSize, int64(len(m)))); err != nil {
			return nil, err
		}
	}
	p, err := parsePointsHeader(m, uint64(len(m)))
	if err != nil {
		return nil, err
	}
	p.mapped, p.guard = m, guard
	p.radix = m[p.radixAt():]
	if guard != nil {
		if err := guard.Check(m, int64(p.radixAt()), int64(len(p.radix))); err != nil {
			return nil, err
		}
		if err := guard.Check(m, pointsHeaderSize, int64(p.dataAt-pointsHeaderSize)); err != nil {
			return nil, err
		}
	}
	if err := p.checkRadix(); err != nil {
		return nil, err
	}
	if p.version == 2 {
		if err := p.setDict(m[pointsHeaderSize:p.dataAt]); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// parsePointsHeader checks the header h of a file of size bytes: its magic,
// and that the sizes it gives add up to the file's.
func parsePointsHeader(h []byte, size uint64) (*points, error) {
	if len(h) < pointsHeaderSize {
		return nil, errors.New("not a point index")
	}
	p := &points{}
	switch string(h[:8]) {
	case pointsMagic:
		p.version = 2
	case pointsMagicV1:
		p.version = 1
	default:
		return nil, errors.New("not a point index")
	}
	le := binary.LittleEndian
	count, bits, dataLen, fileSize := le.Uint64(h[8:]), le.Uint64(h[16:]), le.Uint64(h[24:]), le.Uint64(h[32:])
	if bits > maxPointsBits || count > 1<<32-1 || fileSize != size || dataLen%8 != 0 {
		return nil, errors.New("header does not match the file")
	}
	avail := size - pointsHeaderSize
	var dictLen uint64
	if p.version == 2 {
		dictLen, p.maxValue, p.maxRecord = le.Uint64(h[40:]), le.Uint64(h[48:]), le.Uint64(h[56:])
		if dictLen > avail || pad8(dictLen) > avail {
			return nil, errors.New("sizes do not add up")
		}
		avail -= pad8(dictLen)
	}
	radixLen := (uint64(1)<<bits + 1) * 4
	if dataLen > avail || count > (avail-dataLen)/pointEntrySize || avail-dataLen-count*pointEntrySize != radixLen {
		return nil, errors.New("sizes do not add up")
	}
	p.count, p.bits, p.dataLen, p.dictLen = count, bits, dataLen, dictLen
	p.dataAt = pointsHeaderSize + pad8(dictLen)
	p.entriesAt = p.dataAt + dataLen
	if p.version == 1 {
		p.maxRecord = dataLen
	}
	return p, nil
}

func (p *points) radixAt() uint64 { return p.entriesAt + p.count*pointEntrySize }

// checkRadix checks that the radix never goes down and ends at the count.
func (p *points) checkRadix() error {
	le := binary.LittleEndian
	prev := uint32(0)
	for i := 0; i+4 <= len(p.radix); i += 4 {
		v := le.Uint32(p.radix[i:])
		if v < prev || uint64(v) > p.count {
			return errors.New("radix out of order")
		}
		prev = v
	}
	if uint64(prev) != p.count {
		return errors.New("radix does not end at the entry count")
	}
	return nil
}

// setDict reads the dictionary section of a version 2 file (the
// dictionary, then its padding).
func (p *points) setDict(section []byte) error {
	if p.dictLen == 0 {
		return nil
	}
	if p.dict = s2.NewDict(section[:p.dictLen]); p.dict == nil {
		return errors.New("the dictionary is not one")
	}
	return nil
}

// read returns n bytes of the file at off, checked by the guard: a slice
// of the mapping, or read into *buf. The caller has checked that they lie
// inside the file.
func (p *points) read(off, n uint64, buf *[]byte) ([]byte, error) {
	if p.mapped != nil {
		if p.guard != nil && n > 0 {
			if err := p.guard.Check(p.mapped, int64(off), int64(n)); err != nil {
				return nil, err
			}
		}
		return p.mapped[off : off+n], nil
	}
	*buf = slices.Grow((*buf)[:0], int(n))[:n]
	var err error
	if p.guard != nil {
		_, err = p.guard.ReadAt(p.file, *buf, int64(off))
	} else {
		_, err = p.file.ReadAt(*buf, int64(off))
	}
	if err != nil {
		if errors.Is(err, domain.ErrDamaged) {
			return nil, err
		}
		return nil, domain.Internal(fmt.Errorf("kv: point index: %w", err))
	}
	return *buf, nil
}

// faulted turns a fault on the mapping (the file cut short under it),
// recovered, into an error; it is deferred by every read of a mapping.
func faulted(err *error) {
	if r := recover(); r != nil {
		*err = domain.Internal(fmt.Errorf("%w: point index: %v", domain.ErrDamaged, r))
	}
}

// get appends the value of key to dst; ok is false when the table holds no
// such key. The file's bytes are copied (or decoded): nothing returned
// aliases them. Every range read is checked by the guard first; a fault on
// the mapping is an error, not a crash. The caller looks at the file after
// its reads (unchanged).
func (p *points) get(key, dst []byte) (out []byte, ok bool, err error) {
	var buf *[]byte
	if p.mapped == nil {
		buf = p.buffer()
		defer p.bufs.Put(buf)
	} else {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer faulted(&err)
		out = dst
	}
	le := binary.LittleEndian
	h := xxhash.Sum64(key)
	bk := bucket(h, p.bits)
	lo, hi := uint64(le.Uint32(p.radix[bk*4:])), uint64(le.Uint32(p.radix[bk*4+4:]))
	if lo > hi || hi > p.count { // checked at opening; a file changed under the mapping since is not trusted
		return dst, false, corrupt()
	}
	if hi == lo {
		return dst, false, nil
	}
	entries, err := p.read(p.entriesAt+lo*pointEntrySize, (hi-lo)*pointEntrySize, buf)
	if err != nil {
		return dst, false, err
	}
	var copied [pointEntrySize]byte
	for i := range hi - lo {
		e := entries[i*pointEntrySize : i*pointEntrySize+pointEntrySize]
		if eh := le.Uint64(e); eh != h {
			if eh > h {
				break
			}
			continue
		}
		if p.mapped == nil {
			copy(copied[:], e) // *buf is read into again below
			e = copied[:]
		}
		k, v, ok, err := p.record(le.Uint64(e[8:]), buf)
		if err != nil {
			return dst, false, err
		}
		if !ok || len(k) == 0 {
			return dst, false, corrupt()
		}
		if string(k) == string(key) {
			return p.value(dst, v)
		}
	}
	return dst, false, nil
}

func (p *points) buffer() *[]byte {
	if b, ok := p.bufs.Get().(*[]byte); ok {
		return b
	}
	return new([]byte)
}

// value appends a record's value to dst, decoded.
func (p *points) value(dst, v []byte) ([]byte, bool, error) {
	if p.version == 1 {
		return append(dst, v...), true, nil
	}
	out, err := decodeIdentity(p.dict, dst, v, p.maxValue)
	if err != nil {
		return dst, false, domain.Internal(fmt.Errorf("%w: %w", domain.ErrDamaged, err))
	}
	return out, true, nil
}

// record returns the key and value stored at off in data; ok is false when
// the bytes there are no record. An empty key is the padding after the last
// record. A mapped index checks the record's lengths and then the record
// alone; read with pread, the longest record is read at once.
func (p *points) record(off uint64, buf *[]byte) (key, value []byte, ok bool, err error) {
	if off >= p.dataLen {
		return nil, nil, false, nil
	}
	left := p.dataLen - off
	first := min(p.maxRecord, left)
	if p.mapped != nil {
		first = min(2*binary.MaxVarintLen64, left)
	}
	b, err := p.read(p.dataAt+off, first, buf)
	if err != nil {
		return nil, nil, false, err
	}
	kl, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, nil, false, nil
	}
	if kl == 0 { // no key is empty: the padding after the last record
		return nil, nil, true, nil
	}
	vl, m := binary.Uvarint(b[n:])
	if m <= 0 {
		return nil, nil, false, nil
	}
	head := uint64(n + m)
	if kl > left-head || vl > left-head-kl {
		return nil, nil, false, nil
	}
	total := head + kl + vl
	if total > p.maxRecord {
		return nil, nil, false, nil
	}
	if p.mapped != nil {
		if b, err = p.read(p.dataAt+off, total, buf); err != nil {
			return nil, nil, false, err
		}
	}
	if total > uint64(len(b)) {
		return nil, nil, false, nil
	}
	return b[head : head+kl], b[head+kl : total], true, nil
}

// scan calls fn for every record in key order, with its value decoded; the
// padding after the last record (zero bytes, an empty key) ends it.
func (p *points) scan(fn func(key, value []byte) error) error {
	var val []byte
	return p.scanRaw(func(k, v []byte) error {
		var err error
		if val, _, err = p.value(val[:0], v); err != nil {
			return err
		}
		return fn(k, val)
	})
}

// scanRaw is scan with each value as stored (s2, with the dictionary).
func (p *points) scanRaw(fn func(key, value []byte) error) (err error) {
	if p.mapped != nil {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer faulted(&err)
	}
	var buf []byte
	for off := uint64(0); off < p.dataLen; {
		k, v, ok, err := p.record(off, &buf)
		if err != nil {
			return err
		}
		if !ok {
			return corrupt()
		}
		if len(k) == 0 {
			return nil
		}
		off += uint64(len(v)+len(k)) + uint64(uvarintLen(uint64(len(k)))+uvarintLen(uint64(len(v))))
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// unchanged looks at the file after reads: a file written or replaced
// since it was opened may have given bytes that are not the snapshot's.
func (p *points) unchanged() error {
	if p.guard == nil {
		return nil
	}
	if err := p.guard.Unchanged(p.file.Stat()); err != nil {
		return domain.Internal(err)
	}
	return nil
}

func uvarintLen(v uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], v)
}

func (p *points) close() error {
	var err error
	if p.mapped != nil {
		err = osfile.Unmap(p.mapped)
	}
	if p.file != nil {
		if cerr := p.file.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// prefetchWindow is how many keys a Reader's Prefetch overlaps: enough to
// keep a core's outstanding cache misses busy, few enough that what they
// bring in is still cached (and its pages still in the TLB) when the Gets
// come.
const prefetchWindow = 16

// touch loads, for each key, the memory a get of it reads first: its radix
// slot, its bucket's first entry, and the first two cache lines of that
// entry's record, one stage for all keys before the next, so that the
// loads of different keys overlap instead of each waiting on the one
// before; get then finds them cached. In a batch of random keys the three
// loads of a probe are cache (and TLB) misses in a file much larger than
// the caches, and they are most of its time. Nothing read here is trusted
// or returned; get checks what it uses. The sum only keeps the loads from
// being optimised away. Mapped indexes only; a fault is left for get to
// report.
func (p *points) touch(keys [][]byte) (sum uint64) {
	if p.mapped == nil {
		return 0
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r) // a bug here, not a file cut short
			}
		}
	}()
	var at [prefetchWindow]uint64
	keys = keys[:min(len(keys), len(at))]
	le := binary.LittleEndian
	const skip = ^uint64(0) // a key of another table
	for i, k := range keys {
		at[i] = skip
		if len(k) > 0 && k[0] == PointsTag {
			at[i] = bucket(xxhash.Sum64(k), p.bits)
		}
	}
	for i := range keys {
		if at[i] != skip {
			at[i] = uint64(le.Uint32(p.radix[at[i]*4:])) // the bucket's first entry
		}
	}
	for i := range keys {
		if at[i] >= p.count {
			at[i] = p.dataLen // nothing to touch
			continue
		}
		at[i] = le.Uint64(p.mapped[p.entriesAt+at[i]*pointEntrySize+8:])
	}
	for i := range keys {
		if at[i] < p.dataLen {
			at := p.dataAt + at[i]
			sum += uint64(p.mapped[at])
			if at+64 < p.dataAt+p.dataLen {
				sum += uint64(p.mapped[at+64])
			}
		}
	}
	return sum
}
