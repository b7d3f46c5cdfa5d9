package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Row is one row of the file: a public product's identifiers and identity,
// its passport's status and verdicts, its attributes, and the sources it
// cites with their attribution. The fields are the file's columns, in this
// order.
//
// An attribute whose predicate has a column of its own (the fields tagged
// attr) is written there when its value fits the column's type: a number
// to a DOUBLE (or, when whole, to an INT64) column with its unit in the
// column named after it with _unit; true or false to a BOOLEAN; a string
// to a VARCHAR; a list of strings to a VARCHAR list. Every other attribute,
// and one whose value does not fit (null included), goes to other_attributes
// (a JSON object, predicate to value) with its unit in other_units, as the
// API's attributes and units hold them; so the row holds every attribute of
// the passport and nothing else.
type Row struct {
	Subject         string   `parquet:"subject"`
	GTIN            *string  `parquet:"gtin,optional"`
	Identifiers     []string `parquet:"identifiers,list"`
	Manufacturer    string   `parquet:"manufacturer,dict"`
	ManufacturerGLN *string  `parquet:"manufacturer_gln,optional,dict"`
	Brand           *string  `parquet:"brand,optional,dict"`
	TrustLevel      string   `parquet:"trust_level,dict"`
	Status          string   `parquet:"status,dict"`
	UpdatedAt       string   `parquet:"updated_at"`
	HasPassport     bool     `parquet:"has_passport"`

	PassportStatus      string  `parquet:"passport_status,dict"`
	PassportReason      *string `parquet:"passport_reason,optional,dict"`
	PassportUpdatedAt   *string `parquet:"passport_updated_at,optional"`
	ValidationTechnical *string `parquet:"validation_technical,optional,dict"`
	ValidationBusiness  *string `parquet:"validation_business,optional,dict"`
	ValidationRegulator *string `parquet:"validation_regulatory,optional,dict"`
	ValidationAuthority *string `parquet:"validation_authority,optional,dict"`

	Name                  *string  `parquet:"name,optional" attr:"name"`
	GPCCategory           *string  `parquet:"gpc_category,optional,dict" attr:"gpc_category"`
	RetailerCategory      *string  `parquet:"retailer_category,optional,dict" attr:"retailer_category"`
	CountryOfOrigin       *string  `parquet:"country_of_origin,optional,dict" attr:"country_of_origin"`
	LaunchDate            *string  `parquet:"launch_date,optional" attr:"launch_date"`
	Quantity              *string  `parquet:"quantity,optional" attr:"quantity"`
	NetContent            *float64 `parquet:"net_content,optional" attr:"net_content"`
	NetContentUnit        *string  `parquet:"net_content_unit,optional,dict" unit:"net_content"`
	GrossWeightKg         *float64 `parquet:"gross_weight_kg,optional" attr:"gross_weight_kg"`
	GrossWeightKgUnit     *string  `parquet:"gross_weight_kg_unit,optional,dict" unit:"gross_weight_kg"`
	UnitsPerPack          *int64   `parquet:"units_per_pack,optional" attr:"units_per_pack"`
	UnitsPerPackUnit      *string  `parquet:"units_per_pack_unit,optional,dict" unit:"units_per_pack"`
	Size                  *string  `parquet:"size,optional,dict" attr:"size"`
	Colour                *string  `parquet:"colour,optional,dict" attr:"colour"`
	Allergens             []string `parquet:"allergens,optional,list" attr:"allergens"`
	Labels                []string `parquet:"labels,optional,list" attr:"labels"`
	Origins               []string `parquet:"origins,optional,list" attr:"origins"`
	Categories            []string `parquet:"categories,optional,list" attr:"categories"`
	EnergyKcalPer100g     *float64 `parquet:"energy_kcal_per_100g,optional" attr:"energy_kcal_per_100g"`
	EnergyKcalPer100gUnit *string  `parquet:"energy_kcal_per_100g_unit,optional,dict" unit:"energy_kcal_per_100g"`
	EnergyKcalPer100ml    *float64 `parquet:"energy_kcal_per_100ml,optional" attr:"energy_kcal_per_100ml"`
	EnergyKcalPer100mlU   *string  `parquet:"energy_kcal_per_100ml_unit,optional,dict" unit:"energy_kcal_per_100ml"`
	SugarsGPer100g        *float64 `parquet:"sugars_g_per_100g,optional" attr:"sugars_g_per_100g"`
	SugarsGPer100gUnit    *string  `parquet:"sugars_g_per_100g_unit,optional,dict" unit:"sugars_g_per_100g"`
	FatGPer100g           *float64 `parquet:"fat_g_per_100g,optional" attr:"fat_g_per_100g"`
	FatGPer100gUnit       *string  `parquet:"fat_g_per_100g_unit,optional,dict" unit:"fat_g_per_100g"`
	AlcoholByVolume       *float64 `parquet:"alcohol_by_volume,optional" attr:"alcohol_by_volume"`
	AlcoholByVolumeUnit   *string  `parquet:"alcohol_by_volume_unit,optional,dict" unit:"alcohol_by_volume"`
	CaffeineMgPer100ml    *float64 `parquet:"caffeine_mg_per_100ml,optional" attr:"caffeine_mg_per_100ml"`
	CaffeineMgPer100mlU   *string  `parquet:"caffeine_mg_per_100ml_unit,optional,dict" unit:"caffeine_mg_per_100ml"`
	NutriScore            *string  `parquet:"nutri_score,optional,dict" attr:"nutri_score"`
	NutriscoreGrade       *string  `parquet:"nutriscore_grade,optional,dict" attr:"nutriscore_grade"`
	NutriscoreScore       *int64   `parquet:"nutriscore_score,optional" attr:"nutriscore_score"`
	NutriscoreScoreUnit   *string  `parquet:"nutriscore_score_unit,optional,dict" unit:"nutriscore_score"`
	NovaGroup             *int64   `parquet:"nova_group,optional" attr:"nova_group"`
	NovaGroupUnit         *string  `parquet:"nova_group_unit,optional,dict" unit:"nova_group"`
	EcoscoreGrade         *string  `parquet:"ecoscore_grade,optional,dict" attr:"ecoscore_grade"`
	EcoscoreScore         *int64   `parquet:"ecoscore_score,optional" attr:"ecoscore_score"`
	EcoscoreScoreUnit     *string  `parquet:"ecoscore_score_unit,optional,dict" unit:"ecoscore_score"`
	OrganicCertified      *bool    `parquet:"organic_certified,optional" attr:"organic_certified"`
	Vegan                 *bool    `parquet:"vegan,optional" attr:"vegan"`
	ContainsPalmOil       *bool    `parquet:"contains_palm_oil,optional" attr:"contains_palm_oil"`
	ActiveIngredient      *string  `parquet:"active_ingredient,optional,dict" attr:"active_ingredient"`
	DosageForm            *string  `parquet:"dosage_form,optional,dict" attr:"dosage_form"`
	PrescriptionRequired  *bool    `parquet:"prescription_required,optional" attr:"prescription_required"`
	FragranceFree         *bool    `parquet:"fragrance_free,optional" attr:"fragrance_free"`
	MaterialComposition   *string  `parquet:"material_composition,optional,dict" attr:"material_composition"`
	MainMaterial          *string  `parquet:"main_material,optional,dict" attr:"main_material"`
	ContainsMicroplastics *bool    `parquet:"contains_microplastics,optional" attr:"contains_microplastics"`
	ContainsBattery       *bool    `parquet:"contains_battery,optional" attr:"contains_battery"`
	PackagingMaterial     *string  `parquet:"packaging_material,optional,dict" attr:"packaging_material"`
	Recyclability         *string  `parquet:"recyclability,optional,dict" attr:"recyclability"`
	Biodegradable         *bool    `parquet:"biodegradable,optional" attr:"biodegradable"`
	DepositScheme         *string  `parquet:"deposit_scheme,optional,dict" attr:"deposit_scheme"`
	CarbonFootprintKg     *float64 `parquet:"carbon_footprint_kg,optional" attr:"carbon_footprint_kg"`
	CarbonFootprintKgUnit *string  `parquet:"carbon_footprint_kg_unit,optional,dict" unit:"carbon_footprint_kg"`
	WaterFootprintL       *float64 `parquet:"water_footprint_l,optional" attr:"water_footprint_l"`
	WaterFootprintLUnit   *string  `parquet:"water_footprint_l_unit,optional,dict" unit:"water_footprint_l"`
	StorageInstructions   *string  `parquet:"storage_instructions,optional,dict" attr:"storage_instructions"`
	CareInstructions      *string  `parquet:"care_instructions,optional,dict" attr:"care_instructions"`
	Warranty              *int64   `parquet:"warranty,optional" attr:"warranty"`
	WarrantyUnit          *string  `parquet:"warranty_unit,optional,dict" unit:"warranty"`
	RatedPower            *float64 `parquet:"rated_power,optional" attr:"rated_power"`
	RatedPowerUnit        *string  `parquet:"rated_power_unit,optional,dict" unit:"rated_power"`
	EnergyEfficiencyClass *string  `parquet:"energy_efficiency_class,optional,dict" attr:"energy_efficiency_class"`
	MinimumAgeYears       *int64   `parquet:"minimum_age_years,optional" attr:"minimum_age_years"`
	MinimumAgeYearsUnit   *string  `parquet:"minimum_age_years_unit,optional,dict" unit:"minimum_age_years"`
	GTINRegistered        *bool    `parquet:"gtin_registered,optional" attr:"gtin_registered"`
	OtherAttributes       *string  `parquet:"other_attributes,optional"`
	OtherUnits            *string  `parquet:"other_units,optional"`

	SourceIDs       []string `parquet:"source_ids,list"`
	SourcesWithheld []string `parquet:"sources_withheld,list"`
	Attribution     []string `parquet:"attribution,list"`
}

// column is an attribute column of Row: the field of its value and, for a
// number, the field of its unit (-1 for none).
type column struct {
	kind  reflect.Type
	value int
	unit  int
}

// columns maps a predicate to its column, read from Row's attr and unit
// tags.
var columns = attributeColumns()

func attributeColumns() map[string]column {
	t := reflect.TypeFor[Row]()
	cols := map[string]column{}
	units := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if p := f.Tag.Get("unit"); p != "" {
			units[p] = i
		}
	}
	for i := range t.NumField() {
		f := t.Field(i)
		p := f.Tag.Get("attr")
		if p == "" {
			continue
		}
		if name, _, _ := strings.Cut(f.Tag.Get("parquet"), ","); name != p {
			panic(fmt.Sprintf("export: Row.%s is column %q but attribute %q", f.Name, name, p))
		}
		c := column{kind: f.Type, value: i, unit: -1}
		if u, ok := units[p]; ok {
			c.unit = u
		}
		if isNumber(f.Type) != (c.unit >= 0) {
			panic(fmt.Sprintf("export: Row.%s: a number column needs a unit column, and only a number column has one", f.Name))
		}
		cols[p] = c
	}
	return cols
}

var (
	typeFloat   = reflect.TypeFor[*float64]()
	typeInt     = reflect.TypeFor[*int64]()
	typeBool    = reflect.TypeFor[*bool]()
	typeString  = reflect.TypeFor[*string]()
	typeStrings = reflect.TypeFor[[]string]()
)

func isNumber(t reflect.Type) bool { return t == typeFloat || t == typeInt }

// setAttribute writes the attribute predicate (its JSON value and unit,
// "" for none) to its column of r, and reports whether it fit there.
func setAttribute(r *Row, predicate string, value json.RawMessage, unit string) bool {
	c, ok := columns[predicate]
	if !ok || (unit != "" && c.unit < 0) {
		return false
	}
	var v any
	switch c.kind {
	case typeFloat:
		f, ok := parseNumber(value)
		if !ok {
			return false
		}
		v = &f
	case typeInt:
		f, ok := parseNumber(value)
		if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return false
		}
		n := int64(f)
		v = &n
	case typeBool:
		var b bool
		if string(value) != "true" && string(value) != "false" {
			return false
		}
		b = string(value) == "true"
		v = &b
	case typeString:
		s, ok := parseString(value)
		if !ok {
			return false
		}
		v = &s
	case typeStrings:
		var elems []json.RawMessage
		if len(value) == 0 || value[0] != '[' || json.Unmarshal(value, &elems) != nil {
			return false
		}
		ss := make([]string, 0, len(elems))
		for _, elem := range elems {
			s, ok := parseString(elem) // not a null, which would read as ""
			if !ok {
				return false
			}
			ss = append(ss, s)
		}
		v = ss
	default:
		return false
	}
	row := reflect.ValueOf(r).Elem()
	row.Field(c.value).Set(reflect.ValueOf(v))
	if unit != "" {
		u := unit
		row.Field(c.unit).Set(reflect.ValueOf(&u))
	}
	return true
}

// parseNumber reads a JSON value that is a number.
func parseNumber(v json.RawMessage) (float64, bool) {
	if len(v) == 0 || v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// parseString reads a JSON value that is a string.
func parseString(v json.RawMessage) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), true
	}
	var s string
	return s, json.Unmarshal(v, &s) == nil
}
