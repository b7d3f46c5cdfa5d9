package service

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/keys"
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
// appendSummary). Each chunk is billed as a Resolve call of its lines, before
// it is resolved: one request against the key's rate limit, a unit per
// line against the tenant's quota. A refusal of the first chunk is returned,
// with nothing written; a later one ends the stream with a summary that says
// why and at which line to resume. The stream stops when ctx is done or a
// write fails, and returns why. Memory is that of one chunk, whatever the
// length of the stream. The summary returned is the one written.
func (s *Service) ResolveStream(ctx context.Context, c domain.Caller, in StreamInput, out StreamOutput) (StreamSummary, error) {
	if err := s.authorize(ctx, c, "resolve_identifiers", keys.ScopeResolve, 0); err != nil {
		return StreamSummary{}, err
	}
	snap, err := s.snapshot()
	if err != nil {
		return StreamSummary{}, err
	}
	defer snap.release()
	r, err := snap.NewReader()
	if err != nil {
		return StreamSummary{}, err
	}
	defer r.Close()
	bufs := batchPool.Get().(*batchBufs)
	defer bufs.put()
	st := &stream{ctx: ctx, svc: s, c: c, out: out, snap: snap}
	st.b = newBatch(snap, r, c.Tenant, newCoverageUnion(snap, c.Tenant), bufs)
	defer st.b.done()
	err = st.run(in)
	return st.summary(), err
}

// StreamSummary is what a resolve stream answered: its lines by status
// ("total": all of them), and why it stopped early, if it did.
type StreamSummary struct {
	Counts  map[string]int
	Stopped *domain.Error
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

// run answers the stream's chunks until in ends or the stream stops.
func (st *stream) run(in StreamInput) error {
	for {
		if err := st.ctx.Err(); err != nil {
			return err
		}
		eof, err := st.ch.read(in)
		if err != nil {
			return st.stop(domain.Errorf(domain.CodeInvalidRequest, "reading line %d: %v", st.answered+len(st.ch.ids)+1, err), err)
		}
		if len(st.ch.ids) > 0 {
			if err := st.chunk(); errors.Is(err, errStopped) {
				return nil
			} else if err != nil {
				return err
			}
		}
		if eof {
			return st.finish()
		}
	}
}

// stream is a ResolveStream in progress.
type stream struct {
	ctx      context.Context
	svc      *Service
	c        domain.Caller
	out      StreamOutput
	snap     *Snapshot
	b        *batch
	ch       chunkLines
	begun    bool
	answered int    // lines answered so far
	stopped  *domain.Error
	counts   [5]int // by status, in resolveStatuses order
	buf      []byte
}

// chunk bills, resolves and writes the lines read.
func (st *stream) chunk() error {
	n := len(st.ch.ids)
	if err := st.svc.authorize(st.ctx, st.c, "resolve_identifiers", "", n); err != nil {
		return st.stop(err, nil)
	}
	st.b.identify(st.ch.ids)
	for i, p := range st.ch.problems {
		if p != "" {
			it := &st.b.items[i]
			it.status, it.errCode, it.errDetail, it.readings = "invalid", domain.CodeInvalidRequest, fmt.Sprintf("line %d: %s", st.answered+i+1, p), nil
		}
	}
	if err := st.b.resolve(); err != nil {
		return st.stop(err, nil)
	}
	if err := st.begin(); err != nil {
		return err
	}
	b := st.buf[:0]
	for i := range st.b.items {
		it := &st.b.items[i]
		var err error
		if b, err = appendItem(b, it); err != nil {
			st.buf = b
			return st.stop(err, nil)
		}
		b = append(b, '\n')
		st.counts[statusIndex(it.status)]++
	}
	st.buf = b
	st.answered += n
	if _, err := st.out.Write(b); err != nil {
		return err
	}
	return st.out.Flush()
}

// begin calls out.Begin once.
func (st *stream) begin() error {
	if st.begun {
		return nil
	}
	st.begun = true
	return st.out.Begin(st.snap.stamp)
}

// finish writes the summary of a stream answered whole.
func (st *stream) finish() error {
	if err := st.begin(); err != nil {
		return err
	}
	return st.writeSummary(nil)
}

// errStopped is stop's answer when the summary it wrote says all.
var errStopped = errors.New("the stream stopped; its summary says why")

// stop ends the stream on why. Before anything is written, why is the
// answer (a problem); after, the summary says it, with the line to resume
// at, and stop returns cause, or errStopped when cause is nil.
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
	if cause == nil {
		return errStopped
	}
	return cause
}

// writeSummary writes the last line and flushes it.
func (st *stream) writeSummary(stopped *domain.Error) error {
	b, err := appendSummary(st.buf[:0], st.counts, st.answered, st.snap.stamp, st.b.cov.result(), stopped)
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
