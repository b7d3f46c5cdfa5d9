package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
)

// parsed is one line after parsing: the record, and its JSON encoding for
// the scratch store where it has one.
type parsed struct {
	v   any
	enc []byte
}

// parseFunc turns a line into a record, judging what the line alone shows.
// It runs on several goroutines at once: it may read the catalog but not
// write anything.
type parseFunc func(line []byte) (parsed, *reject)

// applyFunc checks what needs earlier lines (references, duplicates) and
// writes the record. It runs on one goroutine, in line order.
type applyFunc func(p parsed, line int) *reject

// batchLines is how many lines travel together between the stages.
const batchLines = 512

type lineBatch struct {
	first   int // line number of lines[0]
	lines   [][]byte
	tooLong []bool
	out     chan []parseResult
}

type parseResult struct {
	p parsed
	r *reject
}

// readFile streams one input file: a reader goroutine cuts it into batches of
// lines, workers parse them in parallel, and apply sees the results in line
// order. A file that is absent counts as empty.
func (b *builder) readFile(ctx context.Context, logical string, parse parseFunc, apply applyFunc) error {
	name, ok := b.inputs.paths[logical]
	if !ok {
		return nil
	}
	b.current.Store(name)
	b.count.Store(0)
	lr, err := openLines(b.inputs.dir, name)
	if err != nil {
		return err
	}
	defer lr.close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := runtime.GOMAXPROCS(0)
	work := make(chan *lineBatch, workers*2)
	order := make(chan *lineBatch, workers*4)
	var readErr error
	go func() {
		defer close(work)
		defer close(order)
		readErr = readBatches(ctx, lr, work, order)
	}()
	for w := 0; w < workers; w++ {
		go func() {
			for bt := range work {
				res := make([]parseResult, len(bt.lines))
				for i, line := range bt.lines {
					switch {
					case bt.tooLong[i]:
						res[i].r = rejectf("line is longer than %d bytes", maxLine)
					case len(line) > 0:
						res[i].p, res[i].r = parse(line)
					}
				}
				bt.out <- res
			}
		}()
	}
	var applyErr error
	for bt := range order {
		res := <-bt.out
		if applyErr != nil {
			continue // drain, so the reader can finish
		}
		for i := range res {
			n := bt.first + i
			b.count.Add(1)
			if len(bt.lines[i]) == 0 && !bt.tooLong[i] {
				continue // blank lines are not records
			}
			r := res[i].r
			if r == nil {
				r = apply(res[i].p, n)
			}
			if r != nil {
				if err := b.rejectLine(logical, name, n, r.reason); err != nil {
					applyErr = err
					cancel()
					break
				}
				continue
			}
			b.summary.Accepted[logical]++
		}
	}
	if applyErr != nil {
		return applyErr
	}
	if readErr != nil {
		return readErr
	}
	sum, err := lr.finish()
	if err != nil {
		return err
	}
	b.digest.add(name, sum)
	return nil
}

// readBatches reads lines into batches and hands each to the workers and,
// in order, to the applier.
func readBatches(ctx context.Context, lr *lineReader, work, order chan<- *lineBatch) error {
	for {
		bt := &lineBatch{first: lr.line + 1, out: make(chan []parseResult, 1)}
		for len(bt.lines) < batchLines {
			line, tooLong, err := lr.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("input: %s: %w", lr.name, err)
			}
			trimmed := trimSpace(line)
			bt.lines = append(bt.lines, append([]byte(nil), trimmed...))
			bt.tooLong = append(bt.tooLong, tooLong)
		}
		if len(bt.lines) == 0 {
			return nil
		}
		select {
		case work <- bt:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case order <- bt:
		case <-ctx.Done():
			return ctx.Err()
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
