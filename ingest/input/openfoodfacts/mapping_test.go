package openfoodfacts

import (
	"strings"
	"testing"

	"github.com/productdata/pds/domain"
)

func claimOf(m *Mapped, predicate string) *domain.Claim {
	for i := range m.Claims {
		if m.Claims[i].Predicate == predicate {
			return &m.Claims[i]
		}
	}
	return nil
}

// Hand-written records in OFF's shape, one messy trait each.
func TestMapFields(t *testing.T) {
	const base = `"code":"3017620422003","last_modified_t":1700000000`
	cases := []struct {
		name, line string
		predicate  string
		value      string // the claim's value as JSON; "" = no claim
		unit       string
		skipped    string // a substring of a skipped-field reason
	}{
		{"number", `{` + base + `,"nutriments":{"sugars_100g":56.3}}`, "sugars_100g", `56.3`, "g", ""},
		{"number as string", `{` + base + `,"nutriments":{"sugars_100g":"56.3"}}`, "sugars_100g", `56.3`, "g", ""},
		{"decimal comma", `{` + base + `,"nutriments":{"salt_100g":"0,107"}}`, "salt_100g", `0.107`, "g", ""},
		{"empty string", `{` + base + `,"nutriments":{"proteins_100g":""}}`, "proteins_100g", "", "", ""},
		{"not a number", `{` + base + `,"nutriments":{"fiber_100g":"n/a"}}`, "fiber_100g", "", "", "is not a number"},
		{"unknown unit", `{` + base + `,"nutriments":{"calcium_100g":0.1,"calcium_unit":"spoons"}}`, "calcium_100g", "", "", `unknown unit "spoons"`},
		{"unit entered in mg, stored in g", `{` + base + `,"nutriments":{"salt_100g":0.72,"salt_unit":"mg"}}`, "salt_100g", `0.72`, "g", ""},
		{"energy in kJ", `{` + base + `,"nutriments":{"energy_100g":2252}}`, "energy_100g", `2252`, "kJ", ""},
		{"energy in kcal", `{` + base + `,"nutriments":{"energy-kcal_100g":539}}`, "energy-kcal_100g", `539`, "kcal", ""},
		{"computed, not a nutrient", `{` + base + `,"nutriments":{"nova-group_100g":4}}`, "nova-group_100g", "", "", ""},
		{"nova as int", `{` + base + `,"nova_group":4}`, "nova_group", `4`, "", ""},
		{"nova as string", `{` + base + `,"nova_group":"4"}`, "nova_group", `4`, "", ""},
		{"nova out of range", `{` + base + `,"nova_group":"7"}`, "nova_group", "", "", "not a group 1 to 4"},
		{"nutriscore", `{` + base + `,"nutriscore_grade":"e"}`, "nutriscore_grade", `"e"`, "", ""},
		{"nutriscore not computed", `{` + base + `,"nutriscore_grade":"unknown"}`, "nutriscore_grade", "", "", ""},
		{"quantity", `{` + base + `,"quantity":"400 g"}`, "quantity", `"400 g"`, "", ""},
		{"quantity empty", `{` + base + `,"quantity":""}`, "quantity", "", "", ""},
		{"quantity as number", `{` + base + `,"quantity":400}`, "quantity", `"400"`, "", ""},
		{"labels", `{` + base + `,"labels_tags":["en:organic","en:fair-trade"]}`, "labels", `["en:organic","en:fair-trade"]`, "", ""},
		{"labels empty", `{` + base + `,"labels_tags":[]}`, "labels", "", "", ""},
		{"labels as one string", `{` + base + `,"labels_tags":"en:organic, en:vegan"}`, "labels", `["en:organic","en:vegan"]`, "", ""},
		{"allergens with an empty entry", `{` + base + `,"allergens_tags":["en:milk",""]}`, "allergens", `["en:milk"]`, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Map([]byte(c.line), "2026-11-23T00:00:00Z")
			if err != nil {
				t.Fatal(err)
			}
			cl := claimOf(m, c.predicate)
			switch {
			case c.value == "" && cl != nil:
				t.Errorf("unexpected claim %s = %s", c.predicate, cl.Object.Value)
			case c.value != "" && cl == nil:
				t.Errorf("no claim %s", c.predicate)
			case cl != nil:
				if string(cl.Object.Value) != c.value || domain.Str(cl.Object.Unit) != c.unit {
					t.Errorf("%s = %s %s, want %s %s", c.predicate, cl.Object.Value, domain.Str(cl.Object.Unit), c.value, c.unit)
				}
			}
			var fields []string
			for _, s := range m.Skipped {
				if !strings.HasPrefix(s, "manufacturer:") { // none of these records names one
					fields = append(fields, s)
				}
			}
			skipped := strings.Join(fields, "\n")
			if (c.skipped == "") != (skipped == "") || !strings.Contains(skipped, c.skipped) {
				t.Errorf("skipped %q, want %q", skipped, c.skipped)
			}
		})
	}
}

func TestMapIdentity(t *testing.T) {
	cases := []struct {
		name, line   string
		subject      string
		manufacturer string
		brand        string
		trust        string
		updated      string
		err          string
	}{
		{"GTIN-13", `{"code":"3017620422003","brands":"Nutella,Ferrero","last_modified_t":1700000000}`,
			"gtin:03017620422003", "Nutella", "Nutella", "L1", "2023-11-14T22:13:20Z", ""},
		{"code as a number", `{"code":3017620422003,"last_modified_t":1700000000,"brands":"B"}`,
			"gtin:03017620422003", "B", "B", "L1", "2023-11-14T22:13:20Z", ""},
		{"GTIN-8", `{"code":"96385074","last_modified_t":1700000000,"brands":"B"}`, "gtin:00000096385074", "B", "B", "L1", "2023-11-14T22:13:20Z", ""},
		{"GTIN-12", `{"code":"036000291452","last_modified_t":1700000000,"brands":"B"}`, "gtin:00036000291452", "B", "B", "L1", "2023-11-14T22:13:20Z", ""},
		{"wrong check digit", `{"code":"3017620422004","last_modified_t":1700000000,"brands":"B"}`, "internal_sku:off-3017620422004", "B", "B", "L1", "2023-11-14T22:13:20Z", ""},
		{"odd length", `{"code":"12345","last_modified_t":1700000000,"brands":"B"}`, "internal_sku:off-12345", "B", "B", "L1", "2023-11-14T22:13:20Z", ""},
		{"brand owner", `{"code":"3017620422003","brand_owner":"Ferrero France","brands":"Nutella","last_modified_t":1700000000}`,
			"gtin:03017620422003", "Ferrero France", "Nutella", "L1", "2023-11-14T22:13:20Z", ""},
		{"producer platform", `{"code":"3017620422003","owner":"org-ferrero","owner_fields":{"sugars":1699999000},"brands":"Nutella","last_modified_t":1700000000}`,
			"gtin:03017620422003", "ferrero", "Nutella", "L3", "2023-11-14T22:13:20Z", ""},
		{"producer field", `{"code":"3017620422003","producer":"Ferrero SpA","last_modified_t":"1700000000"}`,
			"gtin:03017620422003", "Ferrero SpA", "", "L1", "2023-11-14T22:13:20Z", ""},
		{"nothing names a maker", `{"code":"3017620422003","brands":"","last_modified_t":1700000000}`,
			"gtin:03017620422003", UnknownManufacturer, "", "L1", "2023-11-14T22:13:20Z", ""},
		{"envelope", `{"status":1,"code":"3017620422003","product":{"code":"3017620422003","brands":"N","last_modified_t":1700000000}}`,
			"gtin:03017620422003", "N", "N", "L1", "2023-11-14T22:13:20Z", ""},
		{"envelope code only", `{"status":1,"code":"3017620422003","product":{"brands":"N","last_modified_t":1700000000}}`,
			"gtin:03017620422003", "N", "N", "L1", "2023-11-14T22:13:20Z", ""},
		{"no code", `{"brands":"N","last_modified_t":1700000000}`, "", "", "", "", "", "no code"},
		{"code no identifier holds", `{"code":"abc def","last_modified_t":1700000000}`, "", "", "", "", "", `code "abc def" is no valid GTIN`},
		{"no last_modified_t", `{"code":"3017620422003"}`, "", "", "", "", "", "no last_modified_t"},
		{"bad last_modified_t", `{"code":"3017620422003","last_modified_t":"yesterday"}`, "", "", "", "", "", "is not a Unix time"},
		{"broken line", `{"code":"3017620422003","last_mod`, "", "", "", "", "", "not valid JSON"},
		{"not an object", `[1,2]`, "", "", "", "", "", "not a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Map([]byte(c.line), "2026-11-23T00:00:00Z")
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := m.Product
			if p.Identifiers[0] != c.subject || p.Manufacturer != c.manufacturer || p.Brand != c.brand || p.TrustLevel != c.trust || p.UpdatedAt != c.updated {
				t.Errorf("product %+v", p)
			}
		})
	}
}

// A producer-platform field is the producer's claim, an imported one the
// database's, the rest OFF contributors'; computed values are inferences.
func TestMapOrigins(t *testing.T) {
	line := `{"code":"3017620422003","last_modified_t":1700000000,"owner":"org-ferrero","owner_fields":{"sugars":1699990000},
"sources":[{"id":"org-ferrero","name":"Ferrero","manufacturer":1,"import_t":1699990000,"fields":["nutrients.sugars_value"]},
{"id":"openfood-ch","name":"FoodRepo","import_t":1600000000,"fields":["nutrients.fat_value","quantity"],"source_licence":"CC BY 4.0","source_licence_url":"https://creativecommons.org/licenses/by/4.0/"},
"not an entry"],
"nutriments":{"sugars_100g":56.3,"fat_100g":30.9,"salt_100g":0.1},"quantity":"400 g","nutriscore_grade":"e","nutriscore_version":"2023",
"data_quality_errors_tags":["en:e1"],"data_quality_warnings_tags":[]}`
	m, err := Map([]byte(strings.ReplaceAll(line, "\n", "")), "2026-11-23T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]domain.Source{OFFSourceID: OFFSource()}
	for _, s := range m.Sources {
		sources[s.ID] = s
	}
	for _, w := range []struct {
		predicate, claimType, trust, kind, licence string
		published                                  string
	}{
		{"sugars_100g", "SOURCE ASSERTION", TrustProducer, "publisher_endpoint", LicenceODbL, "2023-11-14T19:26:40Z"},
		{"fat_100g", "SOURCE ASSERTION", TrustImport, "partner_feed", "CC BY 4.0", "2020-09-13T12:26:40Z"},
		{"quantity", "SOURCE ASSERTION", TrustImport, "partner_feed", "CC BY 4.0", "2020-09-13T12:26:40Z"},
		{"salt_100g", "SOURCE ASSERTION", TrustContributor, "partner_feed", LicenceODbL, "2023-11-14T22:13:20Z"},
		{"nutriscore_grade", "INFERENCE", TrustContributor, "partner_feed", LicenceODbL, "2023-11-14T22:13:20Z"},
	} {
		c := claimOf(m, w.predicate)
		if c == nil {
			t.Fatalf("no %s claim", w.predicate)
		}
		src, ok := sources[domain.Str(c.SourceRef)]
		if !ok || c.ClaimType != w.claimType || c.TrustLevel != w.trust || src.Kind != w.kind || src.LicenceName != w.licence || domain.Str(c.PublishedAt) != w.published {
			t.Errorf("%s: %+v from %+v", w.predicate, c, src)
		}
	}
	if c := claimOf(m, "nutriscore_grade"); domain.Str(c.Method) != MethodNutriScore || domain.Str(c.MethodVersion) != "2023" {
		t.Errorf("nutriscore method %s %s", domain.Str(c.Method), domain.Str(c.MethodVersion))
	}
	if !strings.Contains(strings.Join(m.Skipped, "\n"), "sources[]: an entry without an id") {
		t.Errorf("skipped %v", m.Skipped)
	}
	// FoodRepo's own licence and attribution.
	var foodrepo domain.Source
	for _, s := range m.Sources {
		if s.LicenceName == "CC BY 4.0" {
			foodrepo = s
		}
	}
	if !strings.Contains(domain.Str(foodrepo.AttributionRequired), "FoodRepo") || !foodrepo.MayRedistributeDerived {
		t.Errorf("FoodRepo source %+v", foodrepo)
	}
	// Quality lists: one error, an empty warnings list.
	got := map[string]string{}
	for _, v := range m.Verdicts {
		got[domain.Str(v.Rule)] = v.Class + " " + v.Value
	}
	if got["en:e1"] != "technical fail" || got[RuleNoWarnings] != "business pass" || len(got) != 2 {
		t.Errorf("verdicts %v", got)
	}
	// Evidence: one JSON pointer per claim into the record itself.
	for i, c := range m.Claims {
		e := m.Evidence[i]
		if e.ClaimID != c.ID || e.DocumentID != m.Document.ID || e.Locator.Kind != domain.LocatorJSONPointer {
			t.Errorf("evidence %+v of %s", e, c.ID)
		}
	}
	if e := m.Evidence[0]; e.Locator.Pointer != "/nutriments/fat_100g" {
		t.Errorf("first pointer %s", e.Locator.Pointer)
	}
}

// A record's claims are as retrieved at its last_modified_t, as its product
// was updated and its verdicts evaluated (so the passport built from them is
// updated when the record was); only the document, the record's bytes, is
// as retrieved with the dump.
func TestMapTimesAreTheRecords(t *testing.T) {
	line := `{"code":"3017620422003","last_modified_t":1700000000,"nutriments":{"sugars_100g":56.3},"quantity":"400 g",` +
		`"sources":[{"id":"openfood-ch","import_t":1600000000,"fields":["quantity"]}],"data_quality_errors_tags":[]}`
	const dump, record = "2026-11-23T00:00:00Z", "2023-11-14T22:13:20Z"
	m, err := Map([]byte(line), dump)
	if err != nil {
		t.Fatal(err)
	}
	if m.Product.UpdatedAt != record || m.Document.RetrievedAt != dump {
		t.Errorf("product updated_at %s, document retrieved_at %s; want %s and %s", m.Product.UpdatedAt, m.Document.RetrievedAt, record, dump)
	}
	if len(m.Claims) != 2 || len(m.Verdicts) != 1 {
		t.Fatalf("%d claims, %d verdicts", len(m.Claims), len(m.Verdicts))
	}
	for _, c := range m.Claims {
		if c.RetrievedAt != record {
			t.Errorf("claim %s retrieved_at %s, want the record's %s", c.ID, c.RetrievedAt, record)
		}
	}
	if v := m.Verdicts[0]; v.EvaluatedAt != record {
		t.Errorf("verdict evaluated_at %s, want %s", v.EvaluatedAt, record)
	}
}

func TestPointer(t *testing.T) {
	if got := Pointer("nutriments", "a/b~c"); got != "/nutriments/a~1b~0c" {
		t.Errorf("Pointer = %s", got)
	}
}
