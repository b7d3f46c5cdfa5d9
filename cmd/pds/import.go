package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/productdata/pds/ingest/input/openfoodfacts"
)

// runImport is `pds import <format>`: turn a foreign dump into an input
// directory for `pds ingest`. The one format is off (Open Food Facts).
func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		fmt.Fprintln(stderr, "usage: pds import off --in FILE|- --out INPUT_DIR [--limit N] [--strict]")
		fmt.Fprintln(stderr, "\nformats:\n  off      an Open Food Facts JSON Lines dump (see docs/import-off.md)")
		if len(args) == 0 {
			return errUsage
		}
		return nil
	}
	if args[0] != "off" {
		return fmt.Errorf("%w: unknown format %q (the one format is off)", errUsage, args[0])
	}
	return runImportOFF(ctx, args[1:], stdout, stderr)
}

func runImportOFF(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const synopsis = "import off --in FILE|- --out INPUT_DIR [--limit N] [--strict] [--no-documents] [--retrieved-at T] [--quiet]"
	fs := newFlags("import off", synopsis, stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: pds %s\n\n", synopsis)
		fmt.Fprintln(stderr, "Streams an Open Food Facts dump (openfoodfacts-products.jsonl, plain, gzip or zstd, or - for stdin)")
		fmt.Fprintln(stderr, "into a new input directory for 'pds ingest', with each record's bytes under documents/.")
		fmt.Fprintln(stderr, "Unusable records, skipped fields, text that is not UTF-8 and codes with a wrong check digit")
		fmt.Fprintln(stderr, "are reported as file:line: reason on stderr. See docs/import-off.md.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	in := fs.String("in", "", "the dump: a .jsonl, .jsonl.gz or .jsonl.zst file, or - for standard input")
	out := fs.String("out", "", "input directory to create (must not exist)")
	limit := fs.Int64("limit", 0, "read at most this many lines of the dump (0: all)")
	strict := fs.Bool("strict", false, "fail on the first unusable record and write nothing")
	noDocs := fs.Bool("no-documents", false, "do not keep each record's bytes under documents/")
	retrieved := fs.String("retrieved-at", "", "when the dump was fetched, RFC 3339 (default: the file's modification time; now for stdin)")
	quiet := fs.Bool("quiet", false, "no progress lines")
	if err := parseFlags(fs, args, "in", "out"); err != nil {
		return err
	}
	if *limit < 0 {
		return fmt.Errorf("%w: --limit must not be negative", errUsage)
	}
	opts := openfoodfacts.Options{In: *in, Stdin: os.Stdin, Out: *out, Limit: *limit, Strict: *strict,
		NoDocuments: *noDocs, Rejects: stderr, Context: ctx}
	if *retrieved != "" {
		t, err := time.Parse(time.RFC3339, *retrieved)
		if err != nil {
			return fmt.Errorf("%w: --retrieved-at %q is not an RFC 3339 date-time", errUsage, *retrieved)
		}
		opts.RetrievedAt = t
	}
	if !*quiet {
		opts.Progress = stderr
	}
	sum, err := openfoodfacts.Import(opts)
	if err != nil {
		if errors.Is(err, openfoodfacts.ErrStrict) {
			return fmt.Errorf("%v; nothing was written", err)
		}
		return err
	}
	fmt.Fprintf(stdout, "input directory %s written in %s: %d lines read, %d products (%d with a code that is no GTIN), %d claims, %d verdicts, %d sources\n",
		*out, sum.Duration.Round(time.Millisecond), sum.Lines, sum.Products, sum.SKUs, sum.Claims, sum.Verdicts, sum.Sources)
	kinds := make([]string, 0, len(sum.Reasons))
	for k := range sum.Reasons {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, sum.Reasons[k]))
	}
	fmt.Fprintf(stdout, "  %d unusable records", sum.Unusable)
	if len(parts) > 0 {
		fmt.Fprintf(stdout, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprintf(stdout, "\n  %d fields skipped\n", sum.Skipped)
	fmt.Fprintf(stdout, "  %d codes with the digits of a GTIN but a wrong check digit, imported as internal SKUs\n", sum.CheckDigits)
	fmt.Fprintf(stdout, "  %d records with text that is not UTF-8, replaced with U+FFFD\n", sum.Replaced)
	if sum.ByteOrderMark {
		fmt.Fprintf(stdout, "  the dump began with a UTF-8 byte order mark, which was skipped\n")
	}
	if sum.Documents != "" {
		fmt.Fprintf(stdout, "  record bytes under %s\n", sum.Documents)
	}
	return nil
}
