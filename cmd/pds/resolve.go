package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"golang.org/x/term"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/productdata/pds/internal/progress"
	"github.com/productdata/pds/service"
	"github.com/productdata/pds/snapshots"
)

// runResolve is 'pds resolve': the resolve stream of POST
// /v1/products/resolve/stream over a snapshot directory, in this process,
// with no server and no key (as 'pds mcp --snapshot').
func runResolve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return resolveOffline(ctx, args, os.Stdin, stdout, stderr)
}

// resolveOffline is runResolve reading stdin for "-".
func resolveOffline(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("resolve", "resolve --snapshot SNAPSHOT_DIR [flags] [FILE|-]", stderr)
	snapDir := fs.String("snapshot", "", "the snapshot directory to resolve against")
	tenant := fs.String("tenant", "local", "the tenant to answer as (which tenant-owned records are visible)")
	column := fs.String("column", "", "read the input as CSV with a header line, the identifiers in this column (default: one identifier a line)")
	format := fs.String("format", "ndjson", "output: ndjson (an item a line, then the summary line, as the server's stream) or csv")
	columns := fs.String("columns", "input,status,subject,reason,error.code", "with --format csv: the item members to write, dotted for nested ones (product.brand)")
	cacheMB := fs.Int("cache-mb", 256, "block cache size in MiB")
	quiet := fs.Bool("quiet", false, "no progress line and no summary on stderr")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (for go tool pprof)")
	pos, err := parseFlagsArgs(fs, args, 1, "snapshot")
	if err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	if *format != "ndjson" && *format != "csv" {
		return fmt.Errorf("%w: --format is ndjson or csv, not %q", errUsage, *format)
	}
	if *format != "csv" && isFlagSet(fs, "columns") {
		return fmt.Errorf("%w: --columns is for --format csv", errUsage)
	}
	src, name, err := openInput(pos, stdin)
	if err != nil {
		return err
	}
	defer src.Close()
	snap, err := service.OpenSnapshot(*snapDir, snapshots.OpenOptions{CacheBytes: int64(*cacheMB) << 20})
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	svc := service.New(snap, nil, nil, log)
	defer svc.Close()

	var in service.StreamInput = service.LineInput(src)
	if *column != "" {
		if in, err = newCSVInput(src, *column, name); err != nil {
			return err
		}
	}
	// A chunk's items (hundreds of KB) are larger than the buffer and go
	// to stdout as they are, uncopied; the buffer gathers the small writes
	// (CSV rows, the last line).
	w := bufio.NewWriterSize(stdout, 64<<10)
	out := &offlineOut{w: w, count: !*quiet && isTerminal(stderr)}
	if *format == "csv" {
		out.csv = newCSVOutput(w, strings.Split(*columns, ","))
	}
	start := time.Now()
	stop := func() {}
	if out.count {
		stop = progress.Start(time.Second, func(now time.Time) {
			n := out.lines.Load()
			fmt.Fprintf(stderr, "\rpds resolve: %d lines, %.0f/s ", n, float64(n)/now.Sub(start).Seconds())
		})
	}
	sum, err := svc.ResolveStream(ctx, localCaller(*tenant), in, out)
	stop()
	if ferr := out.flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	if !*quiet {
		writeResolveSummary(stderr, sum, time.Since(start))
	}
	if sum.Stopped != nil {
		return fmt.Errorf("stopped at line %d: %s %s", sum.Counts["total"]+1, sum.Stopped.Code, sum.Stopped.Detail)
	}
	return nil
}

// openInput opens the input file named by pos (stdin for none or "-").
func openInput(pos []string, stdin io.Reader) (io.ReadCloser, string, error) {
	if len(pos) == 0 || pos[0] == "-" {
		return io.NopCloser(stdin), "stdin", nil
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return nil, "", fmt.Errorf("input: %w", err)
	}
	return f, pos[0], nil
}

// isFlagSet reports whether the command line set flag name.
func isFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// isTerminal reports whether w is a terminal (where a progress line is
// for a person, not for a log). /dev/null is a character device but no
// terminal: a run with its stderr there shows nothing and counts nothing.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// writeResolveSummary says on stderr what a run answered.
func writeResolveSummary(w io.Writer, sum service.StreamSummary, took time.Duration) {
	n := sum.Counts["total"]
	fmt.Fprintf(w, "\rpds resolve: %d lines in %.1fs (%.0f/s): %d found, %d not_found, %d unknown, %d ambiguous, %d invalid\n",
		n, took.Seconds(), float64(n)/took.Seconds(), sum.Counts["found"], sum.Counts["not_found"], sum.Counts["unknown"], sum.Counts["ambiguous"], sum.Counts["invalid"])
}

// offlineOut writes the stream to stdout: as it is, or as CSV rows.
type offlineOut struct {
	w     *bufio.Writer
	csv   *csvOutput
	count bool // count the lines written, for the progress line
	lines atomic.Int64
}

func (o *offlineOut) Begin(*service.Stamp) error {
	if o.csv != nil {
		return o.csv.header()
	}
	return nil
}

func (o *offlineOut) Write(b []byte) (int, error) {
	if o.count {
		o.lines.Add(int64(bytes.Count(b, []byte{'\n'})))
	}
	if o.csv != nil {
		return len(b), o.csv.rows(b)
	}
	return o.w.Write(b)
}

// Flush leaves the lines to the buffer, which writes them as it fills.
func (o *offlineOut) Flush() error { return nil }

func (o *offlineOut) flush() error {
	if o.csv != nil {
		o.csv.w.Flush()
		if err := o.csv.w.Error(); err != nil {
			return err
		}
	}
	return o.w.Flush()
}

// csvInput reads the identifiers of one column of a CSV file with a header.
type csvInput struct {
	r    *csv.Reader
	col  int
	name string
	buf  []byte
}

func newCSVInput(r io.Reader, column, name string) (*csvInput, error) {
	cr := csv.NewReader(bufio.NewReaderSize(r, 64<<10))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: reading the CSV header: %w", name, err)
	}
	for i, h := range head {
		if strings.TrimPrefix(h, "\uFEFF") == column {
			return &csvInput{r: cr, col: i, name: name}, nil
		}
	}
	return nil, fmt.Errorf("%w: %s has no column %q (its header: %s)", errUsage, name, column, strings.Join(head, ","))
}

func (c *csvInput) Next() ([]byte, string, error) {
	rec, err := c.r.Read()
	var pe *csv.ParseError
	switch {
	case errors.Is(err, io.EOF):
		return nil, "", io.EOF
	case errors.As(err, &pe):
		return nil, "not a CSV record: " + pe.Err.Error(), nil
	case err != nil:
		return nil, "", err
	case c.col >= len(rec):
		return nil, fmt.Sprintf("the record has %d fields, none in column %d", len(rec), c.col+1), nil
	}
	c.buf = append(c.buf[:0], rec[c.col]...)
	return c.buf, "", nil
}

// csvOutput writes chosen members of each item as a CSV row.
type csvOutput struct {
	w    *csv.Writer
	cols [][]string
	head []string
	row  []string
}

func newCSVOutput(w io.Writer, columns []string) *csvOutput {
	o := &csvOutput{w: csv.NewWriter(w), head: columns, row: make([]string, len(columns))}
	for _, c := range columns {
		o.cols = append(o.cols, strings.Split(strings.TrimSpace(c), "."))
	}
	return o
}

func (o *csvOutput) header() error { return o.w.Write(o.head) }

// rows writes a row for each item line of b; the summary line is left out
// (the summary goes to stderr).
func (o *csvOutput) rows(b []byte) error {
	for len(b) > 0 {
		line, rest, _ := bytes.Cut(b, []byte{'\n'})
		b = rest
		if bytes.HasPrefix(line, []byte(`{"summary":`)) {
			continue
		}
		var item map[string]any
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&item); err != nil {
			return fmt.Errorf("an item is not JSON: %w", err)
		}
		for i, path := range o.cols {
			o.row[i] = cell(item, path)
		}
		if err := o.w.Write(o.row); err != nil {
			return err
		}
	}
	return nil
}

// cell is the text of the member at path: a string as it is, nothing for
// null or absent, JSON for anything else.
func cell(v any, path []string) string {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[p]
	}
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	}
	b, _ := json.Marshal(v)
	return string(b)
}
