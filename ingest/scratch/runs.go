package scratch

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"unsafe"
)

// runStore is the scratch store's ordered store: an external sort written
// for the job.
//
// Writers stage entries in chunks of their own (runChunk). A committed chunk
// joins the run being gathered; when that holds runBytes, a goroutine sorts
// its entries by key and writes them to a file, while the next run gathers.
// A reader merges the runs' files in key order, the last write of a key
// winning, as it would in Pebble. Nothing is compacted: each entry is
// written once and read once by each pass over its table.
//
// Why not Pebble's memtable and flushes: at 200,000 products, inserting
// into its memtable's skiplist, flushing the memtables to tables and merging
// them back takes about 12% of a build's CPU, for entries that are written once, read once in order and
// never looked up by key. Sorting an array of entries by a 32-byte prefix
// of their keys, writing them out as they are and merging the files does
// the same job with less work (BENCHMARKS.md).
type runStore struct {
	dir      string
	runBytes int

	mu      sync.Mutex
	cond    *sync.Cond // signalled when a run's write ends
	active  []*runChunk
	size    int    // memory of active: its chunks' bytes and entries (runChunk.size)
	writing int    // runs being sorted and written
	runs    []*run // written runs, oldest first
	err     error  // the first failed write; every later call returns it
	files   int
	// mergeBelow is the size under which a committed chunk is copied into
	// the last one (chunkBytes/4; tests set 0 to keep every chunk).
	mergeBelow int
}

// runBytes is how much memory a run takes before it is sorted and written,
// its entries' bytes and their runEntry records: the memtable size of the
// Pebble store it replaced.
const runBytes = 32 << 20

// chunkBytes is how much memory a writer stages before it commits its chunk.
const chunkBytes = 4 << 20

func openRunStore(dir string, size int) (*runStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("scratch: %w", err)
	}
	rs := &runStore{dir: dir, runBytes: size, mergeBelow: chunkBytes / 4}
	rs.cond = sync.NewCond(&rs.mu)
	return rs, nil
}

// runChunk is entries staged by one writer: their bytes, one after the
// other, and where each is.
type runChunk struct {
	data []byte
	ents []runEntry
}

// runEntry is one staged entry: its key's first prefixLen bytes
// (zero-padded, as big-endian words, so that comparing the words compares
// the keys' prefixes), which chunk of the run it is in, where it starts and
// its key's and value's lengths. The prefix is long enough for a product's
// claim key (tag, subject, claim id) to be decided by the words alone: the
// sort then reads no key bytes in the chunks, which are spread over 32 MiB.
type runEntry struct {
	p          [prefixLen / 8]uint64
	chunk, off uint32
	klen, vlen uint32
}

const prefixLen = 32

var chunkPool = sync.Pool{New: func() any { return &runChunk{data: make([]byte, 0, chunkBytes+chunkBytes/4)} }}

func newChunk() *runChunk {
	c := chunkPool.Get().(*runChunk)
	c.data, c.ents = c.data[:0], c.ents[:0]
	return c
}

// size is the memory the chunk's entries take: their bytes and records.
func (c *runChunk) size() int { return len(c.data) + len(c.ents)*int(unsafe.Sizeof(runEntry{})) }

func (c *runChunk) add(key, value []byte) {
	var pre [prefixLen]byte
	copy(pre[:], key)
	e := runEntry{off: uint32(len(c.data)), klen: uint32(len(key)), vlen: uint32(len(value))}
	for i := range e.p {
		e.p[i] = binary.BigEndian.Uint64(pre[8*i:])
	}
	c.ents = append(c.ents, e)
	c.data = append(append(c.data, key...), value...)
}

// commit adds a writer's chunk to the run being gathered; the chunk is the
// store's from then on. A full run is handed to a goroutine that writes it.
func (rs *runStore) commit(c *runChunk) error {
	if len(c.ents) == 0 {
		chunkPool.Put(c)
		return nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.err != nil {
		return rs.err
	}
	rs.size += c.size()
	// A small chunk (a writer flushed early) is copied into the last one
	// when it fits, rather than kept with its whole buffer.
	if n := len(rs.active); n > 0 && c.size() < rs.mergeBelow {
		if last := rs.active[n-1]; cap(last.data)-len(last.data) >= len(c.data) {
			base := uint32(len(last.data))
			last.data = append(last.data, c.data...)
			for _, e := range c.ents {
				e.off += base
				last.ents = append(last.ents, e)
			}
			chunkPool.Put(c)
			c = nil
		}
	}
	if c != nil {
		rs.active = append(rs.active, c)
	}
	if rs.size >= rs.runBytes {
		rs.startWriteLocked(false)
	}
	return nil
}

// startWriteLocked hands the gathered chunks to a goroutine that sorts and
// writes them as a run. At most one run is written at a time: a second full
// run waits for the first, which bounds the memory to two runs. Unless
// force, the run is written only if it is still full once the wait is over
// (another committer that waited too may have written it).
func (rs *runStore) startWriteLocked(force bool) {
	for rs.writing > 0 {
		rs.cond.Wait()
	}
	if len(rs.active) == 0 || !force && rs.size < rs.runBytes {
		return
	}
	chunks := rs.active
	rs.active, rs.size = nil, 0
	rs.files++
	path := filepath.Join(rs.dir, fmt.Sprintf("%06d.run", rs.files))
	rs.writing++
	go func() {
		r, err := writeRun(path, chunks)
		for _, c := range chunks {
			if cap(c.data) <= 2*chunkBytes {
				chunkPool.Put(c)
			}
		}
		rs.mu.Lock()
		if err != nil && rs.err == nil {
			rs.err = err
		}
		if r != nil {
			rs.runs = append(rs.runs, r)
		}
		rs.writing--
		rs.cond.Broadcast()
		rs.mu.Unlock()
	}()
}

// settle writes what is gathered and waits until every run is written, so
// that a reader made now sees every committed entry. It returns the runs.
func (rs *runStore) settle() ([]*run, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.startWriteLocked(true)
	for rs.writing > 0 {
		rs.cond.Wait()
	}
	return slices.Clip(rs.runs), rs.err
}

// run is one sorted file: its entries are uvarint key length, uvarint value
// length, key, value, in key order with no key twice. index holds every
// indexEvery-th key and where its entry starts, for seeks.
type run struct {
	f           *os.File
	size        int64
	index       []runIndex
	first, last []byte // its smallest and largest key
}

type runIndex struct {
	key []byte
	off int64
}

const indexEvery = 64

// writeRun sorts the chunks' entries by key, the later write of a key
// first, and writes each key once (its last write) to a new file at path.
func writeRun(path string, chunks []*runChunk) (*run, error) {
	n := 0
	for _, c := range chunks {
		n += len(c.ents)
	}
	ents := make([]runEntry, 0, n)
	for i, c := range chunks {
		for _, e := range c.ents {
			e.chunk = uint32(i)
			ents = append(ents, e)
		}
	}
	key := func(e *runEntry) []byte {
		d := chunks[e.chunk].data
		return d[e.off : e.off+e.klen]
	}
	slices.SortFunc(ents, func(a, b runEntry) int {
		for i := range a.p {
			if a.p[i] != b.p[i] {
				return cmp.Compare(a.p[i], b.p[i])
			}
		}
		if a.klen > prefixLen || b.klen > prefixLen {
			if c := bytes.Compare(key(&a), key(&b)); c != 0 {
				return c
			}
		} else if c := cmp.Compare(a.klen, b.klen); c != 0 {
			return c // equal prefixes, both keys within them: the shorter sorts first
		}
		// The same key: the later write first (a later chunk, or later in its chunk).
		if c := cmp.Compare(b.chunk, a.chunk); c != 0 {
			return c
		}
		return cmp.Compare(b.off, a.off)
	})
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("scratch: %w", err)
	}
	r := &run{f: f}
	w := bufio.NewWriterSize(f, 256<<10)
	var hdr [2 * binary.MaxVarintLen32]byte
	var prev []byte
	written := 0
	for i := range ents {
		e := &ents[i]
		k := key(e)
		if i > 0 && bytes.Equal(k, prev) {
			continue // an earlier write of the key written just before
		}
		prev = k
		if written%indexEvery == 0 {
			r.index = append(r.index, runIndex{key: bytes.Clone(k), off: r.size})
		}
		written++
		h := binary.AppendUvarint(binary.AppendUvarint(hdr[:0], uint64(e.klen)), uint64(e.vlen))
		d := chunks[e.chunk].data
		w.Write(h)
		w.Write(d[e.off : e.off+e.klen+e.vlen])
		r.size += int64(len(h)) + int64(e.klen) + int64(e.vlen)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return nil, fmt.Errorf("scratch: %w", err)
	}
	r.first, r.last = r.index[0].key, bytes.Clone(prev)
	return r, nil
}

// seekOffset is where to start reading r for the first key at or after
// key: the entry of the last indexed key before it.
func (r *run) seekOffset(key []byte) int64 {
	i, _ := slices.BinarySearchFunc(r.index, key, func(x runIndex, k []byte) int { return bytes.Compare(x.key, k) })
	if i == 0 {
		return 0
	}
	return r.index[i-1].off
}

// close closes every run's file.
func (rs *runStore) close() error {
	rs.mu.Lock()
	for rs.writing > 0 {
		rs.cond.Wait()
	}
	runs := rs.runs
	rs.runs, rs.active = nil, nil
	rs.mu.Unlock()
	var errs []error
	for _, r := range runs {
		errs = append(errs, r.f.Close())
	}
	return errors.Join(errs...)
}

// runIter reads one run from an offset, an entry at a time.
type runIter struct {
	r     *bufio.Reader
	order int // the run's place, oldest first: of equal keys the newest wins
	key   []byte
	value []byte
	n     int    // bytes of the current entry in r's buffer, discarded by next
	big   []byte // the current entry when it does not fit r's buffer
	limit uint64 // the run's size: no entry is larger
	err   error
}

const runReadBuf = 32 << 10

// next reads the next entry; false at the end or on an error (err).
func (it *runIter) next() bool {
	if it.n > 0 {
		it.r.Discard(it.n)
		it.n = 0
	}
	hdr, err := it.r.Peek(2 * binary.MaxVarintLen32)
	if len(hdr) == 0 {
		if err != io.EOF {
			it.err = err
		}
		return false
	}
	klen, a := binary.Uvarint(hdr)
	vlen, b := binary.Uvarint(hdr[max(a, 0):])
	if a <= 0 || b <= 0 || klen > it.limit || vlen > it.limit-klen {
		it.err = errors.New("scratch: a run's entry header is corrupt")
		return false
	}
	h, size := a+b, a+b+int(klen)+int(vlen)
	if size <= it.r.Size() {
		e, err := it.r.Peek(size)
		if err != nil {
			it.err = fmt.Errorf("scratch: a run ends inside an entry: %w", err)
			return false
		}
		it.key, it.value, it.n = e[h:h+int(klen)], e[h+int(klen):], size
		return true
	}
	it.r.Discard(h)
	it.big = slices.Grow(it.big[:0], int(klen+vlen))[:klen+vlen]
	if _, err := io.ReadFull(it.r, it.big); err != nil {
		it.err = fmt.Errorf("scratch: a run ends inside an entry: %w", err)
		return false
	}
	it.key, it.value = it.big[:klen], it.big[klen:]
	return true
}

// runMerge iterates over the keys in [lower, upper) of a set of runs, in
// key order, each key once with its newest value.
type runMerge struct {
	lower, upper []byte // upper nil: no bound
	runs         []*run
	iters        []*runIter // by run, made on first use
	h            runHeap
	cur          []byte // the current key, kept while the runs move past it
	seekKey      []byte // seek's copy of its key
	valid        bool
	err          error
}

func newRunMerge(runs []*run, lower, upper []byte) *runMerge {
	return &runMerge{lower: bytes.Clone(lower), upper: bytes.Clone(upper), runs: runs, iters: make([]*runIter, len(runs))}
}

// belowUpper reports whether key is below the upper bound.
func (m *runMerge) belowUpper(key []byte) bool {
	return m.upper == nil || bytes.Compare(key, m.upper) < 0
}

// SeekGE positions the merge at the first key at or after key (and lower).
func (m *runMerge) SeekGE(key []byte) bool {
	if bytes.Compare(key, m.lower) < 0 {
		key = m.lower
	}
	// key may be the merge's own Key(), whose bytes the runs overwrite as
	// they move: keep a copy.
	m.seekKey = append(m.seekKey[:0], key...)
	key = m.seekKey
	m.h = m.h[:0]
	for i, r := range m.runs {
		if bytes.Compare(r.last, key) < 0 || !m.belowUpper(r.first) {
			continue // no key of the range in this run
		}
		it := m.iters[i]
		sr := io.NewSectionReader(r.f, r.seekOffset(key), r.size)
		if it == nil {
			it = &runIter{r: bufio.NewReaderSize(sr, runReadBuf), order: i, limit: uint64(r.size)}
			m.iters[i] = it
		} else {
			it.r.Reset(sr)
			it.n = 0
		}
		found := false
		for it.next() {
			if bytes.Compare(it.key, key) >= 0 {
				found = true
				break
			}
		}
		if it.err != nil && m.err == nil {
			m.err = it.err
		}
		if found && m.belowUpper(it.key) {
			m.h = append(m.h, it)
		}
	}
	heap.Init(&m.h)
	m.valid = m.err == nil && len(m.h) > 0
	return m.valid
}

// Next moves past the current key, and past its older writes in other runs.
func (m *runMerge) Next() bool {
	if !m.valid {
		return false
	}
	m.cur = append(m.cur[:0], m.h[0].key...) // the top's bytes change as it moves
	for len(m.h) > 0 && bytes.Equal(m.h[0].key, m.cur) {
		m.advanceTop()
	}
	m.valid = m.err == nil && len(m.h) > 0
	return m.valid
}

// First positions the merge at its first key.
func (m *runMerge) First() bool { return m.SeekGE(m.lower) }

// Valid reports whether the merge is at a key.
func (m *runMerge) Valid() bool { return m.valid }

// Key and Value are the current entry's, valid until the merge moves.
func (m *runMerge) Key() []byte {
	if !m.valid {
		return nil
	}
	return m.h[0].key
}

func (m *runMerge) Value() []byte {
	if !m.valid {
		return nil
	}
	return m.h[0].value
}

// Error is the error that ended the merge early, if any.
func (m *runMerge) Error() error { return m.err }

// Close ends the merge; the runs' files stay open for other readers.
func (m *runMerge) Close() error { return m.err }

// advanceTop moves the top run to its next entry, or drops it at its end or
// past upper.
func (m *runMerge) advanceTop() {
	it := m.h[0]
	if it.next() && m.belowUpper(it.key) {
		heap.Fix(&m.h, 0)
		return
	}
	if it.err != nil && m.err == nil {
		m.err = it.err
	}
	heap.Pop(&m.h)
}

// runHeap orders the runs' current entries by key, the newest run first
// among equal keys.
type runHeap []*runIter

func (h runHeap) Len() int { return len(h) }
func (h runHeap) Less(i, j int) bool {
	if c := bytes.Compare(h[i].key, h[j].key); c != 0 {
		return c < 0
	}
	return h[i].order > h[j].order
}
func (h runHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)   { *h = append(*h, x.(*runIter)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
