package synthetic

import (
	"math/rand/v2"
	"strconv"

	"github.com/productdata/pds/domain"
)

// Predicates the generator states claims about.
const (
	pName = iota
	pNetContent
	pCountry
	pGPC
	pPackaging
	pRecyclability
	pCarbon
	pWater
	pGTINRegistered
	pLaunchDate
	pWeight
	pAllergens
	pEnergy100g
	pSugar100g
	pFat100g
	pNutriScore
	pOrganic
	pPalmOil
	pStorage
	pEnergy100ml
	pAlcohol
	pCaffeine
	pDeposit
	pActive
	pDosage
	pRx
	pAgeMin
	pMicroplastics
	pVegan
	pFragranceFree
	pBiodegradable
	pUnitsPerPack
	pMaterialComp
	pColour
	pSize
	pCare
	pPower
	pEnergyClass
	pBattery
	pWarranty
	pMaterial
	pRetailerCategory
	numPredicates
)

// Claim-type profiles.
const (
	profFact    = iota // FACT from an authoritative source, else SOURCE ASSERTION
	profAssert         // SOURCE ASSERTION, now and then FACT from a registry
	profInfer          // INFERENCE with a method
	profEstim          // ESTIMATION with a method
	profValid          // VALIDATION
	profUnknown        // UNKNOWN (value null) about half the time, else SOURCE ASSERTION
)

type predicate struct {
	name     string
	unit     string // "" = null
	profile  int
	method   string
	versions []string // method versions, oldest first
	langTag  bool     // the value is text in a language
}

var predicates = [numPredicates]predicate{
	pName:             {name: "name", profile: profFact, langTag: true},
	pNetContent:       {name: "net_content", profile: profFact},
	pCountry:          {name: "country_of_origin", profile: profAssert},
	pGPC:              {name: "gpc_category", profile: profFact},
	pPackaging:        {name: "packaging_material", profile: profAssert},
	pRecyclability:    {name: "recyclability", profile: profInfer, method: "packaging_recyclability_rules", versions: []string{"1.2", "1.3", "2.0"}},
	pCarbon:           {name: "carbon_footprint_kg", unit: "kg CO2e", profile: profEstim, method: "lca_category_average", versions: []string{"2.0", "2.1", "2.2"}},
	pWater:            {name: "water_footprint_l", unit: "l", profile: profEstim, method: "water_footprint_category_model", versions: []string{"0.9", "1.0"}},
	pGTINRegistered:   {name: "gtin_registered", profile: profValid},
	pLaunchDate:       {name: "launch_date", profile: profAssert},
	pWeight:           {name: "gross_weight_kg", unit: "kg", profile: profAssert},
	pAllergens:        {name: "allergens", profile: profAssert},
	pEnergy100g:       {name: "energy_kcal_per_100g", unit: "kcal", profile: profAssert},
	pSugar100g:        {name: "sugars_g_per_100g", unit: "g", profile: profAssert},
	pFat100g:          {name: "fat_g_per_100g", unit: "g", profile: profAssert},
	pNutriScore:       {name: "nutri_score", profile: profInfer, method: "nutri_score_algorithm", versions: []string{"2017", "2023"}},
	pOrganic:          {name: "organic_certified", profile: profAssert},
	pPalmOil:          {name: "contains_palm_oil", profile: profUnknown},
	pStorage:          {name: "storage_instructions", profile: profAssert, langTag: true},
	pEnergy100ml:      {name: "energy_kcal_per_100ml", unit: "kcal", profile: profAssert},
	pAlcohol:          {name: "alcohol_by_volume", unit: "%", profile: profFact},
	pCaffeine:         {name: "caffeine_mg_per_100ml", unit: "mg", profile: profAssert},
	pDeposit:          {name: "deposit_scheme", profile: profAssert},
	pActive:           {name: "active_ingredient", profile: profFact},
	pDosage:           {name: "dosage_form", profile: profFact},
	pRx:               {name: "prescription_required", profile: profFact},
	pAgeMin:           {name: "minimum_age_years", unit: "years", profile: profAssert},
	pMicroplastics:    {name: "contains_microplastics", profile: profUnknown},
	pVegan:            {name: "vegan", profile: profAssert},
	pFragranceFree:    {name: "fragrance_free", profile: profAssert},
	pBiodegradable:    {name: "biodegradable", profile: profInfer, method: "ingredient_biodegradability_screen", versions: []string{"1.0", "1.1"}},
	pUnitsPerPack:     {name: "units_per_pack", profile: profFact},
	pMaterialComp:     {name: "material_composition", profile: profAssert},
	pColour:           {name: "colour", profile: profAssert, langTag: true},
	pSize:             {name: "size", profile: profAssert},
	pCare:             {name: "care_instructions", profile: profAssert, langTag: true},
	pPower:            {name: "rated_power", unit: "W", profile: profFact},
	pEnergyClass:      {name: "energy_efficiency_class", profile: profFact},
	pBattery:          {name: "contains_battery", profile: profAssert},
	pWarranty:         {name: "warranty", unit: "months", profile: profAssert},
	pMaterial:         {name: "main_material", profile: profAssert},
	pRetailerCategory: {name: "retailer_category", profile: profAssert, langTag: true},
}

// Predicate pools per category (name comes first and always).
var generic = []int{pNetContent, pCountry, pGPC, pPackaging, pRecyclability, pCarbon, pWater, pGTINRegistered, pLaunchDate, pWeight}

var categoryPredicates = [numCategories][]int{
	catFood:        {pAllergens, pEnergy100g, pSugar100g, pFat100g, pNutriScore, pOrganic, pPalmOil, pStorage},
	catBeverage:    {pEnergy100ml, pAlcohol, pCaffeine, pDeposit, pOrganic, pAllergens},
	catHealth:      {pActive, pDosage, pRx, pAgeMin, pStorage},
	catCosmetics:   {pMicroplastics, pVegan, pFragranceFree, pAllergens},
	catHousehold:   {pBiodegradable, pUnitsPerPack, pFragranceFree},
	catTextile:     {pMaterialComp, pColour, pSize, pCare},
	catElectronics: {pPower, pEnergyClass, pBattery, pWarranty},
	catHardgoods:   {pMaterial, pAgeMin, pWarranty},
}

// inferMethod is what a SOURCE ASSERTION superseded an INFERENCE of.
const (
	extractionMethod  = "attribute_extraction_model"
	extractionVersion = "0.9"
)

var verificationMethods = map[string]string{
	"registry_verified": "registry_lookup",
	"domain_verified":   "dns_txt_record",
	"contract_verified": "partner_agreement",
	"disputed":          "conflicting_sources",
}

// Verdict rules per class; regulatory rules depend on the category.
var (
	technicalRules = []string{"gtin_check_digit", "gtin_length", "mandatory_attributes_present", "net_content_unit_valid", "image_resolution_min"}
	businessRules  = []string{"brand_owner_matches_gcp", "category_consistent", "duplicate_listing_check", "price_plausibility"}
	authorityRules = []string{"gs1_licence_attested", "brand_owner_attestation", "registry_attestation"}
	regulatoryBy   = [numCategories][]string{
		catFood:        {"eu_fic_allergen_declaration", "eu_fic_nutrition_table", "novel_food_check"},
		catBeverage:    {"eu_fic_nutrition_table", "alcohol_labelling", "deposit_marking"},
		catHealth:      {"eu_mdr_udi_present", "medicinal_product_authorisation"},
		catCosmetics:   {"eu_cosmetics_cpnp_notified", "eu_cosmetics_allergen_labelling"},
		catHousehold:   {"clp_hazard_labelling", "eu_reach_svhc"},
		catTextile:     {"textile_fibre_labelling", "eu_reach_svhc"},
		catElectronics: {"ce_marking_declared", "weee_registration", "eu_energy_label"},
		catHardgoods:   {"ce_marking_declared", "toy_safety_en71", "eu_reach_svhc"},
	}
)

var indSpirits, indDistillery = ind("Spirits"), ind("Distillery")

var verdictClasses = []string{domain.ClassTechnical, domain.ClassBusiness, domain.ClassRegulatory, domain.ClassAuthority}

// appendValue appends a JSON value for predicate p of a product, and returns
// the language of the value ("" = null). older asks for a plausible earlier
// value.
func (g *renderer) appendValue(b []byte, p int, older bool) ([]byte, string) {
	r := g.r
	pc := &g.prod
	lang := ""
	if predicates[p].langTag {
		lang = "en"
	}
	switch p {
	case pName:
		lang = pc.lang
		if older {
			// the same product, named a little differently before
			return appendString(b, pc.oldName), lang
		}
		return appendString(b, pc.name), lang
	case pNetContent:
		n := pc.netHundredths
		if older {
			n = n * 11 / 10
		}
		return appendHundredths(b, n), ""
	case pCountry:
		if r.IntN(3) > 0 {
			return appendString(b, countries[pc.maker.country].code), ""
		}
		return appendString(b, pick(r, originCountries)), ""
	case pGPC:
		return appendString(b, pick(r, categories[pc.maker.category].gpc)), ""
	case pPackaging:
		return appendString(b, pick(r, packagingMaterials)), ""
	case pRecyclability:
		return appendString(b, pick(r, recyclability)), ""
	case pCarbon:
		return appendHundredths(b, 5+r.IntN(400)), ""
	case pWater:
		return appendHundredths(b, 50+r.IntN(20000)), ""
	case pGTINRegistered:
		return appendBool(b, r.IntN(50) > 0), ""
	case pLaunchDate:
		y := 2012 + r.IntN(14)
		b = append(b, '"')
		b = strconv.AppendInt(b, int64(y), 10)
		b = append(b, '-')
		b = appendPadded(b, 1+r.IntN(12), 2)
		b = append(b, '-', '0', '1', '"')
		return b, ""
	case pWeight:
		return appendHundredths(b, 5+r.IntN(1500)), ""
	case pAllergens:
		b = append(b, '[')
		n := r.IntN(4)
		first := r.IntN(len(allergenList))
		for i := 0; i < n; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, allergenList[(first+i*3)%len(allergenList)])
		}
		return append(b, ']'), ""
	case pEnergy100g:
		return strconv.AppendInt(b, int64(20+r.IntN(600)), 10), ""
	case pSugar100g, pFat100g:
		return appendHundredths(b, r.IntN(6000)), ""
	case pNutriScore:
		return appendString(b, pick(r, energyClasses[:5])), ""
	case pOrganic, pVegan, pFragranceFree, pBattery, pRx, pDeposit:
		return appendBool(b, r.IntN(3) == 0), ""
	case pPalmOil, pMicroplastics:
		return appendBool(b, r.IntN(4) == 0), ""
	case pStorage:
		return appendString(b, pick(r, []string{"Store in a cool, dry place.", "Keep refrigerated at 0-4 °C.",
			"Once opened, consume within 3 days.", "Store below 25 °C, away from direct sunlight.", "Keep frozen at -18 °C."})), lang
	case pEnergy100ml:
		return strconv.AppendInt(b, int64(r.IntN(250)), 10), ""
	case pAlcohol:
		if pc.maker.industry == indSpirits || pc.maker.industry == indDistillery {
			return appendHundredths(b, 1500+r.IntN(3000)), ""
		}
		return appendHundredths(b, r.IntN(900)), ""
	case pCaffeine:
		return strconv.AppendInt(b, int64(r.IntN(80)), 10), ""
	case pActive:
		return appendString(b, pick(r, activeIngredients)), ""
	case pDosage:
		return appendString(b, pick(r, dosageForms)), ""
	case pAgeMin:
		return strconv.AppendInt(b, int64(pick(r, []int{0, 3, 6, 8, 12, 14, 18})), 10), ""
	case pBiodegradable:
		return appendBool(b, r.IntN(2) == 0), ""
	case pUnitsPerPack:
		return strconv.AppendInt(b, int64(1+r.IntN(48)), 10), ""
	case pMaterialComp:
		return appendString(b, pick(r, materials[:7])), ""
	case pColour:
		return appendString(b, pick(r, colours)), lang
	case pSize:
		return appendString(b, pick(r, []string{"XS", "S", "M", "L", "XL", "XXL", "36-38", "39-42", "43-46", "one size"})), ""
	case pCare:
		return appendString(b, pick(r, []string{"Machine wash at 30 °C.", "Hand wash only.", "Do not tumble dry.", "Machine wash at 40 °C, iron on low heat."})), lang
	case pPower:
		return strconv.AppendInt(b, int64(5+r.IntN(2400)), 10), ""
	case pEnergyClass:
		return appendString(b, pick(r, energyClasses)), ""
	case pWarranty:
		return strconv.AppendInt(b, int64(pick(r, []int{6, 12, 24, 36, 60})), 10), ""
	case pMaterial:
		return appendString(b, pick(r, materials[7:])), ""
	case pRetailerCategory:
		return appendString(b, pick(r, retailerCategories)), lang
	}
	panic("synthetic: no value for predicate " + predicates[p].name)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// chance reports true with the given probability in percent.
func chance(r *rand.Rand, percent int) bool { return r.IntN(100) < percent }
