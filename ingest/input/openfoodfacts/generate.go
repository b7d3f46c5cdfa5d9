package openfoodfacts

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/productdata/pds/domain/gs1"
)

// GenOptions say what Generate writes.
type GenOptions struct {
	Records int   // lines to write (> 0)
	Seed    int64 // same Records and Seed, same bytes
	// Out is the dump file; a name ending in .gz is written gzip.
	Out string
	// Progress gets a line about once a second and a summary; nil for none.
	Progress io.Writer
	// Context, when set, stops the run (the file is then removed).
	Context context.Context
}

// GenSummary counts what Generate wrote, messy lines included.
type GenSummary struct {
	Records, Broken, Duplicates, BadCodes, NoGTIN int64
}

// Generate writes a synthetic dump in the shape of the Open Food Facts JSON
// Lines export, messy the way the real one is: numbers as strings, the same
// field as a number in one record and a string in another, empty strings,
// decimal commas, unknown units, codes that are no GTIN, duplicate codes and
// broken lines, in fixed proportions (see docs/import-off.md).
func Generate(opts GenOptions) (GenSummary, error) {
	var sum GenSummary
	if opts.Records <= 0 {
		return sum, fmt.Errorf("records must be positive")
	}
	f, err := os.Create(opts.Out)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	var w io.Writer = f
	var gz *gzip.Writer
	if strings.HasSuffix(opts.Out, ".gz") {
		gz = gzip.NewWriter(f)
		w = gz
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	g := &gen{rng: rand.New(rand.NewPCG(uint64(opts.Seed), 0x0ff)), sum: &sum}
	start, last := time.Now(), time.Now()
	for i := 0; i < opts.Records; i++ {
		if opts.Context != nil && i%1024 == 0 {
			if err := opts.Context.Err(); err != nil {
				f.Close()
				os.Remove(opts.Out)
				return sum, err
			}
		}
		line := g.record(i)
		bw.Write(line)
		bw.WriteByte('\n')
		sum.Records++
		if opts.Progress != nil && time.Since(last) >= time.Second {
			last = time.Now()
			fmt.Fprintf(opts.Progress, "gen: %d records, %.0f records/s\n", i+1, float64(i+1)/time.Since(start).Seconds())
		}
	}
	if err := bw.Flush(); err != nil {
		return sum, err
	}
	if gz != nil {
		if err := gz.Close(); err != nil {
			return sum, err
		}
	}
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "gen: %d records (%d broken lines, %d duplicate codes, %d codes that fit no identifier, %d codes that are no GTIN) in %s\n",
			sum.Records, sum.Broken, sum.Duplicates, sum.BadCodes, sum.NoGTIN, time.Since(start).Round(time.Millisecond))
	}
	return sum, f.Close()
}

type gen struct {
	rng      *rand.Rand
	sum      *GenSummary
	lastCode string
}

// offRecord has the fields of an OFF record in the dump's order of interest;
// values are any so that a field can be a number here and a string there.
type offRecord struct {
	Code           string                     `json:"code"`
	ProductName    string                     `json:"product_name"`
	Brands         string                     `json:"brands"`
	BrandOwner     string                     `json:"brand_owner,omitempty"`
	Owner          string                     `json:"owner,omitempty"`
	OwnerFields    map[string]int64           `json:"owner_fields,omitempty"`
	Quantity       string                     `json:"quantity"`
	Labels         []string                   `json:"labels_tags"`
	Origins        []string                   `json:"origins_tags"`
	Allergens      []string                   `json:"allergens_tags"`
	Categories     []string                   `json:"categories_tags"`
	Countries      []string                   `json:"countries_tags"`
	Nutriments     map[string]any             `json:"nutriments"`
	NutriscoreGr   string                     `json:"nutriscore_grade,omitempty"`
	NutriscoreSc   any                        `json:"nutriscore_score,omitempty"`
	NovaGroup      any                        `json:"nova_group,omitempty"`
	EcoscoreGrade  string                     `json:"ecoscore_grade"`
	EcoscoreScore  any                        `json:"ecoscore_score,omitempty"`
	QualityErrors  []string                   `json:"data_quality_errors_tags"`
	QualityWarns   []string                   `json:"data_quality_warnings_tags"`
	Sources        []map[string]any           `json:"sources,omitempty"`
	CreatedT       int64                      `json:"created_t"`
	LastModifiedT  any                        `json:"last_modified_t"`
	Ingredients    string                     `json:"ingredients_text"`
	LanguagesCodes map[string]json.RawMessage `json:"languages_codes"`
}

var (
	genBrands     = []string{"Carrefour", "Auchan", "Nestlé", "Danone", "Lindt", "Barilla", "Bonne Maman", "Heinz", "Kellogg's", "Alpro", "Lidl", "Aldi", "Coca-Cola", "Lu", "Président", "Ferrero", "Knorr", "Maggi", "Milka", "Oatly"}
	genOwners     = []string{"Carrefour SA", "Nestlé S.A.", "Danone S.A.", "Chocoladefabriken Lindt & Sprüngli AG", "Barilla G. e R. Fratelli", "Andros", "Kraft Heinz", "Kellogg Company"}
	genLabels     = []string{"en:organic", "en:eu-organic", "en:no-gluten", "en:vegetarian", "en:vegan", "en:fair-trade", "en:green-dot", "en:palm-oil-free", "fr:ab-agriculture-biologique", "en:nutriscore"}
	genOrigins    = []string{"en:france", "en:italy", "en:spain", "en:germany", "en:belgium", "en:european-union", "en:thailand", "en:united-states"}
	genAllergens  = []string{"en:milk", "en:gluten", "en:eggs", "en:nuts", "en:soybeans", "en:peanuts", "en:sesame-seeds", "en:fish"}
	genCategories = [][]string{
		{"en:snacks", "en:sweet-snacks", "en:biscuits-and-cakes", "en:biscuits"},
		{"en:beverages", "en:carbonated-drinks", "en:sodas"},
		{"en:dairies", "en:fermented-foods", "en:yogurts"},
		{"en:plant-based-foods-and-beverages", "en:plant-based-foods", "en:cereals-and-potatoes", "en:pastas"},
		{"en:spreads", "en:sweet-spreads", "en:hazelnut-spreads"},
		{"en:meals", "en:soups"},
	}
	genWarnings = []string{"en:nutrition-value-under-0-1-g-salt", "en:ecoscore-origins-of-ingredients-origins-are-100-percent-unknown",
		"en:ecoscore-packaging-packaging-data-missing", "en:nutrition-value-very-high-for-category-sugars", "en:quantity-not-recognized"}
	genErrors   = []string{"en:nutrition-value-over-105-sugars", "en:energy-value-in-kcal-does-not-match-value-in-kj", "en:nutrition-saturated-fat-greater-than-fat"}
	genImports  = []string{"database-usda", "database-gdsn", "openfood-ch", "database-codeonline"}
	genNutrient = []struct {
		name     string
		unit     string
		min, max float64
	}{
		{"energy-kcal", "kcal", 0, 900}, {"fat", "g", 0, 60}, {"saturated-fat", "g", 0, 30},
		{"carbohydrates", "g", 0, 90}, {"sugars", "g", 0, 70}, {"fiber", "g", 0, 15},
		{"proteins", "g", 0, 40}, {"salt", "g", 0, 5},
	}
)

func (g *gen) pick(list []string) string { return list[g.rng.IntN(len(list))] }

func (g *gen) some(list []string, max int) []string {
	n := g.rng.IntN(max + 1)
	out := []string{}
	for i := 0; i < n; i++ {
		v := g.pick(list)
		dup := false
		for _, o := range out {
			dup = dup || o == v
		}
		if !dup {
			out = append(out, v)
		}
	}
	return out
}

// code gives a GTIN-13 (mostly), a GTIN-8 now and then, 1 in 100 a code with a
// wrong check digit (an internal SKU then) and 1 in 2000 one that fits no
// identifier at all.
func (g *gen) code(i int) string {
	switch r := g.rng.IntN(2000); {
	case r == 0:
		g.sum.BadCodes++
		return "code " + strconv.Itoa(i)
	case r < 20:
		g.sum.NoGTIN++
		body := fmt.Sprintf("20%010d", i)
		d, _ := gs1.CheckDigit(body)
		return body + strconv.Itoa((int(d-'0')+1)%10)
	case r < 120:
		body := fmt.Sprintf("%07d", i%10_000_000)
		d, _ := gs1.CheckDigit(body)
		return body + string(d)
	}
	prefix := []string{"300", "301", "340", "356", "400", "500", "501", "560", "761", "800", "841", "871"}[i%12]
	body := prefix + fmt.Sprintf("%09d", i)
	d, _ := gs1.CheckDigit(body)
	return body + string(d)
}

func (g *gen) record(i int) []byte {
	r := g.rng
	code := g.code(i)
	if g.lastCode != "" && r.IntN(500) == 0 {
		code = g.lastCode
		g.sum.Duplicates++
	}
	g.lastCode = code
	created := int64(1_350_000_000 + r.IntN(300_000_000))
	modified := created + int64(r.IntN(100_000_000))
	brand := g.pick(genBrands)
	rec := offRecord{
		Code: code, ProductName: fmt.Sprintf("%s product %d", brand, i), Brands: brand,
		Quantity:   []string{"250 g", "1 L", "500 ml", "6 x 125 g", "330 ml", "1 kg", ""}[r.IntN(7)],
		Labels:     g.some(genLabels, 3),
		Origins:    g.some(genOrigins, 1),
		Allergens:  g.some(genAllergens, 2),
		Categories: genCategories[r.IntN(len(genCategories))],
		Countries:  []string{g.pick(genOrigins)},
		CreatedT:   created, LastModifiedT: modified,
		EcoscoreGrade:  []string{"a", "b", "c", "d", "e", "unknown", "not-applicable"}[r.IntN(7)],
		QualityErrors:  []string{},
		QualityWarns:   g.some(genWarnings, 2),
		Ingredients:    "sugar, wheat flour, palm oil, hazelnuts 13%, skimmed milk powder, cocoa, emulsifier: lecithins",
		LanguagesCodes: map[string]json.RawMessage{"en": json.RawMessage("6")},
	}
	if r.IntN(10) == 0 {
		rec.Brands = "" // an empty string where a value is expected
	}
	if r.IntN(10) == 0 {
		rec.LastModifiedT = strconv.FormatInt(modified, 10) // the same field as a string
	}
	if r.IntN(50) == 0 {
		rec.QualityErrors = []string{g.pick(genErrors)}
	}
	if rec.EcoscoreGrade != "unknown" && rec.EcoscoreGrade != "not-applicable" {
		rec.EcoscoreScore = 10 + r.IntN(90)
	}
	g.nutrition(&rec)
	switch k := r.IntN(10); {
	case k < 2: // the producer manages the product on the producer platform
		org := g.pick(genOwners)
		rec.Owner = "org-" + strings.ToLower(strings.NewReplacer(" ", "-", ".", "", "&", "and", "'", "").Replace(org))
		rec.BrandOwner = org
		rec.OwnerFields = map[string]int64{"quantity": modified - 100, "sugars": modified - 100, "fat": modified - 100, "labels": modified - 100}
		rec.Sources = []map[string]any{{"id": rec.Owner, "name": org, "import_t": modified - 100, "manufacturer": 1,
			"fields": []string{"quantity", "labels", "nutrients.sugars_value", "nutrients.fat_value"}}}
	case k < 3: // a database import
		id := g.pick(genImports)
		src := map[string]any{"id": id, "import_t": modified - 1000, "manufacturer": "0",
			"fields": []string{"brands", "categories", "nutrients.proteins_value", "nutrients.salt_value"}}
		if id == "openfood-ch" {
			src["source_licence"] = "Creative Commons Attribution 4.0 International License"
			src["source_licence_url"] = "https://creativecommons.org/licenses/by/4.0/"
		}
		rec.Sources = []map[string]any{src}
		rec.BrandOwner = g.pick(genOwners)
	}
	b, _ := json.Marshal(rec)
	if r.IntN(500) == 0 {
		g.sum.Broken++
		return b[:len(b)/2] // a line cut off mid-record
	}
	return b
}

// nutrition fills nutriments: 3 records in 10 have none (as in the real
// dump); the others have the common eight, now and then as strings, with a
// decimal comma or in a unit OFF does not know.
func (g *gen) nutrition(rec *offRecord) {
	r := g.rng
	rec.Nutriments = map[string]any{}
	if r.IntN(10) < 3 {
		return
	}
	var sugars, fat, salt float64
	for _, n := range genNutrient {
		v := float64(int((n.min+r.Float64()*(n.max-n.min))*100)) / 100
		switch n.name {
		case "sugars":
			sugars = v
		case "saturated-fat":
			fat = v
		case "salt":
			salt = v
		}
		var val any = v
		switch r.IntN(40) {
		case 0:
			val = strconv.FormatFloat(v, 'f', -1, 64) // a number as a string
		case 1:
			val = strings.Replace(strconv.FormatFloat(v, 'f', 2, 64), ".", ",", 1) // decimal comma
		case 2:
			val = "" // empty
		}
		rec.Nutriments[n.name+"_100g"] = val
		rec.Nutriments[n.name] = v
		unit := n.unit
		if r.IntN(200) == 0 {
			unit = "spoons" // a unit OFF does not know
		}
		rec.Nutriments[n.name+"_unit"] = unit
	}
	rec.Nutriments["energy_100g"] = float64(int(rec.Nutriments["energy-kcal"].(float64) * 4.184))
	rec.Nutriments["nutrition-score-fr_100g"] = int(sugars/5 + fat/2 + salt*3)
	grade := string(rune('a' + min(4, int(sugars/5+fat/2+salt*3)/5)))
	rec.NutriscoreGr = grade
	if r.IntN(2) == 0 {
		rec.NutriscoreSc = int(sugars/5 + fat/2 + salt*3)
	} else {
		rec.NutriscoreSc = strconv.Itoa(int(sugars/5 + fat/2 + salt*3))
	}
	switch r.IntN(4) {
	case 0:
		rec.NovaGroup = 1 + r.IntN(4)
	case 1:
		rec.NovaGroup = strconv.Itoa(1 + r.IntN(4)) // the same field as a string
	case 2:
		rec.NovaGroup = 4
	}
}
