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
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/index"
	"github.com/productdata/pds/ingest/jsonutf8"
	"github.com/productdata/pds/ingest/records"
	"github.com/productdata/pds/ingest/scratch"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/snapshots"
	fastjson "github.com/segmentio/encoding/json"
)

// Options configure a build.
type Options struct {
	In, Out string
	// Strict makes the first rejected line fail the build.
	Strict bool
	// Rejects receives one line per rejected input line ("file:line: reason"),
	// and one per accepted line whose text had to be mended ("file:line:
	// member: invalid UTF-8 at byte N of the string (byte M of the line);
	// replaced with U+FFFD"); of each, the first maxRejectLines a file.
	// With Strict, such a line is a reject instead.
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
	// SourceDateEpoch, when set (pds ingest takes it from the environment
	// variable SOURCE_DATE_EPOCH, the reproducible-builds convention), is
	// the build's time: the manifest's created_at, the time part of its
	// build id, and the default sequence. The build id's random part is
	// then derived from the input digest and the sequence (buildID), so
	// that two builds of the same input make the same manifest too.
	SourceDateEpoch time.Time
	// DictionariesFrom, when set, is an earlier snapshot (of format 4)
	// whose compression dictionaries the build uses instead of making its
	// own: the views of every product that did not change are then the same
	// bytes as there, which is what keeps a small change small.
	DictionariesFrom string
	// KeepRecords keeps the build's records beside the snapshot, in
	// recordsDir(Out), for a later incremental build to take as its base.
	KeepRecords bool
	// Base, when set, makes the build incremental: In holds only the
	// products added or changed (each whole), the sources, parties and
	// documents added or changed, and deletions; every other product is
	// kept from the snapshot Base, which must have kept its records
	// (KeepRecords). The build keeps its own records.
	Base string
}

// Summary reports a finished build.
type Summary struct {
	Out         string
	BuildID     string
	InputDigest string
	Accepted    map[string]int64 // per input file (its logical name, e.g. claims.ndjson)
	Rejected    map[string]int64 // per input file
	// Files names, per logical input name, the file that was read
	// (claims.ndjson.gz for a gzip claims file).
	Files map[string]string
	// Unknown counts, per input file, the accepted lines that carried
	// members ingest does not read (they were ignored), with their names.
	Unknown map[string]UnknownMembers
	// Replaced counts, per input file, the accepted lines whose text was not
	// all Unicode (bytes that are not UTF-8, unpaired surrogate escapes):
	// those were replaced with U+FFFD, and each such line was warned of.
	Replaced map[string]int64
	// ByteOrderMark lists the input files that began with a UTF-8 byte order
	// mark, which was skipped.
	ByteOrderMark []string
	Ignored       []string // files in the input directory that are not input
	// RemovedStale lists the temporary folders of earlier, killed builds
	// that this build removed from beside Out.
	RemovedStale []string
	Views        int64
	Duration     time.Duration
	// Stages is how long each stage of the build took, in order: one per
	// input file read, then views, finishing, manifest and publish.
	Stages []StageTime
	// Incremental says what an incremental build did (nil for a full one).
	Incremental *Incremental
	// Records is where the build's records were kept ("" when they were not).
	Records string
}

// Incremental is the part of a Summary particular to an incremental build.
type Incremental struct {
	Base string
	// Changed and Added are the change set's products that replaced one of
	// the base's, and those that are new; Deleted the base's products
	// removed.
	Changed, Added, Deleted int64
	// Recomputed are kept products computed again because a source, party
	// or document they cite changed (all of them when a source was added or
	// its coverage changed); Kept those copied as they were.
	Recomputed, Kept int64
	// ChangedSources are the sources added or changed (a changed party
	// changes the sources it operates).
	ChangedSources []string
	// StoreLayers is how many layers of nights the new store holds on
	// the tables of the last build that wrote it whole (0: this build
	// wrote it whole, as it does every MaxStoreLayers+1 nights).
	StoreLayers int
	// SearchIndex says what the search index's update did: "updated: …"
	// when it kept the base's, "built whole: …" with the reason otherwise.
	SearchIndex string
}

// MaxStoreLayers is how many nights' layers a store holds on top of the
// tables a build wrote whole: the night after that, an incremental build
// writes the store whole again. Each layer is one more table a read of a
// view looks into.
const MaxStoreLayers = 6

// maxStoreLayers is MaxStoreLayers, but in tests (SetMaxStoreLayers).
var maxStoreLayers = MaxStoreLayers

// StageTime is how long one stage of a build took.
type StageTime struct {
	Name     string
	Duration time.Duration
}

// UnknownMembers is what a summary says about one file's unknown members.
type UnknownMembers struct {
	Lines int64    // lines with at least one unknown member
	Names []string // the first maxUnknownNames distinct member names, in order of appearance
}

// maxUnknownNames is how many distinct unknown member names a summary lists per file.
const maxUnknownNames = 10

// maxRejectLines is how many rejects of one file are printed; all are counted.
const maxRejectLines = 1000

// ErrStrict is returned when --strict meets a rejected line.
var ErrStrict = errors.New("strict build failed on a rejected line")

type builder struct {
	opts    Options
	inputs  inputSet
	scratch *scratch.Store
	out     *kv.Builder
	cat     catalog
	parties map[string]*domain.Party
	// partyLine and sourceLine give the line of each accepted party and
	// source, for the message of a duplicate.
	partyLine, sourceLine map[string]int
	digest                digest
	summary               Summary
	printed               map[string]int
	printedReplaced       map[string]int
	current               atomic.Value // string: the stage (the file being read, "views", …)
	count                 atomic.Int64 // lines read in the current phase
	stageMu               sync.Mutex   // guards stageAt and summary.Stages
	stageAt               time.Time    // when the current stage started
	// storeSums are the checksums of the store's files, taken while the
	// search index merged (nil if they could not be).
	storeSums     map[string]snapshots.File
	buf, key, rec []byte
	// lastUse is the tagDocUse key written last: the evidence of one
	// product and document usually comes together, and is written once.
	lastUse []byte
	// docSample is every docSampleEvery-th document id, for cutting the
	// document join into parts (joinSplits).
	docSample []string
	index     *index.Builder
	// sample is the products whose views make the store's compression
	// dictionaries.
	sample *subjectSample
	// seen holds every scratch key written for an id check (identifiers,
	// claim, document and evidence ids): a key it has not seen is surely
	// new, so the scratch store is asked only about the rare maybes.
	seen *idFilter
	// kept is the records the build keeps (KeepRecords, Base), written in
	// keptTemp until the snapshot is in place.
	kept     *records.Store
	keptTemp *snapshots.Temp
	// up is the state of an incremental build (nil for a full one).
	up *update
	// layered is set when the incremental build's store is its base's with
	// a layer of the night's changes (kv.NewLayer), not written whole;
	// layers is then how many layers the new store holds.
	layered bool
	layers  int
	// indexReport is what the search index's update did (index.Builder.Report).
	indexReport string
}

// seenBytes sizes the id filter: 32 MiB, whatever the input. It answers
// "maybe" for about 0.5% of new ids at 22 million ids (1M generated
// products; TestIDFilter), and stays useful well past that. A variable only
// so that a test can make every answer a maybe (SetIDFilterBytes).
var seenBytes = 32 << 20

// maybeSeen reports whether key may have been written for an id check;
// false is certain.
func (b *builder) maybeSeen(key []byte) bool { return b.seen.test(key) }

// markSeen adds key to the id filter, and reports whether it may have been
// there before (as maybeSeen would have): one hashing of the key instead of
// two. Adding the key of a line that turns out a duplicate changes nothing,
// since the key is in the store already.
func (b *builder) markSeen(key []byte) bool { return b.seen.testAndAdd(key) }

// Run builds a snapshot. An incremental build whose base (its snapshot or
// its kept records) is damaged fails, leaving nothing behind, with an error
// that names the file and says to build whole (baseDamaged).
func Run(ctx context.Context, opts Options) (_ Summary, err error) {
	defer func() {
		if err != nil && opts.Base != "" && baseDamaged(err) {
			err = fmt.Errorf("%w; the base cannot be built on: build this snapshot whole from the full input, without --base (with --keep-records, so that the next night can build on it)", err)
		}
	}()
	start := time.Now()
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if epoch := opts.SourceDateEpoch; !epoch.IsZero() {
		opts.Now = func() time.Time { return epoch }
	}
	if opts.Sequence == 0 {
		opts.Sequence = opts.Now().UnixMilli()
	}
	if opts.Rejects == nil {
		opts.Rejects = io.Discard
	}
	b := &builder{opts: opts, parties: map[string]*domain.Party{}, printed: map[string]int{}, printedReplaced: map[string]int{},
		partyLine: map[string]int{}, sourceLine: map[string]int{}, seen: newIDFilter(seenBytes), sample: newSubjectSample(samplesWanted),
		cat: catalog{sources: map[string]*domain.Source{}}}
	b.summary = Summary{Out: opts.Out, Accepted: map[string]int64{}, Rejected: map[string]int64{},
		Files: map[string]string{}, Unknown: map[string]UnknownMembers{}, Replaced: map[string]int64{}}
	b.current.Store("")

	if err := checkOut(opts); err != nil {
		return b.summary, err
	}
	inputs, ignored, err := findInputs(opts.In)
	if err != nil {
		return b.summary, err
	}
	b.inputs, b.summary.Ignored = inputs, ignored
	for logical, name := range inputs.paths {
		b.summary.Files[logical] = name
	}
	// The temporary folder's name is the build's until its id is known (at
	// the end: see buildID).
	w, err := snapshots.Create(opts.Out, ulid.MustNew(ulid.Timestamp(opts.Now()), rand.Reader).String())
	if err != nil {
		return b.summary, err
	}
	defer w.Close()
	b.summary.RemovedStale = w.RemovedStale
	if opts.Base != "" {
		if err := b.openBase(); err != nil {
			return b.summary, err
		}
		defer b.up.close()
	} else if _, ok := inputs.paths[FileDeletions]; ok {
		return b.summary, fmt.Errorf("input: %s is read only by an incremental build (--base)", inputs.paths[FileDeletions])
	}
	if opts.KeepRecords || opts.Base != "" {
		if err := b.createKept(w.ID()); err != nil {
			return b.summary, err
		}
		defer func() {
			if b.kept != nil {
				b.kept.Abort()
			}
			b.keptTemp.Release()
		}()
	}

	stop := b.startProgress()
	defer stop()
	if err := b.build(ctx, w); err != nil {
		return b.summary, err
	}

	b.stage(stageManifest)
	b.summary.BuildID = b.buildID()
	m := snapshots.Manifest{BuildID: b.summary.BuildID, CreatedAt: opts.Now().UTC().Format(time.RFC3339), InputDigest: b.digest.String(),
		Counts: b.summary.Accepted, Rejected: b.summary.Rejected, Sequence: opts.Sequence}
	m.Counts["views"] = b.summary.Views
	if b.up != nil {
		m.InputDigest = b.up.inputDigest(m.InputDigest)
		m.Counts = b.up.counts(b)
	}
	if b.kept != nil {
		if err := b.finishKept(m.Counts); err != nil {
			return b.summary, err
		}
	}
	if err := w.WriteManifest(m, b.storeSums); err != nil {
		return b.summary, err
	}
	delete(b.summary.Accepted, "views")
	b.stage(stagePublish)
	if err := w.Publish(); err != nil {
		return b.summary, err
	}
	if b.keptTemp != nil {
		if err := os.Rename(b.keptTemp.Path, recordsDir(opts.Out)); err != nil {
			return b.summary, fmt.Errorf("kept records: %w", err)
		}
		b.summary.Records = recordsDir(opts.Out)
	}
	if u := b.up; u != nil {
		changed := int64(len(u.replaced))
		b.summary.Incremental = &Incremental{Base: opts.Base, Changed: changed,
			Added: u.computed.products - int64(len(u.replayed)) - changed, Deleted: int64(len(u.deleted)),
			Recomputed: int64(len(u.replayed)), Kept: u.baseCounts[FileProducts] - u.dropped.products,
			ChangedSources: u.changedSources}
		if b.layered {
			b.summary.Incremental.StoreLayers = b.layers
		}
		b.summary.Incremental.SearchIndex = b.indexReport
	}
	b.stage("")
	stop()
	b.summary.InputDigest = m.InputDigest
	b.summary.Duration = time.Since(start)
	return b.summary, nil
}

// baseDamaged reports whether err is a check of the base that failed: a file
// of its snapshot or kept records that does not match its checksum, or a
// block whose checksum does not match.
func baseDamaged(err error) bool {
	return errors.Is(err, snapshots.ErrInvalid) || errors.Is(err, domain.ErrDamaged) || errors.Is(err, records.ErrDamaged)
}

// buildID is the build's id: a ULID of the build's time. Its random part is
// random, or, when the build's time is SourceDateEpoch's, the first 10 bytes
// of SHA-256("pds build id", input digest, sequence): the same input and
// sequence then make the same id, and any other input another one.
func (b *builder) buildID() string {
	now := ulid.Timestamp(b.opts.Now())
	if b.opts.SourceDateEpoch.IsZero() {
		return ulid.MustNew(now, rand.Reader).String()
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "pds build id\x00%s\x00%d", b.digest.String(), b.opts.Sequence))
	var id ulid.ULID
	if err := id.SetTime(now); err != nil {
		return ulid.MustNew(now, rand.Reader).String()
	}
	copy(id[6:], sum[:10])
	return id.String()
}

func (b *builder) build(ctx context.Context, w *snapshots.Writer) (err error) {
	b.scratch, err = scratch.Open(w.Work("scratch"), orderedTables...)
	if err != nil {
		return err
	}
	defer func() {
		if b.scratch != nil {
			b.scratch.Close()
		}
	}()
	if b.up != nil {
		if b.layers, err = b.up.base.Layers(); err != nil {
			return fmt.Errorf("--base: %w", err)
		}
		b.layers++
		b.layered = b.layers <= maxStoreLayers
	}
	if b.layered {
		if b.out, err = w.StoreOn(b.up.base); err != nil {
			return fmt.Errorf("--base: %w", err)
		}
	} else if b.out, err = w.Store(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			b.out.Abort()
		}
	}()
	if b.up != nil {
		b.index, err = w.IndexFrom(b.up.base)
	} else {
		b.index, err = w.Index()
	}
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	defer func() {
		if b.index != nil {
			b.index.Close()
		}
	}()
	for _, ph := range b.phases() {
		if err := b.readFile(ctx, ph); err != nil {
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
	// The id checks are over: the filter's 32 MiB of heap go back before
	// the views, whose live heap is the build's largest.
	b.seen = nil
	if b.up != nil {
		if err := b.plan(); err != nil {
			return err
		}
	}
	if err := b.joinDocuments(ctx); err != nil {
		return err
	}
	if err := b.writeViews(ctx); err != nil {
		return err
	}
	if b.kept != nil {
		if err := b.keepDocuments(); err != nil {
			return err
		}
	}
	// The views' garbage goes back to the system before the search index's
	// merge maps its segments: left to the collector's pace, the two
	// overlapped, and the build's peak memory at a million products was the
	// moment between the stages.
	debug.FreeOSMemory()
	b.stage(stageFinishing)
	// Closing the search index merges its segments into one, seconds of
	// one core at a million products: it runs beside the rest of the
	// store's writing, which no longer needs it.
	ix := b.index
	b.index = nil
	indexed := make(chan error, 1)
	go func() {
		if b.up != nil {
			// An incremental build's index is fed now, kept products and
			// computed ones in subject order, beside the store's merge.
			if err := b.feedIndex(ix); err != nil {
				ix.Close()
				indexed <- err
				return
			}
		}
		err := ix.Close()
		b.indexReport = ix.Report()
		indexed <- err
	}()
	err = b.finishStore()
	// The store is finished while the search index is still merging on
	// one core: checksum the store's files for the manifest meanwhile
	// (seconds at a million products). Should that fail (nil sums), the
	// manifest checksums them itself.
	summed := make(chan map[string]snapshots.File, 1)
	if err == nil {
		go func() {
			var sums map[string]snapshots.File
			if b.layered {
				sums, _ = w.SumStoreOn(b.up.base)
			} else {
				sums, _ = w.SumStore()
			}
			summed <- sums
		}()
	} else {
		summed <- nil
	}
	if ierr := <-indexed; ierr != nil && err == nil {
		err = fmt.Errorf("search index: %w", ierr)
	}
	b.storeSums = <-summed
	if err != nil {
		return err
	}
	err = b.scratch.Close()
	b.scratch = nil
	return err
}

// finishStore writes what follows the views (aliases, sources, metadata)
// and finishes the store.
func (b *builder) finishStore() error {
	if b.up != nil {
		if err := b.writeNightViews(); err != nil {
			return err
		}
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
	return b.out.Finish()
}

// phase is one input file: how its lines are parsed, how their references
// to earlier files are resolved (nil for none), and how they are applied.
type phase struct {
	file    string
	parse   parseFunc
	resolve resolveFunc
	apply   applyFunc
}

// phases lists the input files in the order they are read: each may refer
// to the ones before it.
func (b *builder) phases() []phase {
	strict := b.opts.Strict
	var deletions []phase
	if b.up != nil {
		deletions = []phase{{FileDeletions, parseRecord(strict, checkDeletion), nil, b.applyDeletion}}
	}
	return append(deletions, []phase{
		{FileParties, parseRecord(strict, checkParty), nil, b.applyParty},
		{FileSources, parseRecord(strict, func(s *domain.Source) *reject { return checkSource(s, b.parties) }), nil, b.applySource},
		{FileProducts, parseRecord(strict, checkProduct), nil, b.applyProduct},
		{FileClaims, parseRecord(strict, func(c *domain.Claim) *reject { return checkClaim(c, b.cat.sources) }), b.resolveClaims, b.applyClaim},
		{FileDocuments, parseRecord(strict, func(d *domain.Document) *reject { return checkDocument(d, b.cat.sources) }), nil, b.applyDocument},
		{FileEvidence, parseRecord(strict, checkEvidence), b.resolveEvidence, b.applyEvidence},
		{FileVerdicts, parseRecord(strict, checkVerdict), b.resolveVerdicts, b.applyVerdict},
	}...)
}

// parseRecord returns the parser of one input file: a line's text is checked
// (checkText), then the line is decoded into a new T and judged (and
// normalised) by check. readFile's workers then encode it for the scratch
// store (appendScratchRecord).
func parseRecord[T any](strict bool, check func(*T) *reject) parseFunc {
	return func(line []byte) (parsed, *reject) {
		line, replaced, r := checkText(line, strict)
		if r != nil {
			return parsed{}, r
		}
		v := new(T)
		unknown, r := unmarshal(line, v)
		if r != nil {
			return parsed{}, r
		}
		if r := check(v); r != nil {
			return parsed{}, r
		}
		return parsed{v: v, unknown: unknown, replaced: replaced}, nil
	}
}

// checkText makes sure every string of a line, in every member at any depth
// (claim values, unknown members and member names included), is Unicode
// text, before either decoder sees it. The decoders do not check: both turn
// a bad byte in a string member into U+FFFD without a word, and both copy a
// json.RawMessage member (a claim's object.value) as it is, bad bytes and
// all, which the views would then serve. A line that fails the check is
// refused when strict, naming the member and byte; otherwise it is read with
// each bad byte replaced by U+FFFD (and each unpaired surrogate escape by
// \ufffd), and replaced says where, for the warning.
func checkText(line []byte, strict bool) (text []byte, replaced string, r *reject) {
	if jsonutf8.Valid(line) {
		return line, "", nil
	}
	first, total := jsonutf8.Check(line, 1)
	where := first[0].String()
	if total > 1 {
		where += fmt.Sprintf(", and %d more", total-1)
	}
	if strict {
		return nil, "", rejectf("%s", where)
	}
	return jsonutf8.Fix(line), where, nil
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

// byteOrderMark is the UTF-8 encoding of U+FEFF.
const byteOrderMark = "\xef\xbb\xbf"

// unknownFieldError is how encoding/json's DisallowUnknownFields names a
// member the record type does not have.
const unknownFieldError = "json: unknown field "

// fastFlags are the flags of the fast decoding pass: refuse unknown members,
// and let strings and raw values point into the line instead of copying them
// (ZeroCopy). That is safe because a line's bytes are never written again
// (readBatches cuts lines from buffers it replaces, never reuses), and cheap
// in memory because what ingest keeps of a line beyond its batch is the
// scratch record, a copy; only the few parties and sources stay in memory,
// holding their lines' buffer. Copying the strings was the largest single
// source of allocations in a build.
const fastFlags = fastjson.DisallowUnknownFields | fastjson.ZeroCopy

// unmarshal decodes one line; it refuses anything but a JSON object. It
// returns the name of the first member that the record type does not have
// ("" when there is none): such members are ignored, and counted.
func unmarshal[T any](line []byte, v *T) (unknown string, r *reject) {
	line = bytes.TrimSpace(line)
	if bytes.HasPrefix(line, []byte(byteOrderMark)) {
		return "", rejectf("not a JSON object: the line starts with a UTF-8 byte order mark (bytes EF BB BF), which only the first line of a file may carry")
	}
	if len(line) == 0 || line[0] != '{' {
		return "", rejectf("not a JSON object")
	}
	// Most lines decode in one pass of segmentio/encoding's decoder that
	// also refuses unknown members: it is about five times as fast as
	// encoding/json here, and decoding was a fifth of a build's CPU. A line
	// that fails that pass is decoded again by encoding/json alone, exactly
	// as before, so that a reject says what encoding/json says (and unknown
	// members are ignored). FuzzFastDecodeMatchesStd holds the two decoders
	// to the same values on the lines the fast pass accepts.
	if rest, err := fastjson.Parse(line, v, fastFlags); err == nil && len(rest) == 0 {
		return "", nil
	}
	*v = *new(T)
	return unmarshalStd(line, v)
}

// unmarshalStd is unmarshal with encoding/json alone: one pass that refuses
// unknown members, then, for a line that fails it, one without the check.
func unmarshalStd[T any](line []byte, v *T) (unknown string, r *reject) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.InputOffset() == int64(len(line)) {
		return "", nil
	}
	if err != nil {
		if name, ok := strings.CutPrefix(err.Error(), unknownFieldError); ok {
			unknown = strings.Trim(name, `"`)
		}
	}
	*v = *new(T)
	if err := json.Unmarshal(line, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return "", rejectf("%s: wrong type (%s where %s is expected)", te.Field, te.Value, te.Type)
		}
		return "", rejectf("not valid JSON: %v", err)
	}
	return unknown, nil
}

// duplicateID is the reject of a line whose id an earlier line of the same
// file has.
func duplicateID(id string, earlier int) *reject {
	return rejectf("id %s is already used by line %d", id, earlier)
}

func (b *builder) applyParty(p parsed, n int) *reject {
	party := p.v.(*domain.Party)
	// A party of the base (an incremental build) is replaced, not a
	// duplicate.
	if line, dup := b.partyLine[party.ID]; dup {
		return duplicateID(party.ID, line)
	}
	b.parties[party.ID] = party
	b.partyLine[party.ID] = n
	return nil
}

func (b *builder) applySource(p parsed, n int) *reject {
	s := p.v.(*domain.Source)
	if line, dup := b.sourceLine[s.ID]; dup {
		return duplicateID(s.ID, line)
	}
	b.cat.sources[s.ID] = s
	b.sourceLine[s.ID] = n
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
// identifier, and the line of products.ndjson that named it, pending writes
// included (products.ndjson is being read).
func (b *builder) lookupProduct(subject string) (canonical, owner string, line int, ok bool) {
	v, ok, err := b.scratch.Get(b.skey(tagAlias, subject), b.buf)
	if err != nil || !ok {
		return "", "", 0, false
	}
	b.buf = v
	c, o, line := splitOwned(v)
	return string(c), string(o), line, true
}

// appendOwned appends the scratch value of an alias or a claim id: the
// canonical subject, a zero byte, the owner tenant, a zero byte, then the
// line number as a uvarint.
func appendOwned(dst []byte, canonical, owner string, line int) []byte {
	dst = append(append(append(append(dst, canonical...), 0), owner...), 0)
	return binary.AppendUvarint(dst, uint64(line))
}

// splitOwned reads a value that appendOwned wrote.
func splitOwned(v []byte) (canonical, owner []byte, line int) {
	canonical, rest, _ := bytes.Cut(v, []byte{0})
	owner, rest, _ = bytes.Cut(rest, []byte{0})
	n, _ := binary.Uvarint(rest)
	return canonical, owner, int(n)
}

func (b *builder) applyProduct(p parsed, n int) *reject {
	prod := p.v.(*domain.Product)
	for _, id := range prod.Identifiers {
		if !b.maybeSeen(b.skey(tagAlias, id)) {
			continue
		}
		if c, _, line, ok := b.lookupProduct(id); ok {
			return rejectf("identifier %s already names product %s (line %d)", id, c, line)
		}
	}
	var replaces string
	if b.up != nil {
		var r *reject
		if replaces, r = b.up.replaces(prod, n); r != nil {
			return r
		}
	}
	canonical := prod.Identifiers[0]
	if replaces != "" {
		b.up.replaced[replaces] = n
	}
	for _, id := range prod.Identifiers {
		b.rec = appendOwned(b.rec[:0], canonical, prod.Tenant, n)
		b.seen.testAndAdd(b.skey(tagAlias, id))
		if err := b.scratch.Set(b.key, b.rec); err != nil {
			return rejectf("scratch store: %v", err)
		}
	}
	if r := b.put(b.skey(tagProduct, canonical), p.rec); r != nil {
		return r
	}
	b.sample.add(canonical)
	return nil
}

func (b *builder) applyClaim(p parsed, n int) *reject {
	c := p.v.(*domain.Claim)
	canonical, owner := p.ref.canonical, p.ref.owner // resolveClaims checked them
	if b.markSeen(b.skey(tagClaimID, c.ID)) {
		if v, dup, _ := b.scratch.Get(b.key, b.buf); dup {
			b.buf = v
			_, _, line := splitOwned(v)
			return duplicateID(c.ID, line)
		}
	}
	b.rec = appendOwned(b.rec[:0], canonical, owner, n)
	if err := b.scratch.Set(b.key, b.rec); err != nil {
		return rejectf("scratch store: %v", err)
	}
	return b.put(b.skey(tagClaim, canonical, c.ID), p.rec)
}

// A document's id value is its source's tenant, a zero byte, then its line,
// so evidence can check visibility without reading the record, which is
// written to the ordered store (tagDocRecord).
func (b *builder) applyDocument(p parsed, n int) *reject {
	d := p.v.(*domain.Document)
	if b.markSeen(b.skey(tagDocument, d.ID)) {
		if v, dup, _ := b.scratch.Get(b.key, b.buf); dup {
			b.buf = v
			_, rest := splitDocument(v)
			line, _ := binary.Uvarint(rest)
			return duplicateID(d.ID, int(line))
		}
	}
	if b.summary.Accepted[FileDocuments]%docSampleEvery == 0 {
		b.docSample = append(b.docSample, strings.Clone(d.ID))
	}
	if b.up != nil {
		if err := b.noteDocument(d.ID, p.rec); err != nil {
			return failed(err)
		}
	}
	tenant := b.cat.sources[d.SourceID].Tenant
	b.rec = binary.AppendUvarint(append(append(b.rec[:0], tenant...), 0), uint64(n))
	if err := b.scratch.Set(b.key, b.rec); err != nil {
		return rejectf("scratch store: %v", err)
	}
	return b.put(b.skey(tagDocRecord, d.ID), p.rec)
}

// docSampleEvery: 2,000 samples at 1,000,000 documents.
const docSampleEvery = 500

func (b *builder) applyEvidence(p parsed, n int) *reject {
	e := p.v.(*domain.Evidence)
	canonical := p.ref.canonical // resolveEvidence checked the references
	if p.ref.baseDoc != nil {
		if err := b.importDocument(e.DocumentID, p.ref.baseDoc); err != nil {
			return rejectf("scratch store: %v", err)
		}
	}
	if b.markSeen(b.skey(tagEvidenceID, e.ID)) {
		if v, dup, _ := b.scratch.Get(b.key, b.buf); dup {
			b.buf = v
			line, _ := binary.Uvarint(v)
			return duplicateID(e.ID, int(line))
		}
	}
	b.rec = binary.AppendUvarint(b.rec[:0], uint64(n))
	if err := b.scratch.Set(b.key, b.rec); err != nil {
		return rejectf("scratch store: %v", err)
	}
	if r := b.put(b.skey(tagEvidence, canonical, e.ClaimID, e.ID), p.rec); r != nil {
		return r
	}
	// The views need the document with the product's records: note the
	// pair for joinDocuments.
	if use := b.skey(tagDocUse, e.DocumentID, canonical); !bytes.Equal(use, b.lastUse) {
		b.lastUse = append(b.lastUse[:0], use...)
		if err := b.scratch.Set(use, nil); err != nil {
			return rejectf("scratch store: %v", err)
		}
	}
	return nil
}

func (b *builder) applyVerdict(p parsed, n int) *reject {
	canonical := p.ref.canonical // resolveVerdicts checked the subject
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], uint64(n))
	return b.put(b.skey(tagVerdict, canonical, string(seq[:])), p.rec)
}
