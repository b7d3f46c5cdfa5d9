package synthetic

import (
	"slices"
	"sort"
	"strconv"

	"github.com/google/uuid"
	"github.com/productdata/pds/domain"
)

// The fixed set of sources every generated input has. Their ids, and those of
// the parties operating them, are name-based (SHA-1) UUIDs of the seed and a
// short key, so they are the same for the same seed.

// Source keys, in the order sources.ndjson lists them.
const (
	srcRegistry = iota
	srcResolver
	srcPublisher
	srcNordic
	srcContinental
	srcLegacy
	srcAcme
	srcWebCrawl
	srcEcoMetrics
	srcMarketplace
	numSources
)

// AcmeTenant is the tenant of the tenant_upload source and of the private
// products.
const AcmeTenant = "acme-retail"

type sourceSpec struct {
	key       string
	party     int // index into partySpecs, or -1
	src       domain.Source
	countries []string // country codes whose GTIN blocks the source covers
	extra     []string // further canonical GTIN prefixes
	media     []string // media types of its documents
	weight    int      // how often a covered product has a document from it
}

type partySpec struct {
	key, name string
	gln       bool
}

var partySpecs = []partySpec{
	{"gpr-foundation", "GPR Foundation", true},
	{"identifier-council", "Global Identifier Council", true},
	{"publisher-network", "Brand Publisher Network e.V.", false},
	{"nordic-pool", "Nordic Retail Data Pool AB", true},
	{"continental", "Continental Syndication GmbH", false},
	{"legacy-ean", "Legacy EAN Services Ltd", false},
	{"acme-retail", "Acme Retail Group Ltd", true},
	{"shopwatch", "ShopWatch Crawling Ltd", false},
	{"ecometrics", "EcoMetrics Ltd", false},
}

var europe = []string{"DE", "FR", "GB", "IT", "ES", "NL", "BE", "CH", "AT", "SE", "FI", "DK", "NO", "PL"}

func strp(s string) *string { return &s }
func boolp(b bool) *bool    { return &b }

func sourceSpecs() []sourceSpec {
	return []sourceSpec{
		srcRegistry: {
			key: "gpr", party: 0, weight: 10,
			countries: cat(europe, []string{"US", "CA"}),
			extra:     []string{"0000", "0001", "1", "2", "3", "4", "5", "6", "7", "8"},
			media:     []string{"application/json"},
			src: domain.Source{
				Kind: "registry", Origin: "https://registry.gpr.example", TrustTier: 4,
				LicenceName: "GPR Data Terms 3.0", MayStoreRaw: true, MayRedistributeVerbatim: false, MayRedistributeDerived: true,
				AttributionRequired: strp("Product data © GPR Foundation, used under the GPR Data Terms 3.0."),
				LicenceDeterminedBy: "legal review", LicenceDeterminedAt: "2025-01-15T00:00:00Z", LicenceReviewDueAt: "2027-01-15T00:00:00Z",
				Covers: &domain.Covers{Namespaces: []string{"gtin", "gln"}},
			},
		},
		srcResolver: {
			key: "resolver", party: 1, weight: 6,
			countries: europe,
			extra:     []string{"0952"},
			media:     []string{"application/linkset+json"},
			src: domain.Source{
				Kind: "standard_resolver", Origin: "https://id.resolver.example", TrustTier: 4,
				LicenceName: "Open Resolver Terms", MayStoreRaw: true, MayRedistributeVerbatim: true, MayRedistributeDerived: true,
				AttributionRequired: nil,
				LicenceDeterminedBy: "terms of service", LicenceDeterminedAt: "2025-03-01T00:00:00Z",
				Covers: &domain.Covers{Namespaces: []string{"gtin"}},
			},
		},
		srcPublisher: {
			key: "publisher", party: 2, weight: 9,
			countries: cat(europe, []string{"US", "CA", "JP"}),
			extra:     []string{"0000"},
			media:     []string{"application/ld+json", "application/json", "text/html"},
			src: domain.Source{
				Kind: "publisher_endpoint", Origin: "https://publish.brandnet.example", TrustTier: 3,
				LicenceName: "CC BY 4.0", MayStoreRaw: true, MayRedistributeVerbatim: true, MayRedistributeDerived: true,
				AttributionRequired: strp("Data published by the brand owner through the Brand Publisher Network, CC BY 4.0."),
				LicenceDeterminedBy: "licence file at origin", LicenceDeterminedAt: "2025-06-10T00:00:00Z", LicenceReviewDueAt: "2026-06-10T00:00:00Z",
				Covers: &domain.Covers{Namespaces: []string{"gtin"}},
			},
		},
		srcNordic: {
			key: "nordic-pool", party: 3, weight: 8,
			countries: []string{"SE", "FI", "DK", "NO"},
			media:     []string{"text/csv", "application/xml"},
			src: domain.Source{
				Kind: "partner_feed", Origin: "sftp://feeds.nordicpool.example", TrustTier: 3,
				LicenceName: "Nordic Pool Partner Agreement v4", MayStoreRaw: true, MayRedistributeVerbatim: false, MayRedistributeDerived: true,
				AttributionRequired: strp("Contains data from the Nordic Retail Data Pool."),
				LicenceDeterminedBy: "contract", LicenceDeterminedAt: "2024-11-20T00:00:00Z", LicenceReviewDueAt: "2026-11-20T00:00:00Z",
				Covers: &domain.Covers{Namespaces: []string{"gtin", "internal_sku"}},
			},
		},
		srcContinental: {
			key: "continental", party: 4, weight: 4,
			countries: []string{"DE", "AT", "CH", "FR"},
			media:     []string{"application/xml", "text/csv"},
			src: domain.Source{
				Kind: "partner_feed", Origin: "https://api.continental-syndication.example", TrustTier: 2,
				LicenceName: "Continental Syndication Evaluation Licence (internal use only)", MayStoreRaw: true,
				MayRedistributeVerbatim: false, MayRedistributeDerived: false,
				AttributionRequired: nil,
				LicenceDeterminedBy: "contract", LicenceDeterminedAt: "2025-09-01T00:00:00Z", LicenceReviewDueAt: "2026-03-01T00:00:00Z",
				Covers: &domain.Covers{Namespaces: []string{"gtin"}},
			},
		},
		srcLegacy: {
			key: "legacy-ean", party: 5, weight: 0,
			extra: []string{"0600", "0601", "0619", "0622", "0729"},
			media: []string{"text/csv"},
			src: domain.Source{
				Kind: "partner_feed", Origin: "ftp://ean.legacy-services.example", TrustTier: 1, Enabled: boolp(false),
				LicenceName: "Legacy EAN Feed Terms 1999", MayStoreRaw: true, MayRedistributeVerbatim: true, MayRedistributeDerived: true,
				AttributionRequired: nil,
				LicenceDeterminedBy: "contract", LicenceDeterminedAt: "2019-05-01T00:00:00Z",
				Covers: &domain.Covers{Namespaces: []string{"gtin"}},
			},
		},
		srcAcme: {
			key: "acme-upload", party: 6, weight: 0,
			countries: []string{"GB"},
			media:     []string{"text/csv"},
			src: domain.Source{
				Kind: "tenant_upload", Origin: "upload://acme-retail", TrustTier: 2, Tenant: AcmeTenant,
				LicenceName: "Tenant-provided data", MayStoreRaw: true, MayRedistributeVerbatim: true, MayRedistributeDerived: true,
				AttributionRequired: nil,
				Covers:              &domain.Covers{Namespaces: []string{"gtin", "internal_sku"}},
			},
		},
		srcWebCrawl: {
			key: "shopwatch-crawl", party: 7, weight: 5,
			countries: []string{"JP", "CN", "KR", "TW", "IN", "AU", "BR", "US", "CA"},
			media:     []string{"text/html"},
			src: domain.Source{
				Kind: "web", Origin: "https://crawl.shopwatch.example", TrustTier: 1,
				RobotsPolicy: strp("obeys robots.txt; crawl-delay 10 s; no login-walled pages"),
				LicenceName:  "Fair-use extracts", MayStoreRaw: false, MayRedistributeVerbatim: false, MayRedistributeDerived: true,
				AttributionRequired: strp("Extracted from public web pages by ShopWatch; see each document's URL."),
				LicenceDeterminedBy: "legal review", LicenceDeterminedAt: "2025-02-01T00:00:00Z", LicenceReviewDueAt: "2026-02-01T00:00:00Z",
				Covers: &domain.Covers{Namespaces: []string{"gtin"}},
			},
		},
		srcEcoMetrics: {
			key: "ecometrics", party: 8, weight: 4,
			countries: europe,
			media:     []string{"application/pdf", "application/json"},
			src: domain.Source{
				Kind: "publisher_endpoint", Origin: "https://api.ecometrics.example", TrustTier: 2,
				LicenceName: "CC BY-SA 4.0", MayStoreRaw: true, MayRedistributeVerbatim: true, MayRedistributeDerived: true,
				AttributionRequired: strp("Footprint estimates © EcoMetrics Ltd, CC BY-SA 4.0."),
				LicenceDeterminedBy: "licence file at origin", LicenceDeterminedAt: "2025-04-22T00:00:00Z",
				Covers: &domain.Covers{Namespaces: []string{"gtin"}},
			},
		},
		srcMarketplace: {
			key: "marketplace", party: -1, weight: 4,
			countries: []string{"CN", "KR", "TW", "IN", "BR", "AU"},
			extra:     []string{"1", "2", "3", "4", "5", "6", "7", "8"},
			media:     []string{"text/html"},
			src: domain.Source{
				Kind: "web", Origin: "https://www.bazaar-listings.example", TrustTier: 0,
				RobotsPolicy: strp("obeys robots.txt"),
				LicenceName:  "Unknown; facts only", MayStoreRaw: false, MayRedistributeVerbatim: false, MayRedistributeDerived: true,
				AttributionRequired: nil,
				Covers:              &domain.Covers{Namespaces: []string{"gtin"}},
			},
		},
	}
}

// nameUUID is the name-based UUID of a key under the seed.
func nameUUID(seed int64, kind, key string) string {
	name := "https://pds.productdata.dev/synthetic/seed/" + strconv.FormatInt(seed, 10) + "/" + kind + "/" + key
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte(name)).String()
}

// catalogue is the parties and sources of one seed, with what the
// generator needs to know about them.
type catalogue struct {
	parties []domain.Party
	sources []domain.Source
	specs   []sourceSpec
	// coverMask[k] has bit i set when source i covers every canonical GTIN
	// whose first four digits are k (all prefixes have at most 4 digits).
	coverMask [10000]uint16
	skuMask   uint16 // sources covering internal_sku
}

func newCatalogue(seed int64) *catalogue {
	cat := &catalogue{specs: sourceSpecs()}
	for _, p := range partySpecs {
		party := domain.Party{ID: nameUUID(seed, "party", p.key), Name: p.name}
		if p.gln {
			body := appendPadded([]byte("952"), len(cat.parties)+1, 9)
			party.GLN = string(withCheck(body))
		}
		cat.parties = append(cat.parties, party)
	}
	for i := range cat.specs {
		sp := &cat.specs[i]
		s := sp.src
		s.ID = nameUUID(seed, "source", sp.key)
		if sp.party >= 0 {
			s.OperatorPartyID = strp(cat.parties[sp.party].ID)
		}
		cov := *s.Covers
		cov.GTINPrefixes = coverPrefixes(sp.countries, sp.extra)
		s.Covers = &cov
		cat.sources = append(cat.sources, s)
	}
	for i := range cat.sources {
		cov := cat.sources[i].Covers
		// What domain.Source.CoversSubject answers, per four-digit key.
		if len(cov.GTINPrefixes) == 0 && slices.Contains(cov.Namespaces, "gtin") {
			for k := range cat.coverMask {
				cat.coverMask[k] |= 1 << i
			}
		}
		for _, p := range cov.GTINPrefixes {
			lo, _ := strconv.Atoi(p)
			span := pow10(4 - len(p))
			for k := lo * span; k < (lo+1)*span; k++ {
				cat.coverMask[k] |= 1 << i
			}
		}
		if slices.Contains(cov.Namespaces, "internal_sku") {
			cat.skuMask |= 1 << i
		}
	}
	return cat
}

// coverPrefixes lists the canonical (14-digit) GTIN prefixes of the blocks
// of the given countries plus extra, merged where ten siblings make a
// shorter prefix, sorted.
func coverPrefixes(codes, extra []string) []string {
	set := map[string]bool{}
	for _, code := range codes {
		for _, c := range countries {
			if c.code != code {
				continue
			}
			for _, b := range cat(c.big, c.small) {
				if c.upc {
					set["00"+b] = true
				} else {
					set["0"+b] = true
				}
			}
		}
	}
	for _, e := range extra {
		set[e] = true
	}
	for merged := true; merged; {
		merged = false
		parents := map[string]int{}
		for p := range set {
			if len(p) > 1 {
				parents[p[:len(p)-1]]++
			}
		}
		for parent, n := range parents {
			if n < 10 {
				continue
			}
			for d := byte('0'); d <= '9'; d++ {
				delete(set, parent+string(d))
			}
			set[parent] = true
			merged = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		if len(p) > 4 {
			panic("synthetic: coverage prefix longer than 4 digits: " + p)
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
