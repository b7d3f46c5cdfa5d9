package kv

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"

	"github.com/cespare/xxhash/v2"
	"github.com/productdata/pds/domain"
)

// A point index is a side file, written by a Builder beside the store, that
// answers the point reads of one table (PointsTag) with one hash probe
// instead of a Pebble seek. It holds a copy of every entry of that table;
// Pebble stays the store of record, and a store opened without its point
// index answers the same.
//
// Layout (integers little-endian):
//
//	header   64 bytes: pointsMagic, count u64, radix bits u64, data length
//	         u64 (a multiple of 8), file size u64, then zeros
//	data     the entries in key order, each uvarint(len(key)),
//	         uvarint(len(value)), key, value; zero-padded to a multiple of 8
//	entries  count × (xxhash64 of the key u64, the record's offset in data
//	         u64), sorted by hash and then offset
//	radix    2^bits + 1 × u32: radix[b] is the first entry whose hash's top
//	         bits are b or more, so bucket b's entries are radix[b] to
//	         radix[b+1]
//
// With about one bucket per entry, a read looks at one radix slot, one or two
// entries and one record: three cache lines of a mapped file.
const (
	pointsMagic      = "pdspts1\n"
	pointsHeaderSize = 64
	pointEntrySize   = 16
	maxPointsBits    = 24 // 16M buckets, 64 MiB of radix: past that, buckets hold more
)

// PointsTag is the table a point index covers: identity views, which every
// resolve item and identity GET reads. Passport and evidence views are too
// large to copy.
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

type pointEntry struct{ hash, off uint64 }

// pointsWriter writes a point index; keys come in increasing order (the
// Builder checks), so each is added once.
type pointsWriter struct {
	path    string
	f       *os.File
	w       *bufio.Writer
	off     uint64 // data bytes written
	entries []pointEntry
	head    [2 * binary.MaxVarintLen64]byte
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

func (p *pointsWriter) add(key, value []byte) error {
	p.entries = append(p.entries, pointEntry{xxhash.Sum64(key), p.off})
	n := binary.PutUvarint(p.head[:], uint64(len(key)))
	n += binary.PutUvarint(p.head[n:], uint64(len(value)))
	p.w.Write(p.head[:n])
	p.w.Write(key)
	if _, err := p.w.Write(value); err != nil { // a bufio.Writer keeps its first error
		return fmt.Errorf("kv: point index: %w", err)
	}
	p.off += uint64(n + len(key) + len(value))
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
	if pad := (8 - p.off%8) % 8; pad > 0 {
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
	size := pointsHeaderSize + p.off + uint64(len(p.entries))*pointEntrySize + (1<<bits+1)*4
	var h [pointsHeaderSize]byte
	copy(h[:], pointsMagic)
	binary.LittleEndian.PutUint64(h[8:], uint64(len(p.entries)))
	binary.LittleEndian.PutUint64(h[16:], bits)
	binary.LittleEndian.PutUint64(h[24:], p.off)
	binary.LittleEndian.PutUint64(h[32:], size)
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

// PointsGuard vouches for what a point index reads from its mapped file
// (as a Guard does for the store's files).
type PointsGuard interface {
	// Check refuses, with an error that wraps domain.ErrDamaged, the bytes
	// [off, off+n) of the mapped file m unless they are the snapshot's.
	Check(m []byte, off, n int64) error
	// Unchanged refuses a file whose stat st is not the one it had when
	// the index was opened.
	Unchanged(st os.FileInfo, err error) error
}

// points is an opened point index: its file mapped read-only.
type points struct {
	file    *os.File    // kept open to look at it after reads
	guard   PointsGuard // nil: reads are not checked
	mapped  []byte
	data    []byte
	entries []byte
	radix   []byte
	count   uint64
	bits    uint64
}

// openPoints maps the point index at path and checks that its header and
// radix agree with its size; the file's bytes are the manifest's to vouch
// for, and a read never goes outside them whatever they hold.
func openPoints(path string, guard PointsGuard) (p *points, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("kv: point index: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("kv: point index: %w", err)
	}
	size := st.Size()
	if size < pointsHeaderSize || uint64(size) > uint64(^uint(0)>>1) {
		return nil, fmt.Errorf("%w: %s: size %d", errPointsCorrupt, path, size)
	}
	m, err := mapFile(f, int(size))
	if err != nil {
		return nil, fmt.Errorf("kv: point index: map %s: %w", path, err)
	}
	p, err = readPoints(m, guard)
	if err != nil {
		unmapFile(m)
		return nil, fmt.Errorf("%w: %s: %v", errPointsCorrupt, path, err)
	}
	p.file, p.guard = f, guard
	return p, nil
}

// readPoints checks a point index's header and radix (through guard, when
// it is not nil) and slices its parts.
func readPoints(m []byte, guard PointsGuard) (*points, error) {
	if guard != nil {
		if err := guard.Check(m, 0, min(pointsHeaderSize, int64(len(m)))); err != nil {
			return nil, err
		}
	}
	if len(m) < pointsHeaderSize || string(m[:8]) != pointsMagic {
		return nil, errors.New("not a point index")
	}
	le := binary.LittleEndian
	count, bits, dataLen, size := le.Uint64(m[8:]), le.Uint64(m[16:]), le.Uint64(m[24:]), le.Uint64(m[32:])
	if bits > maxPointsBits || count > 1<<32-1 || size != uint64(len(m)) || dataLen%8 != 0 {
		return nil, errors.New("header does not match the file")
	}
	avail := size - pointsHeaderSize
	radixLen := (uint64(1)<<bits + 1) * 4
	if dataLen > avail || count > (avail-dataLen)/pointEntrySize || avail-dataLen-count*pointEntrySize != radixLen {
		return nil, errors.New("sizes do not add up")
	}
	p := &points{mapped: m, count: count, bits: bits}
	p.data = m[pointsHeaderSize : pointsHeaderSize+dataLen]
	p.entries = m[pointsHeaderSize+dataLen : pointsHeaderSize+dataLen+count*pointEntrySize]
	p.radix = m[pointsHeaderSize+dataLen+count*pointEntrySize:]
	if guard != nil {
		if err := guard.Check(m, int64(len(m)-len(p.radix)), int64(len(p.radix))); err != nil {
			return nil, err
		}
	}
	prev := uint32(0)
	for i := 0; i < len(p.radix); i += 4 {
		v := le.Uint32(p.radix[i:])
		if v < prev || uint64(v) > count {
			return nil, errors.New("radix out of order")
		}
		prev = v
	}
	if uint64(prev) != count {
		return nil, errors.New("radix does not end at the entry count")
	}
	return p, nil
}

// get appends the value of key to dst; ok is false when the table holds no
// such key. The mapped bytes are copied: nothing returned aliases the file.
// With a guard, every range read is checked first; a fault on the mapping
// (the file cut short under it) is an error, not a crash. The caller looks
// at the file after its reads (unchanged).
func (p *points) get(key, dst []byte) (out []byte, ok bool, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			out, ok, err = dst, false, domain.Internal(fmt.Errorf("%w: point index: %v", domain.ErrDamaged, r))
		}
	}()
	le := binary.LittleEndian
	h := xxhash.Sum64(key)
	bk := bucket(h, p.bits)
	// The radix was checked when the index was opened.
	lo, hi := uint64(le.Uint32(p.radix[bk*4:])), uint64(le.Uint32(p.radix[bk*4+4:]))
	if lo > hi || hi > p.count { // checked at opening; a file changed under the mapping since is not trusted
		return dst, false, domain.Internal(fmt.Errorf("%w: %w", domain.ErrDamaged, errPointsCorrupt))
	}
	if err := p.check(p.entries, lo*pointEntrySize, (hi-lo)*pointEntrySize); err != nil {
		return dst, false, err
	}
	for i := lo; i < hi; i++ {
		e := p.entries[i*pointEntrySize : i*pointEntrySize+pointEntrySize]
		if eh := le.Uint64(e); eh != h {
			if eh > h {
				break
			}
			continue
		}
		k, v, ok, err := p.record(le.Uint64(e[8:]))
		if err != nil {
			return dst, false, err
		}
		if !ok {
			return dst, false, domain.Internal(fmt.Errorf("%w: %w", domain.ErrDamaged, errPointsCorrupt))
		}
		if string(k) == string(key) {
			return append(dst, v...), true, nil
		}
	}
	return dst, false, nil
}

// record returns the key and value stored at off in data, checked.
func (p *points) record(off uint64) (key, value []byte, ok bool, err error) {
	if off >= uint64(len(p.data)) {
		return nil, nil, false, nil
	}
	// The two lengths are at most 2 × binary.MaxVarintLen64 bytes.
	if err := p.check(p.data, off, min(2*binary.MaxVarintLen64, uint64(len(p.data))-off)); err != nil {
		return nil, nil, false, err
	}
	b := p.data[off:]
	kl, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, nil, false, nil
	}
	b = b[n:]
	vl, m := binary.Uvarint(b)
	if m <= 0 {
		return nil, nil, false, nil
	}
	b = b[m:]
	if kl > uint64(len(b)) || vl > uint64(len(b))-kl {
		return nil, nil, false, nil
	}
	if err := p.check(p.data, off, uint64(n+m)+kl+vl); err != nil {
		return nil, nil, false, err
	}
	return b[:kl], b[kl : kl+vl], true, nil
}

// check has the guard check n bytes at off of part, a slice of the mapping.
func (p *points) check(part []byte, off, n uint64) error {
	if p.guard == nil || n == 0 {
		return nil
	}
	base := uint64(cap(p.mapped) - cap(part)) // part's offset in the file
	return p.guard.Check(p.mapped, int64(base+off), int64(n))
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

func (p *points) close() error {
	err := unmapFile(p.mapped)
	if p.file != nil {
		p.file.Close()
	}
	return err
}
