package ingest

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/productdata/pds/domain"
	"github.com/productdata/pds/internal/fuzzseed"
)

// FuzzViewsAreUTF8JSON holds the views encoder (buildViews, with the
// encoders of domain/appendjson.go under it) to valid UTF-8 JSON for every
// answer it writes, identity, passport and evidence, for every visibility,
// whatever the strings and raw claim values of the product, its claims,
// documents, evidence and verdicts hold: bytes that are not UTF-8, escapes,
// raw values that are no JSON (the encoder refuses those with an error, and
// writes nothing). Ingest mends the text of every line before it gets
// here (checkText); this holds the encoder on its own.
//
//	go test -run '^$' -fuzz '^FuzzViewsAreUTF8JSON$' -fuzztime 60s ./ingest/
func FuzzViewsAreUTF8JSON(f *testing.F) {
	fuzzseed.Seed(f,
		[]any{"Demo Foods", "net_content", []byte(`{"a":[1,2.5,"x"]}`), uint8(0)},
		[]any{"M\xfcller", "ab\xc3(", []byte("\"ab\xc3(\""), uint8(0xff)},
		[]any{"a\u2028b<&>", "\\ud800", []byte("[ \"\xe2\x82\" , {\"k\xff\":null} ]"), uint8(0x55)},
		[]any{"", "", []byte(`{"a":`), uint8(0xaa)},
		[]any{"x\"y\\z\n", "\x00", []byte(`"\ud800"`), uint8(0x0f)},
	)
	const src, private = "11111111-0000-4000-8000-000000000001", "11111111-0000-4000-8000-000000000002"
	f.Fuzz(func(t *testing.T, s1, s2 string, raw []byte, flags uint8) {
		s1p, s2p := s1, s2
		c := &catalog{sources: map[string]*domain.Source{
			src: {ID: src, Kind: "registry", Origin: s1, LicenceName: s2, MayRedistributeVerbatim: true, AttributionRequired: &s1p,
				Covers: &domain.Covers{Namespaces: []string{"gtin"}}},
			private: {ID: private, Kind: "tenant_upload", Origin: s2, LicenceName: s1, MayRedistributeDerived: flags&1 != 0, Tenant: "acme"},
		}}
		c.sourceList = []*domain.Source{c.sources[src], c.sources[private]}
		if err := c.prepareSources(); err != nil {
			t.Fatal(err)
		}
		subject := "gtin:09520123456788"
		sd := &subjectData{subject: subject,
			product: domain.Product{Identifiers: []string{subject, "internal_sku:" + s1}, Manufacturer: s1, ManufacturerGLN: s2,
				Brand: s2, TrustLevel: "L1", Status: s1, UpdatedAt: s2},
			evidence: map[string][]evidenceRec{}, docs: map[string]*domain.Document{}, docRaw: map[string][]byte{}}
		for i, source := range []string{src, private} {
			cl := domain.Claim{ID: s1 + string(rune('a'+i)), Subject: subject, Predicate: s2, ClaimType: "FACT", SourceRef: &source,
				TrustLevel: "L2", RetrievedAt: s1, Object: domain.ClaimObject{Value: json.RawMessage(raw)}}
			if flags&2 != 0 {
				cl.Object.Unit, cl.Object.Language, cl.Method, cl.PublishedAt = &s1p, &s2p, &s2p, &s1p
			}
			if flags&4 != 0 {
				cl.Predicate = s1
			}
			sd.claims = append(sd.claims, &claimRec{line: i + 1, claim: cl})
			doc := &domain.Document{ID: s2 + string(rune('a'+i)), SourceID: source, MediaType: s1, URL: &s2p, ContentHash: s2, RetrievedAt: s1}
			docJSON, err := domain.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			sd.docs[doc.ID], sd.docRaw[doc.ID] = doc, docJSON
			sd.evidence[cl.ID] = append(sd.evidence[cl.ID], evidenceRec{line: i + 1, ev: domain.Evidence{ID: s1, ClaimID: cl.ID, DocumentID: doc.ID,
				Locator: domain.Locator{Kind: "json_pointer", Pointer: s2, ContentHash: s1}}})
		}
		if flags&8 != 0 {
			sd.verdicts = append(sd.verdicts, verdictRec{line: 1, verdict: domain.Verdict{Subject: subject, Class: domain.ClassBusiness, Value: "warn", Rule: &s1p, EvaluatedAt: s2}})
		}
		for _, tenant := range append([]string{""}, c.viewTenants(sd)...) {
			v, err := c.buildViews(sd, tenant)
			if err != nil {
				if json.Valid(raw) {
					t.Fatalf("tenant %q: a valid raw value %q was refused: %v", tenant, raw, err)
				}
				continue
			}
			for name, j := range map[string][]byte{
				"identity": v.identity.Body, "passport": append(append([]byte("{"), v.passport.Body...), '}'),
				"evidence": append(append([]byte("{"), v.evidence.Body...), '}'), "coverage": v.passport.Coverage,
			} {
				if !utf8.Valid(j) || !json.Valid(j) {
					t.Fatalf("tenant %q: the %s answer is not UTF-8 JSON: %q", tenant, name, j)
				}
			}
			releaseBodies(&v)
		}
	})
}
