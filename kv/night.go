package kv

import (
	"bytes"
	"fmt"
	"slices"
)

// Sorted is a walk of entries in increasing key order, such as an iterator
// of a build's scratch store. Next moves to the next entry (to the first,
// on its first call) and reports whether there is one; Value may fail (a
// value made on demand); Err is the walk's error once Next has reported
// false. The slices are valid until the next call of Next.
type Sorted interface {
	Next() bool
	Key() []byte
	Value() ([]byte, error)
	Err() error
}

// BaseStore reads the tables of a night's base as they are stored (see
// Store.ScanRaw): a *Store, or a snapshot that holds one.
type BaseStore interface {
	ScanRaw(tag byte, fn func(key, value []byte) error) error
}

// Night is what a build on a base (an incremental build) tells kv of the
// base, for the store it writes: the base itself, and the base's products
// that are not kept as they are (restated, deleted or computed again),
// whose entries are the night's or gone. Every other product's entries are
// the base's.
type Night struct {
	Base BaseStore
	// Dropped lists the products not kept, by canonical subject, sorted
	// and distinct; IsDropped answers the same of one subject.
	Dropped   []string
	IsDropped func(subject string) bool
	// Identifiers lists, sorted and distinct, the identifiers of the
	// dropped products as the base holds them: every key of the base's
	// table TagAlias whose alias names a dropped product is among them.
	// A layer's WriteAliases reads only those keys of the base.
	Identifiers []string
}

// Entry is one entry of a small table, named by its key within the table.
type Entry struct {
	Name  string
	Value []byte
}

// cursor walks a Sorted beside a walk of the base.
type cursor struct {
	s  Sorted
	ok bool
}

func newCursor(s Sorted) *cursor { return &cursor{s: s, ok: s.Next()} }

// emitUntil gives emit the entries whose keys sort before limit, and of
// table tag (every entry of tag: limit nil).
func (c *cursor) emitUntil(tag byte, limit []byte, emit func(key, value []byte) error) error {
	for ; c.ok && c.inTable(tag) && (limit == nil || bytes.Compare(c.s.Key(), limit) < 0); c.ok = c.s.Next() {
		v, err := c.s.Value()
		if err != nil {
			return err
		}
		if err := emit(c.s.Key(), v); err != nil {
			return err
		}
	}
	return nil
}

func (c *cursor) inTable(tag byte) bool {
	k := c.s.Key()
	return len(k) >= 2 && k[0] == tag && k[1] == 0
}

// end is the walk's error, or that of an entry left over.
func (c *cursor) end() error {
	if c.ok {
		return fmt.Errorf("kv: a night's entry %q is of no table written", c.s.Key())
	}
	return c.s.Err()
}

// WriteNightViews writes the view tables (PointsTag and TagViews) of a
// store built on n.Base from views, the entries of the products the night
// computed (keys and values as Encoder and AppendViewKey make them), in key
// order. The point index is written whole (WritePoints: the base's entries
// of the products kept and the night's), or as a layer on the base's
// (WritePointsLayer). Table TagViews is written whole too by a Builder of
// NewBuilder, and by a layer (NewLayer) as a layer on the base's
// (layerTable).
func (b *Builder) WriteNightViews(n *Night, views Sorted) error {
	c := newCursor(views)
	points, tagViews := b.mergeTable, b.mergeTable
	if b.points != nil && b.points.layer {
		points = b.layerTable
	}
	if b.layer {
		tagViews = b.layerTable
	}
	if err := points(n, c, PointsTag); err != nil {
		return err
	}
	if err := tagViews(n, c, TagViews); err != nil {
		return err
	}
	return c.end()
}

// mergeTable writes table tag: the base's entries of the products kept,
// and the night's, in key order.
func (b *Builder) mergeTable(n *Night, c *cursor, tag byte) error {
	var key []byte
	err := n.Base.ScanRaw(tag, func(k, v []byte) error {
		if n.IsDropped(string(viewSubject(k))) {
			return nil
		}
		key = append(append(key[:0], tag, 0), k...)
		if err := c.emitUntil(tag, key, b.Set); err != nil {
			return err
		}
		return b.Set(key, v)
	})
	if err != nil {
		return err
	}
	return c.emitUntil(tag, nil, b.Set)
}

// viewSubject is the subject of a view key's remainder "subject\x00tenant".
func viewSubject(k []byte) []byte {
	if i := bytes.IndexByte(k, 0); i >= 0 {
		return k[:i]
	}
	return k
}

// layerTable writes table tag of a layer: the night's entries, and a
// deletion of each entry the base holds of a dropped product that the night
// does not hold. Of the base it reads only the dropped products' entries,
// by prefix, from table TagViews: a product has one identity view
// (PointsTag, the point index's layer) and one TagViews entry per
// visibility, under the same keys. In TagViews, an entry the base holds
// with the same bytes is not written again (a product restated unchanged
// costs nothing); the point index's layer takes every identity view the
// night computed.
func (b *Builder) layerTable(n *Night, c *cursor, tag byte) error {
	sc, err := b.BaseScanner(TagViews)
	if err != nil {
		return err
	}
	defer sc.Close()
	type entry struct{ key, value []byte }
	var base []entry
	for _, subject := range n.Dropped {
		prefix := append(append([]byte{tag, 0}, subject...), 0)
		base = base[:0]
		err := sc.Scan(prefix[2:], func(k, v []byte) error {
			e := entry{key: append(slices.Clip(prefix[:2]), k...)}
			if tag == TagViews {
				e.value = bytes.Clone(v)
			}
			base = append(base, e)
			return nil
		})
		if err != nil {
			return err
		}
		// The night's entries before the subject's are of products new to
		// the base; then the subject's, beside the base's.
		if err := c.emitUntil(tag, prefix, b.Set); err != nil {
			return err
		}
		for ; c.ok && bytes.HasPrefix(c.s.Key(), prefix); c.ok = c.s.Next() {
			key := c.s.Key()
			value, err := c.s.Value()
			if err != nil {
				return err
			}
			for len(base) > 0 && bytes.Compare(base[0].key, key) < 0 {
				if err := b.Delete(base[0].key); err != nil {
					return err
				}
				base = base[1:]
			}
			if len(base) > 0 && bytes.Equal(base[0].key, key) {
				same := tag == TagViews && bytes.Equal(base[0].value, value)
				base = base[1:]
				if same {
					continue
				}
			}
			if err := b.Set(key, value); err != nil {
				return err
			}
		}
		for _, e := range base {
			if err := b.Delete(e.key); err != nil {
				return err
			}
		}
	}
	return c.emitUntil(tag, nil, b.Set)
}

// WriteAliases writes table TagAlias from aliases, keyed by identifier
// (each value as AppendAlias makes it), in identifier order. Without a
// night (n nil) they are the table. On a base, the base's aliases of the
// products kept are merged in as they are; a layer (NewLayer) writes only
// the night's aliases the base does not hold with the same bytes, and
// deletes each alias of a dropped product the night does not hold. Of the
// base a layer reads only the aliases n.Identifiers name.
func (b *Builder) WriteAliases(n *Night, aliases Sorted) error {
	c := newCursor(&prefixed{s: aliases, tag: TagAlias})
	var key []byte
	var err error
	switch {
	case n != nil && b.layer:
		var sc *RawScanner
		if sc, err = b.BaseScanner(TagAlias); err != nil {
			return err
		}
		defer sc.Close()
		err = n.eachDroppedAlias(sc, func(k, v []byte) error {
			key = append(append(key[:0], TagAlias, 0), k...)
			if err := c.emitUntil(TagAlias, key, b.Set); err != nil {
				return err
			}
			if !c.ok || !bytes.Equal(c.s.Key(), key) {
				return b.Delete(key)
			}
			val, err := c.s.Value()
			if err != nil {
				return err
			}
			c.ok = c.s.Next()
			if bytes.Equal(val, v) {
				return nil
			}
			return b.Set(key, val)
		})
	case n != nil:
		err = n.Base.ScanRaw(TagAlias, func(k, v []byte) error {
			a, err := DecodeAlias(v)
			if err != nil {
				return err
			}
			if n.IsDropped(a.Subject) {
				return nil
			}
			key = append(append(key[:0], TagAlias, 0), k...)
			if err := c.emitUntil(TagAlias, key, b.Set); err != nil {
				return err
			}
			return b.Set(key, v)
		})
	}
	if err != nil {
		return err
	}
	if err := c.emitUntil(TagAlias, nil, b.Set); err != nil {
		return err
	}
	return c.end()
}

// eachDroppedAlias calls fn, in key order, with each alias of the base
// (sc, a scanner of its table TagAlias) that names a dropped product: those
// of n.Identifiers whose alias does.
func (n *Night) eachDroppedAlias(sc *RawScanner, fn func(key, value []byte) error) error {
	for _, id := range n.Identifiers {
		err := sc.Scan([]byte(id), func(k, v []byte) error {
			if string(k) != id {
				return nil
			}
			a, err := DecodeAlias(v)
			if err != nil {
				return err
			}
			if !n.IsDropped(a.Subject) {
				return nil
			}
			return fn(k, v)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// prefixed is a Sorted whose keys are given the prefix of table tag.
type prefixed struct {
	s   Sorted
	tag byte
	key []byte
}

func (p *prefixed) Next() bool {
	if !p.s.Next() {
		return false
	}
	p.key = append(append(p.key[:0], p.tag, 0), p.s.Key()...)
	return true
}

func (p *prefixed) Key() []byte { return p.key }

func (p *prefixed) Value() ([]byte, error) { return p.s.Value() }

func (p *prefixed) Err() error { return p.s.Err() }

// WriteSources writes table TagSource: each source by its id, sorted.
func (b *Builder) WriteSources(entries []Entry) error { return b.writeSmall(TagSource, entries) }

// WriteMeta writes table TagMeta: each metadata value by its name
// (MetaCursorKey, ...), sorted.
func (b *Builder) WriteMeta(entries []Entry) error { return b.writeSmall(TagMeta, entries) }

// writeSmall writes the entries of a small table, in key order: all of
// them to a store written whole; to a layer, those the base does not hold
// with the same bytes, and a deletion of each key the base holds that
// entries do not.
func (b *Builder) writeSmall(tag byte, entries []Entry) error {
	keyed := make([][2][]byte, len(entries))
	for i, e := range entries {
		keyed[i] = [2][]byte{Key(tag, e.Name), e.Value}
	}
	if !b.layer {
		for _, e := range keyed {
			if err := b.Set(e[0], e[1]); err != nil {
				return err
			}
		}
		return nil
	}
	sc, err := b.BaseScanner(tag)
	if err != nil {
		return err
	}
	defer sc.Close()
	var key []byte
	err = sc.Scan(nil, func(k, v []byte) error {
		key = append(append(key[:0], tag, 0), k...)
		for ; len(keyed) > 0 && bytes.Compare(keyed[0][0], key) < 0; keyed = keyed[1:] {
			if err := b.Set(keyed[0][0], keyed[0][1]); err != nil {
				return err
			}
		}
		if len(keyed) > 0 && bytes.Equal(keyed[0][0], key) {
			e := keyed[0]
			keyed = keyed[1:]
			if bytes.Equal(e[1], v) {
				return nil
			}
			return b.Set(e[0], e[1])
		}
		return b.Delete(key)
	})
	if err != nil {
		return err
	}
	for _, e := range keyed {
		if err := b.Set(e[0], e[1]); err != nil {
			return err
		}
	}
	return nil
}
