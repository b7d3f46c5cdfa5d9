package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/internal/osfile"
	"github.com/productdata/pds/kv/jsonshape"
)

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
	// the index was opened, or answers ErrReadAgain when only its change
	// time moved.
	Unchanged(st os.FileInfo, err error) error
}

// points is an opened point index: its file mapped read-only, or (mapped
// nil) read with pread, its radix in memory.
type points struct {
	version   int
	layer     bool        // a night's layer (pointsMagicLayer): empty values are deletions
	dictRaw   []byte      // the dictionary section as stored (versions 2 and 3)
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
	dictLen   uint64           // versions 2 and 3
	dict      *s2.Dict         // version 2: nil when it has none
	shapes    *jsonshape.Table // version 3
	maxValue  uint64           // versions 2 and 3: the longest value decoded
	maxRecord uint64           // the longest record (version 1: the data's length)
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
		return nil, fmt.Errorf("%w: %s: %w", errPointsCorrupt, path, err)
	}
	p.file = f
	return p, nil
}

// adviseRandom tells the kernel that the records and entries of a mapped
// index are read at random. Without it, a page fault there reads the disk's
// whole read-ahead window around the page (8 MiB on some disks) to answer
// one lookup of about a hundred bytes: what warms the page cache fastest
// while the index fits in memory, but where it does not, each such read
// pushes out pages other lookups need, and the server reads megabytes a
// lookup. The header, dictionary and radix, read whole at opening, keep the
// default. Advice only: an error changes nothing read, so it is not one.
// It reports whether the index is mapped, and so was advised.
func (p *points) adviseRandom() bool {
	if p.mapped == nil || !osfile.Maps {
		return false
	}
	page := uint64(os.Getpagesize())
	from := (p.dataAt + page - 1) / page * page
	to := p.radixAt() / page * page
	if to > from && to <= uint64(len(p.mapped)) {
		_ = osfile.AdviseRandom(p.mapped[from:to])
	}
	return true
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
		return nil, fmt.Errorf("%w: %s: %w", errPointsCorrupt, path, err)
	}
	q.file, q.guard = f, guard
	p = q
	if p.radix, err = p.read(p.radixAt(), uint64(size)-p.radixAt(), new([]byte)); err != nil {
		return nil, err
	}
	err = p.checkRadix()
	if err == nil && p.version >= 2 {
		var dict []byte
		if dict, err = p.read(pointsHeaderSize, p.dataAt-pointsHeaderSize, new([]byte)); err != nil {
			return nil, err
		}
		err = p.setDict(dict)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errPointsCorrupt, path, err)
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

// readPoints checks a mapped point index's header and dictionary (through
// guard, when it is not nil) and slices its parts. The radix is checked
// whole here only without a guard: with one, each slot is checked as a
// probe reads it, chunk by chunk as the rest of the file is, so that
// opening reads no more of the radix (64 MiB at 10M products) than the
// first answers need; a probe also keeps its reads inside the file
// whatever the slot holds.
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
		if err := guard.Check(m, pointsHeaderSize, int64(p.dataAt-pointsHeaderSize)); err != nil {
			return nil, err
		}
	} else if err := p.checkRadix(); err != nil {
		return nil, err
	}
	if p.version >= 2 {
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
		p.version = 3
	case pointsMagicLayer:
		p.version, p.layer = 3, true
	case pointsMagicV2:
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
	if p.version >= 2 {
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

// setDict reads the dictionary section of a version 2 or 3 file (the
// dictionary or the shapes' table, then its padding).
func (p *points) setDict(section []byte) error {
	p.dictRaw = section[:p.dictLen]
	if p.version == 3 {
		var err error
		p.shapes, err = jsonshape.Parse(section[:p.dictLen])
		return err
	}
	if p.dictLen == 0 {
		return nil
	}
	if p.dict = s2.NewDict(section[:p.dictLen]); p.dict == nil {
		return errors.New("the dictionary is not one")
	}
	return nil
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
