package service

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/service/keys"
)

// StreamChunk is how many lines a resolve stream reads, bills, resolves and
// writes at once: a batch call's worth.
const StreamChunk = MaxBatch

// MaxStreamLine is the longest line a resolve stream reads, in bytes; a
// longer one is an invalid item (its first bytes echoed), never more memory.
const MaxStreamLine = 4096

// StreamInput is where a resolve stream's identifiers come from, one line at
// a time.
type StreamInput interface {
	// Next returns the next line's identifier, which is valid until the next
	// call. For a line that holds no identifier it returns problem, saying
	// why, and as id the text to echo as the item's input. After the last
	// line it returns io.EOF.
	Next() (id []byte, problem string, err error)
}

// StreamOutput is where a resolve stream's lines go.
type StreamOutput interface {
	// Begin is called once, before the first line is written, with the
	// snapshot that answers the whole stream.
	Begin(*Stamp) error
	// Write takes whole lines: the items of a chunk, then the summary.
	Write([]byte) (int, error)
	// Flush sends on what was written; it is called after each chunk.
	Flush() error
}

// ResolveStream resolves every line of in, a chunk of StreamChunk lines at
// a time, and writes to out one line per input line, in input order, each
// the item Resolve gives for that identifier, then a summary line (see
// appendSummary). Each chunk is billed as a Resolve call of its lines when
// it has been read, before it is resolved: one request against the key's
// rate limit, a unit per line against the tenant's quota. A refusal of the
// first chunk is returned, with nothing written; a later one ends the
// stream with a summary that says why and at which line to resume.
//
// Chunks are resolved by up to streamWorkers goroutines at once, each with
// its own reader, and written in input order: memory is that of
// streamChunks chunks, whatever the length of the stream, and a chunk is
// billed at most streamChunks-1 chunks ahead of the one being written. The
// stream stops
// when ctx is done or a write fails, and returns why. The summary returned
// is the one written.
func (s *Service) ResolveStream(ctx context.Context, c domain.Caller, in StreamInput, out StreamOutput) (StreamSummary, error) {
	if err := s.authorize(ctx, c, "resolve_identifiers", keys.ScopeResolve, 0); err != nil {
		return StreamSummary{}, err
	}
	snap, err := s.snapshot()
	if err != nil {
		return StreamSummary{}, err
	}
	defer snap.release()
	st := &stream{ctx: ctx, svc: s, c: c, out: out, snap: snap, quit: make(chan struct{})}
	err = st.run(in)
	return st.summary(), err
}

// streamWorkers is how many chunks of one stream are resolved at once.
func streamWorkers() int { return min(runtime.GOMAXPROCS(0), 4) }

// streamChunks is how many chunks of a stream with n workers are in hand at
// once: read ahead, being resolved, or waiting for their turn to be written.
// Twice the workers, and four more, keep the workers busy while the feeder
// waits for a core, and the writer for the chunk before.
func streamChunks(n int) int { return 2*n + 4 }

// StreamSummary is what a resolve stream answered: its lines by status
// ("total": all of them), and why it stopped early, if it did.
type StreamSummary struct {
	Counts  map[string]int
	Stopped *domain.Error
}

// stream is a ResolveStream in progress. Its chunks go from the feeder
// (which reads and bills them) to the workers (which resolve and encode
// them) and, in input order, to run (which writes them).
type stream struct {
	ctx      context.Context
	svc      *Service
	c        domain.Caller
	out      StreamOutput
	snap     *Snapshot
	quit     chan struct{} // closed when run returns
	begun    bool
	answered int    // lines answered so far
	counts   [5]int // by status, in resolveStatuses order
	stopped  *domain.Error
	covs     []*coverageUnion // the workers'
	buf      []byte
}

// job is one chunk of a stream.
type job struct {
	lines  chunkLines
	first  int    // the number of its first line, from 1
	out    []byte // its items, a line each
	counts [5]int
	refuse error // why the stream stops before this chunk, or nil
	cause  error // the input's error behind refuse, or nil
	eof    bool  // no chunk follows
	err    error // resolving it failed
	done   chan struct{}
}

// run starts the feeder and the workers and writes the chunks in order.
func (st *stream) run(in StreamInput) error {
	n := streamWorkers()
	free := make(chan *job, streamChunks(n))
	for i := 0; i < cap(free); i++ {
		free <- &job{}
	}
	ordered := make(chan *job, cap(free))
	work := make(chan *job, cap(free)) // the feeder reads ahead whenever it runs
	st.covs = make([]*coverageUnion, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		st.covs[i] = newCoverageUnion(st.snap, st.c.Tenant)
		wg.Add(1)
		go func() {
			defer wg.Done()
			st.work(work, st.covs[i])
		}()
	}
	go st.feed(in, free, work, ordered)
	why, cause, err := st.write(free, ordered)
	close(st.quit)
	wg.Wait() // the workers' coverage is read below, and their readers closed
	switch {
	case err != nil:
		return err
	case why != nil:
		return st.stop(why, cause)
	}
	if err := st.begin(); err != nil {
		return err
	}
	return st.writeSummary(nil)
}

// feed reads the chunks, bills each, and hands them to the workers and, in
// order, to write. It stops after the last chunk, on a refusal, or when
// the stream has ended.
func (st *stream) feed(in StreamInput, free <-chan *job, work, ordered chan<- *job) {
	defer close(work)
	line := 1
	for {
		var j *job
		select {
		case j = <-free:
		case <-st.quit:
			return
		}
		j.refuse, j.cause, j.err, j.done = nil, nil, nil, make(chan struct{})
		eof, err := j.lines.read(in)
		j.first = line
		select {
		case <-st.quit:
			return // nothing is billed for a stream that has ended
		default:
		}
		n := len(j.lines.ids)
		switch {
		case err != nil:
			j.refuse, j.cause = domain.Errorf(domain.CodeInvalidRequest, "reading line %d: %v", line+n, err), err
		case n > 0:
			j.refuse = st.svc.authorize(st.ctx, st.c, "resolve_identifiers", "", n)
		}
		j.eof = eof || j.refuse != nil
		ordered <- j // never blocks: it holds every job
		if j.refuse != nil || n == 0 {
			close(j.done)
		} else {
			select {
			case work <- j:
			case <-st.quit:
				return
			}
		}
		if j.eof {
			return
		}
		line += n
	}
}

// work resolves the chunks it is handed, with a reader and buffers of its
// own, and encodes their items. Without a reader, it fails each chunk.
func (st *stream) work(work <-chan *job, cov *coverageUnion) {
	r, err := st.snap.NewReader()
	if err != nil {
		for j := range work {
			j.err = err
			close(j.done)
		}
		return
	}
	defer r.Close()
	bufs := batchPool.Get().(*batchBufs)
	defer bufs.put()
	b := newBatch(st.snap, r, st.c.Tenant, cov, bufs)
	defer b.done()
	for {
		var j *job
		select {
		case j = <-work:
		case <-st.quit:
			return
		}
		if j == nil {
			return
		}
		j.err = st.resolve(b, j)
		close(j.done)
	}
}

// resolve resolves one chunk with b and encodes its items into j.out.
func (st *stream) resolve(b *batch, j *job) error {
	b.identify(j.lines.ids)
	for i, p := range j.lines.problems {
		if p != "" {
			it := &b.items[i]
			it.status, it.errCode, it.errDetail, it.readings = "invalid", domain.CodeInvalidRequest, fmt.Sprintf("line %d: %s", j.first+i, p), nil
		}
	}
	if err := b.resolve(); err != nil {
		return err
	}
	j.counts = [5]int{}
	out := j.out[:0]
	for i := range b.items {
		it := &b.items[i]
		var err error
		if out, err = appendItem(out, it); err != nil {
			return err
		}
		out = append(out, '\n')
		j.counts[statusIndex(it.status)]++
	}
	j.out = out
	return nil
}

// write writes the chunks in input order as they are resolved. It returns
// when the last one is written; with why (and the input's error behind it,
// cause) when the stream stops before a chunk; with err when a write fails
// or the context ends.
func (st *stream) write(free chan<- *job, ordered <-chan *job) (why, cause, err error) {
	for {
		var j *job
		select {
		case j = <-ordered:
		case <-st.ctx.Done():
			return nil, nil, st.ctx.Err()
		}
		select {
		case <-j.done:
		case <-st.ctx.Done():
			return nil, nil, st.ctx.Err()
		}
		switch {
		case j.refuse != nil:
			return j.refuse, j.cause, nil
		case j.err != nil:
			return j.err, nil, nil
		}
		if n := len(j.lines.ids); n > 0 {
			if err := st.begin(); err != nil {
				return nil, nil, err
			}
			if _, err := st.out.Write(j.out); err != nil {
				return nil, nil, err
			}
			if err := st.out.Flush(); err != nil {
				return nil, nil, err
			}
			st.answered += n
			for i, c := range j.counts {
				st.counts[i] += c
			}
		}
		if j.eof {
			return nil, nil, nil
		}
		free <- j
	}
}

// summary returns the stream's summary so far.
func (st *stream) summary() StreamSummary {
	m := make(map[string]int, len(resolveStatuses)+1)
	for i, s := range resolveStatuses {
		m[s] = st.counts[i]
	}
	m["total"] = st.answered
	return StreamSummary{Counts: m, Stopped: st.stopped}
}

// begin calls out.Begin once.
func (st *stream) begin() error {
	if st.begun {
		return nil
	}
	st.begun = true
	return st.out.Begin(st.snap.stamp)
}

// stop ends the stream on why. Before anything is written, why is the
// answer (a problem); after, the summary says it, with the line to resume
// at, and stop returns cause (nil when the summary says all).
func (st *stream) stop(why, cause error) error {
	if !st.begun {
		return why
	}
	de := domain.AsError(why)
	st.stopped = de
	if de.Code == domain.CodeInternal {
		st.svc.log.Error("resolve stream stopped", "request_id", RequestID(st.ctx), "line", st.answered+1, "error", why.Error())
	}
	if err := st.writeSummary(de); err != nil {
		return err
	}
	return cause
}

// writeSummary writes the last line and flushes it.
func (st *stream) writeSummary(stopped *domain.Error) error {
	b, err := appendSummary(st.buf[:0], st.counts, st.answered, st.snap.stamp, mergeCoverage(st.covs), stopped)
	if err != nil {
		return err
	}
	st.buf = b
	if _, err := st.out.Write(b); err != nil {
		return err
	}
	return st.out.Flush()
}

// appendSummary appends a stream's last line:
//
//	{"summary":{"complete":true,"counts":{...},"snapshot":{...},"coverage":{...}}}
//
// counts as a Resolve answer's data.counts, of the lines answered. A stream
// stopped early has "complete":false and "stopped":{"code", "detail",
// "retry_after" (seconds, when waiting helps), "resume_at_line" (the first
// line without an item, counting from 1)}.
func appendSummary(b []byte, counts [5]int, answered int, stamp *Stamp, cov domain.Coverage, stopped *domain.Error) ([]byte, error) {
	b = append(b, `{"summary":{"complete":`...)
	b = strconv.AppendBool(b, stopped == nil)
	if stopped != nil {
		b = append(b, `,"stopped":{"code":`...)
		b = appendString(b, stopped.Code)
		b = append(b, `,"detail":`...)
		b = appendString(b, stopped.Detail)
		if stopped.RetryAfter > 0 {
			b = append(b, `,"retry_after":`...)
			b = strconv.AppendInt(b, int64(stopped.RetryAfter), 10)
		}
		b = append(b, `,"resume_at_line":`...)
		b = strconv.AppendInt(b, int64(answered+1), 10)
		b = append(b, '}')
	}
	b = append(b, `,"counts":`...)
	m := make(map[string]int, len(resolveStatuses))
	for i, st := range resolveStatuses {
		m[st] = counts[i]
	}
	b = appendCounts(b, m, answered)
	if stamp != nil {
		b = append(b, stamp.meta...)
	}
	cj, err := domain.Marshal(cov)
	if err != nil {
		return nil, domain.Internal(err)
	}
	b = append(b, `,"coverage":`...)
	b = append(b, cj...)
	return append(b, "}}\n"...), nil
}

// statusIndex is a status's place in resolveStatuses.
func statusIndex(status string) int {
	switch status {
	case domain.StatusFound:
		return 0
	case domain.StatusNotFound:
		return 1
	case domain.StatusUnknown:
		return 2
	case domain.StatusAmbiguous:
		return 3
	}
	return 4
}

// chunkLines are the lines of one chunk: their identifiers, all held in one
// string, and the problem of each line that holds none.
type chunkLines struct {
	text     []byte
	ends     []int
	ids      []string
	problems []string
}

// read reads up to StreamChunk lines from in; eof is true when in has no
// more.
func (ch *chunkLines) read(in StreamInput) (eof bool, err error) {
	ch.text, ch.ends, ch.problems = ch.text[:0], ch.ends[:0], ch.problems[:0]
	clear(ch.ids)
	ch.ids = ch.ids[:0]
	defer ch.split()
	for len(ch.ends) < StreamChunk {
		id, problem, err := in.Next()
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		ch.text = append(ch.text, id...)
		ch.ends = append(ch.ends, len(ch.text))
		ch.problems = append(ch.problems, problem)
	}
	return false, nil
}

// split cuts the chunk's text into its identifiers: one string for the
// chunk, rather than one a line.
func (ch *chunkLines) split() {
	all := string(ch.text)
	start := 0
	for _, end := range ch.ends {
		ch.ids = append(ch.ids, all[start:end])
		start = end
	}
}

// LineInput reads a resolve stream from r, one identifier a line: the line
// as it is, or, when it starts with '"' or '{', a JSON string or an object
// {"identifier": "..."}. A trailing "\r" is dropped. A line that is none of
// these (not UTF-8, not the JSON it starts as, longer than MaxStreamLine)
// is a problem, never an error: every line gets its item.
func LineInput(r io.Reader) StreamInput {
	return &lineInput{r: bufio.NewReaderSize(r, 64<<10)}
}

type lineInput struct {
	r   *bufio.Reader
	buf []byte
	obj streamObject
}

// streamObject is a line written as a JSON object.
type streamObject struct {
	Identifier *string `json:"identifier"`
}

// echoLen is how many bytes of a line that is no identifier its item echoes.
const echoLen = 64

func (l *lineInput) Next() ([]byte, string, error) {
	line, err := l.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) || len(line) > MaxStreamLine+2 {
		return l.skipLong(line, err)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, "", err
	}
	if errors.Is(err, io.EOF) && len(line) == 0 {
		return nil, "", io.EOF
	}
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	if len(line) > MaxStreamLine {
		return echo(line), fmt.Sprintf("the line is longer than %d bytes", MaxStreamLine), nil
	}
	if !utf8.Valid(line) {
		return bytes.ToValidUTF8(line, []byte("\uFFFD")), "the line is not UTF-8", nil
	}
	switch {
	case len(line) > 0 && line[0] == '"':
		var s string
		if err := json.Unmarshal(line, &s); err != nil {
			return line, "a line starting with '\"' must be one JSON string", nil
		}
		l.buf = append(l.buf[:0], s...)
		return l.buf, "", nil
	case len(line) > 0 && line[0] == '{':
		l.obj.Identifier = nil
		if err := DecodeArgs(line, &l.obj); err != nil {
			return line, "a line starting with '{' must be a JSON object {\"identifier\": string}: " + domain.AsError(err).Detail, nil
		}
		if l.obj.Identifier == nil {
			return line, "a line starting with '{' must be a JSON object {\"identifier\": string}: the member 'identifier' is missing", nil
		}
		l.buf = append(l.buf[:0], *l.obj.Identifier...)
		return l.buf, "", nil
	}
	return line, "", nil
}

// skipLong reads past the rest of a line too long to hold, and returns its
// first bytes with the problem.
func (l *lineInput) skipLong(line []byte, err error) ([]byte, string, error) {
	l.buf = append(l.buf[:0], echo(line)...)
	for errors.Is(err, bufio.ErrBufferFull) {
		_, err = l.r.ReadSlice('\n')
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, "", err
	}
	return l.buf, fmt.Sprintf("the line is longer than %d bytes", MaxStreamLine), nil
}

// echo returns the first bytes of a line, whole characters of valid UTF-8,
// followed by "…".
func echo(line []byte) []byte {
	n := min(len(line), echoLen)
	for n > 0 && n < len(line) && !utf8.RuneStart(line[n]) {
		n--
	}
	out := bytes.ToValidUTF8(line[:n:n], []byte("\uFFFD"))
	return append(out, "…"...)
}

// mergeCoverage is the union of the workers' coverage.
func mergeCoverage(us []*coverageUnion) domain.Coverage {
	cov := domain.Coverage{SourcesConsulted: []string{}}
	for _, u := range us {
		for _, id := range u.cov.SourcesConsulted {
			if !slices.Contains(cov.SourcesConsulted, id) {
				cov.SourcesConsulted = append(cov.SourcesConsulted, id)
			}
		}
		for _, sk := range u.cov.SourcesSkipped {
			if !slices.ContainsFunc(cov.SourcesSkipped, func(x domain.Skipped) bool { return x.ID == sk.ID }) {
				cov.SourcesSkipped = append(cov.SourcesSkipped, sk)
			}
		}
	}
	sort.Strings(cov.SourcesConsulted)
	sort.Slice(cov.SourcesSkipped, func(i, j int) bool { return cov.SourcesSkipped[i].ID < cov.SourcesSkipped[j].ID })
	return cov
}
