package openfoodfacts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/domain/gs1"
)

// Site is Open Food Facts' public address: the origin of its source.
const Site = "https://world.openfoodfacts.org"

// Trust levels by where a value came from. A field the producer manages on
// OFF's producer platform (listed in owner_fields) is the producer's word; a
// field an import wrote (listed in a sources[] entry) is a database's; the
// rest is contributors' (crowd) data, and so is what OFF computes from it.
const (
	TrustProducer    = "L3"
	TrustImport      = "L2"
	TrustContributor = "L1"
)

// Source trust tiers (0..4, higher is more trusted), same reading as above.
const (
	tierProducer    = 3
	tierImport      = 2
	tierContributor = 1
)

// Licence terms of Open Food Facts: the database is under the Open Database
// License, its contents under the Database Contents License.
const (
	LicenceODbL = "ODbL-1.0"
	Attribution = "Product data from Open Food Facts (https://world.openfoodfacts.org), " +
		"under the Open Database License (ODbL 1.0); individual contents under the Database Contents License (DbCL 1.0); " +
		"product images under CC BY-SA 4.0."
)

// OFFSourceID is the source id of Open Food Facts itself.
var OFFSourceID = sourceUUID("openfoodfacts")

// OFFSource is the source every record comes from: the dump.
func OFFSource() domain.Source {
	return domain.Source{
		ID: OFFSourceID, Kind: "partner_feed", Origin: Site, TrustTier: tierContributor,
		LicenceName: LicenceODbL, MayStoreRaw: true, MayRedistributeVerbatim: true, MayRedistributeDerived: true,
		AttributionRequired: ptr(Attribution), LicenceDeterminedBy: "pds import off (Open Food Facts terms of use)",
		Covers: &domain.Covers{Namespaces: []string{gs1.NSGTIN, gs1.NSInternalSKU}},
	}
}

// sourceUUID gives a source a stable UUID (version 5) from its OFF name, so the
// same dump always gives the same ids.
func sourceUUID(name string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte(Site+"/pds-source/"+name)).String()
}

// SKUPrefix is put before a code that is no valid GTIN to make it an internal
// SKU (internal SKUs hold no ':'). It is domain's, so that a lookup of the
// code can name the product (see domain.CodeSKUPrefixes).
const SKUPrefix = domain.OFFSKUPrefix

// Subject maps an OFF code to a subject string: a valid GTIN-8, -12, -13 or
// -14 becomes a 14-digit GTIN; any other code that an internal SKU can hold
// becomes internal_sku:off-<code> (sku is then true). A code neither can hold
// is an error.
func Subject(code string) (subject string, sku bool, err error) {
	if code == "" {
		return "", false, fmt.Errorf("no code")
	}
	if c, ok := gs1.ValidGTIN(code); ok {
		return gs1.NSGTIN + ":" + string(c[:]), false, nil
	}
	s, perr := gs1.ParseSubject(gs1.NSInternalSKU + ":" + SKUPrefix + code)
	if perr != nil {
		return "", false, fmt.Errorf("code %q is no valid GTIN and cannot be an internal SKU (%v)", clip(code, 40), perr)
	}
	return s.String(), true, nil
}

// Mapped is what one record becomes.
type Mapped struct {
	Subject  string
	SKU      bool // the code is no valid GTIN
	Product  domain.Product
	Document domain.Document
	Claims   []domain.Claim
	Evidence []domain.Evidence
	Verdicts []domain.Verdict
	// Sources are the producer and import sources the claims name (OFF's own
	// source is not listed).
	Sources []domain.Source
	// Skipped lists the fields that could not be used, each "field: reason".
	Skipped []string
	// WrongCheckDigit says, when the code has a GTIN's length and digits but
	// a wrong check digit (and so became an internal SKU), what the digit
	// should be; "" otherwise.
	WrongCheckDigit string
}

// unusable is why a whole record cannot be used.
type unusable struct{ reason string }

func (u *unusable) Error() string { return u.reason }

// Map maps one record (its exact bytes in the dump) to pds input records.
// retrievedAt is when the dump was fetched (RFC 3339): the document's
// retrieved_at; the claims' is the record's last_modified_t. An error means
// the record cannot be used at all; its text is the reason.
func Map(raw []byte, retrievedAt string) (*Mapped, error) {
	var r record
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, &unusable{"not a JSON object"}
	}
	if err := json.Unmarshal(trimmed, &r); err != nil {
		return nil, &unusable{"not valid JSON: " + clip(err.Error(), 120)}
	}
	base := ""
	if len(r.EnvelopeRecord) > 0 && r.EnvelopeRecord[0] == '{' {
		// An API answer {"status":1,"code":...,"product":{...}}: the record is
		// the product; pointers go through /product.
		envCode, inner := r.Code, r.EnvelopeRecord
		r = record{}
		if err := json.Unmarshal(inner, &r); err != nil {
			return nil, &unusable{"product: not valid JSON: " + clip(err.Error(), 120)}
		}
		if !r.Code.Set || r.Code.S == "" {
			r.Code = envCode
		}
		base = "/product"
	}
	code := strings.TrimSpace(r.Code.S)
	if code == "" {
		code = strings.TrimSpace(r.ID.S)
	}
	if code == "" {
		return nil, &unusable{"no code"}
	}
	subject, sku, err := Subject(code)
	if err != nil {
		return nil, &unusable{err.Error()}
	}
	if !r.LastModifiedT.Set {
		if r.LastModifiedT.Bad != "" {
			return nil, &unusable{fmt.Sprintf("last_modified_t %s is not a Unix time", r.LastModifiedT.Bad)}
		}
		return nil, &unusable{"no last_modified_t"}
	}
	m := &Mapped{Subject: subject, SKU: sku}
	if sku {
		m.WrongCheckDigit = wrongCheckDigit(code, subject)
	}
	mp := mapper{r: &r, m: m, base: base, retrievedAt: retrievedAt, modified: unixTime(r.LastModifiedT.N),
		key: strings.TrimPrefix(strings.TrimPrefix(subject, gs1.NSGTIN+":"), gs1.NSInternalSKU+":")}
	mp.indexSources()
	mp.product()
	mp.document(raw)
	mp.nutrients()
	mp.text("quantity", "quantity", r.Quantity, []string{"quantity"})
	mp.tags("labels", "labels_tags", r.Labels, []string{"labels"})
	mp.tags("origins", "origins_tags", r.Origins, []string{"origins"})
	mp.tags("allergens", "allergens_tags", r.Allergens, []string{"allergens"})
	mp.tags("categories", "categories_tags", r.Categories, []string{"categories"})
	mp.scores()
	mp.verdicts()
	for _, id := range mp.usedSources {
		m.Sources = append(m.Sources, mp.sources[id])
	}
	return m, nil
}

// wrongCheckDigit says what is wrong with a code that has the length and
// digits of a GTIN-8, -12, -13 or -14 but not its check digit; "" for any
// other code.
func wrongCheckDigit(code, subject string) string {
	n := len(code)
	if n != 8 && n != 12 && n != 13 && n != 14 {
		return ""
	}
	want, ok := gs1.CheckDigit(code[:n-1])
	if !ok || want == code[n-1] {
		return ""
	}
	return fmt.Sprintf("code %s has the digits of a GTIN-%d but a wrong check digit (%c, where %c is due); imported as %s", code, n, code[n-1], want, subject)
}

type mapper struct {
	r           *record
	m           *Mapped
	base        string // JSON pointer prefix of the record inside the document
	key         string // the subject's value, used in ids
	retrievedAt string
	modified    string
	// fieldSource maps a field name, as sources[] entries and owner_fields
	// name it, to the source that last wrote it.
	fieldSource map[string]fieldOrigin
	sources     map[string]domain.Source
	usedSources []string
}

type fieldOrigin struct {
	sourceID string
	trust    string
	at       int64
}

func unixTime(t int64) string { return time.Unix(t, 0).UTC().Format(time.RFC3339) }

// indexSources reads sources[] and owner_fields: which source last wrote which
// field. Owner fields (the producer platform) win over imports.
func (mp *mapper) indexSources() {
	r := mp.r
	mp.fieldSource = map[string]fieldOrigin{}
	mp.sources = map[string]domain.Source{}
	for _, e := range r.Sources {
		id := strings.TrimSpace(e.ID.S)
		if e.unusableEntry || id == "" {
			mp.m.Skipped = append(mp.m.Skipped, "sources[]: an entry without an id")
			continue
		}
		producer := strings.HasPrefix(id, "org-") || truthy(e.Manufacturer.S)
		src := entrySource(id, e, producer)
		if prev, ok := mp.sources[id]; !ok || (prev.LicenceName == LicenceODbL && src.LicenceName != LicenceODbL) {
			mp.sources[id] = src
		}
		trust := TrustImport
		if producer {
			trust = TrustProducer
		}
		for _, f := range e.Fields {
			if prev, ok := mp.fieldSource[f]; ok && prev.at > e.ImportT.N {
				continue
			}
			mp.fieldSource[f] = fieldOrigin{sourceID: id, trust: trust, at: e.ImportT.N}
		}
	}
	owner := strings.TrimSpace(r.Owner.S)
	if owner == "" || len(r.OwnerFields) == 0 {
		return
	}
	if _, ok := mp.sources[owner]; !ok {
		mp.sources[owner] = entrySource(owner, sourceEntry{}, true)
	}
	for f, v := range r.OwnerFields {
		at, _, _ := number(v)
		mp.fieldSource["owner:"+f] = fieldOrigin{sourceID: owner, trust: TrustProducer, at: int64(at)}
	}
}

func truthy(s string) bool { return s == "1" || s == "true" }

// entrySource is the pds source of a sources[] entry (or of the record's
// owner on the producer platform).
func entrySource(id string, e sourceEntry, producer bool) domain.Source {
	name := strings.TrimSpace(e.Name.S)
	if name == "" {
		name = id
	}
	s := domain.Source{
		ID: sourceUUID(id), Kind: "partner_feed", TrustTier: tierImport,
		LicenceName: LicenceODbL, MayStoreRaw: true, MayRedistributeVerbatim: true, MayRedistributeDerived: true,
		LicenceDeterminedBy: "pds import off (the record's sources[] entry)",
	}
	if producer {
		s.Kind, s.TrustTier = "publisher_endpoint", tierProducer
		s.Origin = "Open Food Facts producer platform: " + id
	} else {
		s.Origin = "import into Open Food Facts: " + id
	}
	if u, err := url.Parse(strings.TrimSpace(e.URL.S)); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		s.Origin = u.Scheme + "://" + u.Host // the site, not the one product's page
	}
	att := "Data of " + name + ", imported into Open Food Facts; " + Attribution
	if lic := strings.TrimSpace(e.Licence.S); lic != "" {
		s.LicenceName = lic
		att = "Data of " + name + " under " + lic
		if u := strings.TrimSpace(e.LicenceURL.S); u != "" {
			att += " (" + u + ")"
		}
		att += ", via Open Food Facts (ODbL 1.0)."
	}
	s.AttributionRequired = &att
	return s
}

// origin says which source a value came from: the producer platform when the
// owner manages one of fields, else the latest import that wrote one, else
// Open Food Facts' contributors.
func (mp *mapper) origin(fields []string) (sourceID, trust, published string) {
	best := fieldOrigin{}
	found := false
	for _, f := range fields {
		if o, ok := mp.fieldSource["owner:"+f]; ok {
			best, found = o, true
			break
		}
	}
	if !found {
		for _, f := range fields {
			if o, ok := mp.fieldSource[f]; ok && (!found || o.at > best.at) {
				best, found = o, true
			}
		}
	}
	if !found {
		return OFFSourceID, TrustContributor, mp.modified
	}
	if !slices.Contains(mp.usedSources, best.sourceID) {
		mp.usedSources = append(mp.usedSources, best.sourceID)
	}
	published = mp.modified
	if best.at > 0 {
		published = unixTime(best.at)
	}
	return mp.sources[best.sourceID].ID, best.trust, published
}

func (mp *mapper) product() {
	r := mp.r
	brands := []string(nil)
	for _, b := range strings.Split(r.Brands.S, ",") {
		if b = strings.TrimSpace(b); b != "" {
			brands = append(brands, b)
		}
	}
	manufacturer := strings.TrimSpace(r.BrandOwner.S)
	trust := TrustContributor
	if o, ok := mp.fieldSource["brand_owner"]; ok && manufacturer != "" {
		trust = o.trust
	}
	if owner := strings.TrimSpace(r.Owner.S); owner != "" {
		if manufacturer == "" {
			manufacturer = strings.TrimPrefix(owner, "org-")
		}
		trust = TrustProducer
	}
	if manufacturer == "" {
		manufacturer = strings.TrimSpace(r.Producer.S)
	}
	if manufacturer == "" && len(brands) > 0 {
		manufacturer = brands[0]
	}
	if manufacturer == "" {
		manufacturer = UnknownManufacturer
		mp.m.Skipped = append(mp.m.Skipped, "manufacturer: no brand_owner, owner, producer or brands; recorded as "+UnknownManufacturer)
	}
	p := domain.Product{Identifiers: []string{mp.m.Subject}, Manufacturer: clip(manufacturer, 200),
		TrustLevel: trust, Status: "active", UpdatedAt: mp.modified}
	if len(brands) > 0 {
		p.Brand = clip(brands[0], 200)
	}
	mp.m.Product = p
}

// UnknownManufacturer stands for the manufacturer of a record that names none.
const UnknownManufacturer = "unknown"

func (mp *mapper) document(raw []byte) {
	sum := sha256.Sum256(raw)
	page := Site + "/product/" + url.PathEscape(strings.TrimSpace(mp.r.Code.S))
	mp.m.Document = domain.Document{
		ID: "off:" + mp.key + ":record", SourceID: OFFSourceID, MediaType: "application/json",
		URL: &page, ContentHash: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(raw)), RetrievedAt: mp.retrievedAt,
	}
}

// claim adds a claim with its evidence link (a JSON pointer into the record).
func (mp *mapper) claim(predicate string, value any, unit *string, pointer string, c domain.Claim) {
	v, err := json.Marshal(value)
	if err != nil {
		mp.m.Skipped = append(mp.m.Skipped, predicate+": cannot encode")
		return
	}
	c.ID = "off:" + mp.key + ":" + predicate
	c.Subject = mp.m.Subject
	c.Predicate = predicate
	c.Object = domain.ClaimObject{Value: v, Unit: unit}
	// The dump holds the record as it was at last_modified_t, so its values
	// are as retrieved then; with the verdicts, also evaluated then, the
	// passport's updated_at (their latest time) is the record's, as the
	// identity's is. The document keeps the dump's time (retrievedAt).
	c.RetrievedAt = mp.modified
	c.EvidenceRefs = []string{c.ID + ":ev"}
	mp.m.Claims = append(mp.m.Claims, c)
	mp.m.Evidence = append(mp.m.Evidence, domain.Evidence{ID: c.ID + ":ev", ClaimID: c.ID, DocumentID: mp.m.Document.ID,
		Locator: domain.Locator{Kind: domain.LocatorJSONPointer, Pointer: mp.base + pointer}})
}

// assertion adds a SOURCE ASSERTION of whoever last wrote fields.
func (mp *mapper) assertion(predicate string, value any, unit *string, pointer string, fields []string) {
	src, trust, published := mp.origin(fields)
	mp.claim(predicate, value, unit, pointer, domain.Claim{ClaimType: domain.ClaimSourceAssertion,
		SourceRef: ptr(src), TrustLevel: trust, PublishedAt: ptr(published)})
}

var pointerEscape = strings.NewReplacer("~", "~0", "/", "~1")

// Pointer builds a JSON pointer (RFC 6901) from reference tokens.
func Pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(pointerEscape.Replace(t))
	}
	return b.String()
}

func (mp *mapper) text(predicate, field string, v flexString, fields []string) {
	if !v.Set || strings.TrimSpace(v.S) == "" {
		return
	}
	mp.assertion(predicate, v.S, nil, Pointer(field), fields)
}

func (mp *mapper) tags(predicate, field string, v flexStrings, fields []string) {
	if len(v) == 0 {
		return
	}
	mp.assertion(predicate, []string(v), nil, Pointer(field), fields)
}

// nutrientUnit gives the unit of a nutrient's per-100 g value. OFF stores
// every *_100g value in one unit whatever unit it was entered in: kJ for
// energy, kcal for energy-kcal, % vol for alcohol, grams for the rest.
func nutrientUnit(n string) string {
	switch n {
	case "energy", "energy-kj":
		return "kJ"
	case "energy-kcal":
		return "kcal"
	case "alcohol":
		return "% vol"
	}
	return "g"
}

// knownUnits are the entry units OFF converts from; a nutrient entered in any
// other unit cannot be trusted to be in its stated per-100 g unit.
var knownUnits = []string{"", "g", "mg", "µg", "mcg", "kg", "kJ", "kj", "kcal", "% vol", "%", "% DV", "IU", "mol/l", "mmol/l"}

// notNutrients are *_100g keys OFF computes or estimates; they are no
// declared nutrient values (the scores are mapped from their own fields).
var notNutrients = []string{"nutrition-score", "nova-group", "carbon-footprint", "fruits-vegetables", "ecoscore", "nutriscore"}

func (mp *mapper) nutrients() {
	keys := make([]string, 0, len(mp.r.Nutriments))
	for k := range mp.r.Nutriments {
		if strings.HasSuffix(k, "_100g") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		n := strings.TrimSuffix(k, "_100g")
		if n == "" || slices.ContainsFunc(notNutrients, func(p string) bool { return strings.HasPrefix(n, p) }) {
			continue
		}
		v, present, ok := number(mp.r.Nutriments[k])
		if !present {
			continue
		}
		if !ok {
			mp.m.Skipped = append(mp.m.Skipped, fmt.Sprintf("nutriments.%s: %s is not a number", k, clip(string(mp.r.Nutriments[k]), 40)))
			continue
		}
		if raw, ok := mp.r.Nutriments[n+"_unit"]; ok {
			var u string
			if json.Unmarshal(raw, &u) != nil && string(raw) != "null" {
				mp.m.Skipped = append(mp.m.Skipped, fmt.Sprintf("nutriments.%s: unit %s is not a string", k, clip(string(raw), 40)))
				continue
			}
			if !slices.Contains(knownUnits, strings.TrimSpace(u)) {
				mp.m.Skipped = append(mp.m.Skipped, fmt.Sprintf("nutriments.%s: unknown unit %q", k, clip(u, 40)))
				continue
			}
		}
		unit := nutrientUnit(n)
		mp.assertion(k, v, &unit, Pointer("nutriments", k), []string{n, "nutrients." + n, "nutrients." + n + "_value", "nutrients." + n + "_100g"})
	}
}

// inference adds a value OFF computes as an INFERENCE claim.
func (mp *mapper) inference(predicate string, value any, pointer, method, version string) {
	c := domain.Claim{ClaimType: domain.ClaimInference, Method: ptr(method), SourceRef: ptr(OFFSourceID),
		TrustLevel: TrustContributor, PublishedAt: ptr(mp.modified)}
	if version != "" {
		c.MethodVersion = ptr(version)
	}
	mp.claim(predicate, value, nil, pointer, c)
}

// Methods of the values OFF computes.
const (
	MethodNutriScore = "Nutri-Score"
	MethodNOVA       = "NOVA"
	MethodEcoScore   = "Eco-Score"
)

func (mp *mapper) scores() {
	r := mp.r
	if g := strings.ToLower(strings.TrimSpace(r.NutriscoreGr.S)); isGrade(g) {
		mp.inference("nutriscore_grade", r.NutriscoreGr.S, Pointer("nutriscore_grade"), MethodNutriScore, r.NutriscoreVer.S)
	}
	if v, _, ok := number(r.NutriscoreSc); ok {
		mp.inference("nutriscore_score", v, Pointer("nutriscore_score"), MethodNutriScore, r.NutriscoreVer.S)
	}
	if v, present, ok := number(r.NovaGroup); ok && v >= 1 && v <= 4 && v == float64(int(v)) {
		mp.inference("nova_group", v, Pointer("nova_group"), MethodNOVA, "")
	} else if present {
		mp.m.Skipped = append(mp.m.Skipped, fmt.Sprintf("nova_group: %s is not a group 1 to 4", clip(string(r.NovaGroup), 40)))
	}
	if g := strings.ToLower(strings.TrimSpace(r.EcoscoreGrade.S)); isGrade(g) || g == "a-plus" {
		mp.inference("ecoscore_grade", r.EcoscoreGrade.S, Pointer("ecoscore_grade"), MethodEcoScore, "")
	}
	if v, _, ok := number(r.EcoscoreScore); ok {
		mp.inference("ecoscore_score", v, Pointer("ecoscore_score"), MethodEcoScore, "")
	}
}

func isGrade(g string) bool { return len(g) == 1 && g[0] >= 'a' && g[0] <= 'e' }

// Rules of the verdicts that say a record's quality lists are empty.
const (
	RuleNoErrors   = "off:data-quality-errors"
	RuleNoWarnings = "off:data-quality-warnings"
)

// verdicts records OFF's own quality checks: each error tag a technical fail,
// each warning tag a business warn; a list that is there and empty a pass (a
// record without the list gets no verdict of that class).
func (mp *mapper) verdicts() {
	add := func(class, value, rule string) {
		mp.m.Verdicts = append(mp.m.Verdicts, domain.Verdict{Subject: mp.m.Subject, Class: class, Value: value,
			Rule: ptr(rule), EvaluatedAt: mp.modified})
	}
	if errs := mp.r.QualityErrors; errs != nil {
		for _, t := range *errs {
			add(domain.ClassTechnical, "fail", t)
		}
		if len(*errs) == 0 {
			add(domain.ClassTechnical, "pass", RuleNoErrors)
		}
	}
	if warns := mp.r.QualityWarns; warns != nil {
		for _, t := range *warns {
			add(domain.ClassBusiness, "warn", t)
		}
		if len(*warns) == 0 {
			add(domain.ClassBusiness, "pass", RuleNoWarnings)
		}
	}
}

func ptr[T any](v T) *T { return &v }
