package ingest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/kv"
)

// claimRec is an accepted claim with where it came from.
type claimRec struct {
	line  int
	claim domain.Claim
	raw   []byte // the claim's JSON as served; nil after a change
}

type evidenceRec struct {
	line int
	ev   domain.Evidence
}

type verdictRec struct {
	line    int
	verdict domain.Verdict
}

// subjectData is everything stored about one product, gathered in the build
// phase.
type subjectData struct {
	subject  string
	product  domain.Product
	claims   []*claimRec
	evidence map[string][]evidenceRec // by claim id
	verdicts []verdictRec
	docs     map[string]*domain.Document
	docRaw   map[string][]byte // each document's JSON as served
}

// catalog is the small, whole-input knowledge views need: sources and parties.
type catalog struct {
	sources    map[string]*domain.Source
	sourceList []*domain.Source // sorted by id
	sourceJSON map[string]json.RawMessage
	linkJSON   map[string]json.RawMessage // each source's short form in an evidence link
}

// tenantOfClaim is the tenant that alone may see a claim, or "".
func (c *catalog) tenantOfClaim(cl *domain.Claim) string {
	if cl.SourceRef == nil {
		return ""
	}
	if s := c.sources[*cl.SourceRef]; s != nil {
		return s.Tenant
	}
	return ""
}

// viewTenants lists the tenants that need views of their own for sd: the
// owner of a private product, or the tenants with private claims or evidence.
func (c *catalog) viewTenants(sd *subjectData) []string {
	if sd.product.Tenant != "" {
		return []string{sd.product.Tenant}
	}
	set := map[string]bool{}
	for _, cr := range sd.claims {
		if t := c.tenantOfClaim(&cr.claim); t != "" {
			set[t] = true
		}
	}
	for _, evs := range sd.evidence {
		for _, e := range evs {
			if d := sd.docs[e.ev.DocumentID]; d != nil {
				if s := c.sources[d.SourceID]; s != nil && s.Tenant != "" {
					set[s.Tenant] = true
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// views is what a caller of one tenant is answered for one product.
type views struct {
	identity, passport, evidence kv.View
	hasPassport                  bool
}

// newer reports whether claim a is preferred over b as the latest of its
// predicate: by published_at (missing counts as oldest), then retrieved_at,
// then the higher trust level, then the greater claim id.
func newer(a, b *domain.Claim) bool {
	pa, pb := timeOrZero(a.PublishedAt), timeOrZero(b.PublishedAt)
	if !pa.Equal(pb) {
		return pa.After(pb)
	}
	ra, rb := parseTime(a.RetrievedAt), parseTime(b.RetrievedAt)
	if !ra.Equal(rb) {
		return ra.After(rb)
	}
	if ta, tb := domain.TrustRank(a.TrustLevel), domain.TrustRank(b.TrustLevel); ta != tb {
		return ta > tb
	}
	return a.ID > b.ID
}

func timeOrZero(s *string) time.Time {
	if s == nil {
		return time.Time{}
	}
	return parseTime(*s)
}

// laterVerdict reports whether a is preferred over b in its class: the later
// evaluated_at, then the greater rule name.
func laterVerdict(a, b *domain.Verdict) bool {
	ta, tb := parseTime(a.EvaluatedAt), parseTime(b.EvaluatedAt)
	if !ta.Equal(tb) {
		return ta.After(tb)
	}
	return domain.Str(a.Rule) > domain.Str(b.Rule)
}

// buildViews computes the identity, passport and evidence answers of sd for
// a caller of tenant ("" = public): it selects what that caller is shown,
// then assembles the three answers from the selection.
func (c *catalog) buildViews(sd *subjectData, tenant string) (views, error) {
	var v views
	sel := c.selectClaims(sd, tenant)
	verdicts := latestVerdicts(sd)
	cov, err := c.coverageJSON(sd.subject, tenant, sel)
	if err != nil {
		return v, err
	}
	var absent domain.Body
	switch {
	case len(sel.latest) > 0 || len(verdicts) > 0:
		v.hasPassport = true
		v.passport.Body, v.evidence.Body, err = c.foundBodies(sd, tenant, sel, verdicts)
	case sel.current > 0:
		absent = domain.Body{Status: domain.StatusUnknown, Reason: domain.ReasonLicenceRestricted, Data: nil, Warnings: sel.warnings()}
	default:
		absent = domain.Body{Status: domain.StatusNotFound, Data: nil}
	}
	if !v.hasPassport {
		v.passport.Body, err = absent.Members()
		v.evidence.Body = v.passport.Body
	}
	if err != nil {
		return v, err
	}
	v.passport.Coverage, v.evidence.Coverage = cov, cov
	v.identity.Body, err = identityJSON(sd, v.hasPassport)
	return v, err
}

// selection is what one caller is shown of a product's claims.
type selection struct {
	latest     map[string]*domain.Claim // predicate -> the claim shown
	latestAny  map[string]*domain.Claim // predicate -> the latest current claim, withheld or not
	withheldBy map[string]int           // source id -> current claims withheld for its licence
	current    int                      // current claims, withheld or not
}

// selectClaims picks, per predicate, the latest claim a caller of tenant is
// shown. A claim is current when the caller may see it and no claim the
// caller may see supersedes it; a current claim whose source permits no
// redistribution is withheld, so an older one may be shown in its place.
func (c *catalog) selectClaims(sd *subjectData, tenant string) selection {
	sel := selection{latest: map[string]*domain.Claim{}, latestAny: map[string]*domain.Claim{}, withheldBy: map[string]int{}}
	visible := map[string]bool{}
	for _, cr := range sd.claims {
		if t := c.tenantOfClaim(&cr.claim); t == "" || t == tenant {
			visible[cr.claim.ID] = true
		}
	}
	for _, cr := range sd.claims {
		cl := &cr.claim
		if !visible[cl.ID] || cl.SupersededBy != nil && visible[*cl.SupersededBy] {
			continue
		}
		sel.current++
		if prev := sel.latestAny[cl.Predicate]; prev == nil || newer(cl, prev) {
			sel.latestAny[cl.Predicate] = cl
		}
		if src := c.claimSource(cl); src != nil && !src.Redistributable() {
			sel.withheldBy[src.ID]++
			continue
		}
		if prev := sel.latest[cl.Predicate]; prev == nil || newer(cl, prev) {
			sel.latest[cl.Predicate] = cl
		}
	}
	return sel
}

// shown returns the claims shown, in predicate order.
func (sel selection) shown() []*domain.Claim {
	predicates := domain.SortedKeys(sel.latest)
	claims := make([]*domain.Claim, 0, len(predicates))
	for _, p := range predicates {
		claims = append(claims, sel.latest[p])
	}
	return claims
}

// sources returns the ids of the sources of the claims shown.
func (sel selection) sources() map[string]bool {
	ids := map[string]bool{}
	for _, cl := range sel.latest {
		if cl.SourceRef != nil {
			ids[*cl.SourceRef] = true
		}
	}
	return ids
}

// warnings says what was withheld: CLAIMS_WITHHELD with the count, then a
// NEWER_CLAIM_WITHHELD per predicate (in order) whose latest claim was
// withheld while an older one is shown.
func (sel selection) warnings() []domain.Warning {
	var warnings []domain.Warning
	withheld := 0
	for _, n := range sel.withheldBy {
		withheld += n
	}
	if withheld > 0 {
		warnings = append(warnings, domain.Warning{Code: "CLAIMS_WITHHELD", Severity: domain.SeverityWarn,
			Detail: fmt.Sprintf("%d current claim(s) withheld because their source's licence permits neither verbatim nor derived redistribution", withheld)})
	}
	for _, p := range domain.SortedKeys(sel.latestAny) {
		if shown := sel.latest[p]; shown != nil && shown != sel.latestAny[p] {
			warnings = append(warnings, domain.Warning{Code: "NEWER_CLAIM_WITHHELD", Severity: domain.SeverityWarn,
				Detail: fmt.Sprintf("a newer claim for %q was withheld because its source's licence does not permit redistribution; an older one is shown", p)})
		}
	}
	return warnings
}

// latestVerdicts picks the latest verdict of each validation class.
func latestVerdicts(sd *subjectData) map[string]*domain.Verdict {
	chosen := map[string]*domain.Verdict{}
	for i := range sd.verdicts {
		vd := &sd.verdicts[i].verdict
		if prev := chosen[vd.Class]; prev == nil || laterVerdict(vd, prev) {
			chosen[vd.Class] = vd
		}
	}
	return chosen
}

// coverageJSON is meta.coverage: the sources covering the subject, plus
// every source of a claim shown; the sources of withheld claims are skipped
// as licence-restricted, not consulted.
func (c *catalog) coverageJSON(subject, tenant string, sel selection) ([]byte, error) {
	cov := domain.CoverageOf(subject, tenant, c.sourceList)
	for id := range sel.sources() {
		if !slices.Contains(cov.SourcesConsulted, id) {
			cov.SourcesConsulted = append(cov.SourcesConsulted, id)
		}
	}
	for id := range sel.withheldBy {
		cov.SourcesConsulted = slices.DeleteFunc(cov.SourcesConsulted, func(s string) bool { return s == id })
		cov.SourcesSkipped = append(cov.SourcesSkipped, domain.Skipped{ID: id, Reason: domain.SkipLicenceRestricted})
	}
	sort.Strings(cov.SourcesConsulted)
	sort.Slice(cov.SourcesSkipped, func(i, j int) bool {
		a, b := cov.SourcesSkipped[i], cov.SourcesSkipped[j]
		return a.ID < b.ID || a.ID == b.ID && a.Reason < b.Reason
	})
	return domain.Marshal(cov)
}

// foundBodies assembles the found passport and evidence answers from the
// stored JSON of their claims, documents and sources rather than encoding
// them again.
func (c *catalog) foundBodies(sd *subjectData, tenant string, sel selection, verdicts map[string]*domain.Verdict) (passport, evidence []byte, err error) {
	rawOf, err := claimJSON(sd)
	if err != nil {
		return nil, nil, err
	}
	var updated newest
	var val domain.Validation
	for class, vd := range verdicts {
		val.Set(class, vd.Value)
		updated.add(vd.EvaluatedAt)
	}
	var validation *domain.Validation
	if !val.Empty() {
		validation = &val
	}
	claims := sel.shown()
	claimsJSON := make([]json.RawMessage, 0, len(claims))
	attrs := map[string]json.RawMessage{}
	var units map[string]string
	for _, cl := range claims {
		claimsJSON = append(claimsJSON, rawOf[cl])
		attr, unit := cl.Object.Attribute()
		attrs[cl.Predicate] = attr
		if unit != "" {
			if units == nil {
				units = map[string]string{}
			}
			units[cl.Predicate] = unit
		}
		updated.add(cl.RetrievedAt)
	}
	if updated.s == "" {
		updated.s = sd.product.UpdatedAt
	}
	warnings := sel.warnings()
	data, err := domain.AppendPassportData(nil, domain.PassportData{Subject: sd.subject, Attributes: attrs, Units: units, UpdatedAt: updated.s})
	if err != nil {
		return nil, nil, err
	}
	srcIDs := sel.sources()
	passportSources := c.servedSources(srcIDs)
	if passport, err = foundBody(data, claimsJSON, passportSources, validation, warnings); err != nil {
		return nil, nil, err
	}
	// The evidence answer is written in place: its data, the chains, is
	// most of it. The chains may add sources to srcIDs.
	evidence = append(bodyBuf(&evidenceBufs, len(foundPrefix)+chainsSize(sd, claims, rawOf)+256+2*rawLen(passportSources)), foundPrefix...)
	evidence = c.appendEvidenceData(evidence, sd, claims, rawOf, tenant, srcIDs)
	evidence, err = appendFoundTail(evidence, nil, c.servedSources(srcIDs), nil, warnings)
	return passport, evidence, err
}

// newest keeps the newest of several RFC 3339 date-times, as written.
type newest struct {
	s string
	t time.Time
}

func (n *newest) add(s string) {
	if t := parseTime(s); n.s == "" || t.After(n.t) {
		n.s, n.t = s, t
	}
}

// claimJSONSize is about the length of a claim's JSON, for sizing the
// buffer claimJSON encodes a product's claims into.
const claimJSONSize = 384

// claimJSON returns each claim's JSON as served, encoding those whose
// scratch record carries none (cr.raw is nil).
func claimJSON(sd *subjectData) (map[*domain.Claim][]byte, error) {
	rawOf := make(map[*domain.Claim][]byte, len(sd.claims))
	// The claims are encoded one after the other into one buffer; a slice
	// handed out stays valid when append moves the buffer.
	buf := make([]byte, 0, claimJSONSize*len(sd.claims))
	for _, cr := range sd.claims {
		if cr.raw == nil {
			start := len(buf)
			var err error
			if buf, err = domain.AppendClaim(buf, &cr.claim); err != nil {
				return nil, err
			}
			cr.raw = buf[start:len(buf):len(buf)]
		}
		rawOf[&cr.claim] = cr.raw
	}
	return rawOf, nil
}

// identityJSON is the identity view: only the data, which resolve copies into
// batch items and the identity endpoint puts after "status":"found","data":.
func identityJSON(sd *subjectData, hasPassport bool) ([]byte, error) {
	var brand, gln *string
	if sd.product.Brand != "" {
		b := sd.product.Brand
		brand = &b
	}
	if sd.product.ManufacturerGLN != "" {
		g := sd.product.ManufacturerGLN
		gln = &g
	}
	return domain.Marshal(domain.Identity{
		Subject:         sd.subject,
		Identifiers:     sd.product.Identifiers,
		TrustLevel:      sd.product.TrustLevel,
		Status:          sd.product.Status,
		Manufacturer:    sd.product.Manufacturer,
		ManufacturerGLN: gln,
		Brand:           brand,
		UpdatedAt:       sd.product.UpdatedAt,
		HasPassport:     hasPassport,
	})
}

func (c *catalog) claimSource(cl *domain.Claim) *domain.Source {
	if cl.SourceRef == nil {
		return nil
	}
	return c.sources[*cl.SourceRef]
}

// servedSources lists the sources of ids, sorted, as served.
func (c *catalog) servedSources(ids map[string]bool) []json.RawMessage {
	keys := make([]string, 0, len(ids))
	for id := range ids {
		keys = append(keys, id)
	}
	sort.Strings(keys)
	out := make([]json.RawMessage, 0, len(keys))
	for _, id := range keys {
		if j, ok := c.sourceJSON[id]; ok {
			out = append(out, j)
		}
	}
	return out
}

// prepareSources encodes every source once, as served in an envelope's
// sources and in an evidence link.
func (c *catalog) prepareSources() error {
	c.sourceJSON = make(map[string]json.RawMessage, len(c.sourceList))
	c.linkJSON = make(map[string]json.RawMessage, len(c.sourceList))
	for _, s := range c.sourceList {
		j, err := domain.Marshal(domain.ServedSource(s))
		if err != nil {
			return err
		}
		c.sourceJSON[s.ID] = j
		if j, err = domain.Marshal(domain.LinkSourceOf(s)); err != nil {
			return err
		}
		c.linkJSON[s.ID] = j
	}
	return nil
}

// foundBody writes the members of a found passport or evidence answer as
// encoding/json would write a domain.Body: status, data, claims (when
// claims is not nil), sources, validation and warnings when present.
func foundBody(data []byte, claims, sources []json.RawMessage, val *domain.Validation, warnings []domain.Warning) ([]byte, error) {
	b := bodyBuf(&passportBufs, len(foundPrefix)+256+len(data)+rawLen(claims)+rawLen(sources))
	b = append(append(b, foundPrefix...), data...)
	return appendFoundTail(b, claims, sources, val, warnings)
}

// The bodies of found answers, a passport's and its evidence's, are most of
// a build's view bytes (about 16 KB a product in generated input, a sixth of
// all the bytes a 200,000-product build allocates), and each is dead once
// the writer has copied it into the store. So they are taken from pools,
// one for each kind, since their sizes differ, and given back by the views
// stage after the write (releaseBodies): fewer bytes allocated means fewer
// collections, and no zeroing of each new buffer.
var passportBufs, evidenceBufs sync.Pool // of *[]byte

// bodyBuf returns an empty buffer from pool with room for n bytes, or a new
// one when the pool's is too small (which is then left to the collector).
func bodyBuf(pool *sync.Pool, n int) []byte {
	if p, ok := pool.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]byte, 0, n)
}

// releaseBodies gives the found bodies of v back to their pools. Only the
// views of a product with a passport have them: otherwise the passport and
// evidence views share one body built elsewhere, which must not be pooled.
func releaseBodies(v *views) {
	if !v.hasPassport {
		return
	}
	putBodyBuf(&passportBufs, v.passport.Body)
	putBodyBuf(&evidenceBufs, v.evidence.Body)
}

// putBodyBuf gives buf back to pool, for bodyBuf.
func putBodyBuf(pool *sync.Pool, buf []byte) {
	buf = buf[:0]
	pool.Put(&buf)
}

// foundPrefix begins the members of a found answer, up to its data.
const foundPrefix = `"status":"found","data":`

// appendFoundTail appends the members of a found answer after its data.
func appendFoundTail(b []byte, claims, sources []json.RawMessage, val *domain.Validation, warnings []domain.Warning) ([]byte, error) {
	if claims != nil {
		b = appendRawArray(append(b, `,"claims":`...), claims)
	}
	b = appendRawArray(append(b, `,"sources":`...), sources)
	if val != nil {
		j, err := domain.Marshal(val)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"validation":`...), j...)
	}
	if len(warnings) > 0 {
		j, err := domain.Marshal(warnings)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"warnings":`...), j...)
	}
	return b, nil
}

func rawLen(rs []json.RawMessage) int {
	n := 0
	for _, r := range rs {
		n += len(r) + 1
	}
	return n
}

func appendRawArray(b []byte, rs []json.RawMessage) []byte {
	b = append(b, '[')
	for i, r := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	return append(b, ']')
}

// appendEvidenceData appends the evidence chains of the passport's claims,
// with the links a caller of tenant may see, and adds the sources they
// reference to used. The JSON is that of domain.EvidenceData, assembled from
// stored JSON.
func (c *catalog) appendEvidenceData(b []byte, sd *subjectData, claims []*domain.Claim, rawOf map[*domain.Claim][]byte, tenant string, used map[string]bool) []byte {
	b = domain.AppendString(append(b, `{"subject":`...), sd.subject)
	b = append(b, `,"chains":[`...)
	for i, cl := range claims {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, `{"claim":`...), rawOf[cl]...), `,"links":[`...)
		links := 0
		evs := sd.evidence[cl.ID]
		sort.Slice(evs, func(i, j int) bool { return evs[i].ev.ID < evs[j].ev.ID })
		for _, e := range evs {
			d := sd.docs[e.ev.DocumentID]
			if d == nil {
				continue
			}
			s := c.sources[d.SourceID]
			if s == nil || !s.VisibleTo(tenant) {
				continue
			}
			used[s.ID] = true
			if links > 0 {
				b = append(b, ',')
			}
			links++
			b = domain.AppendString(append(b, `{"id":`...), e.ev.ID)
			b = domain.AppendLocator(append(b, `,"locator":`...), e.ev.Locator)
			b = append(append(b, `,"document":`...), sd.docRaw[d.ID]...)
			b = append(append(b, `,"source":`...), c.linkJSON[s.ID]...)
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	return append(b, "]}"...)
}

// chainsSize estimates the length of appendEvidenceData's JSON from the stored JSON
// it copies (claims, documents) and room for the rest of each link, so that
// it is written into one allocation instead of grown through several.
func chainsSize(sd *subjectData, claims []*domain.Claim, rawOf map[*domain.Claim][]byte) int {
	n := 64 + len(sd.subject)
	for _, cl := range claims {
		n += len(rawOf[cl]) + 24
		for _, e := range sd.evidence[cl.ID] {
			n += len(sd.docRaw[e.ev.DocumentID]) + len(e.ev.ID) + 256 // locator and short source
		}
	}
	return n
}

// checkSupersession applies the rules that need all of a subject's claims: a
// superseded_by must name a claim of the same subject, and a FACT may not
// supersede an INFERENCE or ESTIMATION claim of the same method (a promotion).
// It returns the rejects and removes the rejected claims from sd.
func checkSupersession(sd *subjectData) []lineReject {
	var rejects []lineReject
	byID := map[string]*claimRec{}
	for _, cr := range sd.claims {
		byID[cr.claim.ID] = cr
	}
	rejected := map[string]bool{}
	for _, cr := range sd.claims {
		old := &cr.claim
		if old.SupersededBy == nil || !domain.NeedsMethod(old.ClaimType) {
			continue
		}
		if nw := byID[*old.SupersededBy]; nw != nil && nw.claim.ClaimType == domain.ClaimFact && domain.Str(nw.claim.Method) == domain.Str(old.Method) {
			rejected[nw.claim.ID] = true
			rejects = append(rejects, lineReject{FileClaims, nw.line, fmt.Sprintf("claim %s is typed FACT but supersedes %s claim %s with the same method %q: an %s can never be promoted to FACT; claim %s stays current",
				nw.claim.ID, old.ClaimType, old.ID, domain.Str(old.Method), strings.ToLower(old.ClaimType), old.ID)})
		}
	}
	kept := sd.claims[:0]
	for _, cr := range sd.claims {
		if rejected[cr.claim.ID] {
			continue
		}
		if sb := cr.claim.SupersededBy; sb != nil {
			if rejected[*sb] {
				cr.claim.SupersededBy = nil
				cr.raw = nil // re-encoded when served
			} else if byID[*sb] == nil {
				rejects = append(rejects, lineReject{FileClaims, cr.line, fmt.Sprintf("superseded_by %s names no claim about %s", *sb, sd.subject)})
				rejected[cr.claim.ID] = true
				continue
			}
		}
		kept = append(kept, cr)
	}
	sd.claims = kept
	// Evidence of rejected claims has nothing to attach to.
	for id, evs := range sd.evidence {
		if rejected[id] {
			for _, e := range evs {
				rejects = append(rejects, lineReject{FileEvidence, e.line, fmt.Sprintf("claim_id %s names a claim that was rejected", id)})
			}
			delete(sd.evidence, id)
		}
	}
	sort.Slice(rejects, func(i, j int) bool {
		if rejects[i].file != rejects[j].file {
			return rejects[i].file < rejects[j].file
		}
		return rejects[i].line < rejects[j].line
	})
	return rejects
}

// lineReject is a reject found after the line was read.
type lineReject struct {
	file   string
	line   int
	reason string
}
