package service

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/domain/gs1"
	"github.com/productdata/pds/kv"
	"github.com/productdata/pds/service/keys"
)

// MaxBatch is the most identifiers one Resolve call takes.
const MaxBatch = 1000

// ResolveArgs are the arguments of Resolve.
type ResolveArgs struct {
	Identifiers *[]string `json:"identifiers"`
}

// item is one input of a batch while it is being resolved.
type item struct {
	input      string
	status     string
	reason     string
	subject    string
	candidates []domain.Candidate
	errCode    string
	errDetail  string
	readings   []gs1.Reading
	reading    int // the reading that found it, or that the absence is about
	alias      kv.Alias
	identity   []byte // in the batch's arena
}

// Resolve looks up to MaxBatch identifiers in one call. It bills one unit
// per identifier in the request.
func (s *Service) Resolve(ctx context.Context, c domain.Caller, a ResolveArgs) (*Result, error) {
	if err := s.authorize(ctx, c, "resolve_identifiers", keys.ScopeResolve, 0); err != nil {
		return nil, err
	}
	ids, err := batchInput(a)
	if err != nil {
		return nil, err
	}
	if err := s.authorize(ctx, c, "resolve_identifiers", "", len(ids)); err != nil {
		return nil, err
	}
	snap, err := s.snapshot()
	if err != nil {
		return nil, err
	}
	defer snap.release()
	r, err := snap.NewReader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	bufs := batchPool.Get().(*batchBufs)
	defer bufs.put()
	b := newBatch(snap, r, c.Tenant, newCoverageUnion(snap, c.Tenant), bufs)
	defer b.done()
	b.identify(ids)
	if err := b.resolve(); err != nil {
		return nil, err
	}
	return snap.stamped(encodeBatch(b.items, b.cov.result()))
}

// newBatch starts a batch on bufs. The caller gives its inputs with
// identify, and calls done once it has written the items.
func newBatch(snap *Snapshot, r *kv.Reader, tenant string, cov *coverageUnion, bufs *batchBufs) *batch {
	b := &batch{snap: snap, r: r, tenant: tenant, cov: cov, bufs: bufs}
	b.arena = bufs.arena[:0]
	return b
}

// identify makes the batch's items of ids, dropping those of an earlier
// round (the arena is emptied too: the items written, its bytes are free).
func (b *batch) identify(ids []string) {
	b.arena = b.arena[:0]
	clear(b.bufs.items)
	b.items = identifyAll(ids, b.bufs)
}

// resolve decides every item: the phases, each a batched read of the store.
func (b *batch) resolve() error {
	if err := b.hintSKUs(); err != nil {
		return err
	}
	if err := b.readDirect(); err != nil {
		return err
	}
	found, err := b.readAliases()
	if err != nil {
		return err
	}
	b.decide(found)
	for try := 0; ; try++ {
		if err := b.readIdentities(); err != nil {
			return err
		}
		err := b.r.Check()
		if errors.Is(err, kv.ErrReadAgain) && try < 3 {
			continue // a night linked the point index meanwhile: its chunks are checked again
		}
		if err != nil {
			return domain.Internal(err)
		}
		return nil
	}
}

// done hands the batch's buffers back to bufs, for the next batch.
func (b *batch) done() { b.bufs.arena = b.arena[:0] }

// batchInput checks the size of a batch and returns its identifiers.
func batchInput(a ResolveArgs) ([]string, error) {
	if a.Identifiers == nil {
		return nil, domain.Errorf(domain.CodeInvalidRequest, "the member 'identifiers' (array of 1 to %d strings) is required", MaxBatch)
	}
	ids := *a.Identifiers
	if len(ids) == 0 {
		return nil, domain.Errorf(domain.CodeInvalidRequest, "'identifiers' is empty; send 1 to %d identifiers", MaxBatch)
	}
	if len(ids) > MaxBatch {
		return nil, domain.Errorf(domain.CodeBatchTooLarge, "%d identifiers sent; at most %d fit in one call, so split the batch", len(ids), MaxBatch)
	}
	return ids, nil
}

// batchBufs are the buffers of one Resolve call, kept in batchPool for the
// next call: a call of 1000 identifiers would otherwise allocate (and the
// collector clear and scan) about 1 MB of items, keys and identity
// documents. Nothing of them outlives the call: the answer is a copy.
type batchBufs struct {
	items    []item
	readings []gs1.Reading
	arena    []byte
	// One phase's reads: the views (refs) or the identifiers (ids) to
	// read, and for each the item (and reading) that asked.
	refs  []kv.ViewRef
	ids   []string
	at    []readAt
	found [][]foundAlias // by item
	kv    kv.Batch
}

// readAt is the item (and its reading, for an alias) a read is for.
type readAt struct {
	item, reading int
}

var batchPool = sync.Pool{New: func() any { return new(batchBufs) }}

// maxPooledBytes bounds the buffers kept for the next call.
const maxPooledBytes = 4 << 20

func (p *batchBufs) put() {
	clear(p.items) // drop the references to this call's inputs
	p.items = p.items[:0]
	clear(p.readings)
	p.readings = p.readings[:0]
	clear(p.refs)
	clear(p.ids)
	clear(p.found)
	if cap(p.arena) > maxPooledBytes || p.kv.Bytes() > maxPooledBytes {
		return
	}
	batchPool.Put(p)
}

// identifyAll reads each input as identifiers; an input that is no
// identifier in any namespace is marked invalid.
func identifyAll(ids []string, bufs *batchBufs) []item {
	items := slices.Grow(bufs.items[:0], len(ids))[:len(ids)]
	bufs.items = items
	// The one reading of each canonical GTIN, in one array: the array is
	// never grown past what it was made with, so the items' slices of it
	// stay put.
	one := slices.Grow(bufs.readings[:0], len(ids))
	for i, in := range ids {
		it := &items[i]
		it.input = in
		if sub, ok := gs1.CanonicalGTIN(in); ok {
			one = append(one, gs1.Reading{Subject: sub})
			it.readings = one[len(one)-1 : len(one) : len(one)]
			continue
		}
		if utf8.RuneCountInString(in) > MaxValueLength {
			it.status, it.errCode, it.errDetail = "invalid", domain.CodeInvalidIdentifier, "longer than 256 characters"
			continue
		}
		rs, err := gs1.Interpret(in)
		if err != nil {
			de := fromGS1(err, domain.CodeInvalidIdentifier).(*domain.Error)
			it.status, it.errCode, it.errDetail = "invalid", domain.CodeInvalidIdentifier, de.Detail
			continue
		}
		it.readings = rs
	}
	bufs.readings = one
	return items
}

// hintSKUs adds to the error of each invalid item the internal SKU a product
// is stored under for its value, when there is one the caller may see (as
// a single lookup's INVALID_IDENTIFIER detail does).
func (b *batch) hintSKUs() error {
	for i := range b.items {
		it := &b.items[i]
		if it.status != "invalid" {
			continue
		}
		sku, ok, err := b.snap.storedSKU(it.input, b.tenant)
		if err != nil {
			return err
		}
		if ok {
			it.errDetail += skuHint(sku)
		}
	}
	return nil
}

// batch is a Resolve call in progress: its items and what it has read.
type batch struct {
	snap   *Snapshot
	r      *kv.Reader
	tenant string
	items  []item
	cov    *coverageUnion
	arena  []byte // every identity view read, one after the other
	bufs   *batchBufs
}

// subjectOf returns the subject string of sub, without building it anew
// when the input already is that string (a canonical subject).
func subjectOf(input string, sub gs1.Subject) string {
	ns, v := sub.Namespace, sub.Value
	if len(input) == len(ns)+1+len(v) && input[:len(ns)] == ns && input[len(ns)] == ':' && input[len(ns)+1:] == v {
		return input
	}
	return sub.String()
}

// readDirect is the fast path: an input that names one subject is looked up
// as a canonical subject, straight in the public identity views.
func (b *batch) readDirect() error {
	refs, at := b.bufs.refs[:0], b.bufs.at[:0]
	for i := range b.items {
		if it := &b.items[i]; it.status == "" && len(it.readings) == 1 {
			refs = append(refs, kv.ViewRef{Subject: subjectOf(it.input, it.readings[0].Subject)})
			at = append(at, readAt{item: i})
		}
	}
	b.bufs.refs, b.bufs.at = refs, at
	if cap(b.arena) == 0 {
		b.arena = make([]byte, 0, len(b.items)*512)
	}
	// The stored views are read straight into the arena; what is not the
	// identity document (the tenant list, the coverage) is left there
	// unused.
	views, arena, err := b.r.Identities(&b.bufs.kv, refs, b.arena)
	b.arena = arena
	if err != nil {
		return err
	}
	for j, v := range views {
		if !v.Found {
			continue
		}
		if b.tenant != "" && v.View.HasTenant(b.tenant) {
			continue // the caller has its own view: the alias path finds it
		}
		it := &b.items[at[j].item]
		it.status, it.subject = domain.StatusFound, refs[j].Subject
		body := v.View.Body
		it.identity = body[:len(body):len(body)]
		b.cov.add(it.subject)
	}
	return nil
}

// foundAlias is an alias one reading of an item found, through identifier.
type foundAlias struct {
	alias      kv.Alias
	reading    int
	identifier string
}

// readAliases reads the aliases of every reading of the items not decided
// yet and returns, per item, the distinct aliases visible to the caller, in
// the order of the readings that found them. When two readings of an item
// find one product, the reading kept is the one whose identifier sorts
// first.
func (b *batch) readAliases() ([][]foundAlias, error) {
	ids, at := b.bufs.ids[:0], b.bufs.at[:0]
	for i := range b.items {
		it := &b.items[i]
		if it.status != "" {
			continue
		}
		for j, r := range it.readings {
			ids = append(ids, subjectOf(it.input, r.Subject))
			at = append(at, readAt{item: i, reading: j})
		}
	}
	b.bufs.ids, b.bufs.at = ids, at
	aliases, err := b.r.Aliases(&b.bufs.kv, ids)
	if err != nil {
		return nil, err
	}
	found := slices.Grow(b.bufs.found[:0], len(b.items))[:len(b.items)]
	clear(found)
	b.bufs.found = found
	for k, a := range aliases {
		if !a.Found || !a.Alias.VisibleTo(b.tenant) {
			continue
		}
		fs := found[at[k].item]
		f := foundAlias{alias: a.Alias, reading: at[k].reading, identifier: ids[k]}
		switch d := slices.IndexFunc(fs, func(x foundAlias) bool { return x.alias.Subject == a.Alias.Subject }); {
		case d < 0:
			found[at[k].item] = append(fs, f)
		case f.identifier < fs[d].identifier:
			fs[d] = f
		}
	}
	for _, fs := range found {
		if len(fs) > 1 {
			sort.Slice(fs, func(i, j int) bool { return fs[i].reading < fs[j].reading })
		}
	}
	return found, nil
}

// decide gives each remaining item its status from the aliases found, and
// lists (in b.bufs.refs and b.bufs.at) the identity views to read for those
// found.
func (b *batch) decide(found [][]foundAlias) {
	refs, at := b.bufs.refs[:0], b.bufs.at[:0]
	for i := range b.items {
		it := &b.items[i]
		if it.status == "invalid" || it.status == domain.StatusFound {
			continue
		}
		switch len(found[i]) {
		case 1:
			al := found[i][0].alias
			it.status, it.subject, it.alias, it.reading = domain.StatusFound, al.Subject, al, found[i][0].reading
			refs = append(refs, kv.ViewRef{Subject: al.Subject, Tenant: al.ViewTenant(b.tenant)})
			at = append(at, readAt{item: i})
			b.cov.add(al.Subject)
		case 0:
			b.absent(it)
		default:
			it.status = domain.StatusAmbiguous
			for _, f := range found[i] {
				ns, v, _ := cut(f.alias.Subject)
				it.candidates = append(it.candidates, domain.Candidate{Namespace: ns, Valid: true, Normalized: v, Subject: f.alias.Subject})
			}
		}
	}
	b.bufs.refs, b.bufs.at = refs, at
}

// absent decides an item nothing is stored for: its first product reading's
// coverage says not_found or unknown; without one it is out of scope.
func (b *batch) absent(it *item) {
	it.status, it.reason = domain.StatusUnknown, domain.ReasonOutOfScope
	it.subject, it.reading = it.readings[0].Subject.String(), 0
	for j, r := range it.readings {
		if isProductNamespace(r.Subject.Namespace) {
			it.subject, it.reading = r.Subject.String(), j
			it.status, it.reason = b.cov.absence(it.subject)
			b.cov.add(it.subject)
			return
		}
	}
}

// readIdentities reads the identity views decide listed: those of the
// items found by alias.
func (b *batch) readIdentities() error {
	refs, at := b.bufs.refs, b.bufs.at
	views, arena, err := b.r.Identities(&b.bufs.kv, refs, b.arena)
	b.arena = arena
	if err != nil {
		return err
	}
	for j, v := range views {
		if !v.Found {
			return domain.Internal(errMissingView(b.items[at[j].item].subject))
		}
		body := v.View.Body
		b.items[at[j].item].identity = body[:len(body):len(body)]
	}
	return nil
}

// coverageUnion gathers the sources a batch consulted. GTINs that share
// their first prefixLen digits are covered by the same sources, as are the
// subjects of any other namespace, so each such class is looked at once; once every source the caller may see
// is in the union, nothing more is looked at.
type coverageUnion struct {
	snap        *Snapshot
	tenant      string
	seen        map[string]bool
	classes     map[string]bool
	gtinClasses map[uint64]bool // classes of GTINs, by their digits
	left        int
	cov         domain.Coverage
	absences    map[string]absenceOf // by coverage class, see absence
}

// absenceOf is the status and reason of an absent subject.
type absenceOf struct{ status, reason string }

// maxAbsences bounds the classes a coverageUnion remembers the absence of.
const maxAbsences = 4096

func newCoverageUnion(snap *Snapshot, tenant string) *coverageUnion {
	u := &coverageUnion{snap: snap, tenant: tenant, seen: map[string]bool{}, classes: map[string]bool{}, gtinClasses: map[uint64]bool{},
		cov: domain.Coverage{SourcesConsulted: []string{}}, absences: map[string]absenceOf{}}
	for _, s := range snap.sources {
		if s.VisibleTo(tenant) {
			u.left++
		}
	}
	return u
}

func (u *coverageUnion) add(subject string) {
	if u.left == 0 {
		return
	}
	class := subject
	switch ns, v, ok := cut(subject); {
	case ok && ns == "gtin" && len(v) > u.snap.prefixLen:
		// Most subjects: the class's digits as a number, quicker to look
		// up than the string.
		if d, ok := decimal(v[:u.snap.prefixLen]); ok {
			if u.gtinClasses[d] {
				return
			}
			u.gtinClasses[d] = true
			u.look(subject)
			return
		}
		class = subject[:len(ns)+1+u.snap.prefixLen]
	case ok && ns != "gtin":
		class = subject[:len(ns)+1] // a source covers all of a namespace or none of it
	}
	if u.classes[class] {
		return
	}
	u.classes[class] = true
	u.look(subject)
}

// decimal is the number digits (at most 19 of them) write.
func decimal(digits string) (uint64, bool) {
	var d uint64
	if len(digits) > 19 {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i] - '0'
		if c > 9 {
			return 0, false
		}
		d = d*10 + uint64(c)
	}
	return d, true
}

// look adds the sources that cover subject, the first of its class.
func (u *coverageUnion) look(subject string) {
	for _, s := range u.snap.sources {
		if u.seen[s.ID] || !s.VisibleTo(u.tenant) || !s.CoversSubject(subject) {
			continue
		}
		u.seen[s.ID] = true
		u.left--
		if s.IsEnabled() {
			u.cov.SourcesConsulted = append(u.cov.SourcesConsulted, s.ID)
		} else {
			u.cov.SourcesSkipped = append(u.cov.SourcesSkipped, domain.Skipped{ID: s.ID, Reason: domain.SkipDisabled})
		}
	}
}

// absence is domain.CoverageOf(subject, ...).Absence() for the union's
// tenant, remembered by class: a source covers every GTIN of a class (the
// namespace and the first prefixLen digits) or none, and any subject of
// another namespace when it names that namespace. A stream of misses would
// otherwise match each against every source's prefixes.
func (u *coverageUnion) absence(subject string) (status, reason string) {
	ns, v, ok := cut(subject)
	class := ""
	switch {
	case !ok:
	case ns != "gtin":
		class = subject[:len(ns)+1]
	case len(v) > u.snap.prefixLen:
		class = subject[:len(ns)+1+u.snap.prefixLen]
	}
	if a, ok := u.absences[class]; ok && class != "" {
		return a.status, a.reason
	}
	status, reason = domain.CoverageOf(subject, u.tenant, u.snap.sources).Absence()
	if class != "" && len(u.absences) < maxAbsences {
		u.absences[class] = absenceOf{status, reason}
	}
	return status, reason
}

func (u *coverageUnion) result() domain.Coverage {
	sort.Strings(u.cov.SourcesConsulted)
	sort.Slice(u.cov.SourcesSkipped, func(i, j int) bool { return u.cov.SourcesSkipped[i].ID < u.cov.SourcesSkipped[j].ID })
	return u.cov
}

// encodeBatch writes the envelope members of a batch answer, copying each
// stored identity document as it is.
func encodeBatch(items []item, cov domain.Coverage) (*Result, error) {
	counts := map[string]int{}
	size := 256
	for i := range items {
		it := &items[i]
		counts[it.status]++
		// The members' names and punctuation take under 128 bytes; the
		// answer is then written without growing (a second copy of it).
		size += len(it.identity) + len(it.input) + len(it.subject) + len(it.errDetail) + 128
	}
	status := domain.StatusPartial
	switch {
	case counts[domain.StatusFound] == len(items):
		status = domain.StatusFound
	case counts[domain.StatusNotFound] == len(items):
		status = domain.StatusNotFound
	}
	// The answer (about 350 KB for 1000 identities) is written into a pooled
	// buffer, which the transport gives back with Result.Release once it has
	// copied the answer out.
	bp := viewBufs.Get().(*[]byte)
	b := slices.Grow((*bp)[:0], size)
	b = append(b, `"status":"`...)
	b = append(b, status...)
	b = append(b, `","data":{"items":[`...)
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendItem(b, &items[i]); err != nil {
			return nil, err
		}
	}
	b = append(b, `],"counts":`...)
	b = appendCounts(b, counts, len(items))
	b = append(b, '}')
	cj, err := domain.Marshal(cov)
	if err != nil {
		return nil, domain.Internal(err)
	}
	*bp = b
	return &Result{Body: b, Coverage: cj, buf: bp}, nil
}

// appendCounts appends a resolve's counts object: the items by status, and
// their total.
func appendCounts(b []byte, counts map[string]int, total int) []byte {
	b = append(b, '{')
	for i, st := range resolveStatuses {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, st...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(counts[st]), 10)
	}
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	return append(b, '}')
}

// resolveStatuses are the statuses of a resolve item, in the order counts
// lists them.
var resolveStatuses = []string{domain.StatusFound, domain.StatusNotFound, domain.StatusUnknown, domain.StatusAmbiguous, "invalid"}

// appendItem appends one resolve item, copying its stored identity document
// as it is.
func appendItem(b []byte, it *item) ([]byte, error) {
	b = append(b, `{"input":`...)
	in := len(b)
	b = appendString(b, it.input)
	input := b[in:len(b):len(b)]
	b = append(b, `,"status":"`...)
	b = append(b, it.status...)
	b = append(b, '"')
	switch {
	case it.subject == "":
	case it.subject == it.input: // a canonical subject, as most inputs of a large batch
		b = append(b, `,"subject":`...)
		b = append(b, input...)
	default:
		b = append(b, `,"subject":`...)
		b = appendString(b, it.subject)
	}
	if it.reason != "" {
		b = append(b, `,"reason":"`...)
		b = append(b, it.reason...)
		b = append(b, '"')
	}
	var err error
	if b, err = appendInterpretation(b, it); err != nil {
		return nil, err
	}
	if it.candidates != nil {
		cj, err := domain.Marshal(it.candidates)
		if err != nil {
			return nil, domain.Internal(err)
		}
		b = append(b, `,"candidates":`...)
		b = append(b, cj...)
	}
	if it.identity != nil {
		b = append(b, `,"product":`...)
		b = append(b, it.identity...)
	}
	if it.errCode != "" {
		b = append(b, `,"error":{"code":"`...)
		b = append(b, it.errCode...)
		b = append(b, `","detail":`...)
		b = appendString(b, it.errDetail)
		b = append(b, '}')
	}
	b = append(b, '}')
	return b, nil
}

// appendInterpretation appends how an item's input was read: interpreted_as
// on an absence, or when the subject looked up is not the input as given,
// and the reading's warnings.
func appendInterpretation(b []byte, it *item) ([]byte, error) {
	if it.readings == nil || it.status == domain.StatusAmbiguous {
		return b, nil
	}
	r := it.readings[it.reading]
	sub := it.subject // the reading's subject, unless found through an alias
	if it.status == domain.StatusFound && it.alias.Subject != "" {
		sub = r.Subject.String()
	}
	if it.status != domain.StatusFound || sub != it.input {
		b = append(b, `,"interpreted_as":`...)
		b = appendString(b, sub)
	}
	if len(r.Warnings) > 0 {
		wj, err := domain.Marshal(warnings(r.Warnings))
		if err != nil {
			return nil, domain.Internal(err)
		}
		b = append(b, `,"warnings":`...)
		b = append(b, wj...)
	}
	return b, nil
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			j, _ := domain.Marshal(s)
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
