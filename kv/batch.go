package kv

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"slices"

	"github.com/productdata/pds/domain"
)

// ViewRef names one identity view to read: its product's canonical subject
// and the tenant whose view it is ("" = public).
type ViewRef struct {
	Subject string
	Tenant  string
}

// FoundView is the answer to one ViewRef: the decoded view, when Found.
type FoundView struct {
	View  View
	Found bool
}

// FoundAlias is the answer to one identifier: the product it names, when
// Found.
type FoundAlias struct {
	Alias Alias
	Found bool
}

// Batch holds the buffers of a Reader's batched reads (Identities,
// Aliases). A caller keeps one from a batch to the next, so that once they
// have grown a read allocates nothing of its own. The zero Batch is ready
// to use; it is not safe for concurrent use.
type Batch struct {
	keys    []byte // every key of the read, one after the other
	reads   []batchRead
	views   []FoundView
	aliases []FoundAlias
	value   []byte // an alias value, decoded before the next read
}

// batchRead is one key of a batched read and the index of what asked for
// it.
type batchRead struct {
	key    []byte
	at     int
	w0, w1 uint64 // the key's first two words, for sortReads
}

// Identities reads the identity views refs name and returns them in refs'
// order: the answer at i is refs[i]'s. Each stored view is appended to
// arena, which is returned grown; a FoundView's Body and Coverage alias it
// and stay valid when the arena is grown again (an earlier backing array
// keeps its bytes). The answers are valid until b's next read.
//
// The views are read in the order that is quickest for the store: Pebble's
// seeks in key order, the point index's probes as given, a window of
// probes at a time with their memory loaded together (Prefetch).
func (r *Reader) Identities(b *Batch, refs []ViewRef, arena []byte) ([]FoundView, []byte, error) {
	b.keys, b.reads = b.keys[:0], b.reads[:0]
	for i, ref := range refs {
		b.reads = append(b.reads, batchRead{key: b.key(TagIdentity, ref.Subject, ref.Tenant, true), at: i})
	}
	if !r.Keyed(TagIdentity) {
		sortReads(b.reads)
	}
	b.views = slices.Grow(b.views[:0], len(refs))[:len(refs)]
	clear(b.views)
	if r.Keyed(TagIdentity) {
		arena, err := r.pointIdentities(b, arena)
		if err != nil {
			return nil, arena, err
		}
		return b.views, arena, nil
	}
	var window [prefetchWindow][]byte
	for i, rd := range b.reads {
		if i%len(window) == 0 { // the next window's probes, loaded together
			next := b.reads[i:min(i+len(window), len(b.reads))]
			for j, rd := range next {
				window[j] = rd.key
			}
			r.Prefetch(window[:len(next)])
		}
		start := len(arena)
		var ok bool
		var err error
		if arena, ok, err = r.Get(rd.key, arena); err != nil {
			return nil, arena, err
		}
		if !ok {
			continue
		}
		v, err := DecodeView(arena[start:])
		if err != nil {
			return nil, arena, domain.Internal(err)
		}
		b.views[rd.at] = FoundView{View: v, Found: true}
	}
	return b.views, arena, nil
}

// pointIdentities is Identities' reads from the point index: Get's, with
// the index's fault handling set up once for the batch.
func (r *Reader) pointIdentities(b *Batch, arena []byte) ([]byte, error) {
	p := r.points
	r.pointsRead = true
	var bad error // a view that is not one, read from an index that is sound
	err := p.probes(func(buf *[]byte) error {
		var window [prefetchWindow][]byte
		for i, rd := range b.reads {
			if i%len(window) == 0 { // the next window's probes, loaded together
				next := b.reads[i:min(i+len(window), len(b.reads))]
				for j, rd := range next {
					window[j] = rd.key
				}
				r.touched += p.touch(window[:len(next)])
			}
			start := len(arena)
			var ok bool
			var err error
			if arena, ok, err = p.probe(rd.key, arena, buf); err != nil {
				return err
			}
			if !ok {
				continue
			}
			v, err := DecodeView(arena[start:])
			if err != nil {
				bad = domain.Internal(err)
				return nil
			}
			b.views[rd.at] = FoundView{View: v, Found: true}
		}
		return nil
	})
	if err != nil {
		if r.onDamage != nil && errors.Is(err, domain.ErrDamaged) {
			r.onDamage(err) // as Get tells of a damaged index
		}
		return arena, err
	}
	return arena, bad
}

// Aliases looks up which product each identifier names and returns the
// answers in identifiers' order: the answer at i is identifiers[i]'s. The
// aliases are read in key order. The answers are valid until b's next read.
func (r *Reader) Aliases(b *Batch, identifiers []string) ([]FoundAlias, error) {
	b.keys, b.reads = b.keys[:0], b.reads[:0]
	for i, id := range identifiers {
		b.reads = append(b.reads, batchRead{key: b.key(TagAlias, id, "", false), at: i})
	}
	sortReads(b.reads)
	b.aliases = slices.Grow(b.aliases[:0], len(identifiers))[:len(identifiers)]
	clear(b.aliases)
	for _, rd := range b.reads {
		var ok bool
		var err error
		if b.value, ok, err = r.Get(rd.key, b.value[:0]); err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		a, err := DecodeAlias(b.value)
		if err != nil {
			return nil, domain.Internal(err)
		}
		b.aliases[rd.at] = FoundAlias{Alias: a, Found: true}
	}
	return b.aliases, nil
}

// key appends the key of table tag for subject (and tenant, for a view)
// to b.keys and returns it. The buffer only grows within a read, so every
// key returned stays valid.
func (b *Batch) key(tag byte, subject, tenant string, view bool) []byte {
	start := len(b.keys)
	if view {
		b.keys = AppendViewKey(b.keys, tag, subject, tenant)
	} else {
		b.keys = AppendKey(b.keys, tag, subject)
	}
	return b.keys[start:len(b.keys):len(b.keys)]
}

// sortReads sorts rs by key. The keys of one batch share their first bytes
// (table, namespace), so bytes.Compare spends most of its time on them; each
// key's bytes 0 to 7 and 8 to 15 are read once as two big-endian numbers
// (zero-padded), which order the keys as the bytes do, and the keys are
// compared whole only when both tie. That sorts 1000 keys in about a third
// of the time.
func sortReads(rs []batchRead) {
	for i := range rs {
		rs[i].w0, rs[i].w1 = word(rs[i].key, 0), word(rs[i].key, 8)
	}
	slices.SortFunc(rs, func(x, y batchRead) int {
		if x.w0 != y.w0 {
			return cmp.Compare(x.w0, y.w0)
		}
		if x.w1 != y.w1 {
			return cmp.Compare(x.w1, y.w1)
		}
		return bytes.Compare(x.key, y.key)
	})
}

// word is the big-endian number of key's 8 bytes from at, zero-padded.
func word(key []byte, at int) uint64 {
	if len(key) >= at+8 {
		return binary.BigEndian.Uint64(key[at:])
	}
	var w [8]byte
	if len(key) > at {
		copy(w[:], key[at:])
	}
	return binary.BigEndian.Uint64(w[:])
}

// Bytes is how many bytes b's buffers hold, for a caller that bounds what
// it keeps for the next batch.
func (b *Batch) Bytes() int { return cap(b.keys) + cap(b.value) }
