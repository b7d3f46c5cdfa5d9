package ingest

import (
	"fmt"
)

// maxRejectLines is how many rejects of one file are printed; all are counted.
const maxRejectLines = 1000

func (b *builder) rejectLine(logical, name string, line int, reason string) error {
	b.summary.Rejected[logical]++
	if b.opts.Strict {
		fmt.Fprintf(b.opts.Rejects, "%s:%d: %s\n", name, line, reason)
		return fmt.Errorf("%w: %s:%d: %s", ErrStrict, name, line, reason)
	}
	n := b.printed[logical]
	b.printed[logical] = n + 1
	switch {
	case n < maxRejectLines:
		fmt.Fprintf(b.opts.Rejects, "%s:%d: %s\n", name, line, reason)
	case n == maxRejectLines:
		fmt.Fprintf(b.opts.Rejects, "%s: further rejects are counted, not shown\n", name)
	}
	return nil
}

// noteReplaced counts an accepted line whose text was mended (checkText) and
// warns of it, as rejectLine prints rejects: the first maxRejectLines of a
// file, then one line saying the rest are counted.
func (b *builder) noteReplaced(logical, name string, line int, where string) {
	b.summary.Replaced[logical]++
	n := b.printedReplaced[logical]
	b.printedReplaced[logical] = n + 1
	switch {
	case n < maxRejectLines:
		fmt.Fprintf(b.opts.Rejects, "%s:%d: %s; replaced with U+FFFD\n", name, line, where)
	case n == maxRejectLines:
		fmt.Fprintf(b.opts.Rejects, "%s: further lines with text that is not UTF-8 are counted, not shown\n", name)
	}
}
