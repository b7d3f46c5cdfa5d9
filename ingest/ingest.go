// Package ingest builds a snapshot from an input directory of NDJSON files.
//
// It streams: every record is validated as it is read and written to a
// scratch Pebble store keyed by subject, which sorts it; the build phase then
// walks the products in subject order, gathers each one's claims, evidence and
// verdicts, and writes the precomputed identity, passport and evidence views
// (one per visibility) as sorted tables of the snapshot's store. Memory holds
// one product's records at a time, plus the sources and parties.
//
// A snapshot is built in a temporary directory beside --out and renamed into
// place only when it is whole.
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
}

// Summary reports a finished build.
type Summary struct {
	Out         string
	BuildID     string
	InputDigest string
	Accepted    map[string]int64 // per input file
	Rejected    map[string]int64 // per input file
	Ignored     []string         // files in the input directory that are not input
	Views       int64
	Duration    time.Duration
}

// maxRejectLines is how many rejects of one file are printed; all are counted.
const maxRejectLines = 1000

// ErrStrict is returned when --strict meets a rejected line.
var ErrStrict = errors.New("strict build failed on a rejected line")

type builder struct {
	opts     Options
	inputs   inputSet
	scratch  *kv.Scratch
	out      *kv.Builder
	cat      catalog
	parties  map[string]*domain.Party
	digest   digest
	summary  Summary
	printed  map[string]int
	current  atomic.Value // string: the file being read
	count    atomic.Int64 // lines read in the current phase
	buf, key []byte
	index    *index.Builder
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
	tmp := filepath.Join(filepath.Dir(filepath.Clean(opts.Out)), "."+filepath.Base(opts.Out)+".tmp-"+id)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return b.summary, fmt.Errorf("output: %w", err)
	}
	defer os.RemoveAll(tmp)

	stop := b.startProgress()
	defer stop()
	if err := b.build(ctx, tmp); err != nil {
		return b.summary, err
	}
	stop()

	m := manifest.Manifest{BuildID: id, CreatedAt: opts.Now().UTC().Format(time.RFC3339), InputDigest: b.digest.String(),
		Counts: b.summary.Accepted, Rejected: b.summary.Rejected}
	m.Counts["views"] = b.summary.Views
	if err := manifest.Write(tmp, m); err != nil {
		return b.summary, err
	}
	delete(m.Counts, "views")
	if err := os.Rename(tmp, opts.Out); err != nil {
		return b.summary, fmt.Errorf("publish snapshot: %w", err)
	}
	b.summary.InputDigest = m.InputDigest
	b.summary.Duration = time.Since(start)
	return b.summary, nil
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
	phases := []struct {
		file string
		read func([]byte, int) *reject
	}{
		{FileParties, b.readParty},
		{FileSources, b.readSource},
		{FileProducts, b.readProduct},
		{FileClaims, b.readClaim},
		{FileDocuments, b.readDocument},
		{FileEvidence, b.readEvidence},
		{FileVerdicts, b.readVerdict},
	}
	for _, ph := range phases {
		if err := b.readFile(ctx, ph.file, ph.read); err != nil {
			return err
		}
		if ph.file == FileSources {
			b.finishSources()
		}
		if err := b.scratch.Flush(); err != nil {
			return err
		}
	}
	if err := b.buildViews(ctx); err != nil {
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

// readFile streams one input file through read. A file that is absent counts
// as empty.
func (b *builder) readFile(ctx context.Context, logical string, read func([]byte, int) *reject) error {
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
	for {
		line, tooLong, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("input: %s: %w", name, err)
		}
		b.count.Add(1)
		if lr.line%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if len(bytes.TrimSpace(line)) == 0 && !tooLong {
			continue // blank lines are not records
		}
		var r *reject
		if tooLong {
			r = rejectf("line is longer than %d bytes", maxLine)
		} else {
			r = read(line, lr.line)
		}
		if r != nil {
			if err := b.rejectLine(logical, name, lr.line, r.reason); err != nil {
				return err
			}
			continue
		}
		b.summary.Accepted[logical]++
	}
	sum, err := lr.finish()
	if err != nil {
		return err
	}
	b.digest.add(name, sum)
	return nil
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

// record encodes a line number and a JSON value as a scratch value.
func record(line int, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := binary.AppendUvarint(make([]byte, 0, len(j)+4), uint64(line))
	return append(out, j...), nil
}

func decodeRecord(b []byte, v any) (int, error) {
	line, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, errors.New("corrupt scratch record")
	}
	return int(line), json.Unmarshal(b[n:], v)
}

func (b *builder) readParty(line []byte, _ int) *reject {
	var p domain.Party
	if r := unmarshal(line, &p); r != nil {
		return r
	}
	if r := checkParty(&p); r != nil {
		return r
	}
	if b.parties[p.ID] != nil {
		return rejectf("id %s is used by an earlier line", p.ID)
	}
	b.parties[p.ID] = &p
	return nil
}

func (b *builder) readSource(line []byte, _ int) *reject {
	var s domain.Source
	if r := unmarshal(line, &s); r != nil {
		return r
	}
	if r := checkSource(&s, b.parties); r != nil {
		return r
	}
	if b.cat.sources[s.ID] != nil {
		return rejectf("id %s is used by an earlier line", s.ID)
	}
	b.cat.sources[s.ID] = &s
	return nil
}

func (b *builder) finishSources() {
	for _, s := range b.cat.sources {
		b.cat.sourceList = append(b.cat.sourceList, s)
	}
	sort.Slice(b.cat.sourceList, func(i, j int) bool { return b.cat.sourceList[i].ID < b.cat.sourceList[j].ID })
}

// scratch key helpers
func (b *builder) skey(tag byte, parts ...string) []byte {
	b.key = kv.AppendKey(b.key[:0], tag, parts...)
	return b.key
}

func (b *builder) put(key []byte, line int, v any) *reject {
	rec, err := record(line, v)
	if err != nil {
		return rejectf("cannot encode: %v", err)
	}
	if err := b.scratch.Set(key, rec); err != nil {
		return rejectf("scratch store: %v", err)
	}
	return nil
}

// lookupProduct returns the canonical subject and owner of a product
// identifier.
func (b *builder) lookupProduct(subject string) (canonical, owner string, ok bool) {
	v, ok, err := b.scratch.Get(b.skey('A', subject), b.buf)
	if err != nil || !ok {
		return "", "", false
	}
	b.buf = v
	c, o, _ := bytes.Cut(v, []byte{0})
	return string(c), string(o), true
}

func (b *builder) readProduct(line []byte, n int) *reject {
	var p domain.Product
	if r := unmarshal(line, &p); r != nil {
		return r
	}
	if r := checkProduct(&p); r != nil {
		return r
	}
	for _, id := range p.Identifiers {
		if c, _, ok := b.lookupProduct(id); ok {
			return rejectf("identifier %s already names product %s (an earlier line)", id, c)
		}
	}
	canonical := p.Identifiers[0]
	for _, id := range p.Identifiers {
		if err := b.scratch.Set(b.skey('A', id), []byte(canonical+"\x00"+p.Tenant)); err != nil {
			return rejectf("scratch store: %v", err)
		}
	}
	return b.put(b.skey('P', canonical), n, &p)
}

func (b *builder) readClaim(line []byte, n int) *reject {
	var c domain.Claim
	if r := unmarshal(line, &c); r != nil {
		return r
	}
	if r := checkClaim(&c, b.cat.sources); r != nil {
		return r
	}
	canonical, owner, ok := b.lookupProduct(c.Subject)
	if !ok {
		return rejectf("subject %s names no product in %s", c.Subject, FileProducts)
	}
	if t := b.cat.tenantOfClaim(&c); t != "" && owner != "" && t != owner {
		return rejectf("source_ref %s belongs to tenant %q but product %s belongs to tenant %q", domain.Str(c.SourceRef), t, canonical, owner)
	}
	if _, dup, _ := b.scratch.Get(b.skey('C', c.ID), nil); dup {
		return rejectf("id %s is used by an earlier line", c.ID)
	}
	if err := b.scratch.Set(b.skey('C', c.ID), []byte(canonical+"\x00"+owner)); err != nil {
		return rejectf("scratch store: %v", err)
	}
	return b.put(b.skey('c', canonical, c.ID), n, &c)
}

func (b *builder) readDocument(line []byte, n int) *reject {
	var d domain.Document
	if r := unmarshal(line, &d); r != nil {
		return r
	}
	if r := checkDocument(&d, b.cat.sources); r != nil {
		return r
	}
	if _, dup, _ := b.scratch.Get(b.skey('D', d.ID), nil); dup {
		return rejectf("id %s is used by an earlier line", d.ID)
	}
	return b.put(b.skey('D', d.ID), n, &d)
}

func (b *builder) readEvidence(line []byte, n int) *reject {
	var e domain.Evidence
	if r := unmarshal(line, &e); r != nil {
		return r
	}
	if r := checkEvidence(&e); r != nil {
		return r
	}
	cv, ok, err := b.scratch.Get(b.skey('C', e.ClaimID), nil)
	if err != nil || !ok {
		return rejectf("claim_id %s names no claim in %s", e.ClaimID, FileClaims)
	}
	canonical, owner, _ := bytes.Cut(cv, []byte{0})
	dv, ok, err := b.scratch.Get(b.skey('D', e.DocumentID), nil)
	if err != nil || !ok {
		return rejectf("document_id %s names no document in %s", e.DocumentID, FileDocuments)
	}
	var d domain.Document
	if _, err := decodeRecord(dv, &d); err != nil {
		return rejectf("scratch store: %v", err)
	}
	if t := b.cat.sources[d.SourceID].Tenant; t != "" && len(owner) > 0 && t != string(owner) {
		return rejectf("document %s belongs to tenant %q but the claim's product belongs to tenant %q", d.ID, t, owner)
	}
	if _, dup, _ := b.scratch.Get(b.skey('E', e.ID), nil); dup {
		return rejectf("id %s is used by an earlier line", e.ID)
	}
	if err := b.scratch.Set(b.skey('E', e.ID), nil); err != nil {
		return rejectf("scratch store: %v", err)
	}
	return b.put(b.skey('e', string(canonical), e.ClaimID, e.ID), n, &e)
}

func (b *builder) readVerdict(line []byte, n int) *reject {
	var v domain.Verdict
	if r := unmarshal(line, &v); r != nil {
		return r
	}
	if r := checkVerdict(&v); r != nil {
		return r
	}
	canonical, _, ok := b.lookupProduct(v.Subject)
	if !ok {
		return rejectf("subject %s names no product in %s", v.Subject, FileProducts)
	}
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], uint64(n))
	return b.put(b.skey('v', canonical, string(seq[:])), n, &v)
}
