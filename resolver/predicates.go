package resolver

import (
	"sort"
	"strings"
)

// The groups claims are shown in, in page order. A predicate not in
// predicates goes to Other, under a label made from its name.
var groups = []struct{ id, name string }{
	{"g-product", "Product"},
	{"g-composition", "Composition and nutrition"},
	{"g-packaging", "Packaging and end of life"},
	{"g-footprint", "Environmental footprint"},
	{"g-use", "Use, care and safety"},
	{"g-registration", "Registration"},
	{"g-other", "Other"},
}

// predicates names the predicates pds's data uses and the group each
// belongs to.
var predicates = map[string]struct{ label, group string }{
	"name":                    {"Name", "g-product"},
	"net_content":             {"Net content", "g-product"},
	"units_per_pack":          {"Units per pack", "g-product"},
	"gross_weight_kg":         {"Gross weight", "g-product"},
	"size":                    {"Size", "g-product"},
	"colour":                  {"Colour", "g-product"},
	"country_of_origin":       {"Country of origin", "g-product"},
	"gpc_category":            {"GPC category", "g-product"},
	"launch_date":             {"Launch date", "g-product"},
	"retailer_category":       {"Retailer category", "g-product"},
	"allergens":               {"Allergens", "g-composition"},
	"energy_kcal_per_100g":    {"Energy per 100 g", "g-composition"},
	"energy_kcal_per_100ml":   {"Energy per 100 ml", "g-composition"},
	"sugars_g_per_100g":       {"Sugars per 100 g", "g-composition"},
	"fat_g_per_100g":          {"Fat per 100 g", "g-composition"},
	"nutri_score":             {"Nutri-Score", "g-composition"},
	"organic_certified":       {"Organic certified", "g-composition"},
	"vegan":                   {"Vegan", "g-composition"},
	"contains_palm_oil":       {"Contains palm oil", "g-composition"},
	"alcohol_by_volume":       {"Alcohol by volume", "g-composition"},
	"caffeine_mg_per_100ml":   {"Caffeine per 100 ml", "g-composition"},
	"active_ingredient":       {"Active ingredient", "g-composition"},
	"dosage_form":             {"Dosage form", "g-composition"},
	"fragrance_free":          {"Fragrance free", "g-composition"},
	"material_composition":    {"Material composition", "g-composition"},
	"main_material":           {"Main material", "g-composition"},
	"contains_microplastics":  {"Contains microplastics", "g-composition"},
	"contains_battery":        {"Contains a battery", "g-composition"},
	"packaging_material":      {"Packaging material", "g-packaging"},
	"recyclability":           {"Recyclability", "g-packaging"},
	"biodegradable":           {"Biodegradable", "g-packaging"},
	"carbon_footprint_kg":     {"Carbon footprint", "g-footprint"},
	"water_footprint_l":       {"Water footprint", "g-footprint"},
	"storage_instructions":    {"Storage instructions", "g-use"},
	"care_instructions":       {"Care instructions", "g-use"},
	"warranty":                {"Warranty", "g-use"},
	"rated_power":             {"Rated power", "g-use"},
	"energy_efficiency_class": {"Energy efficiency class", "g-use"},
	"prescription_required":   {"Prescription required", "g-use"},
	"minimum_age_years":       {"Minimum age", "g-use"},
	"gtin_registered":         {"GTIN registered", "g-registration"},
}

// predicateLabel is how the page names a predicate.
func predicateLabel(p string) string {
	if d, ok := predicates[p]; ok {
		return d.label
	}
	s := strings.ReplaceAll(p, "_", " ")
	if s == "" {
		return p
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// addToGroup puts a claim into its group, creating the group on first use.
func addToGroup(gs []groupView, predicate string, c claimView) []groupView {
	id := "g-other"
	if d, ok := predicates[predicate]; ok {
		id = d.group
	}
	for i := range gs {
		if gs[i].ID == id {
			gs[i].Claims = append(gs[i].Claims, c)
			return gs
		}
	}
	name := ""
	for _, g := range groups {
		if g.id == id {
			name = g.name
		}
	}
	return append(gs, groupView{ID: id, Name: name, Claims: []claimView{c}})
}

// sortGroups puts groups in page order, and the claims of each in the order
// of the predicates table (the product's name first), then by predicate.
func sortGroups(gs []groupView) {
	rank := map[string]int{}
	for i, g := range groups {
		rank[g.id] = i
	}
	sort.SliceStable(gs, func(i, j int) bool { return rank[gs[i].ID] < rank[gs[j].ID] })
	for _, g := range gs {
		sort.SliceStable(g.Claims, func(i, j int) bool {
			a, b := g.Claims[i].Predicate, g.Claims[j].Predicate
			if (a == "name") != (b == "name") {
				return a == "name"
			}
			return a < b
		})
	}
}
