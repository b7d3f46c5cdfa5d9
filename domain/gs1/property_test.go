package gs1

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// Property: for any GTIN body, appending the computed check digit gives a
// valid GTIN, and changing any one digit of the result makes it invalid.
func TestPropertyGTINCheckDigit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		n := []int{7, 11, 12, 13}[r.IntN(4)]
		body := randDigits(r, n)
		cd, ok := CheckDigit(body)
		if !ok {
			t.Fatalf("CheckDigit(%q) failed", body)
		}
		gtin := body + string(rune(cd))
		c, ok := ValidGTIN(gtin)
		if !ok || string(c[:]) != zeros[:14-len(gtin)]+gtin {
			t.Fatalf("ValidGTIN(%q) = %q, %v", gtin, c[:], ok)
		}
		if rep, _ := Validate(NSGTIN, gtin); !rep.Data.Valid {
			t.Fatalf("Validate(gtin, %q) invalid: %v", gtin, rep.Warnings)
		}
		pos := r.IntN(len(gtin))
		d := byte('0' + r.IntN(9))
		if d >= gtin[pos] {
			d++ // any digit but the one there
		}
		changed := gtin[:pos] + string(rune(d)) + gtin[pos+1:]
		if _, ok := ValidGTIN(changed); ok {
			t.Fatalf("ValidGTIN(%q) accepted %q changed at %d", changed, gtin, pos)
		}
		if rep, _ := Validate(NSGTIN, changed); rep.Data.Valid {
			t.Fatalf("Validate(gtin, %q) accepted a changed digit", changed)
		}
	}
}

// Property: for any parsed link, building the canonical URI and parsing it
// again gives the same primary key, qualifiers and attributes, and the
// canonical URI of the canonical URI is itself.
func TestPropertyCanonicalRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var keys []*aiDef
	var attrs []*aiDef
	for i := range aiTable {
		if aiTable[i].dlpkey {
			keys = append(keys, &aiTable[i])
		}
		if aiTable[i].dlAttr {
			attrs = append(attrs, &aiTable[i])
		}
	}
	parsed := 0
	for i := 0; i < 4000; i++ {
		uri := randLink(r, keys, attrs)
		l, err := ParseDigitalLink(uri)
		if err != nil {
			continue // a random pairing the rules refuse (ex=, a qualifier in the query…)
		}
		parsed++
		c, err := ParseDigitalLink(l.CanonicalURI)
		if err != nil {
			t.Fatalf("canonical %q of %q does not parse: %v", l.CanonicalURI, uri, err)
		}
		if c.Primary != l.Primary || elemText(c.Qualifiers) != elemText(l.Qualifiers) || elemText(c.Attributes) != elemText(l.Attributes) {
			t.Fatalf("round trip of %q:\n got %+v\nwant %+v", uri, c, l)
		}
		if c.CanonicalURI != l.CanonicalURI || c.ElementString != l.ElementString {
			t.Fatalf("canonical not stable: %q then %q", l.CanonicalURI, c.CanonicalURI)
		}
	}
	if parsed < 1000 {
		t.Fatalf("only %d of the random links parsed; the generator is off", parsed)
	}
}

func randDigits(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	return string(b)
}

// randLink builds a random Digital Link URI: a random host and stem, a
// primary key with a valid value (GTINs sometimes zero-suppressed),
// qualifiers from one alternative in order, random data attributes, ignored
// parameters, loose percent-encoding and sometimes a trailing slash.
func randLink(r *rand.Rand, keys, attrs []*aiDef) string {
	var b strings.Builder
	b.WriteString([]string{"https://example.com", "http://EXAMPLE.org:8080", "https://id.gs1.org", "https://[2001:db8::1]"}[r.IntN(4)])
	for n := r.IntN(3); n > 0; n-- {
		b.WriteString("/" + []string{"a", "shop", "10", "dl", "x-y"}[r.IntN(5)])
	}
	pk := keys[r.IntN(len(keys))]
	v := randValue(r, pk)
	if pk.ai == "01" && v[0] == '0' && r.IntN(3) == 0 {
		v = v[1:] // a GTIN-13 written without its leading zero
	}
	b.WriteString("/" + pk.ai + "/" + looseEscape(r, v, false))
	used := map[string]bool{pk.ai: true}
	if len(pk.qualifiers) > 0 {
		alt := pk.qualifiers[r.IntN(len(pk.qualifiers))]
		for _, q := range alt {
			if r.IntN(2) == 0 {
				d := lookupAI(q)
				b.WriteString("/" + q + "/" + looseEscape(r, randValue(r, d), false))
				used[q] = true
			}
		}
	}
	if r.IntN(6) == 0 {
		b.WriteString("/")
	}
	var params []string
	for n := r.IntN(4); n > 0; n-- {
		d := attrs[r.IntN(len(attrs))]
		if used[d.ai] {
			continue
		}
		used[d.ai] = true
		params = append(params, d.ai+"="+looseEscape(r, randValue(r, d), true))
	}
	if r.IntN(3) == 0 {
		params = append(params, "linkType=gs1:pip")
	}
	r.Shuffle(len(params), func(i, j int) { params[i], params[j] = params[j], params[i] })
	if len(params) > 0 {
		b.WriteString("?" + strings.Join(params, "&"))
	}
	return b.String()
}

// looseEscape percent-encodes only what must be encoded in a path segment
// or a query value, and sometimes a little more, in lower or upper case.
func looseEscape(r *rand.Rand, v string, query bool) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		must := c == '%' || c == '/' || c == '?' || c == '#' || c == '"' || c == '<' || c == '>' || c == ' '
		if query {
			must = must || c == '&' || c == '=' || c == '+'
		}
		if must || r.IntN(20) == 0 {
			h := strings.ToUpper(strconv.FormatUint(uint64(c)|0x100, 16)[1:])
			if r.IntN(2) == 0 {
				h = strings.ToLower(h)
			}
			b.WriteString("%" + h)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// randValue gives a random value valid for d: every component, with its
// linters satisfied; optional components sometimes left out.
func randValue(r *rand.Rand, d *aiDef) string {
	var b strings.Builder
	for _, c := range d.comps {
		if c.optional && r.IntN(2) == 0 {
			break
		}
		b.WriteString(randComp(r, c))
	}
	return b.String()
}

func randComp(r *rand.Rand, c aiComp) string {
	n := int(c.min) + r.IntN(int(c.max-c.min)+1)
	has := func(name string) bool {
		for _, l := range c.linters {
			if l == name {
				return true
			}
		}
		return false
	}
	switch {
	case has("csum"):
		body := randDigits(r, n-1)
		cd, _ := CheckDigit(body)
		return body + string(rune(cd))
	case has("csumalpha"):
		if n < 3 {
			n = 3
		}
		if n < 7 {
			n = 7
		}
		body := randChars(r, cset82Chars, n-2)
		if has("gcppos1") {
			body = randDigits(r, 4) + body[4:]
		}
		if has("hasnondigit") {
			body = body[:4] + "A" + body[5:]
		}
		p, _ := CheckPairAlpha(body)
		return body + string(p[:])
	case has("yymmdd"), has("yymmd0"):
		return pad2(r.IntN(100)) + pad2(1+r.IntN(12)) + pad2(1+r.IntN(28))
	case has("yyyymmdd"):
		return strconv.Itoa(1900+r.IntN(200)) + pad2(1+r.IntN(12)) + pad2(1+r.IntN(28))
	case has("hhmi"):
		return pad2(r.IntN(24)) + pad2(r.IntN(60))
	case has("hh"):
		return pad2(r.IntN(24))
	case has("mi"), has("ss"):
		return pad2(r.IntN(60))
	case has("iso3166"), has("iso3166999"):
		return []string{"276", "250", "840", "826", "392"}[r.IntN(5)]
	case has("iso3166alpha2"):
		return []string{"DE", "FR", "US", "GB", "JP"}[r.IntN(5)]
	case has("iso4217"):
		return []string{"978", "840", "826", "392"}[r.IntN(4)]
	case has("pieceoftotal"):
		t := 1 + r.IntN(99)
		return pad2(1+r.IntN(t)) + pad2(t)
	case has("nozeroprefix"):
		return string(rune('1'+r.IntN(9))) + randDigits(r, n-1)
	case has("importeridx"):
		return randChars(r, "-_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 1)
	case has("zero"):
		return "0"
	case has("nonzero"):
		return string(rune('1'+r.IntN(9))) + randDigits(r, n-1)
	case has("yesno"):
		return []string{"0", "1"}[r.IntN(2)]
	case has("hyphen"):
		return "-"
	case has("winding"):
		return []string{"0", "1", "9"}[r.IntN(3)]
	case has("iso5218"):
		return []string{"0", "1", "2", "9"}[r.IntN(4)]
	case has("latitude"):
		return "0" + randDigits(r, 9)
	case has("longitude"):
		return "1" + randDigits(r, 9)
	case has("posinseqslash"):
		return "1/2"
	case has("iban"):
		return "GB82WEST12345698765432"
	case has("mediatype"):
		return []string{"01", "10", "80", "99"}[r.IntN(4)]
	case has("packagetype"):
		return []string{"BX", "PX", "RB1", "8"}[r.IntN(4)]
	case has("couponcode"):
		return "0952012" + "123456" + "15" + "11" + "0" + "123"
	case has("couponposoffer"):
		return "0" + "0" + "952012" + "123456" + "0" + "123456"
	case has("gcppos1") && c.cset != 'N':
		if n < 4 {
			n = 4
		}
		set := cset82Chars
		if c.cset == 'Y' {
			set = "#-/0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		}
		return randDigits(r, 4) + randChars(r, set, n-4)
	case has("pcenc"):
		return randChars(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-.", n)
	}
	switch c.cset {
	case 'N':
		return randDigits(r, n)
	case 'Y':
		return randChars(r, "#-/0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", n)
	case 'Z':
		return randChars(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", n)
	}
	return randChars(r, cset82Chars, n)
}

func randChars(r *rand.Rand, set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[r.IntN(len(set))]
	}
	return string(b)
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}
