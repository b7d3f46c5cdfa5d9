package synthetic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/domain/gs1"
)

// input is a generated directory, decoded.
type input struct {
	dir       string
	parties   []domain.Party
	sources   []domain.Source
	products  []domain.Product
	claims    []domain.Claim
	documents []domain.Document
	evidence  []domain.Evidence
	verdicts  []domain.Verdict
}

var (
	sampleOnce sync.Once
	sampleIn   *input
	sampleErr  error
)

// sample is a 300-product run with the showcase, generated once per test
// binary.
func sample(t *testing.T) *input {
	t.Helper()
	sampleOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pds-synthetic-")
		if err != nil {
			sampleErr = err
			return
		}
		if err := Generate(Options{Products: 300, Seed: 1, Out: dir, Showcase: true}); err != nil {
			sampleErr = err
			return
		}
		sampleIn, sampleErr = readInput(dir)
	})
	if sampleErr != nil {
		t.Fatal(sampleErr)
	}
	return sampleIn
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sampleIn != nil {
		os.RemoveAll(sampleIn.dir)
	}
	os.Exit(code)
}

// readLines decodes every line of a file into a T, strictly, and checks that
// json.Marshal of the decoded value gives the line back byte for byte: the
// hand-written encoders write exactly the domain types.
func readLines[T any](dir, name string) ([]T, error) {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var v T
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n, err)
		}
		again, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n, err)
		}
		if !bytes.Equal(again, line) {
			return nil, fmt.Errorf("%s:%d: not what json.Marshal writes:\n got  %s\n want %s", name, n, line, again)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

func readInput(dir string) (*input, error) {
	in := &input{dir: dir}
	var errs []error
	var err error
	in.parties, err = readLines[domain.Party](dir, "parties.ndjson")
	errs = append(errs, err)
	in.sources, err = readLines[domain.Source](dir, "sources.ndjson")
	errs = append(errs, err)
	in.products, err = readLines[domain.Product](dir, "products.ndjson")
	errs = append(errs, err)
	in.claims, err = readLines[domain.Claim](dir, "claims.ndjson")
	errs = append(errs, err)
	in.documents, err = readLines[domain.Document](dir, "documents.ndjson")
	errs = append(errs, err)
	in.evidence, err = readLines[domain.Evidence](dir, "evidence.ndjson")
	errs = append(errs, err)
	in.verdicts, err = readLines[domain.Verdict](dir, "verdicts.ndjson")
	errs = append(errs, err)
	return in, errors.Join(errs...)
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, name := range Files {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	return out
}

func TestDeterminism(t *testing.T) {
	t.Parallel()
	gen := func(products int, seed int64, showcase bool) map[string][]byte {
		dir := t.TempDir()
		if err := Generate(Options{Products: products, Seed: seed, Out: dir, Showcase: showcase}); err != nil {
			t.Fatal(err)
		}
		return readDir(t, dir)
	}
	base := gen(1100, 7, true) // more than one chunk
	cases := []struct {
		name     string
		products int
		seed     int64
		showcase bool
		same     bool
	}{
		{"same seed", 1100, 7, true, true},
		{"other seed", 1100, 8, true, false},
		{"without showcase", 1100, 7, false, false},
		{"other count", 1099, 7, true, false},
	}
	for _, c := range cases {
		got := gen(c.products, c.seed, c.showcase)
		for _, name := range Files {
			equal := bytes.Equal(got[name], base[name])
			if c.same && !equal {
				t.Errorf("%s: %s differs", c.name, name)
			}
		}
		if !c.same && bytes.Equal(got["products.ndjson"], base["products.ndjson"]) {
			t.Errorf("%s: products.ndjson is the same", c.name)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name string
		opts Options
	}{
		{"no products", Options{Products: 0, Out: t.TempDir()}},
		{"negative products", Options{Products: -3, Out: t.TempDir()}},
		{"no out", Options{Products: 10}},
		{"cancelled", Options{Products: 10, Out: t.TempDir(), Context: cancelled}},
	}
	for _, c := range cases {
		if err := Generate(c.opts); err == nil {
			t.Errorf("%s: no error", c.name)
		}
		if c.opts.Out != "" {
			entries, _ := os.ReadDir(c.opts.Out)
			if len(entries) != 0 {
				t.Errorf("%s: left %d files behind", c.name, len(entries))
			}
		}
	}
}

func TestReplacesGzipTwin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	twin := filepath.Join(dir, "claims.ndjson.gz")
	if err := os.WriteFile(twin, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	if err := Generate(Options{Products: 5, Seed: 1, Out: dir, Progress: &progress}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(twin); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("claims.ndjson.gz is still there (%v)", err)
	}
	if !strings.Contains(progress.String(), "5 products") {
		t.Errorf("summary %q does not count the products", progress.String())
	}
}

var skuPattern = regexp.MustCompile(`^[A-Za-z0-9]+([-_.][A-Za-z0-9]+)*$`)

// checkSubject checks a subject string is canonical and valid.
func checkSubject(t *testing.T, s string) {
	t.Helper()
	ns, v, _ := strings.Cut(s, ":")
	switch ns {
	case "gtin":
		if len(v) != 14 || !gs1.ValidCheckDigit(v) {
			t.Errorf("%s: not a 14-digit GTIN with a valid check digit", s)
		}
	case "internal_sku":
		if len(v) > 64 || !skuPattern.MatchString(v) {
			t.Errorf("%s: not an internal SKU", s)
		}
	default:
		t.Errorf("%s: namespace %q", s, ns)
	}
	if sub, err := gs1.ParseSubject(s); err != nil || sub.String() != s {
		t.Errorf("%s: gs1.ParseSubject gives %v, %v", s, sub, err)
	}
}

func checkTime(t *testing.T, what, v string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, v)
	if err != nil || !strings.HasSuffix(v, "Z") {
		t.Errorf("%s %q is not an RFC 3339 UTC date-time", what, v)
	}
	return tm
}

func TestIdentifiers(t *testing.T) {
	t.Parallel()
	in := sample(t)
	seen := map[string]bool{}
	forms := map[string]int{}
	for _, p := range in.products {
		for _, id := range p.Identifiers {
			checkSubject(t, id)
			if seen[id] {
				t.Errorf("identifier %s is used twice", id)
			}
			seen[id] = true
			if v, ok := strings.CutPrefix(id, "gtin:"); ok {
				switch {
				case strings.HasPrefix(v, "000000"):
					forms["GTIN-8"]++
				case strings.HasPrefix(v, "00"):
					forms["GTIN-12"]++
				case v[0] == '0':
					forms["GTIN-13"]++
				default:
					forms["GTIN-14"]++
				}
			} else {
				forms["internal_sku"]++
			}
		}
		if p.ManufacturerGLN != "" && (len(p.ManufacturerGLN) != 13 || !gs1.ValidCheckDigit(p.ManufacturerGLN)) {
			t.Errorf("manufacturer_gln %s is not a valid GLN", p.ManufacturerGLN)
		}
	}
	for _, f := range []string{"GTIN-8", "GTIN-12", "GTIN-13", "GTIN-14", "internal_sku"} {
		if forms[f] == 0 {
			t.Errorf("no %s identifier", f)
		}
	}
	for _, p := range in.parties {
		if p.GLN != "" && !gs1.ValidCheckDigit(p.GLN) {
			t.Errorf("party %s: GLN %s", p.Name, p.GLN)
		}
	}
}

// TestUniqueAtScale checks identifiers stay unique when makers outgrow their
// company prefixes (the top maker of 200,000 products has several).
func TestUniqueAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	t.Parallel()
	opts := Options{Products: 200000, Seed: 3}
	g, err := newGenerator(opts, newCatalogue(opts.Seed))
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[string]bool, opts.Products*2)
	skels := make([]skel, chunkSize)
	for first := 1; first <= opts.Products; first += chunkSize {
		if err := g.plan(int64(first), skels); err != nil {
			t.Fatal(err)
		}
		for _, sk := range skels {
			for _, id := range sk.ids {
				if id == "" {
					continue
				}
				if seen[id] {
					t.Fatalf("identifier %s is used twice", id)
				}
				seen[id] = true
				if v, ok := strings.CutPrefix(id, "gtin:"); ok && (len(v) != 14 || !gs1.ValidCheckDigit(v)) {
					t.Fatalf("%s: bad GTIN", id)
				}
			}
		}
	}
}

func TestReferencesResolve(t *testing.T) {
	t.Parallel()
	in := sample(t)
	parties := map[string]bool{}
	for _, p := range in.parties {
		parties[p.ID] = true
	}
	sources := map[string]*domain.Source{}
	for i := range in.sources {
		s := &in.sources[i]
		sources[s.ID] = s
		if s.OperatorPartyID != nil && !parties[*s.OperatorPartyID] {
			t.Errorf("source %s: operator %s is no party", s.ID, *s.OperatorPartyID)
		}
	}
	subjects := map[string]int{} // identifier -> product index
	for i, p := range in.products {
		for _, id := range p.Identifiers {
			subjects[id] = i
		}
	}
	claims := map[string]*domain.Claim{}
	for i := range in.claims {
		c := &in.claims[i]
		if claims[c.ID] != nil {
			t.Errorf("claim id %s is used twice", c.ID)
		}
		claims[c.ID] = c
	}
	docs := map[string]*domain.Document{}
	for i := range in.documents {
		d := &in.documents[i]
		if docs[d.ID] != nil {
			t.Errorf("document id %s is used twice", d.ID)
		}
		docs[d.ID] = d
		if sources[d.SourceID] == nil {
			t.Errorf("document %s: source %s", d.ID, d.SourceID)
		}
	}
	evidence := map[string]*domain.Evidence{}
	docProduct := map[string]int{} // document -> the product whose claims it backs
	for i := range in.evidence {
		e := &in.evidence[i]
		if evidence[e.ID] != nil {
			t.Errorf("evidence id %s is used twice", e.ID)
		}
		evidence[e.ID] = e
		c, d := claims[e.ClaimID], docs[e.DocumentID]
		if c == nil || d == nil {
			t.Errorf("evidence %s: claim %s or document %s missing", e.ID, e.ClaimID, e.DocumentID)
			continue
		}
		p := subjects[c.Subject]
		if prev, ok := docProduct[d.ID]; ok && prev != p {
			t.Errorf("document %s backs claims of two products", d.ID)
		}
		docProduct[d.ID] = p
	}
	for _, c := range in.claims {
		if _, ok := subjects[c.Subject]; !ok {
			t.Errorf("claim %s: subject %s is no product's", c.ID, c.Subject)
		}
		if c.SourceRef == nil || sources[*c.SourceRef] == nil {
			t.Errorf("claim %s: source_ref %v", c.ID, c.SourceRef)
		}
		if c.PublisherRef != nil && !parties[*c.PublisherRef] {
			t.Errorf("claim %s: publisher_ref %s is no party", c.ID, *c.PublisherRef)
		}
		if c.SupersededBy != nil {
			nw := claims[*c.SupersededBy]
			if nw == nil || nw.Subject != c.Subject || nw.Predicate != c.Predicate || nw.ID == c.ID {
				t.Errorf("claim %s: superseded_by %s is no other claim of the same subject and predicate", c.ID, *c.SupersededBy)
			}
		}
		if len(c.EvidenceRefs) == 0 {
			t.Errorf("claim %s has no evidence", c.ID)
		}
		sameSource := false
		for _, ref := range c.EvidenceRefs {
			e := evidence[ref]
			if e == nil || e.ClaimID != c.ID {
				t.Errorf("claim %s: evidence_ref %s is not its evidence", c.ID, ref)
				continue
			}
			if d := docs[e.DocumentID]; d != nil && c.SourceRef != nil && d.SourceID == *c.SourceRef {
				sameSource = true
			}
		}
		if !sameSource {
			t.Errorf("claim %s: no evidence from its own source", c.ID)
		}
	}
	for _, e := range in.evidence {
		if !slices.Contains(claims[e.ClaimID].EvidenceRefs, e.ID) {
			t.Errorf("evidence %s is not in its claim's evidence_refs", e.ID)
		}
	}
	for _, d := range in.documents {
		if _, ok := docProduct[d.ID]; !ok {
			t.Errorf("document %s backs no claim", d.ID)
		}
	}
	for _, v := range in.verdicts {
		if _, ok := subjects[v.Subject]; !ok {
			t.Errorf("verdict on %s, which is no product's identifier", v.Subject)
		}
	}
}

func TestEnumsAndRanges(t *testing.T) {
	t.Parallel()
	in := sample(t)
	for _, s := range in.sources {
		if !slices.Contains(domain.SourceKinds, s.Kind) {
			t.Errorf("source %s: kind %q", s.ID, s.Kind)
		}
		if s.TrustTier < 0 || s.TrustTier > domain.MaxTrustTier {
			t.Errorf("source %s: trust_tier %d", s.ID, s.TrustTier)
		}
		if (s.Kind == domain.SourceKindTenantUpload) != (s.Tenant != "") {
			t.Errorf("source %s: kind %s with tenant %q", s.ID, s.Kind, s.Tenant)
		}
		if s.Origin == "" || s.LicenceName == "" {
			t.Errorf("source %s: origin or licence_name missing", s.ID)
		}
	}
	for _, p := range in.products {
		if !slices.Contains(domain.TrustLevels, p.TrustLevel) {
			t.Errorf("product %s: trust_level %q", p.Identifiers[0], p.TrustLevel)
		}
		if !slices.Contains(statuses, p.Status) {
			t.Errorf("product %s: status %q", p.Identifiers[0], p.Status)
		}
		if p.Manufacturer == "" {
			t.Errorf("product %s: no manufacturer", p.Identifiers[0])
		}
		checkTime(t, "updated_at", p.UpdatedAt)
	}
	for _, c := range in.claims {
		if !slices.Contains(domain.ClaimTypes, c.ClaimType) {
			t.Errorf("claim %s: claim_type %q", c.ID, c.ClaimType)
		}
		if domain.NeedsMethod(c.ClaimType) && domain.Str(c.Method) == "" {
			t.Errorf("claim %s: %s without method", c.ID, c.ClaimType)
		}
		if c.VerificationStatus != "" && !slices.Contains(domain.VerificationStatuses, c.VerificationStatus) {
			t.Errorf("claim %s: verification_status %q", c.ID, c.VerificationStatus)
		}
		if !slices.Contains(domain.TrustLevels, c.TrustLevel) {
			t.Errorf("claim %s: trust_level %q", c.ID, c.TrustLevel)
		}
		if c.Confidence != nil && (*c.Confidence < 0 || *c.Confidence > 1) {
			t.Errorf("claim %s: confidence %v", c.ID, *c.Confidence)
		}
		if len(c.Object.Value) == 0 {
			t.Errorf("claim %s: no value", c.ID)
		}
		retrieved := checkTime(t, "retrieved_at", c.RetrievedAt)
		if c.PublishedAt != nil {
			if published := checkTime(t, "published_at", *c.PublishedAt); published.After(retrieved) {
				t.Errorf("claim %s: published after it was retrieved", c.ID)
			}
		}
	}
	docs := map[string]*domain.Document{}
	for i := range in.documents {
		d := &in.documents[i]
		docs[d.ID] = d
		h, ok := strings.CutPrefix(d.ContentHash, "sha256:")
		if !ok || len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" {
			t.Errorf("document %s: content_hash %q", d.ID, d.ContentHash)
		}
		if d.Size <= 0 || d.MediaType == "" {
			t.Errorf("document %s: size %d, media type %q", d.ID, d.Size, d.MediaType)
		}
		checkTime(t, "retrieved_at", d.RetrievedAt)
	}
	for _, e := range in.evidence {
		l, d := e.Locator, docs[e.DocumentID]
		switch l.Kind {
		case domain.LocatorContentHash:
			if l.ContentHash != d.ContentHash {
				t.Errorf("evidence %s: content_hash %s is not its document's", e.ID, l.ContentHash)
			}
		case domain.LocatorByteRange:
			if l.Start == nil || l.End == nil || *l.Start < 0 || *l.Start >= *l.End || *l.End > d.Size {
				t.Errorf("evidence %s: byte range %v-%v in %d bytes", e.ID, l.Start, l.End, d.Size)
			}
		case domain.LocatorJSONPointer:
			if !strings.HasPrefix(l.Pointer, "/") || !strings.Contains(d.MediaType, "json") {
				t.Errorf("evidence %s: pointer %q into %s", e.ID, l.Pointer, d.MediaType)
			}
		default:
			t.Errorf("evidence %s: locator kind %q", e.ID, l.Kind)
		}
	}
	for _, v := range in.verdicts {
		values, ok := domain.VerdictValues[v.Class]
		if !ok || !slices.Contains(values, v.Value) {
			t.Errorf("verdict %s: class %q value %q", v.Subject, v.Class, v.Value)
		}
		checkTime(t, "evaluated_at", v.EvaluatedAt)
	}
}

// TestNoForbiddenPromotion: an INFERENCE or ESTIMATION claim is never
// superseded by a FACT (the generator avoids it whatever the method), and a
// superseded claim is older than the claim that supersedes it.
func TestSupersession(t *testing.T) {
	t.Parallel()
	in := sample(t)
	claims := map[string]*domain.Claim{}
	for i := range in.claims {
		claims[in.claims[i].ID] = &in.claims[i]
	}
	superseded, chains := 0, 0
	for _, c := range in.claims {
		if c.SupersededBy == nil {
			continue
		}
		superseded++
		nw := claims[*c.SupersededBy]
		if domain.NeedsMethod(c.ClaimType) && nw.ClaimType == domain.ClaimFact {
			t.Errorf("claim %s (%s) is superseded by FACT %s: a forbidden promotion", c.ID, c.ClaimType, nw.ID)
		}
		if c.RetrievedAt >= nw.RetrievedAt {
			t.Errorf("claim %s is superseded by %s, which is not newer", c.ID, nw.ID)
		}
		if nw.SupersededBy != nil {
			chains++
		}
	}
	if superseded < 20 || chains == 0 {
		t.Errorf("%d superseded claims, %d in chains; want more", superseded, chains)
	}
}

// TestCoverage: every generated product has a document from a public,
// enabled source covering it; the absent showcase identifiers are covered as
// docs/gen.md says.
func TestCoverage(t *testing.T) {
	t.Parallel()
	in := sample(t)
	enabledPublic := func(subject string) (consulted, disabled int) {
		for i := range in.sources {
			s := &in.sources[i]
			if s.Tenant != "" || !s.CoversSubject(subject) {
				continue
			}
			if s.IsEnabled() {
				consulted++
			} else {
				disabled++
			}
		}
		return
	}
	for _, p := range in.products {
		if p.Tenant != "" || strings.Contains(p.Identifiers[0], "09520") || p.Identifiers[0] == ShowcaseUPC {
			continue
		}
		if n, _ := enabledPublic(p.Identifiers[0]); n == 0 {
			t.Errorf("product %s is covered by no enabled public source", p.Identifiers[0])
		}
	}
	cases := []struct {
		subject            string
		consulted, skipped int
	}{
		{AbsentCovered, 1, 0},
		{AbsentNoSource, 0, 0},
		{AbsentDisabled, 0, 1},
		{ShowcaseFull, 1, 0},
		{ShowcaseUPC, 1, 0},
	}
	for _, c := range cases {
		checkSubject(t, c.subject)
		consulted, skipped := enabledPublic(c.subject)
		if (consulted > 0) != (c.consulted > 0) || skipped != c.skipped {
			t.Errorf("%s: %d enabled and %d disabled sources cover it, want %d and %d", c.subject, consulted, skipped, c.consulted, c.skipped)
		}
	}
	// Ranges docs/gen.md says nothing covers.
	for _, prefix := range []string{"0977", "0978", "0979", "002", "02", "005", "098", "099", "9"} {
		body := []byte(prefix)
		for len(body) < 13 {
			body = append(body, '1')
		}
		subject := "gtin:" + string(withCheck(body))
		if consulted, skipped := enabledPublic(subject); consulted+skipped != 0 {
			t.Errorf("%s is covered by %d sources", subject, consulted+skipped)
		}
	}
	for _, s := range []string{AbsentCovered, AbsentNoSource, AbsentDisabled} {
		for _, p := range in.products {
			if slices.Contains(p.Identifiers, s) {
				t.Errorf("absent example %s is stored", s)
			}
		}
	}
}

// TestEverythingPresent: a 300-product run uses every enum value and every
// feature the data is meant to exercise.
func TestEverythingPresent(t *testing.T) {
	t.Parallel()
	in := sample(t)
	seen := map[string]bool{}
	mark := func(k string) { seen[k] = true }
	sources := map[string]*domain.Source{}
	for i := range in.sources {
		s := &in.sources[i]
		sources[s.ID] = s
		mark("kind " + s.Kind)
		mark(fmt.Sprintf("tier %d", s.TrustTier))
		if !s.Redistributable() {
			mark("licence-restricted source")
		}
		if !s.IsEnabled() {
			mark("disabled source")
		}
		if s.Tenant == AcmeTenant {
			mark("tenant source")
		}
		if s.AttributionRequired != nil {
			mark("attribution")
		}
		if s.OperatorPartyID == nil {
			mark("no operator")
		}
		if s.Covers != nil && slices.Contains(s.Covers.Namespaces, "internal_sku") {
			mark("internal_sku covered")
		}
	}
	for _, p := range in.products {
		mark("status " + p.Status)
		mark("trust " + p.TrustLevel)
		if p.Tenant != "" {
			mark("private product")
		}
		if p.Brand != "" {
			mark("brand")
		}
		if p.ManufacturerGLN != "" {
			mark("manufacturer gln")
		}
		if len(p.Identifiers) > 1 {
			mark("linked identifier")
		}
	}
	perProduct := map[string]int{}
	for _, c := range in.claims {
		mark("claim " + c.ClaimType)
		mark("verification " + c.VerificationStatus)
		perProduct[c.Subject]++
		if c.PublishedAt == nil {
			mark("published null")
		}
		if c.SupersededBy != nil {
			mark("superseded")
		}
		s := sources[*c.SourceRef]
		if !s.Redistributable() {
			mark("restricted claim")
		}
		if s.Tenant != "" {
			mark("tenant claim")
		}
		if c.Object.Unit != nil {
			mark("unit")
		}
		if c.Object.Language != nil && *c.Object.Language != "en" {
			mark("non-English")
		}
	}
	for _, e := range in.evidence {
		mark("locator " + e.Locator.Kind)
	}
	for _, v := range in.verdicts {
		mark("class " + v.Class)
		mark("value " + v.Class + " " + v.Value)
		if v.Rule == nil {
			mark("verdict without rule")
		}
	}
	want := []string{"licence-restricted source", "disabled source", "tenant source", "attribution", "no operator",
		"internal_sku covered", "private product", "brand", "manufacturer gln", "linked identifier", "published null",
		"superseded", "restricted claim", "tenant claim", "unit", "non-English", "verdict without rule"}
	for _, k := range domain.SourceKinds {
		want = append(want, "kind "+k)
	}
	for i := 0; i <= domain.MaxTrustTier; i++ {
		want = append(want, fmt.Sprintf("tier %d", i))
	}
	for _, s := range statuses {
		want = append(want, "status "+s)
	}
	for _, l := range domain.TrustLevels {
		want = append(want, "trust "+l)
	}
	for _, c := range domain.ClaimTypes {
		want = append(want, "claim "+c)
	}
	for _, v := range domain.VerificationStatuses {
		want = append(want, "verification "+v)
	}
	for _, k := range []string{domain.LocatorContentHash, domain.LocatorByteRange, domain.LocatorJSONPointer} {
		want = append(want, "locator "+k)
	}
	for class, values := range domain.VerdictValues {
		want = append(want, "class "+class)
		for _, v := range values {
			want = append(want, "value "+class+" "+v)
		}
	}
	slices.Sort(want)
	for _, k := range want {
		if !seen[k] {
			t.Errorf("no %s in a 300-product run", k)
		}
	}

	// Shape per generated product: 5 to 15 claims, 1 to 3 public documents
	// (plus the tenant's), 1 or 2 evidence links per claim.
	for _, p := range in.products {
		id := p.Identifiers[0]
		if strings.HasPrefix(id, "gtin:0952") || id == ShowcaseUPC || strings.HasPrefix(id, "internal_sku:NRP-4711") {
			continue
		}
		if n := perProduct[id]; n < 5 || n > 15 {
			t.Errorf("product %s has %d claims", id, n)
		}
	}
	perClaim := map[string]int{}
	for _, e := range in.evidence {
		perClaim[e.ClaimID]++
	}
	for _, c := range in.claims {
		if n := perClaim[c.ID]; n < 1 || n > 2 {
			t.Errorf("claim %s has %d evidence links", c.ID, n)
		}
	}
}

func TestShowcase(t *testing.T) {
	t.Parallel()
	in := sample(t)
	byID := map[string]domain.Product{}
	for _, p := range in.products[:6] {
		byID[p.Identifiers[0]] = p
	}
	claimsOf := map[string][]domain.Claim{}
	for _, c := range in.claims {
		claimsOf[c.Subject] = append(claimsOf[c.Subject], c)
	}
	verdictsOf := map[string]map[string]int{}
	for _, v := range in.verdicts {
		if verdictsOf[v.Subject] == nil {
			verdictsOf[v.Subject] = map[string]int{}
		}
		verdictsOf[v.Subject][v.Class]++
	}
	sources := map[string]*domain.Source{}
	for i := range in.sources {
		sources[in.sources[i].ID] = &in.sources[i]
	}
	for _, id := range []string{ShowcaseFull, ShowcaseRestricted, ShowcaseSKUOnly, ShowcasePrivate, ShowcaseNoClaims, ShowcaseUPC} {
		if _, ok := byID[id]; !ok {
			t.Errorf("showcase %s is not among the first products", id)
		}
	}
	// The full product: every claim type, a supersession, all four axes.
	types := map[string]bool{}
	super := false
	for _, c := range claimsOf[ShowcaseFull] {
		types[c.ClaimType] = true
		super = super || c.SupersededBy != nil
	}
	if len(types) != len(domain.ClaimTypes) || !super {
		t.Errorf("%s: claim types %v, superseded %v", ShowcaseFull, types, super)
	}
	if len(verdictsOf[ShowcaseFull]) != 4 {
		t.Errorf("%s: verdict classes %v", ShowcaseFull, verdictsOf[ShowcaseFull])
	}
	if !slices.Contains(byID[ShowcaseFull].Identifiers, ShowcaseFullSKU) {
		t.Errorf("%s: no linked SKU", ShowcaseFull)
	}
	// Restricted: every current claim from a restricted source, no verdict.
	for _, c := range claimsOf[ShowcaseRestricted] {
		if sources[*c.SourceRef].Redistributable() {
			t.Errorf("%s: claim %s from a redistributable source", ShowcaseRestricted, c.ID)
		}
	}
	if len(claimsOf[ShowcaseRestricted]) == 0 || len(verdictsOf[ShowcaseRestricted]) != 0 {
		t.Errorf("%s: %d claims, verdicts %v", ShowcaseRestricted, len(claimsOf[ShowcaseRestricted]), verdictsOf[ShowcaseRestricted])
	}
	if p := byID[ShowcasePrivate]; p.Tenant != AcmeTenant {
		t.Errorf("%s: tenant %q", ShowcasePrivate, p.Tenant)
	}
	if len(claimsOf[ShowcaseNoClaims]) != 0 || len(verdictsOf[ShowcaseNoClaims]) != 0 {
		t.Errorf("%s has claims or verdicts", ShowcaseNoClaims)
	}
	if len(claimsOf[ShowcaseSKUOnly]) == 0 || len(byID[ShowcaseSKUOnly].Identifiers) != 1 {
		t.Errorf("%s: not an SKU-only product with claims", ShowcaseSKUOnly)
	}
}

func TestMakers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ products, makers int }{{1, 20}, {300, 20}, {6000, 20}, {30000, 100}, {1000000, 3333}} {
		if got := makerCount(c.products); got != c.makers {
			t.Errorf("makerCount(%d) = %d, want %d", c.products, got, c.makers)
		}
	}
	g, err := newGenerator(Options{Products: 1000000, Seed: 1}, newCatalogue(1))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	words := map[string]int{}
	accented, variants, forms := 0, 0, map[string]bool{}
	for _, m := range g.makers {
		if names[m.name] {
			t.Errorf("maker name %q twice", m.name)
		}
		names[m.name] = true
		if m.variants[0] != m.name {
			t.Errorf("%q: first variant %q", m.name, m.variants[0])
		}
		variants += len(m.variants) - 1
		if strings.ContainsAny(m.name, "äöüéèåøñçłÅÖÜÉ") {
			accented++
		}
		for _, f := range countries[m.country].forms {
			if strings.HasSuffix(m.name, " "+f.canon) {
				forms[f.canon] = true
			}
		}
		seen := map[string]bool{}
		for _, w := range strings.Fields(m.name) {
			if !seen[w] {
				words[w]++
				seen[w] = true
			}
		}
	}
	if accented < len(g.makers)/20 {
		t.Errorf("%d accented names of %d", accented, len(g.makers))
	}
	if variants < 3*len(g.makers) {
		t.Errorf("%d variants for %d makers", variants, len(g.makers))
	}
	for _, f := range []string{"GmbH", "Ltd", "Inc.", "S.A.", "Corp", "Corporation", "AG", "B.V.", "S.p.A.", "Oy", "AB", "KG"} {
		if !forms[f] {
			t.Errorf("no maker is a %s", f)
		}
	}
	if words["Foods"] < 20 || words["Pharma"] < 5 {
		t.Errorf("makers sharing words: Foods %d, Pharma %d", words["Foods"], words["Pharma"])
	}
}

// TestZipf: a few makers have many products, most have few.
func TestZipf(t *testing.T) {
	t.Parallel()
	opts := Options{Products: 60000, Seed: 1}
	g, err := newGenerator(opts, newCatalogue(1))
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, len(g.makers))
	for i := 0; i < opts.Products; i++ {
		counts[g.zipf.Uint64()]++
	}
	slices.Sort(counts)
	slices.Reverse(counts)
	top, median := counts[0], counts[len(counts)/2]
	if top < 20*median || top > opts.Products/3 {
		t.Errorf("top maker %d products, median %d", top, median)
	}
}

// TestCoverMask: the generator's coverage table answers what
// domain.Source.CoversSubject answers.
func TestCoverMask(t *testing.T) {
	t.Parallel()
	cat := newCatalogue(1)
	for k := 0; k < 10000; k += 7 {
		subject := "gtin:" + string(appendPadded(nil, k, 4)) + "1234567890"
		var want uint16
		for i := range cat.sources {
			if cat.sources[i].CoversSubject(subject) {
				want |= 1 << i
			}
		}
		if got := cat.coverMask[k]; got != want {
			t.Errorf("%s: mask %b, want %b", subject, got, want)
		}
	}
	var want uint16
	for i := range cat.sources {
		if cat.sources[i].CoversSubject(ShowcaseSKUOnly) {
			want |= 1 << i
		}
	}
	if cat.skuMask != want {
		t.Errorf("internal_sku mask %b, want %b", cat.skuMask, want)
	}
}
