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
	const synopsis = "gen --products N --out DIR [--seed S] [--showcase] [--quiet] [--format pds|off]"
	fs := newFlags("gen", synopsis, stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: pds %s\n\n", synopsis)
		fmt.Fprintln(stderr, "Writes a synthetic input directory for 'pds ingest' (parties, sources, products, claims,")
		fmt.Fprintln(stderr, "documents, evidence, verdicts as NDJSON). The same --products and --seed give the same bytes.")
		fmt.Fprintln(stderr, "See docs/gen.md. With --format off it writes instead a synthetic Open Food Facts dump")
		fmt.Fprintln(stderr, "(JSON Lines, gzip when --out ends in .gz) of N records for 'pds import off'; see docs/import-off.md.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	products := fs.Int("products", 0, "number of products to generate (required, > 0)")
	seed := fs.Int64("seed", 1, "random seed")
	out := fs.String("out", "", "output directory (created if missing; its input files are replaced)")
	showcase := fs.Bool("showcase", false, "add the hand-written showcase products listed in docs/gen.md")
	quiet := fs.Bool("quiet", false, "no progress or summary lines")
	format := fs.String("format", "pds", "pds: an input directory; off: an Open Food Facts-shaped dump file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *format != "pds" && *format != "off" {
		return fmt.Errorf("%w: --format %q is not pds or off", errUsage, *format)
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
		opts := openfoodfacts.GenOptions{Records: *products, Seed: *seed, Out: *out, Context: ctx}
		if !*quiet {
			opts.Progress = stderr
		}
		_, err := openfoodfacts.Generate(opts)
		return err
	}
	opts := synthetic.Options{Products: *products, Seed: *seed, Out: *out, Showcase: *showcase, Context: ctx}
	if !*quiet {
		opts.Progress = stderr
	}
	return synthetic.Generate(opts)
}
