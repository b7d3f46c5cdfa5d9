package synthetic

import (
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/productdata/pds/domain"
)

// Time window: product updates spread over the two years before windowEnd.
const (
	windowEnd   = 1793491200 // 2026-11-01T00:00:00Z
	day         = 86400
	windowStart = windowEnd - 730*day
)

// Product kinds the planner decides.
const (
	kindPublic = iota
	kindSKUOnly
	kindPrivate
)

// skel is what the planner decides about a product: who makes it and its
// identifiers (the rest is up to a render worker).
type skel struct {
	n     int64 // product number, from 1
	maker int32
	kind  int8
	ids   [2]string // subject strings; ids[1] may be ""
}

// chunkOut holds the rendered lines of one chunk of products.
type chunkOut struct {
	products, claims, documents, evidence, verdicts      []byte
	nProducts, nClaims, nDocuments, nEvidence, nVerdicts int
	// packed holds the five files' lines compressed, each as one frame
	// (none for a file the chunk has no lines of), when Options.Compress
	// is set.
	packed [5][]byte
}

// files returns the chunk's bytes for products, claims, documents, evidence
// and verdicts, in that order: compressed or as rendered.
func (o *chunkOut) files(compressed bool) [5][]byte {
	if compressed {
		return o.packed
	}
	return [5][]byte{o.products, o.claims, o.documents, o.evidence, o.verdicts}
}

// compress fills packed from the rendered lines.
func (o *chunkOut) compress(fr *framer) {
	for i, b := range o.files(false) {
		o.packed[i] = o.packed[i][:0]
		if len(b) > 0 {
			o.packed[i] = fr.frame(o.packed[i], b)
		}
	}
}

func (o *chunkOut) reset() {
	o.products, o.claims, o.documents, o.evidence, o.verdicts = o.products[:0], o.claims[:0], o.documents[:0], o.evidence[:0], o.verdicts[:0]
	o.nProducts, o.nClaims, o.nDocuments, o.nEvidence, o.nVerdicts = 0, 0, 0, 0, 0
}

type docRec struct {
	src       int
	media     string
	retrieved int64
	size      int64
	hash      [64]byte
}

type claimRec struct {
	pred         int
	ctype        string
	method, mver string
	doc          int
	published    int64 // 0 = null
	retrieved    int64
	supersededBy int // claim index + 1; 0 = none
	val          [2]int
	lang         string
	trust        int
	conf         int // hundredths; -1 = none
	vstatus      string
	evFirst, evN int
	older        bool // made as the superseded version of another claim
	publisherRef string
}

type evRec struct {
	doc        int
	kind       string
	start, end int64
	pred       int
}

// prodCtx is the product being rendered.
type prodCtx struct {
	sk            *skel
	maker         *maker
	subject       string // canonical subject
	value         string // subject value without namespace
	updated       int64
	lang          string
	name, oldName string
	netHundredths int
	netUnit       string
}

// renderer turns skeletons into lines. One per worker; not safe for
// concurrent use.
type renderer struct {
	r      *rand.Rand
	cat    *catalogue
	makers []*maker
	prod   prodCtx
	docs   []docRec
	claims []claimRec
	evs    []evRec
	vals   []byte
	nb     []byte // name builder
	preds  []int
}

func newRenderer(cat *catalogue, makers []*maker) *renderer {
	return &renderer{cat: cat, makers: makers, r: rand.New(rand.NewPCG(0, 0))}
}

// render writes the lines of one chunk; seed and chunk index fix its random
// stream, so output does not depend on which worker renders it.
func (g *renderer) render(seed int64, chunk int, skels []skel, out *chunkOut) {
	g.r = rand.New(rand.NewPCG(uint64(seed), 0x5eed0000_00000000^uint64(chunk)))
	out.reset()
	for i := range skels {
		g.product(&skels[i], out)
	}
}

func (g *renderer) product(sk *skel, out *chunkOut) {
	r := g.r
	m := g.makers[sk.maker]
	pc := &g.prod
	*pc = prodCtx{sk: sk, maker: m, subject: sk.ids[0]}
	_, pc.value, _ = strings.Cut(pc.subject, ":")
	pc.updated = windowStart + r.Int64N(730*day)
	g.productNames()

	// Documents: one to three public sources covering the product; private
	// products and tenant extras come from the tenant upload.
	g.docs = g.docs[:0]
	tenantDoc := -1
	if sk.kind == kindPrivate {
		g.addDoc(srcAcme)
		tenantDoc = 0
	} else {
		mask := g.coverage(pc.subject) &^ (1<<srcAcme | 1<<srcLegacy)
		if mask == 0 {
			mask = 1 << srcPublisher
		}
		nd := 1 + r.IntN(3)
		for len(g.docs) < nd && mask != 0 {
			s := g.pickSource(mask)
			mask &^= 1 << s
			g.addDoc(s)
		}
		acme := g.coverage(pc.subject)&(1<<srcAcme) != 0 || sk.ids[1] != ""
		if acme && chance(r, 8) {
			tenantDoc = len(g.docs)
			g.addDoc(srcAcme)
		}
	}

	g.planClaims(tenantDoc)
	g.planEvidence()

	// products.ndjson
	b := out.products
	b = append(b, `{"identifiers":[`...)
	b = appendString(b, sk.ids[0])
	if sk.ids[1] != "" {
		b = append(b, ',')
		b = appendString(b, sk.ids[1])
	}
	b = append(b, `],"manufacturer":`...)
	variant := m.name
	if len(m.variants) > 1 && chance(r, 18) {
		variant = m.variants[1+r.IntN(len(m.variants)-1)]
	}
	b = appendString(b, variant)
	if m.gln != "" && chance(r, 85) {
		b = append(b, `,"manufacturer_gln":"`...)
		b = append(b, m.gln...)
		b = append(b, '"')
	}
	if len(m.brands) > 0 && chance(r, 70) {
		b = append(b, `,"brand":`...)
		b = appendString(b, pick(r, m.brands))
	}
	b = append(b, `,"trust_level":"L`...)
	b = append(b, byte('0'+weighted(r, trustWeights)))
	b = append(b, `","status":"`...)
	b = append(b, statuses[weighted(r, statusWeights)]...)
	b = append(b, `","updated_at":`...)
	b = appendTime(b, pc.updated)
	if sk.kind == kindPrivate {
		b = append(b, `,"tenant":"`+AcmeTenant+`"`...)
	}
	out.products = append(b, '}', '\n')
	out.nProducts++

	g.writeDocs(out)
	g.writeClaims(out)
	g.writeEvidence(out)
	g.writeVerdicts(out)
}

var (
	trustWeights  = []int{5, 15, 30, 28, 16, 6}
	statusWeights = []int{88, 9, 3}
)

func weighted(r *rand.Rand, w []int) int {
	total := 0
	for _, x := range w {
		total += x
	}
	x := r.IntN(total)
	for i, v := range w {
		if x < v {
			return i
		}
		x -= v
	}
	return len(w) - 1
}

// coverage is the set of sources covering subject, as a bit mask.
func (g *renderer) coverage(subject string) uint16 {
	if strings.HasPrefix(subject, "gtin:") {
		v := subject[5:]
		k := int(v[0]-'0')*1000 + int(v[1]-'0')*100 + int(v[2]-'0')*10 + int(v[3]-'0')
		return g.cat.coverMask[k]
	}
	return g.cat.skuMask
}

// pickSource picks one source of mask, weighted.
func (g *renderer) pickSource(mask uint16) int {
	total := 0
	for m := mask; m != 0; m &= m - 1 {
		total += g.cat.specs[bits.TrailingZeros16(m)].weight + 1
	}
	x := g.r.IntN(total)
	for m := mask; m != 0; m &= m - 1 {
		i := bits.TrailingZeros16(m)
		w := g.cat.specs[i].weight + 1
		if x < w {
			return i
		}
		x -= w
	}
	return bits.TrailingZeros16(mask)
}

func (g *renderer) addDoc(src int) {
	r := g.r
	d := docRec{src: src, media: pick(r, g.cat.specs[src].media)}
	d.retrieved = g.prod.updated - r.Int64N(90*day)
	switch d.media {
	case "application/json", "application/ld+json":
		d.size = 1500 + r.Int64N(40000)
	case "application/linkset+json":
		d.size = 800 + r.Int64N(6000)
	case "text/html":
		d.size = 20000 + r.Int64N(380000)
	case "text/csv":
		d.size = 1000 + r.Int64N(4000)
	case "application/xml":
		d.size = 2000 + r.Int64N(30000)
	default: // application/pdf
		d.size = 60000 + r.Int64N(2500000)
	}
	for i := 0; i < 64; i += 16 {
		x := r.Uint64()
		for j := 0; j < 16; j++ {
			d.hash[i+j] = hexDigits[x&0xf]
			x >>= 4
		}
	}
	g.docs = append(g.docs, d)
}

// productNames builds the product's name, an older spelling of it, and its
// net content.
func (g *renderer) productNames() {
	r := g.r
	pc := &g.prod
	m := pc.maker
	cw := &categories[m.category]
	c := &countries[m.country]
	noun := pick(r, cw.nouns)
	pc.lang = "en"
	local := false
	if l := cw.local[c.lang]; len(l) > 0 && chance(r, 40) {
		noun = pick(r, l)
		pc.lang = c.lang
		local = true
	}
	ranges := measures[noun[0]]
	noun = noun[2:]
	ur := ranges[0]
	if i := r.IntN(len(ranges) + 2); i < len(ranges) {
		ur = ranges[i]
	}
	steps := (ur.max-ur.min)/ur.step + 1
	v := ur.min + r.IntN(steps)*ur.step
	pc.netHundredths = v * 100
	if (ur.unit == "kg" || ur.unit == "l") && chance(r, 25) {
		pc.netHundredths += 50
	}
	pc.netUnit = ur.unit

	nb := g.nb[:0]
	if len(m.brands) > 0 && chance(r, 70) {
		nb = append(nb, pick(r, m.brands)...)
	} else {
		core, _ := splitName(m)
		nb = append(nb, core...)
	}
	nb = append(nb, ' ')
	adjStart := len(nb)
	if !local && chance(r, 60) {
		nb = append(nb, pick(r, cw.adjectives)...)
		nb = append(nb, ' ')
	}
	adjEnd := len(nb)
	nb = append(nb, noun...)
	if ur.unit != "pcs" || pc.netHundredths > 100 {
		nb = append(nb, ' ')
		nb = appendHundredths(nb, pc.netHundredths)
		if ur.unit == "pcs" {
			nb = append(nb, " pcs"...)
		} else {
			nb = append(nb, ' ')
			nb = append(nb, ur.unit...)
		}
	}
	pc.name = string(nb)
	// The older name lacks the adjective, or is in capitals.
	if adjEnd > adjStart {
		pc.oldName = string(nb[:adjStart]) + string(nb[adjEnd:])
	} else {
		pc.oldName = strings.ToUpper(pc.name)
	}
	g.nb = nb
}

// planClaims decides the product's claims: 5 to 15, some superseding an
// older claim of the same predicate.
func (g *renderer) planClaims(tenantDoc int) {
	r := g.r
	pc := &g.prod
	g.claims = g.claims[:0]
	g.vals = g.vals[:0]
	// 5 to 15, most products nearer 5: rich records are the exception.
	total := 5 + min(r.IntN(11), r.IntN(11))
	if pc.sk.kind == kindPrivate {
		total = 5 + r.IntN(6)
	}
	supers := 0
	switch x := r.IntN(100); {
	case x < 60:
	case x < 88:
		supers = 1
	default:
		supers = 2
	}
	tenantClaims := 0
	if tenantDoc >= 0 && pc.sk.kind != kindPrivate {
		tenantClaims = 1 + r.IntN(2)
		// the retailer's own reading is the newest
		g.docs[tenantDoc].retrieved = pc.updated
	}
	base := total - supers - tenantClaims

	publicDocs := len(g.docs)
	if tenantDoc >= 0 {
		publicDocs = tenantDoc // the tenant document is always last
	}
	authoritative := false
	for i := 0; i < publicDocs; i++ {
		k := g.cat.sources[g.docs[i].src].Kind
		authoritative = authoritative || k == "registry" || k == "standard_resolver"
	}

	// Predicates: name, then a shuffled pool; when the pool runs out, a
	// predicate again from another source.
	pool := append(g.preds[:0], generic...)
	pool = append(pool, categoryPredicates[pc.maker.category]...)
	r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	g.preds = pool
	chosen := 0
	for len(g.claims) < base {
		p := pName
		if len(g.claims) > 0 {
			if chosen < len(pool) {
				p = pool[chosen]
				chosen++
				if p == pGTINRegistered && (!authoritative || pc.sk.kind != kindPublic) {
					continue
				}
			} else {
				p = pool[r.IntN(len(pool))]
				if p == pGTINRegistered {
					continue
				}
			}
		}
		doc := 0
		if pc.sk.kind != kindPrivate {
			doc = g.docFor(p, publicDocs)
			if k := len(g.claims); k < publicDocs && predicates[p].profile != profValid {
				doc = k // every document backs a claim
			}
		}
		g.newClaim(p, doc)
	}
	for i := 0; i < tenantClaims; i++ {
		p := pName
		if i == 1 {
			p = pRetailerCategory
		}
		g.newClaim(p, tenantDoc)
	}
	g.dropUnusedDocs()
	// Supersessions: an older claim of a predicate, replaced by a current
	// one; with two, sometimes a chain v1 -> v2 -> v3.
	current := len(g.claims)
	for i := 0; i < supers; i++ {
		target := r.IntN(current - tenantClaims)
		if i == 1 && chance(r, 30) {
			target = len(g.claims) - 1 // chain onto the older claim just made
		}
		g.olderClaim(target)
	}
}

// dropUnusedDocs removes documents no claim was read from (a validation
// claim can take the place of a document's first claim).
func (g *renderer) dropUnusedDocs() {
	var used [8]bool
	for i := range g.claims {
		used[g.claims[i].doc] = true
	}
	var to [8]int
	kept := g.docs[:0]
	for i := range g.docs {
		if used[i] {
			to[i] = len(kept)
			kept = append(kept, g.docs[i])
		}
	}
	if len(kept) == len(g.docs) {
		return
	}
	g.docs = kept
	for i := range g.claims {
		g.claims[i].doc = to[g.claims[i].doc]
	}
}

// docFor picks the document a claim of predicate p is read from.
func (g *renderer) docFor(p int, publicDocs int) int {
	r := g.r
	switch predicates[p].profile {
	case profValid:
		for i := 0; i < publicDocs; i++ {
			k := g.cat.sources[g.docs[i].src].Kind
			if k == "registry" || k == "standard_resolver" {
				return i
			}
		}
	case profEstim:
		for i := 0; i < publicDocs; i++ {
			if g.docs[i].src == srcEcoMetrics && chance(r, 80) {
				return i
			}
		}
	}
	return r.IntN(publicDocs)
}

// newClaim adds a current claim of p read from document doc and returns its
// index.
func (g *renderer) newClaim(p, doc int) int {
	r := g.r
	d := &g.docs[doc]
	src := &g.cat.sources[d.src]
	c := claimRec{pred: p, doc: doc, conf: -1}
	pr := &predicates[p]
	switch pr.profile {
	case profFact:
		if (src.Kind == "registry" || src.Kind == "standard_resolver" || src.Kind == "publisher_endpoint") && chance(r, 65) {
			c.ctype = domain.ClaimFact
		} else {
			c.ctype = domain.ClaimSourceAssertion
		}
		if p == pGPC && src.Kind == "web" {
			c.ctype, c.method, c.mver = domain.ClaimInference, "gpc_text_classifier", pick(r, []string{"3.1", "3.2"})
		}
	case profAssert:
		c.ctype = domain.ClaimSourceAssertion
		if src.Kind == "registry" && chance(r, 25) {
			c.ctype = domain.ClaimFact
		}
		if p == pCountry && chance(r, 4) {
			c.ctype = domain.ClaimUnknown
		}
	case profInfer:
		c.ctype, c.method, c.mver = domain.ClaimInference, pr.method, pr.versions[len(pr.versions)-1]
	case profEstim:
		c.ctype, c.method, c.mver = domain.ClaimEstimation, pr.method, pr.versions[len(pr.versions)-1]
	case profValid:
		c.ctype = domain.ClaimValidation
	case profUnknown:
		c.ctype = domain.ClaimSourceAssertion
		if chance(r, 45) {
			c.ctype = domain.ClaimUnknown
		}
	}
	c.retrieved = d.retrieved
	if chance(r, 80) {
		c.published = d.retrieved - r.Int64N(60*day) - 3600
	}
	g.finishClaim(&c, src)
	g.claims = append(g.claims, c)
	return len(g.claims) - 1
}

// finishClaim sets the value, trust, verification and confidence of c.
func (g *renderer) finishClaim(c *claimRec, src *domain.Source) {
	r := g.r
	start := len(g.vals)
	if c.ctype == domain.ClaimUnknown {
		g.vals = append(g.vals, "null"...)
		c.lang = ""
	} else {
		g.vals, c.lang = g.appendValue(g.vals, c.pred, c.older)
	}
	c.val = [2]int{start, len(g.vals)}

	tier := src.TrustTier
	c.trust = tier + r.IntN(2)
	switch c.ctype {
	case domain.ClaimInference, domain.ClaimEstimation:
		c.trust = min(c.trust, 3)
		c.conf = 40 + r.IntN(56)
	case domain.ClaimUnknown:
		c.trust = min(c.trust, 2)
	default:
		if chance(r, 50) {
			c.conf = 70 + r.IntN(31)
		}
	}
	switch src.Kind {
	case "registry", "standard_resolver":
		c.vstatus = "registry_verified"
	case "publisher_endpoint":
		c.vstatus = "domain_verified"
		c.publisherRef = domain.Str(src.OperatorPartyID)
	case "partner_feed", "tenant_upload":
		c.vstatus = "contract_verified"
	default:
		c.vstatus = "unverified"
	}
	switch x := r.IntN(100); {
	case x < 3:
		c.vstatus = "disputed"
	case x < 8:
		c.vstatus = "" // not said
	}
}

// olderClaim adds the superseded predecessor of claim target: same
// predicate, same subject, same document, read earlier. It never makes a
// FACT supersede an INFERENCE or ESTIMATION.
func (g *renderer) olderClaim(target int) {
	r := g.r
	nw := g.claims[target]
	d := &g.docs[nw.doc]
	src := &g.cat.sources[d.src]
	c := claimRec{pred: nw.pred, doc: nw.doc, conf: -1, older: true, supersededBy: target + 1}
	pr := &predicates[nw.pred]
	switch nw.ctype {
	case domain.ClaimInference, domain.ClaimEstimation:
		c.ctype, c.method = nw.ctype, nw.method
		c.mver = nw.mver
		vs := pr.versions
		for i := 1; i < len(vs); i++ {
			if vs[i] == nw.mver {
				c.mver = vs[i-1]
			}
		}
	case domain.ClaimFact:
		c.ctype = domain.ClaimFact
		if chance(r, 40) {
			c.ctype = domain.ClaimSourceAssertion
		}
	case domain.ClaimSourceAssertion:
		c.ctype = domain.ClaimSourceAssertion
		if chance(r, 25) {
			c.ctype, c.method, c.mver = domain.ClaimInference, extractionMethod, extractionVersion
		}
	case domain.ClaimUnknown:
		c.ctype = domain.ClaimUnknown
		if chance(r, 50) {
			c.ctype = domain.ClaimSourceAssertion
		}
	default:
		c.ctype = nw.ctype
	}
	c.retrieved = nw.retrieved - 30*day - r.Int64N(370*day)
	if nw.published != 0 && chance(r, 85) {
		c.published = c.retrieved - r.Int64N(30*day) - 3600
	}
	g.finishClaim(&c, src)
	g.claims = append(g.claims, c)
}

// planEvidence gives every claim one or two evidence links.
func (g *renderer) planEvidence() {
	r := g.r
	g.evs = g.evs[:0]
	for i := range g.claims {
		c := &g.claims[i]
		c.evFirst = len(g.evs)
		d := &g.docs[c.doc]
		kind := locatorKind(r, d.media)
		g.evs = append(g.evs, g.locate(c.doc, kind, c.pred))
		if chance(r, 25) {
			// A second link: another document of a public, redistributable
			// source when there is one, else the same document located
			// another way.
			other := -1
			if g.cat.sources[d.src].Tenant == "" && chance(r, 40) {
				for j := range g.docs {
					s := &g.cat.sources[g.docs[j].src]
					if j != c.doc && s.Tenant == "" && s.Redistributable() {
						other = j
						break
					}
				}
			}
			if other >= 0 {
				g.evs = append(g.evs, g.locate(other, locatorKind(r, g.docs[other].media), c.pred))
			} else {
				k2 := domain.LocatorContentHash
				if kind == domain.LocatorContentHash {
					k2 = domain.LocatorByteRange
				}
				g.evs = append(g.evs, g.locate(c.doc, k2, c.pred))
			}
		}
		c.evN = len(g.evs) - c.evFirst
	}
}

func locatorKind(r *rand.Rand, media string) string {
	x := r.IntN(100)
	switch media {
	case "application/json", "application/ld+json", "application/linkset+json":
		switch {
		case x < 65:
			return domain.LocatorJSONPointer
		case x < 90:
			return domain.LocatorContentHash
		}
		return domain.LocatorByteRange
	case "text/html":
		if x < 70 {
			return domain.LocatorByteRange
		}
		return domain.LocatorContentHash
	case "text/csv", "application/xml":
		if x < 85 {
			return domain.LocatorByteRange
		}
		return domain.LocatorContentHash
	}
	if x < 60 {
		return domain.LocatorContentHash
	}
	return domain.LocatorByteRange
}

func (g *renderer) locate(doc int, kind string, pred int) evRec {
	e := evRec{doc: doc, kind: kind, pred: pred}
	if kind == domain.LocatorByteRange {
		size := g.docs[doc].size
		e.start = g.r.Int64N(size - 600)
		e.end = e.start + 40 + g.r.Int64N(500)
	}
	return e
}

// appendID appends the identifier of one of a product's records:
// "doc_<n>_<i>", "clm_<n>_<i>", "ev_<n>_<i>" with n the product number
// and i counted from 1.
func appendID(b []byte, prefix string, n int64, i int) []byte {
	b = append(b, prefix...)
	b = strconv.AppendInt(b, n, 10)
	b = append(b, '_')
	return strconv.AppendInt(b, int64(i+1), 10)
}

func (g *renderer) writeDocs(out *chunkOut) {
	pc := &g.prod
	b := out.documents
	for i := range g.docs {
		d := &g.docs[i]
		b = append(b, `{"id":"`...)
		b = appendID(b, "doc_", pc.sk.n, i)
		b = append(b, `","source_id":"`...)
		b = append(b, g.cat.sources[d.src].ID...)
		b = append(b, `","media_type":"`...)
		b = append(b, d.media...)
		b = append(b, '"')
		b = g.appendURL(b, d)
		b = append(b, `,"content_hash":"sha256:`...)
		b = append(b, d.hash[:]...)
		b = append(b, `","size":`...)
		b = strconv.AppendInt(b, d.size, 10)
		b = append(b, `,"retrieved_at":`...)
		b = appendTime(b, d.retrieved)
		b = append(b, '}', '\n')
	}
	out.documents = b
	out.nDocuments += len(g.docs)
}

func (g *renderer) appendURL(b []byte, d *docRec) []byte {
	pc := &g.prod
	ext := ".json"
	switch d.media {
	case "text/html":
		ext = ".html"
	case "application/pdf":
		ext = ".pdf"
	case "application/xml":
		ext = ".xml"
	case "application/ld+json":
		ext = ".jsonld"
	}
	start := len(b)
	b = append(b, `,"url":"`...)
	switch d.src {
	case srcRegistry:
		b = append(b, "https://registry.gpr.example/v3/items/"...)
		b = append(b, pc.value...)
	case srcResolver:
		b = append(b, "https://id.resolver.example/01/"...)
		b = append(b, pc.value...)
		b = append(b, "?linkType=all"...)
	case srcPublisher:
		b = append(b, "https://publish.brandnet.example/"...)
		b = append(b, strings.ToLower(pc.maker.code)...)
		b = append(b, "/products/"...)
		b = append(b, pc.value...)
		b = append(b, ext...)
	case srcContinental:
		if pc.sk.n%2 == 0 {
			return append(b[:start], `,"url":null`...) // as domain.Document writes a document without url
		}
		b = append(b, "https://api.continental-syndication.example/v2/items/"...)
		b = append(b, pc.value...)
		b = append(b, ext...)
	case srcWebCrawl:
		b = append(b, "https://www."...)
		b = append(b, strings.ToLower(pc.maker.code)...)
		b = append(b, "-store.example/p/"...)
		b = append(b, pc.value...)
	case srcEcoMetrics:
		b = append(b, "https://api.ecometrics.example/reports/"...)
		b = append(b, pc.value...)
		b = append(b, ext...)
	case srcMarketplace:
		b = append(b, "https://www.bazaar-listings.example/item/"...)
		b = strconv.AppendUint(b, uint64(pc.sk.n)*2654435761%1000000007, 10)
	default: // feeds and uploads arrive as files
		return append(b[:start], `,"url":null`...)
	}
	return append(b, '"')
}

func (g *renderer) writeClaims(out *chunkOut) {
	pc := &g.prod
	b := out.claims
	for i := range g.claims {
		c := &g.claims[i]
		src := &g.cat.sources[g.docs[c.doc].src]
		pr := &predicates[c.pred]
		b = append(b, `{"id":"`...)
		b = appendID(b, "clm_", pc.sk.n, i)
		b = append(b, `","subject":`...)
		b = appendString(b, pc.subject)
		b = append(b, `,"predicate":"`...)
		b = append(b, pr.name...)
		b = append(b, `","object":{"value":`...)
		b = append(b, g.vals[c.val[0]:c.val[1]]...)
		b = append(b, `,"unit":`...)
		unit := pr.unit
		if c.pred == pNetContent {
			unit = pc.netUnit
		}
		if c.ctype == domain.ClaimUnknown {
			unit = ""
		}
		b = appendNullString(b, unit)
		b = append(b, `,"language":`...)
		b = appendNullString(b, c.lang)
		b = append(b, `},"claim_type":"`...)
		b = append(b, c.ctype...)
		b = append(b, `","method":`...)
		b = appendNullString(b, c.method)
		b = append(b, `,"method_version":`...)
		b = appendNullString(b, c.mver)
		b = append(b, `,"source_ref":"`...)
		b = append(b, src.ID...)
		b = append(b, `","publisher_ref":`...)
		b = appendNullString(b, c.publisherRef)
		if c.evN > 0 {
			b = append(b, `,"evidence_refs":[`...)
			for k := 0; k < c.evN; k++ {
				if k > 0 {
					b = append(b, ',')
				}
				b = append(b, '"')
				b = appendID(b, "ev_", pc.sk.n, c.evFirst+k)
				b = append(b, '"')
			}
			b = append(b, ']')
		}
		if c.vstatus != "" {
			b = append(b, `,"verification_status":"`...)
			b = append(b, c.vstatus...)
			b = append(b, '"')
		}
		b = append(b, `,"verification_method":`...)
		b = appendNullString(b, verificationMethods[c.vstatus])
		b = append(b, `,"trust_level":"L`...)
		b = append(b, byte('0'+c.trust), '"')
		if c.conf >= 0 {
			b = append(b, `,"confidence":`...)
			b = appendHundredths(b, c.conf)
		}
		b = append(b, `,"published_at":`...)
		if c.published != 0 {
			b = appendTime(b, c.published)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, `,"retrieved_at":`...)
		b = appendTime(b, c.retrieved)
		b = append(b, `,"superseded_by":`...)
		if c.supersededBy != 0 {
			b = append(b, '"')
			b = appendID(b, "clm_", pc.sk.n, c.supersededBy-1)
			b = append(b, '"')
		} else {
			b = append(b, "null"...)
		}
		b = append(b, '}', '\n')
	}
	out.claims = b
	out.nClaims += len(g.claims)
}

func (g *renderer) writeEvidence(out *chunkOut) {
	pc := &g.prod
	b := out.evidence
	for i := range g.claims {
		c := &g.claims[i]
		for k := c.evFirst; k < c.evFirst+c.evN; k++ {
			e := &g.evs[k]
			d := &g.docs[e.doc]
			b = append(b, `{"id":"`...)
			b = appendID(b, "ev_", pc.sk.n, k)
			b = append(b, `","claim_id":"`...)
			b = appendID(b, "clm_", pc.sk.n, i)
			b = append(b, `","document_id":"`...)
			b = appendID(b, "doc_", pc.sk.n, e.doc)
			b = append(b, `","locator":{"kind":"`...)
			b = append(b, e.kind...)
			b = append(b, '"')
			switch e.kind {
			case domain.LocatorContentHash:
				b = append(b, `,"content_hash":"sha256:`...)
				b = append(b, d.hash[:]...)
				b = append(b, '"')
			case domain.LocatorByteRange:
				b = append(b, `,"start":`...)
				b = strconv.AppendInt(b, e.start, 10)
				b = append(b, `,"end":`...)
				b = strconv.AppendInt(b, e.end, 10)
			default:
				b = append(b, `,"pointer":"`...)
				b = append(b, pointerBase(d)...)
				b = append(b, predicates[e.pred].name...)
				b = append(b, '"')
			}
			b = append(b, '}', '}', '\n')
		}
	}
	out.evidence = b
	out.nEvidence += len(g.evs)
}

// pointerBase is where a source's JSON documents keep product attributes.
func pointerBase(d *docRec) string {
	switch d.src {
	case srcRegistry:
		return "/tradeItem/attributes/"
	case srcResolver:
		return "/linkset/0/"
	case srcEcoMetrics:
		return "/estimates/0/"
	}
	return "/product/"
}

var (
	verdictCountWeights = []int{15, 20, 25, 20, 20}
	perClassWeights     = []int{70, 22, 8}
	checkValueWeights   = []int{80, 8, 7, 5} // pass, fail, warn, not_assessed
	authorityWeights    = []int{60, 40}      // none, attested
	checkValues         = []string{"pass", "fail", "warn", "not_assessed"}
	authorityValues     = []string{"none", "attested"}
)

// writeVerdicts writes 0 to 4 validation classes, each with one to three
// verdicts evaluated at different times (now and then two at the same time,
// told apart by rule name).
func (g *renderer) writeVerdicts(out *chunkOut) {
	r := g.r
	pc := &g.prod
	n := weighted(r, verdictCountWeights)
	if n == 0 {
		return
	}
	var order [4]int
	for i := range order {
		order[i] = i
	}
	r.Shuffle(4, func(i, j int) { order[i], order[j] = order[j], order[i] })
	var take [4]bool
	for i := 0; i < n; i++ {
		take[order[i]] = true
	}
	b := out.verdicts
	for ci, class := range verdictClasses {
		if !take[ci] {
			continue
		}
		rules := technicalRules
		switch class {
		case domain.ClassBusiness:
			rules = businessRules
		case domain.ClassRegulatory:
			rules = regulatoryBy[pc.maker.category]
		case domain.ClassAuthority:
			rules = authorityRules
		}
		k := 1 + weighted(r, perClassWeights)
		t := pc.updated - r.Int64N(200*day)
		first := r.IntN(len(rules))
		for j := 0; j < k; j++ {
			if j > 0 && !chance(r, 6) {
				t += 3600 + r.Int64N(60*day)
			}
			b = append(b, `{"subject":`...)
			b = appendString(b, pc.subject)
			b = append(b, `,"class":"`...)
			b = append(b, class...)
			b = append(b, `","value":"`...)
			if class == domain.ClassAuthority {
				b = append(b, authorityValues[weighted(r, authorityWeights)]...)
			} else {
				b = append(b, checkValues[weighted(r, checkValueWeights)]...)
			}
			b = append(b, '"')
			if !chance(r, 5) {
				b = append(b, `,"rule":"`...)
				b = append(b, rules[(first+j)%len(rules)]...)
				b = append(b, '"')
			}
			b = append(b, `,"evaluated_at":`...)
			b = appendTime(b, t)
			b = append(b, '}', '\n')
			out.nVerdicts++
		}
	}
	out.verdicts = b
}
