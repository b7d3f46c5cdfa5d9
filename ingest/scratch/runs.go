package scratch

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"unsafe"

	"github.com/minio/minlz"
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
// of their keys, writing them out in compressed blocks and merging the files does
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
// length, key, value, in key order with no key twice, cut into blocks of
// about runBlockBytes, each compressed on its own (MinLZ). index holds every
// block's first key and where the block starts, for seeks; a block ends
// where the next starts, or at size.
//
// Why compressed: the records that pass through the ordered store are most
// of a build's scratch bytes, about as many as the input's plain NDJSON, and
// they set a build's disk peak. At 200,000 generated products MinLZ's
// fastest level takes the runs from 1.26 GB to 355 MB (sorted keys share
// their prefixes, records their field values); its encoding and decoding
// are 3% of the build's CPU profile, and the build's user CPU grew less
// than that (fewer bytes written and read). zstd's fastest level took the
// runs to 241 MB and the build's user CPU up 6%.
type run struct {
	f           *os.File
	size        int64 // the file's size
	maxBlock    int   // the largest block's length, decoded
	index       []runIndex
	first, last []byte // its smallest and largest key
}

type runIndex struct {
	key []byte
	off int64
}

// runBlockBytes is how many bytes of entries a block holds before it is
// compressed and written (one entry larger than that is a block of its
// own): what a reader of the run holds decoded, once per run merged.
const runBlockBytes = 32 << 10

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
	block := make([]byte, 0, runBlockBytes+runBlockBytes/2)
	var packed []byte
	var werr error
	// flush compresses the block gathered and writes it.
	flush := func() {
		if len(block) == 0 || werr != nil {
			return
		}
		packed, werr = minlz.Encode(packed[:cap(packed)], block, minlz.LevelFastest)
		if werr != nil {
			return
		}
		_, werr = w.Write(packed)
		r.size += int64(len(packed))
		r.maxBlock = max(r.maxBlock, len(block))
		block = block[:0]
	}
	var prev []byte
	for i := range ents {
		e := &ents[i]
		k := key(e)
		if i > 0 && bytes.Equal(k, prev) {
			continue // an earlier write of the key written just before
		}
		prev = k
		if len(block) >= runBlockBytes {
			flush()
		}
		if len(block) == 0 {
			r.index = append(r.index, runIndex{key: bytes.Clone(k), off: r.size})
		}
		d := chunks[e.chunk].data
		block = binary.AppendUvarint(binary.AppendUvarint(block, uint64(e.klen)), uint64(e.vlen))
		block = append(block, d[e.off:e.off+e.klen+e.vlen]...)
	}
	flush()
	if werr == nil {
		werr = w.Flush()
	}
	if werr != nil {
		f.Close()
		return nil, fmt.Errorf("scratch: %w", werr)
	}
	r.first, r.last = r.index[0].key, bytes.Clone(prev)
	return r, nil
}

// seekBlock is the block to start reading r at for the first key at or
// after key: the last block whose first key is before it.
func (r *run) seekBlock(key []byte) int {
	i, _ := slices.BinarySearchFunc(r.index, key, func(x runIndex, k []byte) int { return bytes.Compare(x.key, k) })
	return max(i-1, 0)
}

// blockSpan is where block i of r starts and ends in its file.
func (r *run) blockSpan(i int) (off, end int64) {
	end = r.size
	if i+1 < len(r.index) {
		end = r.index[i+1].off
	}
	return r.index[i].off, end
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

// runIter reads one run from a block, an entry at a time.
type runIter struct {
	r     *run
	order int // the run's place, oldest first: of equal keys the newest wins
	key   []byte
	value []byte
	block int    // the next block to read
	raw   []byte // the current block, decoded
	pos   int    // where the next entry starts in raw
	comp  []byte // the current block as read from the file
	err   error
}

// seek makes the next entry read the first of block i.
func (it *runIter) seek(i int) { it.block, it.raw, it.pos = i, it.raw[:0], 0 }

// next reads the next entry; false at the end or on an error (err).
func (it *runIter) next() bool {
	for it.pos >= len(it.raw) {
		if it.block >= len(it.r.index) || !it.load() {
			return false
		}
	}
	rest := it.raw[it.pos:]
	klen, a := binary.Uvarint(rest)
	vlen, b := binary.Uvarint(rest[max(a, 0):])
	if a <= 0 || b <= 0 || klen > uint64(len(rest)-a-b) || vlen > uint64(len(rest)-a-b)-klen {
		it.err = errors.New("scratch: a run's entry header is corrupt")
		return false
	}
	h := a + b
	it.key, it.value = rest[h:h+int(klen)], rest[h+int(klen):h+int(klen)+int(vlen)]
	it.pos += h + int(klen) + int(vlen)
	return true
}

// load reads and decodes the next block.
func (it *runIter) load() bool {
	off, end := it.r.blockSpan(it.block)
	it.comp = slices.Grow(it.comp[:0], int(end-off))[:end-off]
	if _, err := it.r.f.ReadAt(it.comp, off); err != nil {
		it.err = fmt.Errorf("scratch: reading a run: %w", err)
		return false
	}
	if n, err := minlz.DecodedLen(it.comp); err != nil || n > it.r.maxBlock {
		it.err = errors.New("scratch: a run's block is corrupt")
		return false
	}
	raw, err := minlz.Decode(it.raw[:cap(it.raw)], it.comp)
	if err != nil {
		it.err = fmt.Errorf("scratch: a run's block is corrupt: %w", err)
		return false
	}
	it.raw, it.pos = raw, 0
	it.block++
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
		if it == nil {
			it = &runIter{r: r, order: i}
			m.iters[i] = it
		}
		it.seek(r.seekBlock(key))
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
