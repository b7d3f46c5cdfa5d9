package main

import (
	"context"
	"fmt"
	"io"

	"github.com/productdata/pds/ingest/input/openfoodfacts"
	"github.com/productdata/pds/ingest/input/synthetic"
)

// runGen is `pds gen`: write a synthetic input directory for `pds ingest`.
func runGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const synopsis = "gen --products N --out DIR [--seed S] [--showcase] [--compress none|gzip|zstd] [--quiet] [--format pds|off]"
	fs := newFlags("gen", synopsis, stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: pds %s\n\n", synopsis)
		fmt.Fprintln(stderr, "Writes a synthetic input directory for 'pds ingest' (parties, sources, products, claims,")
		fmt.Fprintln(stderr, "documents, evidence, verdicts as NDJSON, each compressed with --compress). The same --products")
		fmt.Fprintln(stderr, "and --seed give the same lines, whatever the compression. See docs/gen.md. With --format off")
		fmt.Fprintln(stderr, "it writes instead a synthetic Open Food Facts dump (JSON Lines, gzip when --out ends in .gz)")
		fmt.Fprintln(stderr, "of N records for 'pds import off'; see docs/import-off.md.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	products := fs.Int("products", 0, "number of products to generate (required, > 0)")
	seed := fs.Int64("seed", 1, "random seed")
	out := fs.String("out", "", "output directory (created if missing; its input files are replaced)")
	showcase := fs.Bool("showcase", false, "add the hand-written showcase products listed in docs/gen.md")
	compress := fs.String("compress", "none", "none, gzip or zstd: write products.ndjson.gz or products.ndjson.zst and so on (pds ingest reads them)")
	quiet := fs.Bool("quiet", false, "no progress or summary lines")
	format := fs.String("format", "pds", "pds: an input directory; off: an Open Food Facts-shaped dump file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *format != "pds" && *format != "off" {
		return fmt.Errorf("%w: --format %q is not pds or off", errUsage, *format)
	}
	comp, err := synthetic.ParseCompression(*compress)
	if err != nil {
		return fmt.Errorf("%w: --compress %q is not none, gzip or zstd", errUsage, *compress)
	}
	if *products <= 0 {
		return fmt.Errorf("%w: --products is required and must be positive", errUsage)
	}
	if *out == "" {
		return fmt.Errorf("%w: --out is required", errUsage)
	}
	if *format == "off" {
		if *showcase {
			return fmt.Errorf("%w: --showcase is for --format pds", errUsage)
		}
		if comp != synthetic.None {
			return fmt.Errorf("%w: --compress is for --format pds (an --out ending in .gz writes the dump gzip)", errUsage)
		}
		opts := openfoodfacts.GenOptions{Records: *products, Seed: *seed, Out: *out, Context: ctx}
		if !*quiet {
			opts.Progress = stderr
		}
		_, err := openfoodfacts.Generate(opts)
		return err
	}
	opts := synthetic.Options{Products: *products, Seed: *seed, Out: *out, Showcase: *showcase, Compress: comp, Context: ctx}
	if !*quiet {
		opts.Progress = stderr
	}
	return synthetic.Generate(opts)
}
