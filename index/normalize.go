package index

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// legalForms are words that name a company's legal form rather than the company. They are dropped
// from a normalised name unless they are its first word (so "AG Barr" keeps its "ag") or the name
// would be left empty. Dotted and slashed abbreviations ("S.A.", "S.p.A.", "A/S", "e.V.") are joined
// into one word before this list is consulted, so "sa", "spa", "as" and "ev" cover them.
var legalForms = map[string]bool{
	// German-speaking countries
	"gmbh": true, "mbh": true, "ag": true, "kg": true, "kgaa": true, "ohg": true, "gbr": true,
	"ug": true, "ev": true, "eg": true, "se": true, "gesmbh": true,
	// English-speaking countries
	"ltd": true, "limited": true, "llc": true, "llp": true, "lp": true, "plc": true, "inc": true,
	"incorporated": true, "corp": true, "corporation": true, "co": true, "company": true,
	"pty": true, "pte": true, "pvt": true,
	// French, Spanish, Italian, Portuguese
	"sa": true, "sas": true, "sasu": true, "sarl": true, "sca": true, "snc": true, "cie": true,
	"spa": true, "srl": true, "sl": true, "slu": true, "sau": true, "ltda": true,
	// Benelux, Nordics
	"bv": true, "nv": true, "vof": true, "oy": true, "oyj": true, "ab": true, "as": true,
	"asa": true, "aps": true,
	// Central and Eastern Europe, Asia
	"sro": true, "spzoo": true, "kft": true, "zrt": true, "doo": true, "ooo": true, "pjsc": true,
	"jsc": true, "bhd": true, "sdn": true, "kk": true,
}

// legalSequences are legal forms written as several words once punctuation is gone ("Sp. z o.o."
// → "sp z oo", "S. A." → "s a"). They are dropped like legalForms.
var legalSequences = [][]string{
	{"sp", "z", "oo"}, {"sp", "z", "o", "o"}, {"sa", "de", "cv"}, {"s", "a", "de", "c", "v"},
	{"s", "a", "s"}, {"s", "p", "a"}, {"s", "r", "l"}, {"s", "a"}, {"s", "l"}, {"b", "v"}, {"n", "v"},
	{"a", "s"}, {"a", "g"},
}

// legalSequence returns the length of the longest legal-form sequence words starts with, or 0.
func legalSequence(words []string) int {
	best := 0
	for _, seq := range legalSequences {
		if len(seq) > best && len(seq) <= len(words) && slices.Equal(words[:len(seq)], seq) {
			best = len(seq)
		}
	}
	return best
}

// connectorWords join the parts of a name ("Procter and Gamble", "Müller und Söhne"); "&" is
// punctuation and already gone. They are dropped like legal forms.
var connectorWords = map[string]bool{"and": true, "und": true}

// foldSpecial maps letters that NFKD does not decompose to their usual Latin spelling.
var foldSpecial = map[rune]string{
	'ß': "ss", 'ẞ': "ss", 'æ': "ae", 'Æ': "ae", 'œ': "oe", 'Œ': "oe", 'ø': "o", 'Ø': "o",
	'ł': "l", 'Ł': "l", 'đ': "d", 'Đ': "d", 'ð': "d", 'Ð': "d", 'þ': "th", 'Þ': "th",
	'ı': "i", 'ħ': "h", 'Ħ': "h", 'ŧ': "t", 'Ŧ': "t", 'ŋ': "n", 'Ŋ': "n", 'ĸ': "k",
}

// isApostrophe reports runes that join the letters around them ("McDonald's" → "mcdonalds").
func isApostrophe(r rune) bool {
	switch r {
	case '\'', '’', '‘', '`', '´', 'ʼ', 'ʹ', '′':
		return true
	}
	return false
}

// Normalize returns the form of a manufacturer name that matching and ranking work on: accents
// stripped (NFKD, combining marks dropped, ß → ss, æ → ae, ø → o, ...), lower case, apostrophes
// removed, dotted abbreviations joined ("S.p.A." → "spa"), every other character that is not a
// letter or digit turned into a space, legal-form words ("GmbH", "Ltd", "Inc.", "S.A.", "Corp",
// "Corporation", "Sp. z o.o.", ...) and the connectors "and"/"und" dropped unless first, and whitespace collapsed.
// The result contains only letters, digits and single spaces; it is empty when the name has no
// letter or digit.
func Normalize(name string) string {
	if name == "" {
		return ""
	}
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range norm.NFKD.String(name) {
		switch {
		case isApostrophe(r):
			// dropped: joins the letters around it
		case unicode.Is(unicode.Mn, r):
			// combining mark left by NFKD: dropped
		default:
			if s, ok := foldSpecial[r]; ok {
				b.WriteString(s)
				continue
			}
			b.WriteRune(unicode.ToLower(r))
		}
	}
	folded := b.String()

	// Split into space-separated chunks; inside a chunk, join dotted or slashed single letters
	// ("s.p.a." → "spa", "a/s" → "as"), then turn remaining punctuation into word breaks.
	var words []string
	for _, chunk := range strings.FieldsFunc(folded, unicode.IsSpace) {
		trimmed := strings.TrimFunc(chunk, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != '.' && r != '/'
		})
		if j, ok := joinAbbreviation(trimmed); ok {
			words = append(words, j)
			continue
		}
		words = append(words, strings.FieldsFunc(chunk, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsNumber(r)
		})...)
	}
	if len(words) == 0 {
		return ""
	}
	kept := words[:1:1]
	for i := 1; i < len(words); {
		if k := legalSequence(words[i:]); k > 0 {
			i += k
			continue
		}
		if w := words[i]; !legalForms[w] && !connectorWords[w] {
			kept = append(kept, w)
		}
		i++
	}
	return strings.Join(kept, " ")
}

// joinAbbreviation recognises a chunk made of single letters separated by '.' or '/', with an
// optional trailing '.', and at least two letters ("s.a.", "s.p.a", "a/s", "e.v."); it returns
// the letters joined. "s.pa." is not one (a letter group longer than one), nor is "co.".
func joinAbbreviation(chunk string) (string, bool) {
	var out []rune
	expectLetter := true
	for i, w := 0, 0; i < len(chunk); i += w {
		r, width := utf8.DecodeRuneInString(chunk[i:])
		w = width
		if expectLetter {
			if !unicode.IsLetter(r) {
				return "", false
			}
			out = append(out, r)
			expectLetter = false
			continue
		}
		if r != '.' && r != '/' {
			return "", false
		}
		expectLetter = true
	}
	if len(out) < 2 {
		return "", false
	}
	// A trailing '/' ("a/") is not an abbreviation.
	if strings.HasSuffix(chunk, "/") {
		return "", false
	}
	return string(out), true
}

// compact is the normalised name without spaces: "hewlett packard" and "hewlettpackard" meet here.
func compact(normalised string) string {
	return strings.ReplaceAll(normalised, " ", "")
}
