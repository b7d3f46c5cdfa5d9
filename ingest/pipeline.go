package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/productdata/pds/domain"
)

// parsed is one line after parsing: the record, and its scratch record
// (appendScratchRecord's) where it has one.
type parsed struct {
	v   any
	rec []byte
	// unknown names the first member of the line that the record type does
	// not have (ignored, and counted in the summary); "" for none.
	unknown string
	// ref is what the phase's resolveFunc found for the line's references.
	ref lineRef
	// replaced says where the line's text was not Unicode and was mended
	// (checkText); "" for a line that was.
	replaced string
}

// parseFunc turns a line into a record, judging what the line alone shows.
// It runs on several goroutines at once: it may read the catalog but not
// write anything.
type parseFunc func(line []byte) (parsed, *reject)

// resolveFunc looks up, for a batch of parsed lines, what they refer to in
// the files read before, and rejects the lines whose references do not hold.
// It runs on several goroutines at once, like parseFunc, and reads only
// committed scratch data. A lookup that fails (not one that finds nothing)
// is its error, which fails the build.
type resolveFunc func(res []parseResult) error

// applyFunc checks what needs earlier lines (references, duplicates) and
// writes the record. It runs on one goroutine, in line order. A reject of
// failed fails the build.
type applyFunc func(p parsed, line int) *reject

// batchLines is how many lines travel together between the stages.
const batchLines = 512

// recordBufs are the buffers a batch's scratch records are encoded into, one
// after the other (a *[]byte each): a buffer of its own for each record
// would make the records 12% of the bytes a build allocates. A buffer that
// fills up grows by append, so records already cut from it keep its old
// array; once the batch is applied (the scratch store copies what it is
// given), the buffer goes back to the pool.
var recordBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, recordBufBytes)
	return &b
}}

// recordBufBytes is a record buffer's first size: a batch's records, at
// about 300 bytes a line, fit.
const recordBufBytes = 192 << 10

// maxPooledRecordBuf is the largest record buffer given back to the pool: a
// batch of long documents (lines of up to maxLine) can grow one far past
// what the next batches need, and the pool would keep it.
const maxPooledRecordBuf = 4 << 20

// lineBufBytes is the size of the buffers readBatches copies lines into.
const lineBufBytes = 256 << 10

type lineBatch struct {
	first   int // line number of lines[0]
	lines   [][]byte
	tooLong []bool
}

type parseResult struct {
	p parsed
	r *reject
}

// ordered runs the three stages every long phase of ingest has: produce, on
// one goroutine, emits batches in order; work turns each batch into a
// result on every core at once; consume sees the results here, in the order
// produce emitted them. The first error of consume or produce stops the
// run (the others drain) and is returned.
func ordered[B, R any](ctx context.Context, produce func(ctx context.Context, emit func(B) error) error, work func(B) R, consume func(R) error) error {
	type job struct {
		in  B
		out chan R
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan job, workers*2)
	order := make(chan job, workers*4)
	var produceErr error
	go func() {
		defer close(jobs)
		defer close(order)
		produceErr = produce(ctx, func(in B) error {
			j := job{in: in, out: make(chan R, 1)}
			for _, ch := range []chan job{jobs, order} {
				select {
				case ch <- j:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		})
	}()
	for w := 0; w < workers; w++ {
		go func() {
			for j := range jobs {
				j.out <- work(j.in)
			}
		}()
	}
	var consumeErr error
	for j := range order {
		r := <-j.out
		if consumeErr != nil {
			continue // drain, so that produce can finish
		}
		if consumeErr = consume(r); consumeErr != nil {
			cancel()
		}
	}
	if consumeErr != nil {
		return consumeErr
	}
	return produceErr
}

// readFile streams one input file: the reader cuts it into batches of lines,
// workers parse them and resolve their references in parallel, and apply
// sees the results in line order.
// A file that is absent counts as empty.
func (b *builder) readFile(ctx context.Context, ph phase) error {
	logical, parse, apply := ph.file, ph.parse, ph.apply
	name, ok := b.inputs.paths[logical]
	if !ok {
		return nil
	}
	b.stage(name)
	lr, err := openLines(b.inputs.dir, name)
	if err != nil {
		return err
	}
	defer lr.close()
	type parsedBatch struct {
		*lineBatch
		res  []parseResult
		recs *[]byte // the batch's scratch records, back to recordBufs once applied
		err  error   // of resolving the batch's references
	}
	parseBatch := func(bt *lineBatch) parsedBatch {
		res := make([]parseResult, len(bt.lines))
		recs := recordBufs.Get().(*[]byte)
		buf := (*recs)[:0]
		for i, line := range bt.lines {
			switch {
			case bt.tooLong[i]:
				res[i].r = rejectf("line is longer than %d bytes", maxLine)
			case len(line) > 0:
				res[i].p, res[i].r = parse(line)
			}
			if res[i].r == nil && res[i].p.v != nil {
				var err error
				if buf, res[i].p.rec, err = appendScratchRecord(buf, bt.first+i, res[i].p.v); err != nil {
					res[i].r = rejectf("cannot encode: %v", err)
				}
			}
		}
		*recs = buf
		var err error
		if ph.resolve != nil {
			err = ph.resolve(res)
		}
		return parsedBatch{bt, res, recs, err}
	}
	applyBatch := func(pb parsedBatch) error {
		defer func() {
			if cap(*pb.recs) <= maxPooledRecordBuf {
				recordBufs.Put(pb.recs)
			}
		}()
		if pb.err != nil {
			return fmt.Errorf("%s: %w", name, pb.err)
		}
		for i := range pb.res {
			n := pb.first + i
			b.count.Add(1)
			if len(pb.lines[i]) == 0 && !pb.tooLong[i] {
				continue // blank lines are not records
			}
			r := pb.res[i].r
			if r == nil {
				r = apply(pb.res[i].p, n)
			}
			if r != nil && r.err != nil {
				return fmt.Errorf("%s:%d: %w", name, n, r.err)
			}
			if r != nil {
				if err := b.rejectLine(logical, name, n, r.reason); err != nil {
					return err
				}
				continue
			}
			b.summary.Accepted[logical]++
			if u := pb.res[i].p.unknown; u != "" {
				b.noteUnknown(logical, u)
			}
			if w := pb.res[i].p.replaced; w != "" {
				b.noteReplaced(logical, name, n, w)
			}
		}
		return nil
	}
	produce := func(ctx context.Context, emit func(*lineBatch) error) error { return readBatches(lr, emit) }
	if err := ordered(ctx, produce, parseBatch, applyBatch); err != nil {
		return err
	}
	if lr.bom {
		b.summary.ByteOrderMark = append(b.summary.ByteOrderMark, name)
	}
	sum, err := lr.finish()
	if err != nil {
		return err
	}
	b.digest.add(name, sum)
	return nil
}

// noteUnknown counts an accepted line of logical that had the unknown member
// name.
func (b *builder) noteUnknown(logical, name string) {
	u := b.summary.Unknown[logical]
	u.Lines++
	if len(u.Names) < maxUnknownNames && !slices.Contains(u.Names, name) {
		u.Names = append(u.Names, name)
	}
	b.summary.Unknown[logical] = u
}

// readBatches reads lines into batches and emits each. The lines of a batch
// are copied into a few shared buffers rather than one allocation each.
func readBatches(lr *lineReader, emit func(*lineBatch) error) error {
	var buf []byte
	for {
		bt := &lineBatch{first: lr.line + 1, lines: make([][]byte, 0, batchLines), tooLong: make([]bool, 0, batchLines)}
		for len(bt.lines) < batchLines {
			line, tooLong, err := lr.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return lr.readError(err)
			}
			line = trimSpace(line)
			if len(buf)+len(line) > cap(buf) {
				// A full buffer is replaced, never grown: the lines
				// already cut from it stay valid.
				buf = make([]byte, 0, max(lineBufBytes, len(line)))
			}
			buf = append(buf, line...)
			bt.lines = append(bt.lines, buf[len(buf)-len(line):len(buf):len(buf)])
			bt.tooLong = append(bt.tooLong, tooLong)
		}
		if len(bt.lines) == 0 {
			return nil
		}
		if err := emit(bt); err != nil {
			return err
		}
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// phase is one input file: how its lines are parsed, how their references
// to earlier files are resolved (nil for none), and how they are applied.
type phase struct {
	file    string
	parse   parseFunc
	resolve resolveFunc
	apply   applyFunc
}

// phases lists the input files in the order they are read: each may refer
// to the ones before it.
func (b *builder) phases() []phase {
	strict := b.opts.Strict
	var deletions []phase
	if b.up != nil {
		deletions = []phase{{FileDeletions, parseRecord(strict, checkDeletion), nil, b.applyDeletion}}
	}
	return append(deletions, []phase{
		{FileParties, parseRecord(strict, checkParty), nil, b.applyParty},
		{FileSources, parseRecord(strict, func(s *domain.Source) *reject { return checkSource(s, b.parties) }), nil, b.applySource},
		{FileProducts, parseRecord(strict, checkProduct), nil, b.applyProduct},
		{FileClaims, parseRecord(strict, func(c *domain.Claim) *reject { return checkClaim(c, b.cat.sources) }), b.resolveClaims, b.applyClaim},
		{FileDocuments, parseRecord(strict, func(d *domain.Document) *reject { return checkDocument(d, b.cat.sources) }), nil, b.applyDocument},
		{FileEvidence, parseRecord(strict, checkEvidence), b.resolveEvidence, b.applyEvidence},
		{FileVerdicts, parseRecord(strict, checkVerdict), b.resolveVerdicts, b.applyVerdict},
	}...)
}
