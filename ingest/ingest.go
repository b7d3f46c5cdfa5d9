// Package ingest builds a snapshot from an input directory of NDJSON files.
//
// It streams: every record is validated as it is read and written to a
// scratch Pebble store keyed by subject, which sorts it; the build phase then
// walks the products in subject order, gathers each one's claims, evidence and
// verdicts, and writes the precomputed identity, passport and evidence views
// (one per visibility) as sorted tables of the snapshot's store. Memory holds
// one product's records at a time, plus the sources and parties.
//
// A snapshot is built in a temporary directory beside --out, synced, and
// renamed into place only when it is whole; temporaries that killed builds
// left beside --out are removed by the next build (see tempdir.go).
package ingest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/index"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/manifest"
)

// Options configure a build.
type Options struct {
	In, Out string
	// Strict makes the first rejected line fail the build.
	Strict bool
	// Rejects receives one line per rejected input line ("file:line: reason").
	Rejects io.Writer
	// Progress receives a progress line about once a second; nil for none.
	Progress io.Writer
	// ProgressEvery is the progress interval (default one second).
	ProgressEvery time.Duration
	// Now gives the build time (default time.Now).
	Now func() time.Time
	// Sequence is the manifest's build order (default: the build time in
	// Unix milliseconds); replicas refuse a lower one than they serve.
	Sequence int64
}

// Summary reports a finished build.
type Summary struct {
	Out         string
	BuildID     string
	InputDigest string
	Accepted    map[string]int64 // per input file
	Rejected    map[string]int64 // per input file
	Ignored     []string         // files in the input directory that are not input
	// RemovedStale lists the temporary folders of earlier, killed builds
	// that this build removed from beside Out.
	RemovedStale []string
	Views        int64
	Duration     time.Duration
}

// maxRejectLines is how many rejects of one file are printed; all are counted.
const maxRejectLines = 1000

// ErrStrict is returned when --strict meets a rejected line.
var ErrStrict = errors.New("strict build failed on a rejected line")

type builder struct {
	opts          Options
	inputs        inputSet
	scratch       *kv.Scratch
	out           *kv.Builder
	cat           catalog
	parties       map[string]*domain.Party
	digest        digest
	summary       Summary
	printed       map[string]int
	current       atomic.Value // string: the file being read
	count         atomic.Int64 // lines read in the current phase
	buf, key, rec []byte
	// readingProducts is set while products.ndjson is applied: its lookups
	// must see the pending batch.
	readingProducts bool
	index           *index.Builder
}

// Run builds a snapshot.
func Run(ctx context.Context, opts Options) (Summary, error) {
	start := time.Now()
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Rejects == nil {
		opts.Rejects = io.Discard
	}
	b := &builder{opts: opts, parties: map[string]*domain.Party{}, printed: map[string]int{},
		cat: catalog{sources: map[string]*domain.Source{}}}
	b.summary = Summary{Out: opts.Out, Accepted: map[string]int64{}, Rejected: map[string]int64{}}
	b.current.Store("")

	inputs, ignored, err := findInputs(opts.In)
	if err != nil {
		return b.summary, err
	}
	b.inputs, b.summary.Ignored = inputs, ignored
	if _, err := os.Stat(opts.Out); err == nil {
		return b.summary, fmt.Errorf("output %s already exists; snapshots are immutable, so build into a new directory", opts.Out)
	}
	id := ulid.MustNew(ulid.Timestamp(opts.Now()), rand.Reader).String()
	b.summary.BuildID = id
	if b.summary.RemovedStale, err = removeStale(opts.Out); err != nil {
		return b.summary, err
	}
	td, err := claimTemp(opts.Out, id)
	if err != nil {
		return b.summary, err
	}
	defer td.release()
	tmp := td.path

	stop := b.startProgress()
	defer stop()
	if err := b.build(ctx, tmp); err != nil {
		return b.summary, err
	}
	stop()

	m := manifest.Manifest{BuildID: id, CreatedAt: opts.Now().UTC().Format(time.RFC3339), InputDigest: b.digest.String(),
		Counts: b.summary.Accepted, Rejected: b.summary.Rejected}
	m.Counts["views"] = b.summary.Views
	if m.Sequence = opts.Sequence; m.Sequence == 0 {
		m.Sequence = opts.Now().UnixMilli()
	}
	if err := manifest.Write(tmp, m); err != nil {
		return b.summary, err
	}
	delete(m.Counts, "views")
	if err := publish(tmp, opts.Out); err != nil {
		return b.summary, err
	}
	b.summary.InputDigest = m.InputDigest
	b.summary.Duration = time.Since(start)
	return b.summary, nil
}

// publish makes the finished build at tmp the snapshot out: every file and
// folder synced, then one rename, then the parent folder synced so that the
// rename itself survives a power loss.
func publish(tmp, out string) error {
	if err := syncTree(tmp); err != nil {
		return fmt.Errorf("publish snapshot: %w", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("publish snapshot: %w", err)
	}
	if err := syncPath(filepath.Dir(filepath.Clean(out))); err != nil {
		return fmt.Errorf("publish snapshot: %w", err)
	}
	return nil
}

func (b *builder) build(ctx context.Context, tmp string) (err error) {
	b.scratch, err = kv.OpenScratch(filepath.Join(tmp, "scratch"))
	if err != nil {
		return err
	}
	defer func() {
		if b.scratch != nil {
			b.scratch.Close()
		}
	}()
	b.out, err = kv.NewBuilder(filepath.Join(tmp, "store"), filepath.Join(tmp, "tables"))
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			b.out.Abort()
		}
	}()
	if b.index, err = index.Create(filepath.Join(tmp, "index")); err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	defer func() {
		if b.index != nil {
			b.index.Close()
		}
	}()
	for _, ph := range b.phases() {
		b.readingProducts = ph.file == FileProducts
		if err := b.readFile(ctx, ph.file, ph.parse, ph.apply); err != nil {
			return err
		}
		if ph.file == FileSources {
			if err := b.finishSources(); err != nil {
				return err
			}
		}
		if err := b.scratch.Flush(); err != nil {
			return err
		}
	}
	if err := b.writeViews(ctx); err != nil {
		return err
	}
	if err := b.writeAliases(); err != nil {
		return err
	}
	if err := b.writeSources(); err != nil {
		return err
	}
	if err := b.writeMeta(); err != nil {
		return err
	}
	if err := b.out.Finish(); err != nil {
		return err
	}
	ix := b.index
	b.index = nil
	if err := ix.Close(); err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	err = b.scratch.Close()
	b.scratch = nil
	return err
}

// phase is one input file: how its lines are parsed and applied.
type phase struct {
	file  string
	parse parseFunc
	apply applyFunc
}

// phases lists the input files in the order they are read: each may refer
// to the ones before it.
func (b *builder) phases() []phase {
	return []phase{
		{FileParties, parseRecord(checkParty), b.applyParty},
		{FileSources, parseRecord(func(s *domain.Source) *reject { return checkSource(s, b.parties) }), b.applySource},
		{FileProducts, parseRecord(checkProduct), b.applyProduct},
		{FileClaims, parseRecord(func(c *domain.Claim) *reject { return checkClaim(c, b.cat.sources) }), b.applyClaim},
		{FileDocuments, parseRecord(func(d *domain.Document) *reject { return checkDocument(d, b.cat.sources) }), b.applyDocument},
		{FileEvidence, parseRecord(checkEvidence), b.applyEvidence},
		{FileVerdicts, parseRecord(checkVerdict), b.applyVerdict},
	}
}

// parseRecord returns the parser of one input file: a line is decoded into
// a new T, judged (and normalised) by check, and encoded for the scratch
// store.
func parseRecord[T any](check func(*T) *reject) parseFunc {
	return func(line []byte) (parsed, *reject) {
		v := new(T)
		if r := unmarshal(line, v); r != nil {
			return parsed{}, r
		}
		if r := check(v); r != nil {
			return parsed{}, r
		}
		return encoded(v)
	}
}

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

// unmarshal decodes one line; it refuses anything but a JSON object.
func unmarshal(line []byte, v any) *reject {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return rejectf("not a JSON object")
	}
	if err := json.Unmarshal(line, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return rejectf("%s: wrong type (%s where %s is expected)", te.Field, te.Value, te.Type)
		}
		return rejectf("not valid JSON: %v", err)
	}
	return nil
}

// encoded returns a parsed record with its JSON encoding for the scratch
// store.
func encoded(v any) (parsed, *reject) {
	enc, err := domain.Marshal(v)
	if err != nil {
		return parsed{}, rejectf("cannot encode: %v", err)
	}
	return parsed{v: v, enc: enc}, nil
}

func (b *builder) applyParty(p parsed, _ int) *reject {
	party := p.v.(*domain.Party)
	if b.parties[party.ID] != nil {
		return rejectf("id %s is used by an earlier line", party.ID)
	}
	b.parties[party.ID] = party
	return nil
}

func (b *builder) applySource(p parsed, _ int) *reject {
	s := p.v.(*domain.Source)
	if b.cat.sources[s.ID] != nil {
		return rejectf("id %s is used by an earlier line", s.ID)
	}
	b.cat.sources[s.ID] = s
	return nil
}

func (b *builder) finishSources() error {
	for _, s := range b.cat.sources {
		b.cat.sourceList = append(b.cat.sourceList, s)
	}
	sort.Slice(b.cat.sourceList, func(i, j int) bool { return b.cat.sourceList[i].ID < b.cat.sourceList[j].ID })
	return b.cat.prepareSources()
}

// lookupProduct returns the canonical subject and owner of a product
// identifier. Once products.ndjson is read (committed), later files look
// products up without the pending batch, which is cheaper.
func (b *builder) lookupProduct(subject string) (canonical, owner string, ok bool) {
	get := b.scratch.GetCommitted
	if b.readingProducts {
		get = b.scratch.Get
	}
	v, ok, err := get(b.skey(tagAlias, subject), b.buf)
	if err != nil || !ok {
		return "", "", false
	}
	b.buf = v
	c, o, _ := bytes.Cut(v, []byte{0})
	return string(c), string(o), true
}

func (b *builder) applyProduct(p parsed, n int) *reject {
	prod := p.v.(*domain.Product)
	for _, id := range prod.Identifiers {
		if c, _, ok := b.lookupProduct(id); ok {
			return rejectf("identifier %s already names product %s (an earlier line)", id, c)
		}
	}
	canonical := prod.Identifiers[0]
	for _, id := range prod.Identifiers {
		if err := b.scratch.Set(b.skey(tagAlias, id), []byte(canonical+"\x00"+prod.Tenant)); err != nil {
			return rejectf("scratch store: %v", err)
		}
	}
	return b.put(b.skey(tagProduct, canonical), n, p.enc)
}

func (b *builder) applyClaim(p parsed, n int) *reject {
	c := p.v.(*domain.Claim)
	canonical, owner, ok := b.lookupProduct(c.Subject)
	if !ok {
		return rejectf("subject %s names no product in %s", c.Subject, FileProducts)
	}
	if t := b.cat.tenantOfClaim(c); t != "" && owner != "" && t != owner {
		return rejectf("source_ref %s belongs to tenant %q but product %s belongs to tenant %q", domain.Str(c.SourceRef), t, canonical, owner)
	}
	if _, dup, _ := b.scratch.Get(b.skey(tagClaimID, c.ID), nil); dup {
		return rejectf("id %s is used by an earlier line", c.ID)
	}
	if err := b.scratch.Set(b.skey(tagClaimID, c.ID), []byte(canonical+"\x00"+owner)); err != nil {
		return rejectf("scratch store: %v", err)
	}
	return b.put(b.skey(tagClaim, canonical, c.ID), n, p.enc)
}

// A document's scratch value is its source's tenant, a zero byte, then the
// record, so evidence can check visibility without decoding it.
func (b *builder) applyDocument(p parsed, n int) *reject {
	d := p.v.(*domain.Document)
	if _, dup, _ := b.scratch.Get(b.skey(tagDocument, d.ID), nil); dup {
		return rejectf("id %s is used by an earlier line", d.ID)
	}
	tenant := b.cat.sources[d.SourceID].Tenant
	rec := binary.AppendUvarint(append(append(make([]byte, 0, len(tenant)+len(p.enc)+5), tenant...), 0), uint64(n))
	if err := b.scratch.Set(b.skey(tagDocument, d.ID), append(rec, p.enc...)); err != nil {
		return rejectf("scratch store: %v", err)
	}
	return nil
}

func (b *builder) applyEvidence(p parsed, n int) *reject {
	e := p.v.(*domain.Evidence)
	cv, ok, err := b.scratch.GetCommitted(b.skey(tagClaimID, e.ClaimID), b.buf)
	if err != nil || !ok {
		return rejectf("claim_id %s names no claim in %s", e.ClaimID, FileClaims)
	}
	b.buf = cv
	canonical, owner, _ := bytes.Cut(cv, []byte{0})
	canonicalS, ownerS := string(canonical), string(owner)
	dv, ok, err := b.scratch.GetCommitted(b.skey(tagDocument, e.DocumentID), b.buf)
	if err != nil || !ok {
		return rejectf("document_id %s names no document in %s", e.DocumentID, FileDocuments)
	}
	b.buf = dv
	if t, _ := splitDocument(dv); len(t) > 0 && ownerS != "" && string(t) != ownerS {
		return rejectf("document %s belongs to tenant %q but the claim's product belongs to tenant %q", e.DocumentID, t, ownerS)
	}
	if _, dup, _ := b.scratch.Get(b.skey(tagEvidenceID, e.ID), b.buf); dup {
		return rejectf("id %s is used by an earlier line", e.ID)
	}
	if err := b.scratch.Set(b.skey(tagEvidenceID, e.ID), nil); err != nil {
		return rejectf("scratch store: %v", err)
	}
	return b.put(b.skey(tagEvidence, canonicalS, e.ClaimID, e.ID), n, p.enc)
}

func (b *builder) applyVerdict(p parsed, n int) *reject {
	v := p.v.(*domain.Verdict)
	canonical, _, ok := b.lookupProduct(v.Subject)
	if !ok {
		return rejectf("subject %s names no product in %s", v.Subject, FileProducts)
	}
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], uint64(n))
	return b.put(b.skey(tagVerdict, canonical, string(seq[:])), n, p.enc)
}
