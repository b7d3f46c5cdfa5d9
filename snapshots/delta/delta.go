package delta

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
)

// Magic opens every delta. Apply also reads deltas of the first version,
// "PDSDLT01", which had no add operations.
const Magic = "PDSDLT02"

// magicV1 opens a delta of the first version.
const magicV1 = "PDSDLT01"

// blockSize is the unit the base is indexed in: a run of the target must
// hold one whole aligned block of the base to be found, and is then
// extended byte by byte both ways. 64 bytes kept the table at 2.2% where a
// changed view is about 1 KB (see doc.go); the index is 8 bytes a block.
const blockSize = 64

const (
	opCopy    = 'c'
	opLiteral = 'l'
	opAdd     = 'a'
	opEnd     = 'e'
)

// minAdd is the shortest run between copies that is carried as differences
// from the base's bytes at a place alike it (an add operation) rather than
// as it is; see gap for which places are tried and what is alike. That is
// what a table of offsets looks like after a value before them
// changed size: every entry differs from the base's by the same small
// amount, in a byte or two, so the differences are mostly zero bytes and
// compress to little, where the entries themselves do not (bsdiff's idea).
const minAdd = 32

// addWindow is the unit in which gap compares a run with the base's bytes;
// maxShift is how far either way it looks for an alignment it lost (an
// entry of the point index's table is 16 bytes, of the doc store's 28), and
// maxMisses how many windows in a row alike nowhere it carries as they are
// before it stops looking.
const (
	addWindow = 64
	maxShift  = 256
	maxMisses = 4
)

// ErrCorrupt is wrapped by every error Apply returns for a delta that is
// not well formed or does not fit its base.
var ErrCorrupt = errors.New("delta is damaged or not for this base")

// Stats says what a delta holds.
type Stats struct {
	Copied, Literal int64 // target bytes copied from the base, and carried as they are
	Added           int64 // target bytes carried as differences from the base's
	Ops             int   // copy, literal and add operations
}

// Encode writes to w a delta that rebuilds target from base.
func Encode(w io.Writer, base, target []byte) (Stats, error) {
	e := encoder{w: bufio.NewWriterSize(w, 1<<16), base: base, target: target}
	e.w.WriteString(Magic)
	e.run()
	e.buf = append(e.buf[:0], opEnd)
	e.buf = binary.AppendUvarint(e.buf, uint64(len(target)))
	e.w.Write(e.buf)
	return e.stats, e.w.Flush()
}

type encoder struct {
	w            *bufio.Writer
	base, target []byte
	table        []int32 // slot: 1 + the number of a base block, or 0
	shift        uint
	prevEnd      int // end of the last copy in base
	stats        Stats
	buf          []byte
}

func (e *encoder) run() {
	e.index()
	t, b := e.target, e.base
	lit := 0 // start of the literal run not yet written
	i := 0
	for i+blockSize <= len(t) {
		h := roll(t[i : i+blockSize])
		at := -1
		for ; ; i++ {
			if at = e.find(h, t[i:i+blockSize]); at >= 0 || i+blockSize >= len(t) {
				break
			}
			h = (h-uint64(t[i])*pow)*prime + uint64(t[i+blockSize])
		}
		if at < 0 {
			break
		}
		// Extend backward over the pending literal run, then forward.
		for i > lit && at > 0 && t[i-1] == b[at-1] {
			i--
			at--
		}
		n := common(t[i:], b[at:])
		e.gap(t[lit:i], lit)
		e.copy(at, n)
		i += n
		lit = i
	}
	e.gap(t[lit:], lit)
}

// gap writes the run of the target at tpos that no copy covers: as
// differences from the base's bytes where they are alike (see minAdd), else
// as it is. It walks the run in windows of addWindow bytes; a window is
// alike the base's bytes at a place when its score there (see score) is at
// least half its length. Two places are tried first: after the last copy,
// and the same distance from the file's end (the place of a table that
// follows data which changed size); at the run's start, the places up to
// maxShift bytes either way of the first are tried too. A table of
// fixed-size entries from which some were removed (a deleted product's in
// the point index or the doc store's table of offsets), or to which some
// were added, is alike the base's at a place that moves by an entry at
// each: when a window scores less than three quarters of its length, the
// places up to maxShift bytes either way are scored, and the add follows
// the best when it scores an eighth of the window more, or when the window
// is no longer alike where it was. After maxMisses windows in a row alike
// nowhere tried, the rest of the run is carried as it is.
func (e *encoder) gap(p []byte, tpos int) {
	if len(p) < minAdd {
		e.literal(p)
		return
	}
	// An alignment off compares the window at k of p with the base's
	// bytes from k+off on.
	tries := []int{e.prevEnd, tpos + len(e.base) - len(e.target)}
	off := 0    // the alignment of the add being gathered
	addAt := -1 // its start in p, or -1 when there is none
	lit := 0    // start in p of the bytes not yet written
	misses := 0
	for k := 0; k < len(p); k += addWindow {
		w := p[k:min(k+addWindow, len(p))]
		if addAt >= 0 {
			n := e.scoreAt(w, k+off)
			if 4*n >= 3*len(w) {
				continue
			}
			// Less alike than a table's entries at their place are: the
			// entries may have moved.
			o, m := e.realign(w, k, off)
			if 2*n >= len(w) && 8*(m-n) < len(w) {
				continue
			}
			e.literal(p[lit:addAt])
			e.add(addAt+off, p[addAt:k])
			lit, addAt = k, -1
			if 2*m >= len(w) {
				off, addAt = o, k
				continue
			}
			// Entries changed in place: the alignment may come back.
			tries = append(tries[:2], off)
			misses = 0
		}
		for _, o := range tries {
			if e.alike(w, k+o) {
				off, addAt = o, k
				break
			}
		}
		if addAt < 0 && k == 0 {
			// The run may start with entries removed right after the copy.
			if o, m := e.realign(w, k, tries[0]); 2*m >= len(w) {
				off, addAt = o, k
			}
		}
		if addAt >= 0 {
			misses = 0
			continue
		}
		if misses++; misses > maxMisses {
			break
		}
	}
	if addAt >= 0 {
		e.literal(p[lit:addAt])
		e.add(addAt+off, p[addAt:])
		return
	}
	e.literal(p[lit:])
}

// alike reports whether w scores at least half its length against the
// base's bytes from at on.
func (e *encoder) alike(w []byte, at int) bool { return 2*e.scoreAt(w, at) >= len(w) }

// scoreAt is the score of w against the base's bytes from at on: 0 when
// they lie outside the base. Where fewer than a quarter of the bytes are
// equal (unlike bytes, as most places tried are), it is only their count:
// too low to be chosen, and eight times faster to find.
func (e *encoder) scoreAt(w []byte, at int) int {
	if at < 0 || at+len(w) > len(e.base) {
		return 0
	}
	b := e.base[at : at+len(w)]
	if n := equal(w, b); 4*n < len(w) {
		return n
	}
	return score(w, b)
}

// equal is how many bytes of a equal b's at the same place (len(b) >=
// len(a)), eight at a time: a zero byte of their xor is an equal byte.
func equal(a, b []byte) int {
	const low7, high = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	n, i := 0, 0
	for ; i+8 <= len(a); i += 8 {
		x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:])
		// The high bit of each byte of y is set when that byte of x is 0.
		y := ^((x&low7 + low7) | x | low7)
		n += bits.OnesCount64(y & high)
	}
	for ; i < len(a); i++ {
		if a[i] == b[i] {
			n++
		}
	}
	return n
}

// realign returns the alignment within maxShift bytes of off (but off) at
// which the window w, at k in its run, scores best against the base, and
// that score; the nearest wins a tie.
func (e *encoder) realign(w []byte, k, off int) (int, int) {
	best, bestScore := off, 0
	for d := 1; d <= maxShift; d++ {
		for _, o := range [2]int{off + d, off - d} {
			if n := e.scoreAt(w, k+o); n > bestScore {
				best, bestScore = o, n
			}
		}
	}
	return best, bestScore
}

// score is how many bytes of a equal b's at the same place (len(b) >=
// len(a)), plus how many differ from b's by the difference found most
// often: a table of numbers each off by the same amount (an offset table
// past a removed record) scores near its length at its own place, and less
// at a place whose numbers are merely close to it.
func score(a, b []byte) int {
	var count [256]uint16
	zero, top := 0, 0
	for i := range a {
		d := a[i] - b[i]
		if d == 0 {
			zero++
			continue
		}
		count[d]++
		top = max(top, int(count[d]))
	}
	return zero + top
}

func (e *encoder) add(at int, p []byte) {
	b := e.base[at : at+len(p)]
	e.buf = append(e.buf[:0], opAdd)
	e.buf = binary.AppendVarint(e.buf, int64(at-e.prevEnd))
	e.buf = binary.AppendUvarint(e.buf, uint64(len(p)))
	for k := range p {
		e.buf = append(e.buf, p[k]-b[k])
	}
	e.w.Write(e.buf)
	e.prevEnd = at + len(p)
	e.stats.Added += int64(len(p))
	e.stats.Ops++
}

// maxIndexed is how many of the base's blocks the table holds: a slot is
// an int32 (1 + a block's number), so only the first 2^31-1 blocks (2^37-64
// bytes, about 128 GiB) of a base are indexed. Matches there are still made by
// extending matches found before them, and by adds; the delta is correct
// whatever the base's size, only larger.
const maxIndexed = math.MaxInt32

// indexedBlocks is how many aligned blocks of a base of n bytes the table
// holds.
func indexedBlocks(n int) int { return min(n/blockSize, maxIndexed) }

// index fills the table with the base's aligned blocks; a slot taken by
// another block keeps the first (its neighbours take the overflow).
func (e *encoder) index() {
	blocks := indexedBlocks(len(e.base))
	size := 1 << max(bits.Len(uint(blocks*2)), 4)
	e.table = make([]int32, size)
	e.shift = uint(64 - bits.Len(uint(size-1)))
	for k := range blocks {
		h := roll(e.base[k*blockSize : (k+1)*blockSize])
		s := e.slot(h)
		for probe := 0; probe < maxProbe; probe++ {
			if e.table[s] == 0 {
				e.table[s] = int32(k + 1)
				break
			}
			s = (s + 1) & (len(e.table) - 1)
		}
	}
}

// maxProbe is how many slots a block may look at past its own.
const maxProbe = 8

func (e *encoder) slot(h uint64) int { return int((h * 0x9E3779B97F4A7C15) >> e.shift) }

// find returns the base offset of a block equal to win, or -1.
func (e *encoder) find(h uint64, win []byte) int {
	s := e.slot(h)
	for probe := 0; probe < maxProbe; probe++ {
		k := e.table[s]
		if k == 0 {
			return -1
		}
		at := int(k-1) * blockSize
		if string(e.base[at:at+blockSize]) == string(win) {
			return at
		}
		s = (s + 1) & (len(e.table) - 1)
	}
	return -1
}

func (e *encoder) literal(p []byte) {
	if len(p) == 0 {
		return
	}
	e.buf = append(e.buf[:0], opLiteral)
	e.buf = binary.AppendUvarint(e.buf, uint64(len(p)))
	e.w.Write(e.buf)
	e.w.Write(p)
	e.stats.Literal += int64(len(p))
	e.stats.Ops++
}

func (e *encoder) copy(at, n int) {
	e.buf = append(e.buf[:0], opCopy)
	e.buf = binary.AppendVarint(e.buf, int64(at-e.prevEnd))
	e.buf = binary.AppendUvarint(e.buf, uint64(n))
	e.w.Write(e.buf)
	e.prevEnd = at + n
	e.stats.Copied += int64(n)
	e.stats.Ops++
}

// common is the length of the common prefix of a and b.
func common(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n {
		x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:])
		if x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

const prime = 1000003

// pow is prime to the power blockSize-1: what the byte leaving the window
// weighs in the rolling hash.
var pow = func() uint64 {
	p := uint64(1)
	for range blockSize - 1 {
		p *= prime
	}
	return p
}()

func roll(p []byte) uint64 {
	var h uint64
	for _, c := range p {
		h = h*prime + uint64(c)
	}
	return h
}

// Apply rebuilds the target of the delta read from d, writing it to w and
// reading copies from base, of baseSize bytes. It writes at most limit
// bytes, and returns how many it wrote. An error that is the delta's fault
// wraps ErrCorrupt; one of w or base is returned as it is.
func Apply(w io.Writer, d io.Reader, base io.ReaderAt, baseSize, limit int64) (int64, error) {
	r := bufio.NewReaderSize(d, 1<<16)
	magic := make([]byte, len(Magic))
	if _, err := io.ReadFull(r, magic); err == io.EOF || err == io.ErrUnexpectedEOF {
		return 0, corrupt("it is shorter than its magic %q", Magic)
	} else if err != nil {
		return 0, err
	}
	if string(magic) != Magic && string(magic) != magicV1 {
		return 0, corrupt("it does not start with %q", Magic)
	}
	var written, prevEnd int64
	for {
		op, err := r.ReadByte()
		if err != nil {
			return written, corrupt("it ends before its end mark (%v)", err)
		}
		switch op {
		case opCopy:
			at, n, err := readSpan(r, "a copy", prevEnd, baseSize, limit-written)
			if err != nil {
				return written, err
			}
			c, err := io.Copy(w, io.NewSectionReader(base, at, int64(n)))
			written += c
			if err != nil {
				return written, err
			}
			if c != int64(n) {
				return written, fmt.Errorf("the base ended at byte %d of a copy of %d bytes at %d", c, n, at)
			}
			prevEnd = at + int64(n)
		case opLiteral:
			n, err := binary.ReadUvarint(r)
			if err != nil {
				return written, corrupt("a literal is cut short")
			}
			if n > uint64(limit-written) {
				return written, corrupt("it writes more than the %d bytes expected", limit)
			}
			c, err := io.CopyN(w, r, int64(n))
			written += c
			if err == io.EOF {
				return written, corrupt("a literal of %d bytes is cut short at %d", n, c)
			}
			if err != nil {
				return written, err
			}
		case opAdd:
			if string(magic) == magicV1 {
				return written, corrupt("an add in a delta of the first version")
			}
			at, n, err := readSpan(r, "an add", prevEnd, baseSize, limit-written)
			if err != nil {
				return written, err
			}
			c, err := addFrom(w, r, base, at, int64(n))
			written += c
			if err != nil {
				return written, err
			}
			prevEnd = at + int64(n)
		case opEnd:
			n, err := binary.ReadUvarint(r)
			if err != nil {
				return written, corrupt("the end mark is cut short")
			}
			if int64(n) != written || n > uint64(limit) {
				return written, corrupt("it says the target has %d bytes, and %d were written", n, written)
			}
			switch _, err := r.ReadByte(); err {
			case io.EOF:
			case nil:
				return written, corrupt("bytes follow its end mark")
			default:
				return written, err
			}
			return written, nil
		default:
			return written, corrupt("unknown operation %q", op)
		}
	}
}

// readSpan reads the distance and length of a copy or an add (what names
// it, for errors) and checks them: it must lie within the base, and write
// at most room bytes. It returns where in the base the span starts.
func readSpan(r io.ByteReader, what string, prevEnd, baseSize, room int64) (at int64, n uint64, err error) {
	dist, err1 := binary.ReadVarint(r)
	n, err2 := binary.ReadUvarint(r)
	if err1 != nil || err2 != nil {
		return 0, 0, corrupt("%s is cut short", what)
	}
	if dist < -prevEnd || dist > baseSize-prevEnd {
		return 0, 0, corrupt("%s starts outside the base's %d bytes", what, baseSize)
	}
	at = prevEnd + dist
	if n > uint64(baseSize-at) {
		return 0, 0, corrupt("%s of %d bytes at %d reaches outside the base's %d bytes", what, n, at, baseSize)
	}
	if n > uint64(room) {
		return 0, 0, corrupt("%s of %d bytes writes past the bytes expected (%d left)", what, n, room)
	}
	return at, n, nil
}

// addFrom writes n bytes, each the sum of the next byte of r and the
// base's byte at the same place from at on.
func addFrom(w io.Writer, r io.Reader, base io.ReaderAt, at, n int64) (int64, error) {
	var d, b [32 << 10]byte
	var written int64
	for written < n {
		k := min(int64(len(d)), n-written)
		if c, err := io.ReadFull(r, d[:k]); err != nil {
			return written, corrupt("an add of %d bytes is cut short at %d", n, written+int64(c))
		}
		if c, err := base.ReadAt(b[:k], at+written); int64(c) != k {
			if err == nil || err == io.EOF {
				err = fmt.Errorf("the base ended at byte %d of an add of %d bytes at %d", written+int64(c), n, at)
			}
			return written, err
		}
		for i := range k {
			d[i] += b[i]
		}
		c, err := w.Write(d[:k])
		written += int64(c)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}
