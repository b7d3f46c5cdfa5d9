package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/cespare/xxhash/v2"
	"github.com/productdata/pds/domain"
)

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

// get appends the value of key to dst; ok is false when the table holds no
// such key. The file's bytes are copied (or decoded): nothing returned
// aliases them. Every range read is checked by the guard first; a fault on
// the mapping is an error, not a crash. The caller looks at the file after
// its reads (unchanged).
func (p *points) get(key, dst []byte) (out []byte, ok bool, err error) {
	if p.mapped == nil {
		buf := p.buffer()
		defer p.bufs.Put(buf)
		return p.probe(key, dst, buf)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faulted(&err)
	out = dst
	return p.probe(key, dst, nil)
}

// probes calls fn, which may call probe with buf, with a fault on the
// mapping made an error as get makes it: for a batch of probes, set up once
// rather than for each.
func (p *points) probes(fn func(buf *[]byte) error) (err error) {
	if p.mapped == nil {
		buf := p.buffer()
		defer p.bufs.Put(buf)
		return fn(buf)
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faulted(&err)
	return fn(nil)
}

// probe is get, inside get's or probes' fault handling; buf is the read
// buffer of an index that is not mapped.
func (p *points) probe(key, dst []byte, buf *[]byte) (out []byte, ok bool, err error) {
	le := binary.LittleEndian
	h := xxhash.Sum64(key)
	bk := bucket(h, p.bits)
	if p.mapped != nil && p.guard != nil {
		if err := p.guard.Check(p.mapped, int64(p.radixAt()+bk*4), 8); err != nil {
			return dst, false, err
		}
	}
	lo, hi := uint64(le.Uint32(p.radix[bk*4:])), uint64(le.Uint32(p.radix[bk*4+4:]))
	if lo > hi || hi > p.count { // a file changed under the mapping, or a slot no check vouched for, is not trusted
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
			return p.value(dst, k, v)
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

// value appends the value v of the record of key to dst, decoded. In a
// layer, an empty value is a deletion: errDeleted.
func (p *points) value(dst, key, v []byte) ([]byte, bool, error) {
	if p.layer && len(v) == 0 {
		return dst, false, errDeleted
	}
	var out []byte
	var err error
	switch p.version {
	case 1:
		return append(dst, v...), true, nil
	case 2:
		out, err = decodeIdentity(p.dict, dst, v, p.maxValue)
	default:
		out, err = decodeShaped(p.shapes, dst, v, subjectOfKey(key), p.maxValue)
	}
	if err != nil {
		return dst, false, domain.Internal(fmt.Errorf("%w: %w", domain.ErrDamaged, err))
	}
	return out, true, nil
}

// record returns the key and value stored at off in data; ok is false when
// the bytes there are no record. An empty key is the padding after the last
// record. A mapped index reads the record's lengths from the mapping and
// then checks the record, lengths included, and nothing more; lengths that
// make no record, or the padding, are checked before they are believed, so
// that damage is reported as the guard reports it. Read with pread, the longest record is
// read at once.
func (p *points) record(off uint64, buf *[]byte) (key, value []byte, ok bool, err error) {
	if off >= p.dataLen {
		return nil, nil, false, nil
	}
	left := p.dataLen - off
	first := min(p.maxRecord, left)
	var b []byte
	if p.mapped != nil {
		first = min(2*binary.MaxVarintLen64, left)
		b = p.mapped[p.dataAt+off : p.dataAt+off+first]
	} else if b, err = p.read(p.dataAt+off, first, buf); err != nil {
		return nil, nil, false, err
	}
	head, kl, vl, ok := recordLengths(b, left, p.maxRecord)
	if (!ok || kl == 0) && p.mapped != nil {
		_, err = p.read(p.dataAt+off, first, buf)
	}
	if !ok || kl == 0 || err != nil {
		return nil, nil, ok && err == nil, err
	}
	total := head + kl + vl
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

// recordLengths reads the lengths at the start of a record of at most left
// bytes: its head (the two uvarints), its key's and its value's. ok is
// false when they make no record (longer than left or than maxRecord); a
// key length of 0 is the padding after the last record.
func recordLengths(b []byte, left, maxRecord uint64) (head, kl, vl uint64, ok bool) {
	kl, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, 0, 0, false
	}
	if kl == 0 {
		return 0, 0, 0, true
	}
	vl, m := binary.Uvarint(b[n:])
	if m <= 0 {
		return 0, 0, 0, false
	}
	head = uint64(n + m)
	if kl > left-head || vl > left-head-kl || head+kl+vl > maxRecord {
		return 0, 0, 0, false
	}
	return head, kl, vl, true
}

// recordWalk walks a file's records in key order: next moves to the next
// one (key and value, valid until the next call), or sets done after the
// last; the padding after it (zero bytes, an empty key) ends the walk. The
// caller handles faults on a mapping.
type recordWalk struct {
	p          *points
	off        uint64
	buf        []byte
	key, value []byte
	done       bool
}

func (w *recordWalk) next() error {
	if w.off >= w.p.dataLen {
		w.done = true
		return nil
	}
	k, v, ok, err := w.p.record(w.off, &w.buf)
	if err != nil {
		return err
	}
	if !ok {
		return corrupt()
	}
	if len(k) == 0 {
		w.done = true
		return nil
	}
	w.off += uint64(len(v)+len(k)) + uint64(uvarintLen(uint64(len(k)))+uvarintLen(uint64(len(v))))
	w.key, w.value = k, v
	return nil
}

// unchanged looks at the file after reads: a file written or replaced
// since it was opened may have given bytes that are not the snapshot's.
func (p *points) unchanged() error {
	if p.guard == nil {
		return nil
	}
	err := p.guard.Unchanged(p.file.Stat())
	if err != nil && !errors.Is(err, ErrReadAgain) {
		return domain.Internal(err)
	}
	return err
}
