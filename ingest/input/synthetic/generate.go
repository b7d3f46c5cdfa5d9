package synthetic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options says what Generate writes.
type Options struct {
	Products int   // number of generated products (> 0); showcase products come on top
	Seed     int64 // same seed and Products, same bytes
	Out      string
	// Showcase adds the hand-written showcase products (docs/gen.md).
	Showcase bool
	// Compress, when set, compresses every file and adds the extension
	// (.gz, .zst) to its name. The decompressed bytes do not depend on it.
	Compress Compression
	// Progress, when set, gets a progress line about every second and a
	// summary line at the end.
	Progress io.Writer
	// Context, when set, cancels the run; the output directory is then left
	// without any of the files.
	Context context.Context
}

// Names of the files Generate writes, in the order it writes them, without
// the extension a compression adds.
var Files = []string{"parties.ndjson", "sources.ndjson", "products.ndjson", "claims.ndjson",
	"documents.ndjson", "evidence.ndjson", "verdicts.ndjson"}

const (
	fParties = iota
	fSources
	fProducts
	fClaims
	fDocuments
	fEvidence
	fVerdicts
)

// chunkSize is the number of products one render job holds. It is part of
// the output's definition: each chunk has its own random stream.
const chunkSize = 1024

// stats counts what a run wrote.
type stats struct {
	Parties, Sources, Products, Claims, Documents, Evidence, Verdicts int
	Duration                                                          time.Duration
}

// Generate writes an input directory for pds ingest into opts.Out, creating
// it if needed and replacing the files it writes (and their other versions,
// plain, .gz or .zst, which ingest would refuse alongside). Files are written
// under temporary names and renamed at the end, so a failed or cancelled run
// leaves none of them behind.
func Generate(opts Options) error {
	_, err := run(opts)
	return err
}

func run(opts Options) (stats, error) {
	began := time.Now()
	var st stats
	if opts.Products <= 0 {
		return st, fmt.Errorf("synthetic: Products must be positive, not %d", opts.Products)
	}
	if opts.Out == "" {
		return st, errors.New("synthetic: Out is required")
	}
	if !opts.Compress.valid() {
		return st, fmt.Errorf("synthetic: compression %q is not none, gzip or zstd", opts.Compress)
	}
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return st, fmt.Errorf("synthetic: %w", err)
	}
	files := make([]*os.File, len(Files))
	ext := opts.Compress.ext()
	tmp := func(i int) string { return filepath.Join(opts.Out, "."+Files[i]+ext+".partial") }
	cleanup := func() {
		for i, f := range files {
			if f != nil {
				f.Close()
				os.Remove(tmp(i))
			}
		}
	}
	for i := range Files {
		f, err := os.Create(tmp(i))
		if err != nil {
			cleanup()
			return st, fmt.Errorf("synthetic: %w", err)
		}
		files[i] = f
	}

	cat := newCatalogue(opts.Seed)
	g, err := newGenerator(opts, cat)
	if err != nil {
		cleanup()
		return st, err
	}
	head := make([][]byte, len(Files))
	for _, p := range cat.parties {
		head[fParties] = appendJSONLine(head[fParties], p)
	}
	for _, s := range cat.sources {
		head[fSources] = appendJSONLine(head[fSources], s)
	}
	st.Parties, st.Sources = len(cat.parties), len(cat.sources)
	if opts.Showcase {
		sc := showcase(cat)
		for _, p := range sc.products {
			head[fProducts] = appendJSONLine(head[fProducts], p)
		}
		for _, c := range sc.claims {
			head[fClaims] = appendJSONLine(head[fClaims], c)
		}
		for _, d := range sc.documents {
			head[fDocuments] = appendJSONLine(head[fDocuments], d)
		}
		for _, e := range sc.evidence {
			head[fEvidence] = appendJSONLine(head[fEvidence], e)
		}
		for _, v := range sc.verdicts {
			head[fVerdicts] = appendJSONLine(head[fVerdicts], v)
		}
		st.Products += len(sc.products)
		st.Claims += len(sc.claims)
		st.Documents += len(sc.documents)
		st.Evidence += len(sc.evidence)
		st.Verdicts += len(sc.verdicts)
	}
	// A compressed file starts with the head's frame even when the head is
	// empty, so that every file holds at least one frame.
	fr := newFramer(opts.Compress)
	for i, b := range head {
		if _, err := files[i].Write(fr.frame(nil, b)); err != nil {
			cleanup()
			return st, fmt.Errorf("synthetic: %w", err)
		}
	}

	if err := g.stream(ctx, files, &st, opts.Progress, began); err != nil {
		cleanup()
		return st, err
	}
	for i, f := range files {
		if err := f.Close(); err != nil {
			files[i] = nil
			cleanup()
			return st, fmt.Errorf("synthetic: %w", err)
		}
		files[i] = nil
		final := filepath.Join(opts.Out, Files[i])
		for _, twin := range compressedExts {
			if twin != ext {
				os.Remove(final + twin)
			}
		}
		if err := os.Rename(tmp(i), final+ext); err != nil {
			cleanup()
			return st, fmt.Errorf("synthetic: %w", err)
		}
	}
	st.Duration = time.Since(began)
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "gen: wrote %s in %s: %d products, %d claims, %d documents, %d evidence links, %d verdicts, %d sources, %d parties (%.0f products/s)\n",
			opts.Out, st.Duration.Round(10*time.Millisecond), st.Products, st.Claims, st.Documents, st.Evidence, st.Verdicts,
			st.Sources, st.Parties, float64(st.Products)/st.Duration.Seconds())
	}
	return st, nil
}

// appendJSONLine appends v as one line of JSON.
func appendJSONLine(b []byte, v any) []byte {
	line, err := json.Marshal(v)
	if err != nil {
		panic("synthetic: " + err.Error()) // only domain types of known shape get here
	}
	b = append(b, line...)
	return append(b, '\n')
}

// generator plans products in order and renders them in parallel.
type generator struct {
	opts   Options
	cat    *catalogue
	makers []*maker
	alloc  *allocator
	r      *rand.Rand // planner's stream
	zipf   *rand.Zipf
}

// makerCount is how many manufacturers n products have.
func makerCount(n int) int { return max(20, n/300) }

func newGenerator(opts Options, cat *catalogue) (*generator, error) {
	g := &generator{opts: opts, cat: cat, alloc: newAllocator(opts.Seed)}
	mr := rand.New(rand.NewPCG(uint64(opts.Seed), 0x6d616b6572730000)) // "makers"
	ms := newMakerSet(mr)
	n := makerCount(opts.Products)
	bigCount := max(3, n/40)
	for i := 0; i < n; i++ {
		m := ms.add()
		m.big = i < bigCount
		if err := g.alloc.companyPrefix(m); err != nil {
			return nil, err
		}
		if mr.IntN(100) < 60 {
			m.gln = makerGLN(m)
		}
	}
	g.makers = ms.makers
	g.r = rand.New(rand.NewPCG(uint64(opts.Seed), 0x706c616e6e657200)) // "planner"
	// Products per maker follow a Zipf law: maker 0 has the most.
	g.zipf = rand.NewZipf(g.r, 1.1, 2, uint64(n-1))
	return g, nil
}

// plan fills skels with the products numbered from first.
func (g *generator) plan(first int64, skels []skel) error {
	r := g.r
	var body [14]byte
	for i := range skels {
		sk := &skels[i]
		*sk = skel{n: first + int64(i)}
		mi := int32(g.zipf.Uint64())
		sk.maker = mi
		m := g.makers[mi]
		x := r.IntN(1000)
		switch {
		case x < 4:
			sk.kind = kindPrivate
		case x < 9:
			sk.kind = kindSKUOnly
		}
		n := sk.n
		switch sk.kind {
		case kindSKUOnly:
			sk.ids[0] = "internal_sku:" + skuOf(r, m.code, n)
			continue
		case kindPrivate:
			sku := "internal_sku:ACME-" + itoa(n)
			if chance(r, 60) {
				sk.ids[0] = sku
				continue
			}
			sk.ids[1] = sku
		}
		gt, err := g.gtin(m, body[:0])
		if err != nil {
			return err
		}
		sk.ids[0] = "gtin:" + gt
		if sk.kind == kindPublic && chance(r, 10) {
			sk.ids[1] = "internal_sku:" + skuOf(r, m.code, n)
		}
	}
	return nil
}

// gtin returns a fresh canonical (14-digit) GTIN of maker m: mostly GTIN-13
// (GTIN-12 for UPC countries), a few GTIN-8 and GTIN-14 (cases).
func (g *generator) gtin(m *maker, buf []byte) (string, error) {
	r := g.r
	x := r.IntN(100)
	if x < 2 {
		if g8, ok := g.alloc.gtin8(m); ok {
			return "000000" + g8, nil
		}
	}
	body, err := g.alloc.itemBody(m, buf)
	if err != nil {
		return "", err
	}
	if x >= 2 && x < 4 {
		ind := byte('1' + weighted(r, indicatorWeights))
		b14 := append([]byte{ind}, body...)
		return string(withCheck(b14)), nil
	}
	return "0" + string(withCheck(body)), nil
}

var indicatorWeights = []int{50, 15, 10, 8, 6, 5, 3, 3} // indicators 1 to 8

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// skuOf spells an internal SKU of a maker's product in one of the ways
// product data does: MUL-1234, MUL1234, mul.1234.
func skuOf(r *rand.Rand, code string, n int64) string {
	switch r.IntN(4) {
	case 0:
		return code + itoa(n)
	case 1:
		return strings.ToLower(code) + "." + itoa(n)
	}
	return code + "-" + itoa(n)
}

type job struct {
	chunk int
	skels []skel
	out   *chunkOut
	done  chan struct{}
}

// stream plans, renders and writes the products in order.
func (g *generator) stream(ctx context.Context, files []*os.File, st *stats, progress io.Writer, began time.Time) error {
	workers := max(1, runtime.GOMAXPROCS(0))
	total := g.opts.Products
	chunks := (total + chunkSize - 1) / chunkSize

	todo := make(chan *job, workers)
	inOrder := make(chan *job, 2*workers)
	free := make(chan *job, 3*workers+1)
	for i := 0; i < cap(free); i++ {
		free <- &job{out: &chunkOut{}, done: make(chan struct{}, 1)}
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd := newRenderer(g.cat, g.makers)
			var fr *framer
			if g.opts.Compress != None {
				fr = newFramer(g.opts.Compress)
			}
			for j := range todo {
				rd.render(g.opts.Seed, j.chunk, j.skels, j.out)
				if fr != nil {
					j.out.compress(fr)
				}
				j.done <- struct{}{}
			}
		}()
	}

	// The writer: takes jobs in chunk order, writes them, recycles them.
	writeErr := make(chan error, 1)
	go func() {
		var err error
		written := 0
		last := time.Now()
		for j := range inOrder {
			<-j.done
			if err == nil {
				for i, b := range j.out.files(g.opts.Compress != None) {
					if _, werr := files[fProducts+i].Write(b); werr != nil {
						err = fmt.Errorf("synthetic: %w", werr)
						break
					}
				}
				st.Products += j.out.nProducts
				st.Claims += j.out.nClaims
				st.Documents += j.out.nDocuments
				st.Evidence += j.out.nEvidence
				st.Verdicts += j.out.nVerdicts
				written += j.out.nProducts
				if progress != nil && time.Since(last) >= time.Second {
					last = time.Now()
					el := last.Sub(began).Seconds()
					fmt.Fprintf(progress, "gen: %d/%d products (%.0f%%), %.0f products/s\n",
						written, total, 100*float64(written)/float64(total), float64(written)/el)
				}
			}
			free <- j
		}
		writeErr <- err
	}()

	var err error
	for c := 0; c < chunks && err == nil; c++ {
		if cerr := ctx.Err(); cerr != nil {
			err = fmt.Errorf("synthetic: stopped: %w", cerr)
			break
		}
		var j *job
		select {
		case j = <-free:
		case <-ctx.Done():
			err = fmt.Errorf("synthetic: stopped: %w", ctx.Err())
		}
		if err != nil {
			break
		}
		n := min(chunkSize, total-c*chunkSize)
		if cap(j.skels) < n {
			j.skels = make([]skel, n)
		}
		j.skels = j.skels[:n]
		j.chunk = c
		if perr := g.plan(int64(c*chunkSize+1), j.skels); perr != nil {
			err = perr
			free <- j
			break
		}
		inOrder <- j
		todo <- j
	}
	close(todo)
	close(inOrder)
	wg.Wait()
	if werr := <-writeErr; err == nil {
		err = werr
	}
	return err
}
