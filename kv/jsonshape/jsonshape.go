package jsonshape

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Limits of a table, which Parse holds a stored one to.
const (
	MaxConstants = 4096
	MaxValues    = 1 << 16
	MaxShapes    = 4096
	// MaxPieces is the most pieces a shape has; a document with more is
	// stored piece by piece.
	MaxPieces = 1024
	// maxEntry is the longest piece a table holds as a constant or a value.
	maxEntry = 128
	// constantShare: a piece is constant when at least one sample in
	// constantShare holds it.
	constantShare = 20
)

// The kinds of an encoded document (the byte after its length).
const (
	kindShape  = 1 // a shape's number, then its holes
	kindPieces = 2 // the number of pieces, then each
)

// The refs that fill a hole (or, stored piece by piece, give a piece): a
// literal, the context, or an entry of the table: refTable+i is value i,
// refTable+len(values)+i constant i.
const (
	refLiteral = 0
	refContext = 1
	refTable   = 2
)

// tableVersion is the first byte of a stored table.
const tableVersion = 1

// ErrCorrupt is the error of a stored table or document that is not one.
var ErrCorrupt = errors.New("jsonshape: corrupt")

// Table holds the constants, values and shapes of a kind of document. It is
// safe for concurrent use.
type Table struct {
	constants []string
	values    []string
	shapes    [][]string // each shape's segments: its text between holes

	constIndex map[string]int
	valueIndex map[string]int
	shapeIndex map[string]int // by shape key (see appendKey)
	stored     []byte
}

// Train makes the table of the sampled documents: the same samples in the
// same order give the same table. With no samples, every document is
// stored piece by piece, each piece as it is.
func Train(samples [][]byte) *Table {
	// How many samples hold each piece.
	freq := map[string]int{}
	seen := map[string]bool{}
	for _, s := range samples {
		clear(seen)
		for p := range pieces(s) {
			if len(p) <= maxEntry && !seen[string(p)] {
				seen[string(p)] = true
				freq[string(p)]++
			}
		}
	}
	var consts, vals []string
	for p, n := range freq {
		switch {
		case n >= 2 && n*constantShare >= len(samples):
			consts = append(consts, p)
		case n >= 2:
			vals = append(vals, p)
		}
	}
	byFreq := func(a, b string) int {
		if freq[a] != freq[b] {
			return freq[b] - freq[a]
		}
		return strings.Compare(a, b)
	}
	slices.SortFunc(consts, byFreq)
	slices.SortFunc(vals, byFreq)
	t := &Table{constants: consts[:min(len(consts), MaxConstants)], values: vals[:min(len(vals), MaxValues)]}
	t.index()
	// The shapes of two samples or more, most frequent first.
	shapeFreq := map[string]int{}
	var key []byte
	for _, s := range samples {
		var ok bool
		if key, ok = t.appendKey(key[:0], s); ok {
			shapeFreq[string(key)]++
		}
	}
	var keys []string
	for k, n := range shapeFreq {
		if n >= 2 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		if shapeFreq[a] != shapeFreq[b] {
			return shapeFreq[b] - shapeFreq[a]
		}
		return strings.Compare(a, b)
	})
	keys = keys[:min(len(keys), MaxShapes)]
	b := []byte{tableVersion}
	b = appendStrings(b, t.constants)
	b = appendStrings(b, t.values)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
	}
	t, err := Parse(b)
	if err != nil {
		panic(fmt.Sprintf("jsonshape: a trained table does not parse: %v", err)) // a bug here
	}
	return t
}

// Bytes returns the table as Parse reads it.
func (t *Table) Bytes() []byte { return t.stored }

// Parse reads a table that Bytes wrote, checking every count and length.
func Parse(b []byte) (*Table, error) {
	stored := bytes.Clone(b)
	if len(b) == 0 || b[0] != tableVersion {
		return nil, fmt.Errorf("%w: table of an unknown version", ErrCorrupt)
	}
	b = b[1:]
	t := &Table{stored: stored}
	var err error
	if t.constants, b, err = readStrings(b, MaxConstants, maxEntry); err != nil {
		return nil, fmt.Errorf("%w: constants: %w", ErrCorrupt, err)
	}
	if t.values, b, err = readStrings(b, MaxValues, maxEntry); err != nil {
		return nil, fmt.Errorf("%w: values: %w", ErrCorrupt, err)
	}
	for _, v := range slices.Concat(t.constants, t.values) {
		if strings.IndexByte(v, '"') >= 0 {
			return nil, fmt.Errorf("%w: an entry holds '\"'", ErrCorrupt)
		}
	}
	t.index()
	keys, b, err := readStrings(b, MaxShapes, MaxPieces*binary.MaxVarintLen16)
	if err != nil {
		return nil, fmt.Errorf("%w: shapes: %w", ErrCorrupt, err)
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the shapes", ErrCorrupt, len(b))
	}
	t.shapeIndex = make(map[string]int, len(keys))
	for i, k := range keys {
		segs, err := t.segments(k)
		if err != nil {
			return nil, fmt.Errorf("%w: shape %d: %w", ErrCorrupt, i, err)
		}
		if _, dup := t.shapeIndex[k]; dup {
			return nil, fmt.Errorf("%w: shape %d twice", ErrCorrupt, i)
		}
		t.shapeIndex[k] = i
		t.shapes = append(t.shapes, segs)
	}
	return t, nil
}

// index makes the lookups of the constants and values.
func (t *Table) index() {
	t.constIndex = make(map[string]int, len(t.constants))
	for i, c := range t.constants {
		t.constIndex[c] = i
	}
	t.valueIndex = make(map[string]int, len(t.values))
	for i, v := range t.values {
		t.valueIndex[v] = i
	}
}

// A shape's key lists its pieces: for each, uvarint 0 for a hole or i+1 for
// constant i.

// appendKey appends doc's shape key to dst; ok is false when doc has more
// than MaxPieces pieces.
func (t *Table) appendKey(dst, doc []byte) (key []byte, ok bool) {
	n := 0
	for p := range pieces(doc) {
		if n++; n > MaxPieces {
			return dst, false
		}
		c, isConst := t.constIndex[string(p)]
		if !isConst {
			dst = append(dst, 0)
			continue
		}
		dst = binary.AppendUvarint(dst, uint64(c)+1)
	}
	return dst, true
}

// segments is the text of shape key k between its holes.
func (t *Table) segments(k string) ([]string, error) {
	if len(k) == 0 {
		return nil, errors.New("no pieces")
	}
	var segs []string
	var cur []byte
	for i := 0; len(k) > 0; i++ {
		if i >= MaxPieces {
			return nil, errors.New("too many pieces")
		}
		c, n := binary.Uvarint([]byte(k[:min(len(k), binary.MaxVarintLen64)]))
		if n <= 0 || c > uint64(len(t.constants)) {
			return nil, errors.New("a piece that is no constant")
		}
		k = k[n:]
		if i > 0 {
			cur = append(cur, '"')
		}
		if c == 0 {
			segs = append(segs, string(cur))
			cur = cur[:0]
			continue
		}
		cur = append(cur, t.constants[c-1]...)
	}
	return append(segs, string(cur)), nil
}

// Encode appends doc, encoded, to dst. ctx is text the document may hold
// as a whole piece (the key it is stored under): Decode is given it again.
func (t *Table) Encode(dst, doc, ctx []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(doc)))
	var kb [256]byte
	key, ok := t.appendKey(kb[:0], doc)
	if id, found := t.shapeIndex[string(key)]; ok && found {
		dst = append(dst, kindShape)
		dst = binary.AppendUvarint(dst, uint64(id))
		for p := range pieces(doc) {
			if _, isConst := t.constIndex[string(p)]; !isConst {
				dst = t.appendRef(dst, p, ctx)
			}
		}
		return dst
	}
	dst = append(dst, kindPieces)
	dst = binary.AppendUvarint(dst, uint64(bytes.Count(doc, []byte{'"'})+1))
	for p := range pieces(doc) {
		if c, isConst := t.constIndex[string(p)]; isConst {
			dst = binary.AppendUvarint(dst, uint64(refTable+len(t.values)+c))
			continue
		}
		dst = t.appendRef(dst, p, ctx)
	}
	return dst
}

// appendRef appends what fills a hole with p.
func (t *Table) appendRef(dst, p, ctx []byte) []byte {
	if ctx != nil && bytes.Equal(p, ctx) {
		return append(dst, refContext)
	}
	if v, ok := t.valueIndex[string(p)]; ok {
		return binary.AppendUvarint(dst, uint64(refTable+v))
	}
	dst = append(dst, refLiteral)
	dst = binary.AppendUvarint(dst, uint64(len(p)))
	return append(dst, p...)
}

// DecodedLen is the length of the document enc encodes.
func DecodedLen(enc []byte) (int, error) {
	n, w := binary.Uvarint(enc)
	if w <= 0 || n > 1<<31 {
		return 0, ErrCorrupt
	}
	return int(n), nil
}

// Decode appends the document enc encodes to dst. ctx is the one given to
// Encode. A document longer than max, or any enc that Encode did not make
// with this table, is ErrCorrupt, and dst is returned as it was (its spare
// capacity may have been written).
func (t *Table) Decode(dst, enc, ctx []byte, max int) ([]byte, error) {
	n, w := binary.Uvarint(enc)
	if w <= 0 || n > uint64(max) || w >= len(enc) {
		return dst, ErrCorrupt
	}
	start := len(dst)
	out := slices.Grow(dst, int(n))
	end := start + int(n)
	kind, pos := enc[w], w+1
	var ok bool
	switch kind {
	case kindShape:
		var id uint64
		if id, pos, ok = uvarint(enc, pos); !ok || id >= uint64(len(t.shapes)) {
			return dst, ErrCorrupt
		}
		segs := t.shapes[id]
		out = append(out, segs[0]...)
		for _, s := range segs[1:] {
			// The common refs inline: a value of the table, the context.
			if pos < len(enc) && enc[pos] < 0x80 {
				switch ref := uint64(enc[pos]); {
				case ref >= refTable && ref-refTable < uint64(len(t.values)):
					out = append(out, t.values[ref-refTable]...)
					pos++
				case ref == refContext:
					out = append(out, ctx...)
					pos++
				default:
					out, pos, ok = t.fill(out, enc, pos, ctx)
				}
			} else {
				out, pos, ok = t.fill(out, enc, pos, ctx)
			}
			if !ok || len(out) > end {
				return dst, ErrCorrupt
			}
			out = append(out, s...)
		}
	case kindPieces:
		var np uint64
		if np, pos, ok = uvarint(enc, pos); !ok || np == 0 || np > n+1 {
			return dst, ErrCorrupt
		}
		for i := range np {
			if i > 0 {
				out = append(out, '"')
			}
			if out, pos, ok = t.fill(out, enc, pos, ctx); !ok || len(out) > end {
				return dst, ErrCorrupt
			}
		}
	default:
		return dst, ErrCorrupt
	}
	if pos != len(enc) || len(out) != end {
		return dst, ErrCorrupt
	}
	return out, nil
}

// fill appends the piece of the ref at enc[pos]. What it appends is at
// most a table entry, the context, or bytes of enc, so a document that
// says it is short cannot make Decode write much past it.
func (t *Table) fill(out, enc []byte, pos int, ctx []byte) ([]byte, int, bool) {
	ref, pos, ok := uvarint(enc, pos)
	if !ok {
		return out, pos, false
	}
	switch {
	case ref == refLiteral:
		var l uint64
		if l, pos, ok = uvarint(enc, pos); !ok || l > uint64(len(enc)-pos) {
			return out, pos, false
		}
		return append(out, enc[pos:pos+int(l)]...), pos + int(l), true
	case ref == refContext:
		return append(out, ctx...), pos, true
	case ref-refTable < uint64(len(t.values)):
		return append(out, t.values[ref-refTable]...), pos, true
	case ref-refTable-uint64(len(t.values)) < uint64(len(t.constants)):
		return append(out, t.constants[ref-refTable-uint64(len(t.values))]...), pos, true
	}
	return out, pos, false
}

// uvarint reads a uvarint at b[pos]; one byte is the common case.
func uvarint(b []byte, pos int) (uint64, int, bool) {
	if pos < len(b) && b[pos] < 0x80 {
		return uint64(b[pos]), pos + 1, true
	}
	if pos >= len(b) {
		return 0, pos, false
	}
	v, n := binary.Uvarint(b[pos:])
	if n <= 0 {
		return 0, pos, false
	}
	return v, pos + n, true
}

// pieces yields the text of doc between its '"' bytes: one more piece than
// doc has quotes.
func pieces(doc []byte) func(yield func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for {
			i := bytes.IndexByte(doc, '"')
			if i < 0 {
				yield(doc)
				return
			}
			if !yield(doc[:i]) {
				return
			}
			doc = doc[i+1:]
		}
	}
}

func appendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// readStrings reads what appendStrings wrote: at most max strings, each of
// at most maxLen bytes.
func readStrings(b []byte, max, maxLen int) ([]string, []byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(max) {
		return nil, b, errors.New("a count out of range")
	}
	b = b[w:]
	out := make([]string, 0, n)
	for range n {
		l, w := binary.Uvarint(b)
		if w <= 0 || l > uint64(len(b)-w) || l > uint64(maxLen) {
			return nil, b, errors.New("a length out of range")
		}
		out = append(out, string(b[w:w+int(l)]))
		b = b[w+int(l):]
	}
	return out, b, nil
}
