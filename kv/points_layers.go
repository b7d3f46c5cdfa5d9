package kv

import (
	"bytes"
	"errors"
	"runtime/debug"
	"slices"
)

// errDeleted is what a layer's probe answers for a key it deletes: the
// files below are not looked into, and the key is absent.
var errDeleted = errors.New("kv: point index: deleted in a layer")

// pointStack is a point index as a store reads it: the file written whole
// (files[0]) and the layers nights wrote on top of it, oldest first. A read
// looks into the newest file first; the first that holds the key answers
// (a deletion answers "absent"). A night writes one layer of what it
// changed instead of the whole index again; the number of layers is
// bounded by the store's (a night that writes the store whole writes the
// index whole too).
type pointStack struct {
	files []*points
}

func (s *pointStack) base() *points { return s.files[0] }

// get is points.get through the layers.
func (s *pointStack) get(key, dst []byte) (out []byte, ok bool, err error) {
	if len(s.files) == 1 {
		return s.files[0].get(key, dst)
	}
	out = dst
	err = s.probes(func(buf *[]byte) error {
		var err error
		out, ok, err = s.probe(key, dst, buf)
		return err
	})
	return out, ok, err
}

// probes is points.probes: one fault handler covers every mapped file of
// the stack (the handling is per goroutine), and an index read with pread
// lends its buffer to every file's reads.
func (s *pointStack) probes(fn func(buf *[]byte) error) error {
	return s.files[0].probes(fn)
}

// probe is points.probe through the layers, newest first.
func (s *pointStack) probe(key, dst []byte, buf *[]byte) ([]byte, bool, error) {
	for i := len(s.files) - 1; i >= 0; i-- {
		out, ok, err := s.files[i].probe(key, dst, buf)
		if err == errDeleted {
			return dst, false, nil
		}
		if err != nil || ok {
			return out, ok, err
		}
	}
	return dst, false, nil
}

// touch is points.touch of the file written whole: the layers are small
// and read often, so their memory is cached anyway.
func (s *pointStack) touch(keys [][]byte) uint64 { return s.files[0].touch(keys) }

// unchanged is points.unchanged of every file: ErrReadAgain when one
// answers it and none fails.
func (s *pointStack) unchanged() error {
	var again error
	for _, p := range s.files {
		if err := p.unchanged(); errors.Is(err, ErrReadAgain) {
			again = err
		} else if err != nil {
			return err
		}
	}
	return again
}

// lookBefore looks at every file before a scan, so that a link made since
// the last read (ErrReadAgain: the chunks are then checked again as they
// are read) does not fail the scan; one made during it does.
func (s *pointStack) lookBefore() error {
	if err := s.unchanged(); err != nil && !errors.Is(err, ErrReadAgain) {
		return err
	}
	return nil
}

func (s *pointStack) adviseRandom() bool { return s.files[0].adviseRandom() }

func (s *pointStack) close() error {
	var err error
	for _, p := range s.files {
		if cerr := p.close(); err == nil {
			err = cerr
		}
	}
	return err
}

// scan calls fn for every key the stack holds, in key order, with its value
// decoded: each key once, as a read answers it, deleted keys left out.
func (s *pointStack) scan(fn func(key, value []byte) error) error {
	var val []byte
	return s.scanRaw(func(p *points, k, v []byte) error {
		var err error
		if val, _, err = p.value(val[:0], k, v); err != nil {
			return err
		}
		return fn(k, val)
	})
}

// scanRaw is scan with each value as stored, and the file it is from. The
// files' records are merged: on keys equal in several files, the newest
// file's record is the one taken.
func (s *pointStack) scanRaw(fn func(p *points, key, value []byte) error) (err error) {
	if slices.ContainsFunc(s.files, func(p *points) bool { return p.mapped != nil }) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer faulted(&err)
	}
	walks := make([]*recordWalk, len(s.files))
	for i, p := range s.files {
		walks[i] = &recordWalk{p: p}
		if err := walks[i].next(); err != nil {
			return err
		}
	}
	var key []byte
	for {
		top := -1
		for i := len(walks) - 1; i >= 0; i-- {
			if !walks[i].done && (top < 0 || bytes.Compare(walks[i].key, walks[top].key) < 0) {
				top = i
			}
		}
		if top < 0 {
			return nil
		}
		w := walks[top]
		if !w.p.layer || len(w.value) > 0 {
			if err := fn(w.p, w.key, w.value); err != nil {
				return err
			}
		}
		key = append(key[:0], w.key...)
		for _, x := range walks {
			if !x.done && bytes.Equal(x.key, key) {
				if err := x.next(); err != nil {
					return err
				}
			}
		}
	}
}

// scan is pointStack.scan of one file.
func (p *points) scan(fn func(key, value []byte) error) error {
	return (&pointStack{files: []*points{p}}).scan(fn)
}
