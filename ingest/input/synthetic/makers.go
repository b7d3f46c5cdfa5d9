package synthetic

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maker is a manufacturer. Everything but the identifier state is fixed once
// the maker is made, so render workers may read it concurrently.
type maker struct {
	name     string   // canonical spelling, with legal form
	variants []string // variants[0] == name; other spellings of the same maker
	country  int      // index into countries
	industry int      // index into industries
	category int
	gln      string   // 13 digits, or ""
	brands   []string // may be empty
	code     string   // 3 to 4 upper-case letters for SKUs and URLs
	big      bool     // takes 7-digit (GTIN-13) or 6-digit (UPC) company prefixes

	// identifier state, touched only by the planner
	prefix string // current company prefix
	used   int    // item references handed out from prefix
	items  perm   // order of the item references of prefix
}

// makerSet builds makers with unique canonical names.
type makerSet struct {
	r      *rand.Rand
	makers []*maker
	names  map[string]bool // canonical names taken (lookup only)
	cumW   []int           // cumulative country weights
}

func newMakerSet(r *rand.Rand) *makerSet {
	ms := &makerSet{r: r, names: map[string]bool{}}
	total := 0
	for _, c := range countries {
		total += c.weight
		ms.cumW = append(ms.cumW, total)
	}
	return ms
}

func (ms *makerSet) pickCountry() int {
	x := ms.r.IntN(ms.cumW[len(ms.cumW)-1])
	for i, w := range ms.cumW {
		if x < w {
			return i
		}
	}
	return len(ms.cumW) - 1
}

func pick[T any](r *rand.Rand, list []T) T { return list[r.IntN(len(list))] }

// add makes one more maker. Now and then it is a sister of an earlier one,
// sharing the words of its name ("Alpine Dairy AG", "Alpine Dairy
// International AG", "Alpine Foods GmbH").
func (ms *makerSet) add() *maker {
	r := ms.r
	var m *maker
	for attempt := 0; ; attempt++ {
		if len(ms.makers) >= 8 && r.IntN(100) < 15 {
			m = ms.sister(pick(r, ms.makers))
		} else {
			m = ms.fresh()
		}
		if attempt >= 6 {
			// Give up on variety: number it.
			m.name = m.name + " " + strconv.Itoa(len(ms.makers)+1)
		}
		if !ms.names[m.name] {
			break
		}
	}
	ms.names[m.name] = true
	m.brands = ms.brandsFor(m)
	m.code = skuCode(m.name)
	ms.makers = append(ms.makers, m)
	return m
}

// fresh makes a maker of a picked country and industry. Its name's core
// (the name without its legal form) and its form are kept apart so that
// variants can drop or respell the form.
func (ms *makerSet) fresh() *maker {
	r := ms.r
	ci := ms.pickCountry()
	c := &countries[ci]
	m := &maker{country: ci, industry: r.IntN(len(industries))}
	surname := func() string { return pick(r, c.surnames) }
	place := func() string {
		if r.IntN(3) == 0 {
			return pick(r, genericPlaces)
		}
		return pick(r, c.places)
	}
	ind := func() string { return industries[m.industry].word }
	var core string
	switch x := r.IntN(100); {
	case c.code == "CN" && x < 70:
		core = pick(r, c.places) + " " + surname() + " " + ind()
	case c.code == "JP" && x < 20:
		core = "Nippon " + ind()
	case x < 30:
		core = surname() + " " + ind()
	case x < 45:
		core = place() + " " + ind()
	case x < 55:
		a, b := surname(), surname()
		for b == a {
			b = surname()
		}
		core = a + " & " + b
		if r.IntN(2) == 0 {
			core += " " + ind()
		}
	case x < 61:
		core = surname() + sonsSuffix(c.lang)
	case x < 76:
		core = coined(r) + " " + ind()
	case x < 88 && len(c.trades) > 0:
		t := pick(r, c.trades)
		m.industry = t.industry
		if strings.HasPrefix(t.word, "Société") {
			core = t.word + " " + frenchOf(place())
		} else {
			core = t.word + " " + surname()
		}
	case x < 94:
		core = acronym(r) + " " + ind()
	default:
		core = coined(r)
	}
	m.category = industries[m.industry].category
	form := pick(r, c.forms)
	m.name, m.variants = nameVariants(core, form, c.code)
	return m
}

// sister makes a maker whose name shares words with base's.
func (ms *makerSet) sister(base *maker) *maker {
	r := ms.r
	c := &countries[base.country]
	m := &maker{country: base.country, industry: base.industry, category: base.category}
	core, form := splitName(base)
	switch r.IntN(3) {
	case 0:
		core += " " + pick(r, qualifiers)
	case 1:
		// same first word, other industry
		first, _, _ := strings.Cut(core, " ")
		m.industry = r.IntN(len(industries))
		m.category = industries[m.industry].category
		core = first + " " + industries[m.industry].word
	default:
		// same words, other legal form (or another country's)
		form = pick(r, c.forms)
		if _, baseForm := splitName(base); form.canon == baseForm.canon {
			ci := ms.pickCountry()
			m.country = ci
			c = &countries[ci]
			form = pick(r, c.forms)
		}
	}
	m.name, m.variants = nameVariants(core, form, c.code)
	return m
}

// splitName returns the core and legal form a maker's name was made from.
func splitName(m *maker) (string, legalForm) {
	c := &countries[m.country]
	for _, f := range c.forms {
		if strings.HasSuffix(m.name, " "+f.canon) {
			return strings.TrimSuffix(m.name, " "+f.canon), f
		}
	}
	return m.name, c.forms[0]
}

func sonsSuffix(lang string) string {
	switch lang {
	case "de":
		return " & Söhne"
	case "fr":
		return " & Fils"
	case "it":
		return " & Figli"
	case "es":
		return " e Hijos"
	case "nl":
		return " & Zonen"
	case "sv", "da", "no":
		return " & Söner"
	}
	return " & Sons"
}

// frenchOf puts "de", "d'" or "du" before a place name.
func frenchOf(place string) string {
	r, _ := utf8.DecodeRuneInString(place)
	switch {
	case strings.ContainsRune("AEIOUÉÈÎ", r):
		return "d'" + place
	case place == "Jura" || place == "Périgord" || place == "Valais":
		return "du " + place
	}
	return "de " + place
}

// coined makes a brand-like invented word: Nestavo, Brévia, Lactéo.
func coined(r *rand.Rand) string {
	var b strings.Builder
	n := 1 + r.IntN(2)
	for i := 0; i < n; i++ {
		if i == 0 {
			b.WriteString(pick(r, onsets))
		} else {
			b.WriteString(pick(r, simpleOnsets))
		}
		if r.IntN(8) == 0 {
			b.WriteString(pick(r, accentVowels))
		} else {
			b.WriteString(pick(r, vowels))
		}
		if i < n-1 && r.IntN(2) == 0 {
			b.WriteString(pick(r, codas))
		}
	}
	b.WriteString(pick(r, simpleOnsets))
	b.WriteString(pick(r, coinedEnds))
	return capitalize(b.String())
}

func acronym(r *rand.Rand) string {
	if r.IntN(6) == 0 {
		return "Acme"
	}
	const letters = "ABCDEFGHJKLMNPRSTVWZ"
	n := 2 + r.IntN(2)
	b := make([]byte, n)
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// nameVariants returns the canonical name and the spellings the same maker
// is found under in product data: upper case, lower case without legal form,
// the form respelt or dropped, accents folded, "&" written "and".
func nameVariants(core string, form legalForm, countryCode string) (string, []string) {
	canon := core + " " + form.canon
	out := []string{canon}
	add := func(s string) {
		for _, v := range out {
			if v == s {
				return
			}
		}
		out = append(out, s)
	}
	add(strings.ToUpper(canon))
	add(strings.ToLower(core))
	add(core)
	for _, v := range form.variants {
		add(core + " " + v)
	}
	add(core + ", " + form.canon)
	if f := fold(canon, countryCode); f != canon {
		add(f)
		add(strings.ToLower(fold(core, countryCode)))
	}
	if strings.Contains(core, " & ") {
		add(strings.Replace(core, " & ", " and ", 1) + " " + form.canon)
	}
	return canon, out
}

// germanFold and plainFold spell accented letters in ASCII, the two ways
// data entry does it.
var germanFold = map[rune]string{'ä': "ae", 'ö': "oe", 'ü': "ue", 'Ä': "Ae", 'Ö': "Oe", 'Ü': "Ue", 'ß': "ss"}

var plainFold = map[rune]string{
	'á': "a", 'à': "a", 'â': "a", 'ä': "a", 'å': "a", 'ã': "a", 'Å': "A", 'Ä': "A", 'Á': "A",
	'é': "e", 'è': "e", 'ê': "e", 'ë': "e", 'É': "E", 'È': "E",
	'í': "i", 'î': "i", 'ï': "i", 'Î': "I",
	'ó': "o", 'ò': "o", 'ô': "o", 'ö': "o", 'ø': "o", 'õ': "o", 'Ö': "O", 'Ø': "O", 'Ó': "O",
	'ú': "u", 'ù': "u", 'û': "u", 'ü': "u", 'Ü': "U",
	'ñ': "n", 'ç': "c", 'ł': "l", 'Ł': "L", 'ś': "s", 'Ś': "S", 'ź': "z", 'ż': "z", 'ć': "c", 'ń': "n",
	'ą': "a", 'ę': "e", 'æ': "ae", 'ß': "ss", 'ō': "o", 'ū': "u",
}

func fold(s, countryCode string) string {
	german := countryCode == "DE" || countryCode == "AT" || countryCode == "CH"
	var b strings.Builder
	for _, r := range s {
		if german {
			if f, ok := germanFold[r]; ok {
				b.WriteString(f)
				continue
			}
		}
		if f, ok := plainFold[r]; ok {
			b.WriteString(f)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

var brandTails = []string{"Gold", "Select", "Harvest", "Pure", "Classic", "Nature", "Kitchen", "Home", "Pro", "Essentials", "Origins"}

func (ms *makerSet) brandsFor(m *maker) []string {
	r := ms.r
	if r.IntN(4) == 0 {
		return nil
	}
	n := 1 + r.IntN(4)
	c := &countries[m.country]
	var out []string
	for len(out) < n {
		var b string
		switch x := r.IntN(100); {
		case x < 60:
			b = coined(r)
		case x < 75 && c.lang == "en":
			b = pick(r, c.surnames) + "'s"
		default:
			b = pick(r, c.places) + " " + pick(r, brandTails)
		}
		dup := false
		for _, o := range out {
			dup = dup || o == b
		}
		if !dup {
			out = append(out, b)
		}
	}
	return out
}

// skuCode is three or four ASCII capitals taken from name.
func skuCode(name string) string {
	f := fold(name, "")
	var b []byte
	for i := 0; i < len(f) && len(b) < 4; i++ {
		c := f[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c >= 'A' && c <= 'Z' {
			b = append(b, c)
		}
	}
	for len(b) < 3 {
		b = append(b, 'X')
	}
	return string(b)
}
