package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/productdata/pds/kv/jsonshape"
)

// A store of layout 3 (snapshot format 4 and later) keeps each subject's passport and
// evidence views for one visibility as one value of table TagViews: the
// evidence view repeats every claim of the passport, and compressed together
// the second costs little more than what it adds. The identity views live in
// the point index alone (points_format.go), compressed one by one with a dictionary
// of their own, so that a resolve item still costs one probe.
//
//	v\x00<subject>\x00<tenant>   uvarint(len(passport)+len(evidence)),
//	                             uvarint(len(passport)), then one zstd frame
//	                             of passport followed by evidence (each a
//	                             view value as AppendView encodes it)
//	d\x00views                   uvarint(the largest decoded frame), then the
//	                             frames' dictionary (raw content; none when
//	                             empty)
//
// The lengths come first because zstd frames with a dictionary leave out
// their content size when it is under 256 bytes; with them a read decodes
// into room made for exactly the frame and refuses one longer than the
// store's largest.
//
// A frame is compressed with a dictionary made of views of a spread of
// products (Train, coverDict), so that what every product shares (the JSON
// members, the sources, their licences) is not stored again in each: at
// 50,000 generated products a passport and evidence pair takes about a
// twentieth of its 17 KB, where Pebble's 4 KiB Snappy blocks took a third.
const (
	TagViews = 'v'
	TagDict  = 'd'
)

// dictViews is the key, in table TagDict, of the views' dictionary.
const dictViews = "views"

// dictLayers is the key, in table TagDict, of a store's count of layers
// (NewLayer): a uvarint, absent in a store written whole.
const dictLayers = "layers"

// The dictionaries' sizes. A zstd raw dictionary is copied into the
// encoder's history for every frame, so a larger one costs the build more
// than it saves (128 KiB: 2% larger frames than 256 KiB at 50,000 products);
// s2's dictionaries stop at 64 KiB.
const (
	viewsDictSize    = 128 << 10
	viewsDictSegment = 4 << 10 // coverDict's segments: 870 B a frame at 50,000 products, 890 with 1 KiB ones
	identityDictSize = s2.MaxDictSize
	minDictSize      = 64 // fewer sample bytes make no dictionary
	viewsDictID      = 1
)

// viewsLevel is the zstd level of the frames: klauspost's default (about
// zstd's level 3). Its "better" level makes frames 10% smaller and the
// build's compression 2.5 times as slow.
const viewsLevel = zstd.SpeedDefault

// Samples are the encoded views (AppendView) of a spread of products, from
// which Train makes the dictionaries: Passport[i] and Evidence[i] are the
// views of one product and visibility; Identity may be of more products
// (the table of their shapes wants a few thousand).
type Samples struct {
	Identity           [][]byte
	Passport, Evidence [][]byte
}

// Encoder turns views into the values a layout 3 store holds. It is safe for
// concurrent use: ingest compresses on every core.
type Encoder struct {
	views    *zstd.Encoder
	identity *s2.Dict         // point index version 2; nil: s2 without a dictionary
	shapes   *jsonshape.Table // point index version 3: identity views by shape
}

// newEncoder makes the encoder of the given dictionaries (either may be
// empty): d.IdentityShapes, when it is set, rather than d.Identity.
func newEncoder(d Dictionaries) (*Encoder, error) {
	viewsDict, identityDict := d.Views, d.Identity
	opts := []zstd.EOption{zstd.WithEncoderLevel(viewsLevel), zstd.WithEncoderCRC(false)}
	if len(viewsDict) > 0 {
		opts = append(opts, zstd.WithEncoderDictRaw(viewsDictID, viewsDict))
	}
	z, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		return nil, fmt.Errorf("kv: views encoder: %w", err)
	}
	e := &Encoder{views: z}
	if d.IdentityShapes != nil {
		if e.shapes, err = jsonshape.Parse(d.IdentityShapes); err != nil {
			return nil, fmt.Errorf("kv: identity shapes refused: %w", err)
		}
		return e, nil
	}
	if len(identityDict) > 0 {
		if e.identity = s2.NewDict(identityDict); e.identity == nil {
			return nil, errors.New("kv: identity dictionary refused")
		}
	}
	return e, nil
}

// Views returns the stored value of one subject's views for one visibility:
// pe holds the encoded passport view (its first passportLen bytes) followed
// by the encoded evidence view.
func (e *Encoder) Views(pe []byte, passportLen int) []byte {
	dst := binary.AppendUvarint(make([]byte, 0, len(pe)/4+24), uint64(len(pe)))
	dst = binary.AppendUvarint(dst, uint64(passportLen))
	return e.views.EncodeAll(pe, dst)
}

// Identity returns the stored value of subject's encoded identity view
// (AppendView): its body stored by shape (encodeShaped), or, for a store
// that keeps its base's s2 dictionary, an s2 block made with it.
func (e *Encoder) Identity(subject string, view []byte) []byte {
	if e.shapes != nil {
		return encodeShaped(e.shapes, subject, view)
	}
	buf := make([]byte, s2.MaxEncodedLen(len(view)))
	if e.identity == nil {
		return s2.EncodeBetter(buf, view)
	}
	return e.identity.EncodeBetter(buf, view)
}

// A KeyValue is one entry of the store as it holds it: the key and the
// stored value, for Builder.Set.
type KeyValue struct {
	Key, Value []byte
}

// IdentityEntry returns the entry of a subject's encoded identity view for
// one visibility (tenant "" is public).
func (e *Encoder) IdentityEntry(subject, tenant string, view []byte) KeyValue {
	return KeyValue{AppendViewKey(nil, TagIdentity, subject, tenant), e.Identity(subject, view)}
}

// ViewsEntry returns the entry of a subject's passport and evidence views
// for one visibility, pe as for Views.
func (e *Encoder) ViewsEntry(subject, tenant string, pe []byte, passportLen int) KeyValue {
	return KeyValue{AppendViewKey(nil, TagViews, subject, tenant), e.Views(pe, passportLen)}
}

// viewsDecoder reads the values of table TagViews.
type viewsDecoder struct {
	dec *zstd.Decoder
	max uint64 // the largest decoded frame of the store
}

// newViewsDecoder parses the value of d\x00views.
func newViewsDecoder(v []byte) (*viewsDecoder, error) {
	max, n := binary.Uvarint(v)
	if n <= 0 || max == 0 || max > maxFrame {
		return nil, errors.New("kv: the views' dictionary entry is corrupt")
	}
	opts := []zstd.DOption{zstd.WithDecoderConcurrency(0), zstd.WithDecodeAllCapLimit(true)}
	if dict := v[n:]; len(dict) > 0 {
		opts = append(opts, zstd.WithDecoderDictRaw(viewsDictID, slices.Clone(dict)))
	}
	d, err := zstd.NewReader(nil, opts...)
	if err != nil {
		return nil, fmt.Errorf("kv: views decoder: %w", err)
	}
	return &viewsDecoder{dec: d, max: max}, nil
}

// maxFrame bounds what a store may declare as its largest frame.
const maxFrame = 1 << 30

// viewsHeader splits a TagViews value: the decoded length of its frame, the
// passport's part of it, and the frame.
func viewsHeader(v []byte) (total, plen uint64, frame []byte, err error) {
	total, n := binary.Uvarint(v)
	if n <= 0 {
		return 0, 0, nil, errViewsCorrupt
	}
	plen, m := binary.Uvarint(v[n:])
	if m <= 0 || plen > total || total > maxFrame {
		return 0, 0, nil, errViewsCorrupt
	}
	return total, plen, v[n+m:], nil
}

// part appends to dst the passport (tag TagPassport) or the evidence view of
// the stored value v. The frame is decoded into room made for exactly it
// past dst (the decoder writes no further: WithDecodeAllCapLimit); the
// evidence view is then moved down over the passport.
func (d *viewsDecoder) part(dst, v []byte, tag byte) ([]byte, error) {
	total, plen, frame, err := viewsHeader(v)
	if err != nil || total > d.max {
		return dst, errViewsCorrupt
	}
	start := len(dst)
	dst = slices.Grow(dst, int(total))
	out, err := d.dec.DecodeAll(frame, dst[:start:start+int(total)])
	if err != nil || uint64(len(out)-start) != total {
		return dst, errViewsCorrupt
	}
	if total > 0 && &out[start] != &dst[:start+1][start] { // it decodes in place; should it not, copy
		copy(dst[start:start+int(total)], out[start:])
	}
	out = dst[:start+int(total)] // with dst's capacity, for the caller's next read
	end := start + int(plen)
	if tag == TagPassport {
		return out[:end], nil
	}
	m := copy(out[start:], out[end:])
	return out[:start+m], nil
}

func (d *viewsDecoder) close() { d.dec.Close() }

// decodeIdentity appends the identity view stored as the s2 block v to dst,
// refusing one that says it is longer than max.
func decodeIdentity(dict *s2.Dict, dst, v []byte, max uint64) ([]byte, error) {
	n, err := s2.DecodedLen(v)
	if err != nil || uint64(n) > max {
		return dst, errPointsCorrupt
	}
	dst = slices.Grow(dst, n)
	room := dst[len(dst) : len(dst)+n]
	var out []byte
	if dict == nil {
		out, err = s2.Decode(room, v)
	} else {
		out, err = dict.Decode(room, v)
	}
	if err != nil || len(out) != n {
		return dst, errPointsCorrupt
	}
	return dst[:len(dst)+n], nil
}

// An identity view stored by shape (point index version 3) is its
// AppendView encoding rearranged: the tenants part as it is, then
// uvarint(len(coverage)) and the coverage, then the body encoded by the
// table with the subject as context (the body names its subject, and its
// identifiers usually start with it).

// encodeShaped returns the stored value of subject's encoded view.
func encodeShaped(t *jsonshape.Table, subject string, view []byte) []byte {
	head, v, err := splitView(view)
	if err != nil {
		panic(fmt.Sprintf("kv: an identity view of %q that AppendView did not make: %v", subject, err)) // a bug in the caller
	}
	out := make([]byte, 0, len(head)+len(v.Coverage)+len(v.Body)/2+16)
	out = append(out, head...)
	out = binary.AppendUvarint(out, uint64(len(v.Coverage)))
	out = append(out, v.Coverage...)
	return t.Encode(out, v.Body, []byte(subject))
}

// splitView splits an encoded view into its tenants part and the view.
func splitView(view []byte) (head []byte, v View, err error) {
	n, err := tenantsLen(view)
	if err != nil {
		return nil, v, err
	}
	v, err = DecodeView(view)
	return view[:n], v, err
}

// tenantsLen is the length of the tenants part that starts b (a count, and
// each tenant's length and bytes).
func tenantsLen(b []byte) (int, error) {
	if len(b) > 0 && b[0] == 0 { // no tenants: the common case
		return 1, nil
	}
	nt, w := binary.Uvarint(b)
	if w <= 0 || nt > uint64(len(b)) {
		return 0, errCorrupt
	}
	at := w
	for range nt {
		n, w := binary.Uvarint(b[at:])
		if w <= 0 || n > uint64(len(b)-at-w) {
			return 0, errCorrupt
		}
		at += w + int(n)
	}
	return at, nil
}

// shapedParts splits a value of encodeShaped: its tenants part, its
// coverage, the encoded body and the body's decoded length, and the length
// of the view it decodes to.
func shapedParts(v []byte) (head, cov, body []byte, bodyLen int, total uint64, err error) {
	n, err := tenantsLen(v)
	if err != nil {
		return nil, nil, nil, 0, 0, err
	}
	cl, w := binary.Uvarint(v[n:])
	if w <= 0 || cl > uint64(len(v)-n-w) {
		return nil, nil, nil, 0, 0, errCorrupt
	}
	head, cov, body = v[:n], v[n+w:n+w+int(cl)], v[n+w+int(cl):]
	bl, err := jsonshape.DecodedLen(body)
	if err != nil {
		return nil, nil, nil, 0, 0, errCorrupt
	}
	return head, cov, body, bl, uint64(n+uvarintLen(uint64(bl))+bl) + cl, nil
}

// decodeShaped appends the identity view stored as v (encodeShaped) to dst,
// refusing one that says it is longer than max. subject is the one the view
// is stored under.
func decodeShaped(t *jsonshape.Table, dst, v, subject []byte, max uint64) ([]byte, error) {
	head, cov, body, bl, total, err := shapedParts(v)
	if err != nil || total > max {
		return dst, errPointsCorrupt
	}
	start := len(dst)
	out := slices.Grow(dst, int(total))
	out = append(out, head...)
	out = binary.AppendUvarint(out, uint64(bl))
	if out, err = t.Decode(out, body, subject, bl); err != nil {
		return dst, errPointsCorrupt
	}
	out = append(out, cov...)
	if uint64(len(out)-start) != total {
		return dst, errPointsCorrupt
	}
	return out, nil
}

// subjectOfKey is the subject of a full view key (AppendViewKey).
func subjectOfKey(k []byte) []byte {
	if len(k) < 2 {
		return nil
	}
	k = k[2:]
	if i := bytes.IndexByte(k, 0); i >= 0 {
		return k[:i]
	}
	return k
}
