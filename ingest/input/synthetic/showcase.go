package synthetic

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/productdata/pds/domain"
)

// Showcase identifiers: hand-written products the README's examples use.
// docs/gen.md says what each shows. All GTINs are on the GS1 demo prefix 952
// or the UPC lead 01, which generated products never use.
const (
	ShowcaseFull       = "gtin:09520123456788" // every claim type, supersession, all locators, all four axes
	ShowcaseFullSKU    = "internal_sku:DEMO-OAT-1L"
	ShowcaseRestricted = "gtin:09520123450106" // claims only from the licence-restricted source
	ShowcaseSKUOnly    = "internal_sku:NRP-4711-Blue"
	ShowcasePrivate    = "gtin:09520123450205" // tenant acme-retail only
	ShowcasePrivateSKU = "internal_sku:ACME-PL-0001"
	ShowcaseNoClaims   = "gtin:09520123450304" // identity found, passport not_found
	ShowcaseUPC        = "gtin:00012345678905" // a GTIN-12 (UPC 012345678905)
)

// Absent identifiers docs/gen.md uses to show coverage.
const (
	AbsentCovered  = "gtin:09520123456795" // demo prefix, covered by the resolver: not_found
	AbsentNoSource = "gtin:09780306406157" // an ISBN: no source covers 978: unknown NO_SOURCE
	AbsentDisabled = "gtin:06001234567899" // only the disabled legacy feed covers 600: NO_SOURCE, skipped DISABLED
)

type showcaseData struct {
	products  []domain.Product
	claims    []domain.Claim
	documents []domain.Document
	evidence  []domain.Evidence
	verdicts  []domain.Verdict
}

func demoHash(id string) string {
	sum := sha256.Sum256([]byte("pds showcase document " + id))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func f64(v float64) *float64 { return &v }
func i64(v int64) *int64     { return &v }

// showcase builds the showcase products against the sources of cat.
func showcase(cat *catalogue) showcaseData {
	var sc showcaseData
	src := func(i int) string { return cat.sources[i].ID }
	party := func(i int) *string { return strp(cat.parties[cat.specs[i].party].ID) }
	doc := func(id string, source int, media, url string, size int64, at string) {
		d := domain.Document{ID: id, SourceID: src(source), MediaType: media, ContentHash: demoHash(id), Size: size, RetrievedAt: at}
		if url != "" {
			d.URL = strp(url)
		}
		sc.documents = append(sc.documents, d)
	}
	type cl struct {
		id, subject, pred string
		value             any
		unit, lang        string
		ctype             string
		method, mver      string
		source            int
		vstatus           string
		trust             string
		conf              float64
		published         string
		retrieved         string
		supersededBy      string
		evidence          []string
	}
	claim := func(c cl) {
		raw, err := json.Marshal(c.value)
		if err != nil {
			panic(err)
		}
		out := domain.Claim{
			ID: c.id, Subject: c.subject, Predicate: c.pred,
			Object:    domain.ClaimObject{Value: raw},
			ClaimType: c.ctype, SourceRef: strp(src(c.source)),
			EvidenceRefs: c.evidence, VerificationStatus: c.vstatus,
			TrustLevel: c.trust, RetrievedAt: c.retrieved,
		}
		if c.unit != "" {
			out.Object.Unit = strp(c.unit)
		}
		if c.lang != "" {
			out.Object.Language = strp(c.lang)
		}
		if c.method != "" {
			out.Method = strp(c.method)
		}
		if c.mver != "" {
			out.MethodVersion = strp(c.mver)
		}
		if m := verificationMethods[c.vstatus]; m != "" {
			out.VerificationMethod = strp(m)
		}
		if cat.sources[c.source].Kind == "publisher_endpoint" {
			out.PublisherRef = party(c.source)
		}
		if c.conf > 0 {
			out.Confidence = f64(c.conf)
		}
		if c.published != "" {
			out.PublishedAt = strp(c.published)
		}
		if c.supersededBy != "" {
			out.SupersededBy = strp(c.supersededBy)
		}
		sc.claims = append(sc.claims, out)
	}
	ev := func(id, claimID, docID string, loc domain.Locator) {
		if loc.Kind == domain.LocatorContentHash {
			loc.ContentHash = demoHash(docID)
		}
		sc.evidence = append(sc.evidence, domain.Evidence{ID: id, ClaimID: claimID, DocumentID: docID, Locator: loc})
	}
	ptr := func(p string) domain.Locator { return domain.Locator{Kind: domain.LocatorJSONPointer, Pointer: p} }
	rng := func(a, b int64) domain.Locator {
		return domain.Locator{Kind: domain.LocatorByteRange, Start: i64(a), End: i64(b)}
	}
	whole := domain.Locator{Kind: domain.LocatorContentHash}
	verdict := func(subject, class, value, rule, at string) {
		v := domain.Verdict{Subject: subject, Class: class, Value: value, EvaluatedAt: at}
		if rule != "" {
			v.Rule = strp(rule)
		}
		sc.verdicts = append(sc.verdicts, v)
	}

	// 1. The fully featured product.
	full := ShowcaseFull
	sc.products = append(sc.products, domain.Product{
		Identifiers: []string{full, ShowcaseFullSKU}, Manufacturer: "Havregården Oat Works AB",
		ManufacturerGLN: "9520123400002", Brand: "Havrelys", TrustLevel: "L4", Status: "active",
		UpdatedAt: "2026-10-20T09:30:00Z",
	})
	doc("doc_demo_1", srcRegistry, "application/json", "https://registry.gpr.example/v3/items/09520123456788", 18342, "2026-10-01T08:00:00Z")
	doc("doc_demo_2", srcResolver, "application/linkset+json", "https://id.resolver.example/01/09520123456788?linkType=all", 2210, "2026-10-01T08:00:05Z")
	doc("doc_demo_3", srcPublisher, "text/html", "https://publish.brandnet.example/havrelys/products/09520123456788.html", 96120, "2026-09-30T14:12:00Z")
	doc("doc_demo_4", srcEcoMetrics, "application/pdf", "https://api.ecometrics.example/reports/09520123456788.pdf", 412877, "2026-10-10T06:00:00Z")
	doc("doc_demo_5", srcWebCrawl, "text/html", "https://www.havrelys-store.example/p/09520123456788", 151004, "2026-10-12T22:41:09Z")
	doc("doc_demo_6", srcContinental, "application/xml", "https://api.continental-syndication.example/v2/items/09520123456788.xml", 12877, "2026-10-06T03:00:00Z")
	doc("doc_demo_7", srcAcme, "text/csv", "", 2301, "2026-10-18T07:15:00Z")

	claim(cl{id: "clm_demo_1", subject: full, pred: "name", value: "Havrelys Oat Drink Barista 1 l", lang: "en", ctype: domain.ClaimFact,
		source: srcRegistry, vstatus: "registry_verified", trust: "L5", published: "2026-09-28T10:00:00Z", retrieved: "2026-10-01T08:00:00Z",
		evidence: []string{"ev_demo_1"}})
	ev("ev_demo_1", "clm_demo_1", "doc_demo_1", ptr("/tradeItem/attributes/name"))
	claim(cl{id: "clm_demo_2", subject: full, pred: "net_content", value: 1, unit: "l", ctype: domain.ClaimFact,
		source: srcRegistry, vstatus: "registry_verified", trust: "L5", conf: 1, published: "2026-09-28T10:00:00Z", retrieved: "2026-10-01T08:00:00Z",
		evidence: []string{"ev_demo_2"}})
	ev("ev_demo_2", "clm_demo_2", "doc_demo_1", ptr("/tradeItem/attributes/net_content"))
	claim(cl{id: "clm_demo_3", subject: full, pred: "gpc_category", value: "10000232", ctype: domain.ClaimFact,
		source: srcRegistry, vstatus: "registry_verified", trust: "L4", published: "2026-09-28T10:00:00Z", retrieved: "2026-10-01T08:00:00Z",
		evidence: []string{"ev_demo_3"}})
	ev("ev_demo_3", "clm_demo_3", "doc_demo_1", ptr("/tradeItem/attributes/gpc_category"))
	claim(cl{id: "clm_demo_4", subject: full, pred: "gtin_registered", value: true, ctype: domain.ClaimValidation,
		source: srcResolver, vstatus: "registry_verified", trust: "L5", conf: 0.99, retrieved: "2026-10-01T08:00:05Z",
		evidence: []string{"ev_demo_4"}})
	ev("ev_demo_4", "clm_demo_4", "doc_demo_2", whole)
	claim(cl{id: "clm_demo_5", subject: full, pred: "country_of_origin", value: "SE", ctype: domain.ClaimSourceAssertion,
		source: srcPublisher, vstatus: "domain_verified", trust: "L3", published: "2026-09-30T09:00:00Z", retrieved: "2026-09-30T14:12:00Z",
		evidence: []string{"ev_demo_5"}})
	ev("ev_demo_5", "clm_demo_5", "doc_demo_3", rng(40211, 40388))
	claim(cl{id: "clm_demo_6", subject: full, pred: "allergens", value: []string{"oats", "gluten"}, ctype: domain.ClaimSourceAssertion,
		source: srcPublisher, vstatus: "domain_verified", trust: "L3", published: "2026-09-30T09:00:00Z", retrieved: "2026-09-30T14:12:00Z",
		evidence: []string{"ev_demo_6", "ev_demo_7"}})
	ev("ev_demo_6", "clm_demo_6", "doc_demo_3", rng(52007, 52210))
	ev("ev_demo_7", "clm_demo_6", "doc_demo_1", ptr("/tradeItem/attributes/allergens"))
	claim(cl{id: "clm_demo_7", subject: full, pred: "energy_kcal_per_100ml", value: 59, unit: "kcal", ctype: domain.ClaimSourceAssertion,
		source: srcPublisher, vstatus: "domain_verified", trust: "L3", published: "2026-08-01T12:00:00Z", retrieved: "2026-09-30T14:12:00Z",
		evidence: []string{"ev_demo_8"}})
	ev("ev_demo_8", "clm_demo_7", "doc_demo_3", rng(61544, 61702))
	// Newer than clm_demo_7, but from the licence-restricted source: withheld.
	claim(cl{id: "clm_demo_8", subject: full, pred: "energy_kcal_per_100ml", value: 61, unit: "kcal", ctype: domain.ClaimSourceAssertion,
		source: srcContinental, vstatus: "contract_verified", trust: "L2", published: "2026-10-05T00:00:00Z", retrieved: "2026-10-06T03:00:00Z",
		evidence: []string{"ev_demo_9"}})
	ev("ev_demo_9", "clm_demo_8", "doc_demo_6", rng(3120, 3388))
	claim(cl{id: "clm_demo_9", subject: full, pred: "recyclability", value: "recyclable_where_facilities_exist", ctype: domain.ClaimInference,
		method: "packaging_recyclability_rules", mver: "2.0", source: srcPublisher, vstatus: "domain_verified", trust: "L3", conf: 0.82,
		retrieved: "2026-09-30T14:12:00Z", evidence: []string{"ev_demo_10"}})
	ev("ev_demo_10", "clm_demo_9", "doc_demo_3", rng(70210, 70377))
	// Carbon footprint: a chain of estimates, v2.0 -> v2.1 -> v2.2.
	claim(cl{id: "clm_demo_10", subject: full, pred: "carbon_footprint_kg", value: 0.62, unit: "kg CO2e", ctype: domain.ClaimEstimation,
		method: "lca_category_average", mver: "2.0", source: srcEcoMetrics, vstatus: "unverified", trust: "L2", conf: 0.55,
		published: "2025-11-02T00:00:00Z", retrieved: "2025-11-03T06:00:00Z", supersededBy: "clm_demo_11", evidence: []string{"ev_demo_11"}})
	ev("ev_demo_11", "clm_demo_10", "doc_demo_4", whole)
	claim(cl{id: "clm_demo_11", subject: full, pred: "carbon_footprint_kg", value: 0.57, unit: "kg CO2e", ctype: domain.ClaimEstimation,
		method: "lca_category_average", mver: "2.1", source: srcEcoMetrics, vstatus: "unverified", trust: "L2", conf: 0.6,
		published: "2026-04-15T00:00:00Z", retrieved: "2026-04-16T06:00:00Z", supersededBy: "clm_demo_12", evidence: []string{"ev_demo_12"}})
	ev("ev_demo_12", "clm_demo_11", "doc_demo_4", rng(1024, 4096))
	claim(cl{id: "clm_demo_12", subject: full, pred: "carbon_footprint_kg", value: 0.54, unit: "kg CO2e", ctype: domain.ClaimEstimation,
		method: "lca_category_average", mver: "2.2", source: srcEcoMetrics, vstatus: "unverified", trust: "L3", conf: 0.7,
		published: "2026-10-09T00:00:00Z", retrieved: "2026-10-10T06:00:00Z", evidence: []string{"ev_demo_13", "ev_demo_14"}})
	ev("ev_demo_13", "clm_demo_12", "doc_demo_4", whole)
	ev("ev_demo_14", "clm_demo_12", "doc_demo_4", rng(20480, 22015))
	claim(cl{id: "clm_demo_13", subject: full, pred: "contains_palm_oil", value: nil, ctype: domain.ClaimUnknown,
		source: srcWebCrawl, vstatus: "unverified", trust: "L1", retrieved: "2026-10-12T22:41:09Z", evidence: []string{"ev_demo_15"}})
	ev("ev_demo_15", "clm_demo_13", "doc_demo_5", rng(88310, 88702))
	claim(cl{id: "clm_demo_14", subject: full, pred: "nutri_score", value: "B", ctype: domain.ClaimInference,
		method: "nutri_score_algorithm", mver: "2023", source: srcWebCrawl, vstatus: "unverified", trust: "L1", conf: 0.7,
		retrieved: "2026-10-12T22:41:09Z", evidence: []string{"ev_demo_16"}})
	ev("ev_demo_16", "clm_demo_14", "doc_demo_5", rng(90115, 90480))
	// An inference superseded by the brand owner's assertion (not a FACT:
	// that would be a forbidden promotion).
	claim(cl{id: "clm_demo_15", subject: full, pred: "packaging_material", value: "PET", ctype: domain.ClaimInference,
		method: extractionMethod, mver: extractionVersion, source: srcWebCrawl, vstatus: "unverified", trust: "L1", conf: 0.45,
		retrieved: "2026-03-02T11:00:00Z", supersededBy: "clm_demo_16", evidence: []string{"ev_demo_17"}})
	ev("ev_demo_17", "clm_demo_15", "doc_demo_5", rng(12001, 12230))
	claim(cl{id: "clm_demo_16", subject: full, pred: "packaging_material", value: "composite carton", ctype: domain.ClaimSourceAssertion,
		source: srcPublisher, vstatus: "domain_verified", trust: "L3", published: "2026-09-30T09:00:00Z", retrieved: "2026-09-30T14:12:00Z",
		evidence: []string{"ev_demo_18"}})
	ev("ev_demo_18", "clm_demo_16", "doc_demo_3", rng(71004, 71190))
	// Seen only by tenant acme-retail: its own name for the product (newer
	// than the registry's) and its shelf category.
	claim(cl{id: "clm_demo_17", subject: full, pred: "name", value: "ACME Barista Oat Drink 1L", lang: "en", ctype: domain.ClaimSourceAssertion,
		source: srcAcme, vstatus: "contract_verified", trust: "L2", published: "2026-10-17T00:00:00Z", retrieved: "2026-10-18T07:15:00Z",
		evidence: []string{"ev_demo_19"}})
	ev("ev_demo_19", "clm_demo_17", "doc_demo_7", rng(120, 245))
	claim(cl{id: "clm_demo_18", subject: full, pred: "retailer_category", value: "Dairy alternatives", lang: "en", ctype: domain.ClaimSourceAssertion,
		source: srcAcme, vstatus: "contract_verified", trust: "L2", published: "2026-10-17T00:00:00Z", retrieved: "2026-10-18T07:15:00Z",
		evidence: []string{"ev_demo_20"}})
	ev("ev_demo_20", "clm_demo_18", "doc_demo_7", rng(246, 301))
	verdict(full, domain.ClassTechnical, "warn", "mandatory_attributes_present", "2026-09-01T12:00:00Z")
	verdict(full, domain.ClassTechnical, "pass", "gtin_check_digit", "2026-10-02T12:00:00Z")
	verdict(full, domain.ClassBusiness, "pass", "brand_owner_matches_gcp", "2026-10-02T12:00:00Z")
	verdict(full, domain.ClassRegulatory, "fail", "eu_fic_nutrition_table", "2026-07-15T12:00:00Z")
	verdict(full, domain.ClassRegulatory, "pass", "eu_fic_nutrition_table", "2026-10-03T12:00:00Z")
	verdict(full, domain.ClassAuthority, "none", "registry_attestation", "2026-06-01T12:00:00Z")
	verdict(full, domain.ClassAuthority, "attested", "gs1_licence_attested", "2026-10-02T12:00:00Z")

	// 2. Only licence-restricted claims, and no verdict.
	restricted := ShowcaseRestricted
	sc.products = append(sc.products, domain.Product{
		Identifiers: []string{restricted}, Manufacturer: "Kräuterhaus Lindner GmbH", Brand: "Alpenkräuter",
		TrustLevel: "L2", Status: "active", UpdatedAt: "2026-09-14T16:00:00Z",
	})
	doc("doc_demo_8", srcContinental, "application/xml", "", 8650, "2026-09-14T03:00:00Z")
	for i, c := range []struct {
		pred  string
		value any
		unit  string
		lang  string
	}{
		{"name", "Alpenkräuter Bonbons 75 g", "", "de"},
		{"net_content", 75, "g", ""},
		{"country_of_origin", "DE", "", ""},
		{"allergens", []string{}, "", ""},
	} {
		id := "clm_demo_" + itoa(int64(19+i))
		evID := "ev_demo_" + itoa(int64(21+i))
		claim(cl{id: id, subject: restricted, pred: c.pred, value: c.value, unit: c.unit, lang: c.lang,
			ctype: domain.ClaimSourceAssertion, source: srcContinental, vstatus: "contract_verified", trust: "L2",
			published: "2026-09-12T00:00:00Z", retrieved: "2026-09-14T03:00:00Z", evidence: []string{evID}})
		ev(evID, id, "doc_demo_8", rng(int64(400+i*300), int64(640+i*300)))
	}

	// 3. Identified only by an internal SKU (mixed case, kept as written).
	sku := ShowcaseSKUOnly
	sc.products = append(sc.products, domain.Product{
		Identifiers: []string{sku}, Manufacturer: "Nordlys Tekstil AS", Brand: "Nordlys",
		TrustLevel: "L3", Status: "active", UpdatedAt: "2026-08-30T10:00:00Z",
	})
	doc("doc_demo_9", srcNordic, "text/csv", "", 1880, "2026-08-30T02:00:00Z")
	for i, c := range []struct {
		pred  string
		value any
		lang  string
	}{
		{"name", "Merino Hiking Socks Blue 39-42", "en"},
		{"material_composition", "80% merino wool, 20% polyamide", ""},
		{"colour", "blue", "en"},
		{"size", "39-42", ""},
	} {
		id := "clm_demo_" + itoa(int64(23+i))
		evID := "ev_demo_" + itoa(int64(25+i))
		claim(cl{id: id, subject: sku, pred: c.pred, value: c.value, lang: c.lang,
			ctype: domain.ClaimSourceAssertion, source: srcNordic, vstatus: "contract_verified", trust: "L3",
			retrieved: "2026-08-30T02:00:00Z", evidence: []string{evID}})
		ev(evID, id, "doc_demo_9", rng(int64(100+i*200), int64(180+i*200)))
	}
	verdict(sku, domain.ClassTechnical, "pass", "mandatory_attributes_present", "2026-08-30T12:00:00Z")

	// 4. A tenant-private product: only acme-retail sees it.
	private := ShowcasePrivate
	sc.products = append(sc.products, domain.Product{
		Identifiers: []string{private, ShowcasePrivateSKU}, Manufacturer: "Chocolaterie Vanhoutte N.V.", Brand: "ACME Select",
		TrustLevel: "L2", Status: "active", UpdatedAt: "2026-10-05T08:00:00Z", Tenant: AcmeTenant,
	})
	doc("doc_demo_10", srcAcme, "text/csv", "", 3120, "2026-10-05T07:00:00Z")
	for i, c := range []struct {
		pred  string
		value any
		unit  string
		lang  string
	}{
		{"name", "ACME Select Dark Chocolate 70% 100 g", "", "en"},
		{"net_content", 100, "g", ""},
		{"allergens", []string{"milk", "nuts"}, "", ""},
		{"country_of_origin", "BE", "", ""},
	} {
		id := "clm_demo_" + itoa(int64(27+i))
		evID := "ev_demo_" + itoa(int64(29+i))
		claim(cl{id: id, subject: private, pred: c.pred, value: c.value, unit: c.unit, lang: c.lang,
			ctype: domain.ClaimSourceAssertion, source: srcAcme, vstatus: "contract_verified", trust: "L2",
			published: "2026-10-04T00:00:00Z", retrieved: "2026-10-05T07:00:00Z", evidence: []string{evID}})
		ev(evID, id, "doc_demo_10", rng(int64(200+i*150), int64(330+i*150)))
	}
	verdict(private, domain.ClassBusiness, "pass", "category_consistent", "2026-10-05T09:00:00Z")

	// 5. No claims and no verdicts: identity found, passport not_found.
	sc.products = append(sc.products, domain.Product{
		Identifiers: []string{ShowcaseNoClaims}, Manufacturer: "Ångström Instruments AB",
		TrustLevel: "L1", Status: "discontinued", UpdatedAt: "2025-12-01T00:00:00Z",
	})

	// 6. A GTIN-12 (UPC), stored zero-padded to 14 digits.
	upc := ShowcaseUPC
	sc.products = append(sc.products, domain.Product{
		Identifiers: []string{upc}, Manufacturer: "Blue Ridge Provisions Inc.", ManufacturerGLN: "0012345000003",
		Brand: "Blue Ridge", TrustLevel: "L3", Status: "active", UpdatedAt: "2026-07-07T15:00:00Z",
	})
	doc("doc_demo_11", srcRegistry, "application/json", "https://registry.gpr.example/v3/items/00012345678905", 9120, "2026-07-07T14:00:00Z")
	claim(cl{id: "clm_demo_31", subject: upc, pred: "name", value: "Blue Ridge Smoked Almonds 170 g", lang: "en", ctype: domain.ClaimFact,
		source: srcRegistry, vstatus: "registry_verified", trust: "L4", published: "2026-07-01T00:00:00Z", retrieved: "2026-07-07T14:00:00Z",
		evidence: []string{"ev_demo_33"}})
	ev("ev_demo_33", "clm_demo_31", "doc_demo_11", ptr("/tradeItem/attributes/name"))
	claim(cl{id: "clm_demo_32", subject: upc, pred: "net_content", value: 170, unit: "g", ctype: domain.ClaimFact,
		source: srcRegistry, vstatus: "registry_verified", trust: "L4", published: "2026-07-01T00:00:00Z", retrieved: "2026-07-07T14:00:00Z",
		evidence: []string{"ev_demo_34"}})
	ev("ev_demo_34", "clm_demo_32", "doc_demo_11", ptr("/tradeItem/attributes/net_content"))
	verdict(upc, domain.ClassTechnical, "pass", "gtin_check_digit", "2026-07-07T16:00:00Z")
	return sc
}
