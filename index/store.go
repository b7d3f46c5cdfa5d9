package index

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/productdata/pds/internal/osfile"
)

// The doc store holds, for every doc in (subject, visibility) order, what a hit shows, so that a
// page is assembled without loading Bleve's stored fields (which decompress a chunk of documents
// per hit: about 10 µs a hit where these reads cost one pread each).
//
//	docs.dat  records, one after the other:
//	          subject, manufacturer, brand, updated_at (RFC 3339, as given) as uvarint length + bytes,
//	          then one byte (trust level | 8 if it has a passport), then the block number (uvarint);
//	          format 2 adds the visibility and the shadowing tenants (joined by reservedByte), as
//	          uvarint length + bytes, so that a doc can be compared with and rebuilt from its record
//	docs.idx  one entry of idxEntrySize bytes per doc, little endian: the record's offset in
//	          docs.dat (uint64), the updated-time key (uint64), the name id (uint32; noName when
//	          the manufacturer normalises to nothing); format 2 adds the doc's position (uint64)
//
// A doc's Bleve document ID is its position in fixed-width hex (format 1: its ordinal), so sorting
// by ID sorts by subject. Positions rise with the ordinals but leave gaps: an updated index gives a
// new doc a position between its neighbours' and keeps every other doc's (see update.go).
const (
	docsDataFile  = "docs.dat"
	docsIdxFile   = "docs.idx"
	idxEntrySize1 = 20
	idxEntrySize  = 28
	noName        = ^uint32(0)
	maxDocs       = 1<<32 - 1
)

func docID(ord uint32) string { return fmt.Sprintf("%08x", ord) }

// posID is the Bleve document ID of the doc at position pos (format 2).
func posID(pos uint64) string { return fmt.Sprintf("%016x", pos) }

func parsePosID(id string) (uint64, error) {
	if len(id) != 16 {
		return 0, fmt.Errorf("index: malformed document id %q", id)
	}
	hi, err := parseDocID(id[:8])
	if err != nil {
		return 0, fmt.Errorf("index: malformed document id %q", id)
	}
	lo, err := parseDocID(id[8:])
	if err != nil {
		return 0, fmt.Errorf("index: malformed document id %q", id)
	}
	return uint64(hi)<<32 | uint64(lo), nil
}

func parseDocID(id string) (uint32, error) {
	if len(id) != 8 {
		return 0, fmt.Errorf("index: malformed document id %q", id)
	}
	var v uint32
	for i := 0; i < 8; i++ {
		c := id[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint32(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint32(c-'a'+10)
		default:
			return 0, fmt.Errorf("index: malformed document id %q", id)
		}
	}
	return v, nil
}

// record is one doc as the store holds it.
type record struct {
	subject, manufacturer, brand, updated string
	trust                                 int
	passport                              bool
	block                                 int
	visibility, shadowed                  string // format 2; shadowed: tenants joined by reservedByte
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func (r *record) encode(b []byte) []byte {
	b = appendString(b, r.subject)
	b = appendString(b, r.manufacturer)
	b = appendString(b, r.brand)
	b = appendString(b, r.updated)
	flags := byte(r.trust)
	if r.passport {
		flags |= 8
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(r.block))
	b = appendString(b, r.visibility)
	return appendString(b, r.shadowed)
}

// decodeRecord decodes a record of the given index format.
func decodeRecord(b []byte, format int) (record, error) {
	var r record
	str := func() (string, error) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return "", errCorrupt
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s, nil
	}
	var err error
	for _, p := range []*string{&r.subject, &r.manufacturer, &r.brand, &r.updated} {
		if *p, err = str(); err != nil {
			return r, err
		}
	}
	if len(b) < 1 {
		return r, errCorrupt
	}
	r.trust, r.passport = int(b[0]&7), b[0]&8 != 0
	block, k := binary.Uvarint(b[1:])
	if k <= 0 {
		return r, errCorrupt
	}
	r.block = int(block)
	if format < 2 {
		return r, nil
	}
	b = b[1+k:]
	if r.visibility, err = str(); err != nil {
		return r, err
	}
	r.shadowed, err = str()
	return r, err
}

// storeWriter streams docs.dat and docs.idx.
type storeWriter struct {
	dataF, idxF *os.File
	data, idx   *bufio.Writer
	off         uint64
	buf         []byte
}

func newStoreWriter(dir string) (*storeWriter, error) {
	dataF, err := os.Create(dir + string(os.PathSeparator) + docsDataFile)
	if err != nil {
		return nil, err
	}
	idxF, err := os.Create(dir + string(os.PathSeparator) + docsIdxFile)
	if err != nil {
		dataF.Close()
		return nil, err
	}
	return &storeWriter{dataF: dataF, idxF: idxF, data: bufio.NewWriterSize(dataF, 1<<16), idx: bufio.NewWriterSize(idxF, 1<<16)}, nil
}

func (w *storeWriter) add(r *record, key uint64, name uint32, pos uint64) error {
	w.buf = r.encode(w.buf[:0])
	return w.addStored(w.buf, key, name, pos)
}

// addStored adds a record already encoded.
func (w *storeWriter) addStored(rec []byte, key uint64, name uint32, pos uint64) error {
	var e [idxEntrySize]byte
	binary.LittleEndian.PutUint64(e[0:], w.off)
	binary.LittleEndian.PutUint64(e[8:], key)
	binary.LittleEndian.PutUint32(e[16:], name)
	binary.LittleEndian.PutUint64(e[20:], pos)
	if _, err := w.idx.Write(e[:]); err != nil {
		return err
	}
	if _, err := w.data.Write(rec); err != nil {
		return err
	}
	w.off += uint64(len(rec))
	return nil
}

func (w *storeWriter) close() error {
	return errors.Join(w.data.Flush(), w.idx.Flush(), w.dataF.Close(), w.idxF.Close())
}

// docStore reads the store: docs.idx as bytes (in memory, or a mapping of a private copy when
// served: see openServedStore), docs.dat through pread. Its entries are read in place, so a
// served index holds no copy of them on the Go heap.
type docStore struct {
	format int
	data   *os.File
	size   uint64 // of docs.dat
	idx    []byte // docs.idx, n entries of entry bytes
	entry  int
	n      int
	unmap  func() error // releases idx when it is a mapping
}

// offAt is the offset of doc ord's record in docs.dat.
func (s *docStore) offAt(ord int) uint64 { return binary.LittleEndian.Uint64(s.idx[ord*s.entry:]) }

// keyAt is doc ord's updated-time key.
func (s *docStore) keyAt(ord int) uint64 { return binary.LittleEndian.Uint64(s.idx[ord*s.entry+8:]) }

// nameAt is doc ord's name id (noName: none).
func (s *docStore) nameAt(ord int) uint32 { return binary.LittleEndian.Uint32(s.idx[ord*s.entry+16:]) }

// posAt is doc ord's position (format 2).
func (s *docStore) posAt(ord int) uint64 { return binary.LittleEndian.Uint64(s.idx[ord*s.entry+20:]) }

// positions is the number of docs with a position: every doc in format 2, none in format 1.
func (s *docStore) positions() int {
	if s.format < 2 {
		return 0
	}
	return s.n
}

// entrySize is the bytes of a docs.idx entry in the given format.
func entrySize(format int) int {
	if format < 2 {
		return idxEntrySize1
	}
	return idxEntrySize
}

// openStore opens the doc store in dir with docs.idx read into memory: for a build, which reads
// it once in order.
func openStore(dir string, docs, format int) (*docStore, error) {
	raw, err := os.ReadFile(dir + string(os.PathSeparator) + docsIdxFile)
	if err != nil {
		return nil, err
	}
	if err := checkEntries(bytes.NewReader(raw), int64(len(raw)), docs, format); err != nil {
		return nil, err
	}
	return openData(dir, &docStore{format: format, idx: raw, entry: entrySize(format), n: docs})
}

// openServedStore opens the doc store in dir for serving: docs.idx is copied as Bleve's segments
// are (privateCopy: a sealed memfd, or a file in o.CopyDir whose name is removed), the copy
// checked (o.CheckCopy) and then mapped, so that its pages are the kernel's to account for (and,
// in o.CopyDir, to drop) rather than the Go heap's, where the collector would let them take
// twice their size. Where no copy is made (Windows), osfile.Map reads the file into memory.
func openServedStore(dir string, docs, format int, o OpenOptions) (s *docStore, err error) {
	path := dir + string(os.PathSeparator) + docsIdxFile
	src, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	cp, _, err := privateCopy(src, o.CopyDir)
	if err != nil {
		return nil, fmt.Errorf("a private copy of %s: %w", path, err)
	}
	from := src
	if cp != nil {
		defer cp.Close() // the mapping stays
		from = cp
	}
	info, err := from.Stat()
	if err != nil {
		return nil, err
	}
	size := info.Size()
	if o.CheckCopy != nil {
		if err := o.CheckCopy(path, io.NewSectionReader(from, 0, size)); err != nil {
			return nil, err
		}
	}
	if err := checkEntries(io.NewSectionReader(from, 0, size), size, docs, format); err != nil {
		return nil, err
	}
	s = &docStore{format: format, entry: entrySize(format), n: docs}
	if size > 0 {
		if s.idx, err = osfile.Map(from, int(size)); err != nil {
			return nil, fmt.Errorf("map %s: %w", path, err)
		}
		m := s.idx
		s.unmap = func() error { return osfile.Unmap(m) }
	}
	opened, err := openData(dir, s)
	if err != nil && s.unmap != nil {
		s.unmap()
	}
	return opened, err
}

// checkEntries checks that r, size bytes of docs.idx, holds docs entries of the format, their
// positions (format 2) rising, reading it once in pieces.
func checkEntries(r io.Reader, size int64, docs, format int) error {
	entry := entrySize(format)
	if size != int64(docs)*int64(entry) {
		return fmt.Errorf("%s has %d bytes, want %d", docsIdxFile, size, int64(docs)*int64(entry))
	}
	if format < 2 {
		return nil
	}
	buf := make([]byte, entry*4096)
	var prev uint64
	for ord := 0; ord < docs; {
		n := min(docs-ord, 4096)
		if _, err := io.ReadFull(r, buf[:n*entry]); err != nil {
			return fmt.Errorf("reading %s: %w", docsIdxFile, err)
		}
		for i := 0; i < n; i, ord = i+1, ord+1 {
			pos := binary.LittleEndian.Uint64(buf[i*entry+20:])
			if ord > 0 && pos <= prev {
				return fmt.Errorf("%s: position of doc %d does not rise", docsIdxFile, ord)
			}
			prev = pos
		}
	}
	return nil
}

// openData opens s's docs.dat in dir.
func openData(dir string, s *docStore) (*docStore, error) {
	var err error
	if s.data, err = os.Open(dir + string(os.PathSeparator) + docsDataFile); err != nil {
		return nil, err
	}
	info, err := s.data.Stat()
	if err != nil {
		s.data.Close()
		return nil, err
	}
	s.size = uint64(info.Size())
	return s, nil
}

// record reads doc ord's record.
func (s *docStore) record(ord uint32) (record, error) {
	if int(ord) >= s.n {
		return record{}, fmt.Errorf("index: doc %d out of range", ord)
	}
	end := s.size
	if int(ord)+1 < s.n {
		end = s.offAt(int(ord) + 1)
	}
	start := s.offAt(int(ord))
	if start > end || end > s.size {
		return record{}, errCorrupt
	}
	b := make([]byte, end-start)
	if _, err := s.data.ReadAt(b, int64(start)); err != nil && !errors.Is(err, io.EOF) {
		return record{}, fmt.Errorf("index: read doc %d: %w", ord, err)
	}
	return decodeRecord(b, s.format)
}

// id is the Bleve document ID of doc ord.
func (s *docStore) id(ord uint32) string {
	if s.format < 2 {
		return docID(ord)
	}
	return posID(s.posAt(int(ord)))
}

// ord is the ordinal of the doc with Bleve document ID id.
func (s *docStore) ord(id string) (uint32, error) {
	if s.format < 2 {
		return parseDocID(id)
	}
	p, err := parsePosID(id)
	if err != nil {
		return 0, err
	}
	i := sort.Search(s.n, func(i int) bool { return s.posAt(i) >= p })
	if i == s.n || s.posAt(i) != p {
		return 0, fmt.Errorf("index: document id %q is not in the doc store", id)
	}
	return uint32(i), nil
}

// firstAfter returns the ordinal of the first doc whose subject sorts after subject.
func (s *docStore) firstAfter(subject string) (uint32, error) {
	lo, hi := 0, s.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		r, err := s.record(uint32(mid))
		if err != nil {
			return 0, err
		}
		if r.subject <= subject {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return uint32(lo), nil
}

func (s *docStore) close() error {
	err := s.data.Close()
	if s.unmap != nil {
		err = errors.Join(err, s.unmap())
	}
	return err
}

// hit turns a record into a Hit.
func (r *record) hit() (Hit, error) {
	t, err := time.Parse(time.RFC3339Nano, r.updated)
	if err != nil {
		return Hit{}, fmt.Errorf("index: %s: stored updated_at: %w", r.subject, err)
	}
	return Hit{Subject: r.subject, Manufacturer: r.manufacturer, Brand: r.brand, TrustLevel: r.trust,
		HasPassport: r.passport, UpdatedAt: t}, nil
}
