package kv

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// pointsWriter writes a point index of version 3, or 2 (setDict says);
// keys come in increasing order (the Builder checks), so each is added
// once.
type pointsWriter struct {
	path      string
	version   int
	layer     bool // a night's layer (pointsMagicLayer): add with a nil value deletes
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

// setDict writes the values' dictionary of a file of version 3 (a shapes'
// table) or 2 (an s2 dictionary); it comes before the first record.
func (p *pointsWriter) setDict(dict []byte, version int) error {
	if p.off > 0 || p.version != 0 {
		return errors.New("kv: point index: the dictionary comes first, once")
	}
	if p.layer && version != 3 {
		return fmt.Errorf("kv: point index: a layer is of version 3, on an index of version 3 (this one: %d)", version)
	}
	p.version = version
	p.w.Write(dict)
	if _, err := p.w.Write(make([]byte, pad8(uint64(len(dict)))-uint64(len(dict)))); err != nil {
		return fmt.Errorf("kv: point index: %w", err)
	}
	p.dictLen = uint64(len(dict))
	return nil
}

// add writes one record: value is stored as given, and is decoded bytes
// long. In a layer, an empty value is a deletion.
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
	sortEntries(p.entries)
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
	switch {
	case p.layer:
		copy(h[:], pointsMagicLayer)
	case p.version == 3:
		copy(h[:], pointsMagic)
	default: // with no dictionary set, version 2's "s2 without one"
		copy(h[:], pointsMagicV2)
	}
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

// sortBits is how many of a hash's top bits sortEntries first distributes
// the entries by: 64 Ki groups (1 MiB of counts), each group then small
// enough (about 150 entries at 10M) to sort in the caches.
const sortBits = 16

// sortEntries sorts es by hash, then offset: in place, first into groups by
// the hash's top sortBits bits (an American flag sort: each entry swapped
// into its group's next free place), then each group on its own. It gives
// the order one sort of the whole would, in about half the time at 1M
// entries (BenchmarkSortEntries); at 10M the whole sort took about 3 s of a
// night.
func sortEntries(es []pointEntry) {
	start := make([]int, 1<<sortBits+1)
	for _, e := range es {
		start[e.hash>>(64-sortBits)+1]++
	}
	for g := 1; g < len(start); g++ {
		start[g] += start[g-1]
	}
	next := slices.Clone(start[:1<<sortBits])
	for g := range next {
		for next[g] < start[g+1] {
			e := es[next[g]]
			for h := int(e.hash >> (64 - sortBits)); h != g; h = int(e.hash >> (64 - sortBits)) {
				es[next[h]], e = e, es[next[h]]
				next[h]++
			}
			es[next[g]] = e
			next[g]++
		}
	}
	for g := range next {
		slices.SortFunc(es[start[g]:start[g+1]], func(a, b pointEntry) int {
			return cmp.Or(cmp.Compare(a.hash, b.hash), cmp.Compare(a.off, b.off))
		})
	}
}
