package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/productdata/pds/ingest"
)

// ingestHeapLimit is the soft memory limit of the Go heap during a build (the
// scratch lookup store's cache and memtables are outside it; the ordered
// store's runs, up to 64 MiB, are inside).
const ingestHeapLimit = 384 << 20

func runIngest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("ingest", "ingest --in DIR --out SNAPSHOT_DIR [--strict] [--quiet] [--sequence N] [--dictionaries-from SNAPSHOT] [--keep-records] [--base SNAPSHOT [--check-base-whole]]", stderr)
	in := fs.String("in", "", "input directory of NDJSON files (products.ndjson required; .ndjson.gz and .ndjson.zst allowed)")
	out := fs.String("out", "", "snapshot directory to create (must not exist; the folders above it are made as needed)")
	strict := fs.Bool("strict", false, "fail on the first rejected line (text that is not UTF-8 included) and publish nothing")
	quiet := fs.Bool("quiet", false, "no progress lines")
	sequence := fs.Int64("sequence", 0, "the manifest's build order, which replicas never go below (default: the build time in Unix milliseconds)")
	keep := fs.Bool("keep-records", false, "keep the build's records beside it (SNAPSHOT_DIR.records), so that the next build can be incremental (--base)")
	base := fs.String("base", "", "an earlier snapshot, built with --keep-records or incrementally: --in then holds only what changed since it (see docs/input.md#incremental-builds)")
	whole := fs.Bool("check-base-whole", false, "with --base: hash every file of the base's store and kept records before building on them, so that damage anywhere stops this build (by default a night checks what it reads; run this once a week: see docs/input.md, 'A damaged base')")
	dicts := fs.String("dictionaries-from", "", "an earlier snapshot whose compression dictionaries to use, so that what did not change is stored as the same bytes (see docs/snapshots.md)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the build to this file (for go tool pprof)")
	if err := parseFlags(fs, args, "in", "out"); err != nil {
		return err
	}
	if *whole && *base == "" {
		return fmt.Errorf("%w: --check-base-whole: it checks the base of an incremental build, and there is no --base", errUsage)
	}
	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	// The build's live Go heap peaks under 300 MiB at 200,000 products and
	// grows slowly with the catalogue, but with the default GC pacing the heap
	// may reach twice what is live before a collection; a soft limit keeps
	// peak memory down, and room of half the live heap above it (heapLimit)
	// keeps the collector from running back to back once the live heap nears
	// it. GOMEMLIMIT, when set, wins.
	if os.Getenv("GOMEMLIMIT") == "" {
		defer keepHeapRoom(ingestHeapLimit, time.Second)()
	}
	epoch, err := sourceDateEpoch(os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		return err
	}
	opts := ingest.Options{In: *in, Out: *out, Strict: *strict, Rejects: stderr, Sequence: *sequence, SourceDateEpoch: epoch, DictionariesFrom: *dicts,
		KeepRecords: *keep, Base: *base, CheckBaseWhole: *whole}
	if !*quiet {
		opts.Progress = stderr
	}
	sum, err := ingest.Run(ctx, opts)
	for _, d := range sum.RemovedStale {
		fmt.Fprintf(stderr, "ingest: removed %s, the temporary folder of an earlier build that was killed\n", d)
	}
	if err != nil {
		if errors.Is(err, ingest.ErrStrict) {
			return fmt.Errorf("%v; nothing was published", err)
		}
		return err
	}
	for _, f := range sum.Ignored {
		fmt.Fprintf(stderr, "ingest: ignored %s (not an input file name)\n", f)
	}
	fmt.Fprintf(stdout, "snapshot %s built in %s (build %s, input %s)\n", sum.Out, sum.Duration.Round(time.Millisecond), sum.BuildID, sum.InputDigest)
	names := make([]string, 0, len(sum.Accepted))
	for n := range sum.Accepted {
		names = append(names, n)
	}
	for n := range sum.Rejected {
		if _, ok := sum.Accepted[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		file := n
		if f := sum.Files[n]; f != "" {
			file = f
		}
		line := fmt.Sprintf("  %s %d accepted, %d rejected", file, sum.Accepted[n], sum.Rejected[n])
		if u := sum.Unknown[n]; u.Lines > 0 {
			line += fmt.Sprintf("; %d with members ingest does not read, ignored (%s)", u.Lines, strings.Join(u.Names, ", "))
		}
		if r := sum.Replaced[n]; r > 0 {
			line += fmt.Sprintf("; %d with text that is not UTF-8, replaced with U+FFFD", r)
		}
		fmt.Fprintln(stdout, line)
	}
	for _, f := range sum.ByteOrderMark {
		fmt.Fprintf(stdout, "  %s began with a UTF-8 byte order mark, which was skipped\n", f)
	}
	fmt.Fprintf(stdout, "  %d views\n", sum.Views)
	if inc := sum.Incremental; inc != nil {
		fmt.Fprintf(stdout, "  incremental from %s: %d products changed, %d added, %d deleted; %d computed again for a source or document they cite; %d kept as they were\n",
			inc.Base, inc.Changed, inc.Added, inc.Deleted, inc.Recomputed, inc.Kept)
		if inc.StoreLayers > 0 {
			fmt.Fprintf(stdout, "  store: the base's tables kept, with the night's changes on them (%d of %d nights' layers; the night after the last, the store is written whole)\n", inc.StoreLayers, ingest.MaxStoreLayers)
		} else {
			fmt.Fprintf(stdout, "  store: written whole (the base held %d nights' layers)\n", ingest.MaxStoreLayers)
		}
		if inc.SearchIndex != "" {
			fmt.Fprintf(stdout, "  search index: %s\n", inc.SearchIndex)
		}
		if len(inc.ChangedSources) > 0 {
			fmt.Fprintf(stdout, "  sources added or changed: %s\n", strings.Join(inc.ChangedSources, ", "))
		}
	}
	if sum.Records != "" {
		fmt.Fprintf(stdout, "  records kept in %s\n", sum.Records)
	}
	if len(sum.Stages) > 0 {
		took := make([]string, len(sum.Stages))
		for i, st := range sum.Stages {
			took[i] = st.Name + " " + roundDuration(st.Duration).String()
		}
		fmt.Fprintf(stdout, "  took: %s\n", strings.Join(took, ", "))
	}
	return nil
}

// roundDuration rounds d for a person: to the microsecond under a
// millisecond (a stage that short would otherwise read 0s), to the
// millisecond under a second, and to a tenth of a second above.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond)
	case d < time.Second:
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// sourceDateEpoch reads SOURCE_DATE_EPOCH (the reproducible-builds
// convention: a whole number of seconds since the Unix epoch); unset or
// empty is the zero time.
func sourceDateEpoch(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	secs, err := strconv.ParseInt(v, 10, 64)
	if err != nil || secs < 0 || secs > 253402300799 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a whole number of seconds since 1970-01-01 (up to the year 9999)", v)
	}
	return time.Unix(secs, 0).UTC(), nil
}
